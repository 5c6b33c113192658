-- Google and Microsoft mailboxes through OAuth (CONTRACT 18): the OAuth apps an account or client
-- registers, the consent sessions, and what a mailbox keeps of its grant and its disconnects.

CREATE TABLE oauth_apps (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id INTEGER REFERENCES clients(id) ON DELETE CASCADE,
  provider TEXT NOT NULL CHECK (provider IN ('google', 'microsoft')),
  oauth_client_id TEXT NOT NULL,
  client_secret_ciphertext TEXT NOT NULL,
  tenant TEXT,
  created_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  updated_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
);
CREATE UNIQUE INDEX oauth_apps_scope_idx ON oauth_apps (account_id, coalesce(client_id, 0), provider);

CREATE TABLE oauth_sessions (
  id TEXT PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id INTEGER REFERENCES clients(id) ON DELETE CASCADE,
  provider TEXT NOT NULL CHECK (provider IN ('google', 'microsoft')),
  app_id INTEGER REFERENCES oauth_apps(id) ON DELETE SET NULL,
  app_level TEXT NOT NULL CHECK (app_level IN ('client', 'account', 'deployment')),
  state_digest TEXT NOT NULL,
  verifier_ciphertext TEXT NOT NULL,
  tenant TEXT,
  login_hint TEXT,
  redirect_url TEXT,
  mailbox_id INTEGER REFERENCES email_accounts(id) ON DELETE SET NULL,
  settings TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'success', 'error', 'expired')),
  consumed_at INTEGER,
  error TEXT,
  error_description TEXT,
  email TEXT,
  name TEXT,
  email_account_id INTEGER,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  completed_at INTEGER
);
CREATE UNIQUE INDEX oauth_sessions_state_idx ON oauth_sessions (state_digest);
CREATE INDEX oauth_sessions_account_idx ON oauth_sessions (account_id, status, expires_at);

ALTER TABLE email_accounts ADD COLUMN auth_type TEXT NOT NULL DEFAULT 'PASSWORD' CHECK (auth_type IN ('PASSWORD', 'OAUTH'));
ALTER TABLE email_accounts ADD COLUMN oauth_provider TEXT CHECK (oauth_provider IN ('google', 'microsoft'));
ALTER TABLE email_accounts ADD COLUMN oauth_app_id INTEGER REFERENCES oauth_apps(id) ON DELETE SET NULL;
ALTER TABLE email_accounts ADD COLUMN oauth_app_level TEXT CHECK (oauth_app_level IN ('client', 'account', 'deployment'));
ALTER TABLE email_accounts ADD COLUMN oauth_account_kind TEXT CHECK (oauth_account_kind IN ('workspace', 'consumer', 'work', 'personal'));
ALTER TABLE email_accounts ADD COLUMN oauth_scopes TEXT;
ALTER TABLE email_accounts ADD COLUMN oauth_tenant TEXT;
ALTER TABLE email_accounts ADD COLUMN oauth_connected_at INTEGER;
ALTER TABLE email_accounts ADD COLUMN oauth_last_refresh_at INTEGER;
ALTER TABLE email_accounts ADD COLUMN disconnect_code TEXT;
ALTER TABLE email_accounts ADD COLUMN disconnect_message TEXT;
ALTER TABLE email_accounts ADD COLUMN disconnected_at INTEGER;

-- Mailboxes saved by save-oauth before this migration kept their OAuth material; they become OAuth
-- mailboxes of the provider their type names, connected with the deployment's app.
UPDATE email_accounts
SET auth_type = 'OAUTH',
    oauth_provider = CASE type WHEN 'OUTLOOK' THEN 'microsoft' ELSE 'google' END,
    oauth_app_level = 'deployment'
WHERE oauth_token_ciphertext IS NOT NULL AND type IN ('GMAIL', 'OUTLOOK');

-- The daily re-check covers OAuth mailboxes too (their agent's token logs in): the index's condition
-- takes their refresh token as it takes a password.
DROP INDEX email_accounts_recheck_idx;
CREATE INDEX email_accounts_recheck_idx ON email_accounts (coalesce("checked_at", "updated_at"))
  WHERE password_ciphertext IS NOT NULL OR imap_password_ciphertext IS NOT NULL OR oauth_token_ciphertext IS NOT NULL;
