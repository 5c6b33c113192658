-- Provider matching (CONTRACT 23.3): each recipient's and each mailbox's email provider, learned
-- from the domain's MX in the background (src/verification/providers.ts).

-- A domain's provider (google, microsoft, other; null = unknown) with its own age: kept 7 days,
-- while the DNS verdict beside it is kept 24 h.
ALTER TABLE email_domain_checks ADD COLUMN provider TEXT;
ALTER TABLE email_domain_checks ADD COLUMN provider_expires_at INTEGER;

-- A lead's provider (null until learned, or when DNS could not tell) and when it was last looked
-- up (0 = never). A lead with no provider is looked up again after a day; its pending ones are a
-- range of this partial index, oldest first.
ALTER TABLE leads ADD COLUMN email_provider TEXT;
ALTER TABLE leads ADD COLUMN esp_checked_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX leads_esp_pending_idx ON leads (esp_checked_at) WHERE email_provider IS NULL;

-- A mailbox's sending domain's provider (its type decides for GMAIL and OUTLOOK), learned the same way.
ALTER TABLE email_accounts ADD COLUMN esp_provider TEXT;
ALTER TABLE email_accounts ADD COLUMN esp_checked_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX email_accounts_esp_pending_idx ON email_accounts (esp_checked_at) WHERE esp_provider IS NULL;

-- The record's copy of its lead's provider, so that a mailbox's pass finds the unpinned due records
-- of its provider as one range of campaign_leads_esp_due_idx (never a scan joining leads).
ALTER TABLE campaign_leads ADD COLUMN esp_provider TEXT;
CREATE INDEX campaign_leads_esp_due_idx ON campaign_leads (campaign_id, esp_provider, due_at)
  WHERE email_account_id IS NULL AND due_at IS NOT NULL;

-- The copy follows its lead: set on enrolment, on every change of the lead's provider; a new address
-- forgets the provider (looked up again).
CREATE TRIGGER campaign_leads_esp_provider AFTER INSERT ON campaign_leads
WHEN (SELECT email_provider FROM leads WHERE id = NEW.lead_id) IS NOT NULL BEGIN
  UPDATE campaign_leads SET esp_provider = (SELECT email_provider FROM leads WHERE id = NEW.lead_id) WHERE id = NEW.id;
END;
CREATE TRIGGER leads_esp_provider AFTER UPDATE OF email_provider ON leads
WHEN NEW.email_provider IS NOT OLD.email_provider BEGIN
  UPDATE campaign_leads SET esp_provider = NEW.email_provider WHERE lead_id = NEW.id;
END;
CREATE TRIGGER leads_esp_readdressed AFTER UPDATE OF email ON leads
WHEN NEW.email IS NOT OLD.email BEGIN
  UPDATE leads SET email_provider = NULL, esp_checked_at = 0 WHERE id = NEW.id;
END;
CREATE TRIGGER email_accounts_esp_readdressed AFTER UPDATE OF from_email ON email_accounts
WHEN NEW.from_email IS NOT OLD.from_email BEGIN
  UPDATE email_accounts SET esp_provider = NULL, esp_checked_at = 0 WHERE id = NEW.id;
END;
