-- The daily connection re-check takes the mailboxes (with a password) checked longest ago, or never
-- checked and changed longest ago; this index makes that a range scan rather than a table scan.
CREATE INDEX `email_accounts_recheck_idx` ON `email_accounts` (coalesce("checked_at", "updated_at")) WHERE password_ciphertext IS NOT NULL OR imap_password_ciphertext IS NOT NULL;
