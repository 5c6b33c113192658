-- When a person last unblocked the mailbox's warmup with the code (CONTRACT 19.4): refusals of its
-- warmup mail sent before it no longer count toward a new block, as turning warmup off and on does
-- through warmup_enabled_at.
ALTER TABLE `email_accounts` ADD `warmup_unblocked_at` integer;
