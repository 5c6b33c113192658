-- A mailbox's claims still held: every sender pass first releases those a dead pass left (src/engine/store.ts
-- releaseDeadClaims), a seek here. Only records claimed at that moment are in it.
CREATE INDEX `campaign_leads_claimed_idx` ON `campaign_leads` (`email_account_id`) WHERE claim_token IS NOT NULL;
--> statement-breakpoint
-- Campaign emails in doubt (a pass died during their SMTP transaction), by mailbox and time: the mailbox's
-- sending_status warning and the operator's metric count them. Only such rows are in it.
CREATE INDEX `messages_unconfirmed_idx` ON `messages` (`email_account_id`, `updated_at`) WHERE status = 'unconfirmed';
