-- Email verification and list hygiene (CONTRACT section 22).

-- Each lead's latest verification: a status (null = never checked), its reason code and when.
ALTER TABLE leads ADD COLUMN verification_status TEXT;
ALTER TABLE leads ADD COLUMN verification_reason TEXT;
ALTER TABLE leads ADD COLUMN verified_at INTEGER;
CREATE INDEX leads_verification_idx ON leads (account_id, verification_status);

-- Why the engine blocked a record without sending (e.g. invalid_email); null for other states.
ALTER TABLE campaign_leads ADD COLUMN blocked_reason TEXT;
-- A campaign's sending_status counts its blocked records by reason: a range of this index only.
CREATE INDEX campaign_leads_blocked_idx ON campaign_leads (campaign_id, blocked_reason) WHERE state = 'BLOCKED';

-- A domain's DNS verdict (by its A-label form), kept 24 h: a run over many addresses of one
-- domain asks the resolver once.
CREATE TABLE email_domain_checks (
  domain TEXT PRIMARY KEY,
  outcome TEXT NOT NULL,
  mx_hosts TEXT NOT NULL DEFAULT '[]',
  checked_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

-- Background verification runs: POST /verify-emails past 50 addresses (or with an external
-- verifier) and POST /leads/verify. Worked in chunks by the request's waitUntil and the minute cron.
CREATE TABLE verification_jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  public_id TEXT NOT NULL UNIQUE,
  account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id INTEGER REFERENCES clients(id),
  kind TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued',
  total INTEGER NOT NULL,
  processed INTEGER NOT NULL DEFAULT 0,
  valid INTEGER NOT NULL DEFAULT 0,
  invalid INTEGER NOT NULL DEFAULT 0,
  risky INTEGER NOT NULL DEFAULT 0,
  unknown INTEGER NOT NULL DEFAULT 0,
  webhook_url TEXT,
  -- The completion POST to webhook_url: null (none yet), pending, delivered or failed; tries so far; next try.
  webhook_state TEXT,
  webhook_attempts INTEGER NOT NULL DEFAULT 0,
  webhook_next_at INTEGER,
  error TEXT,
  failed_passes INTEGER NOT NULL DEFAULT 0,
  lease_until INTEGER,
  finished_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX verification_jobs_pending_idx ON verification_jobs (state, lease_until);
CREATE INDEX verification_jobs_webhook_idx ON verification_jobs (webhook_state, webhook_next_at);

-- A job's addresses in order (position 0..total-1), each with its lead (POST /leads/verify) and,
-- once checked, its result (CONTRACT 22's Result, JSON).
CREATE TABLE verification_job_items (
  job_id INTEGER NOT NULL REFERENCES verification_jobs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  email TEXT NOT NULL,
  lead_id INTEGER,
  result TEXT,
  PRIMARY KEY (job_id, position)
) WITHOUT ROWID;
