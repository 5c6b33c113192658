-- The inbox listings' index ranges (issue 27 item 4; src/inbox/listing-plan.ts names them). Each
-- listing walks one of these in its own order, or merges the ordered ranges of a few campaigns,
-- categories or mailboxes; all but the sent view's are partial, so they hold conversations (or the
-- view's own few records) only.
CREATE INDEX `campaign_leads_inbox_snoozed_idx` ON `campaign_leads` (`account_id`,`last_reply_at`,`id`)
	WHERE has_replied = 1 AND is_archived = 0 AND snoozed_until IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `campaign_leads_inbox_snoozed_sent_idx` ON `campaign_leads` (`account_id`,`last_sent_at`,`id`)
	WHERE has_replied = 1 AND is_archived = 0 AND snoozed_until IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `campaign_leads_important_idx` ON `campaign_leads` (`account_id`,`last_reply_at`,`id`) WHERE is_important = 1 AND is_archived = 0;
--> statement-breakpoint
CREATE INDEX `campaign_leads_important_sent_idx` ON `campaign_leads` (`account_id`,`last_sent_at`,`id`) WHERE is_important = 1 AND is_archived = 0;
--> statement-breakpoint
-- With the other sorts' keys, so the view sorted by reply or send time reads this index alone.
CREATE INDEX `campaign_leads_scheduled_idx` ON `campaign_leads` (`account_id`,`scheduled_reply_at`,`id`,`last_reply_at`,`last_sent_at`)
	WHERE scheduled_reply_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `campaign_leads_reminder_idx` ON `campaign_leads` (`account_id`,`reminder_at`,`id`,`last_reply_at`,`last_sent_at`) WHERE reminder_at IS NOT NULL;
--> statement-breakpoint
-- The sent view by reply time: its replied records first (this index), then the others by send time.
CREATE INDEX `campaign_leads_sent_replied_idx` ON `campaign_leads` (`account_id`,`last_reply_at`,`last_sent_at`,`id`)
	WHERE has_sent = 1 AND last_reply_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `campaign_leads_sent_campaign_idx` ON `campaign_leads` (`campaign_id`,`last_sent_at`,`id`) WHERE has_sent = 1;
--> statement-breakpoint
-- The merges' ranges hold every column a listing's conditions test, so a count over them reads the index alone.
CREATE INDEX `campaign_leads_inbox_campaign_idx` ON `campaign_leads` (`campaign_id`,`is_archived`,`last_reply_at`,`id`,
	`account_id`,`snoozed_until`,`is_read`,`lead_id`,`category_id`,`email_account_id`,`team_member_id`,`has_sent`,`has_opened`,`has_clicked`,`has_bounced`,`has_unsubscribed`,`last_sent_at`) WHERE has_replied = 1;
--> statement-breakpoint
CREATE INDEX `campaign_leads_inbox_category_idx` ON `campaign_leads` (`account_id`,`category_id`,`is_archived`,`last_reply_at`,`id`,
	`snoozed_until`,`is_read`,`campaign_id`,`lead_id`,`email_account_id`,`team_member_id`,`has_sent`,`has_opened`,`has_clicked`,`has_bounced`,`has_unsubscribed`,`last_sent_at`) WHERE has_replied = 1;
--> statement-breakpoint
CREATE INDEX `campaign_leads_inbox_mailbox_idx` ON `campaign_leads` (`email_account_id`,`is_archived`,`last_reply_at`,`id`,
	`account_id`,`snoozed_until`,`is_read`,`campaign_id`,`lead_id`,`category_id`,`team_member_id`,`has_sent`,`has_opened`,`has_clicked`,`has_bounced`,`has_unsubscribed`,`last_sent_at`) WHERE has_replied = 1;
--> statement-breakpoint
-- A record's replies, for the search tested record by record (needles of one or two characters).
CREATE INDEX `events_record_reply_idx` ON `events` (`campaign_lead_id`) WHERE type = 'REPLY';
