-- Warmup that runs (CONTRACT 19): the settings the bulk page adds, the pool's blocking, the admin's
-- shared-pool flag, every warmup email sent (with where its receiver found it) and the unblock codes.

ALTER TABLE email_accounts ADD COLUMN warmup_min_count INTEGER;
ALTER TABLE email_accounts ADD COLUMN send_warmups_only_on_weekdays INTEGER NOT NULL DEFAULT 0;
ALTER TABLE email_accounts ADD COLUMN daily_reply_limit INTEGER;
ALTER TABLE email_accounts ADD COLUMN use_custom_domain INTEGER NOT NULL DEFAULT 0;
-- When warmup was last turned on: the ramp counts sending days from it.
ALTER TABLE email_accounts ADD COLUMN warmup_enabled_at INTEGER;
-- Blocked (19.4): the servers' words; null = not blocked.
ALTER TABLE email_accounts ADD COLUMN warmup_blocked_reason TEXT;
-- Warmup mail to this address bounced: it left the pool (turning warmup off and on brings it back).
ALTER TABLE email_accounts ADD COLUMN warmup_bounced_reason TEXT;

ALTER TABLE accounts ADD COLUMN warmup_shared_pool INTEGER NOT NULL DEFAULT 0;

-- One row per warmup email (a first message or a reply), written by its sender's object at send;
-- the receiver's reader fills where it landed. Salvo knows its warmup mail by this Message-ID only.
CREATE TABLE warmup_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sender_id INTEGER NOT NULL REFERENCES email_accounts(id) ON DELETE CASCADE,
  receiver_id INTEGER NOT NULL REFERENCES email_accounts(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('warmup', 'reply')),
  -- The warmup email a reply answers.
  reply_to_id INTEGER REFERENCES warmup_messages(id) ON DELETE CASCADE,
  message_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  -- sent, or refused (the server's words in `error`; `error_kind` policy / bounce / other).
  status TEXT NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'refused')),
  error TEXT,
  error_kind TEXT,
  -- Where the receiver first found it: inbox, spam, or not_found after 24 h.
  landed TEXT CHECK (landed IN ('inbox', 'spam', 'not_found')),
  landed_at INTEGER,
  rescued_at INTEGER,
  opened_at INTEGER,
  replied_at INTEGER
);
CREATE UNIQUE INDEX warmup_messages_message_id_idx ON warmup_messages (message_id);
CREATE INDEX warmup_messages_sender_time_idx ON warmup_messages (sender_id, sent_at);
-- The receiver's reader looks for what it has not placed yet.
CREATE INDEX warmup_messages_receiver_open_idx ON warmup_messages (receiver_id, sent_at) WHERE landed IS NULL AND status = 'sent';
CREATE INDEX warmup_messages_receiver_time_idx ON warmup_messages (receiver_id, sent_at);

-- The unblock code (19.4): its digest, valid 10 minutes, single use, 5 tries.
CREATE TABLE warmup_otps (
  email_account_id INTEGER PRIMARY KEY REFERENCES email_accounts(id) ON DELETE CASCADE,
  code_digest TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0,
  -- The code's email, which the mailbox's reader keeps out of everything it records.
  message_id TEXT
);
