-- When a scheduled inbox reply first came due. A reply the mailbox's gap or its server's hold holds
-- back is scheduled again (scheduled_at moves); one its server refused for now is tried again at the
-- hold's end until 24 hours after this time, then failed, so it never goes out days late.
ALTER TABLE `outbound_replies` ADD `first_due_at` integer;
