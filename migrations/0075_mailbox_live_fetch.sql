-- "Fetch replies now" (CONTRACT 21.2): when a live fetch asked for a mailbox's read; its reader clears it
-- when that read has run, so a caller's next live fetch within 30 minutes waits for it.

ALTER TABLE email_accounts ADD COLUMN live_fetch_requested_at INTEGER;
CREATE INDEX email_accounts_live_fetch_idx ON email_accounts (account_id, live_fetch_requested_at) WHERE live_fetch_requested_at IS NOT NULL;
