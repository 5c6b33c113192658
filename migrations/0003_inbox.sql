CREATE TABLE `tasks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`priority` text DEFAULT 'MEDIUM' NOT NULL,
	`due_date` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_lead_id`) REFERENCES `campaign_leads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tasks_record_idx` ON `tasks` (`campaign_lead_id`);--> statement-breakpoint
CREATE INDEX `campaign_leads_inbox_reply_idx` ON `campaign_leads` (`account_id`,`is_archived`,`last_reply_at`,`id`,`snoozed_until`,`campaign_id`,`lead_id`,`category_id`,`email_account_id`,`team_member_id`,`has_sent`,`has_opened`,`has_clicked`,`has_bounced`,`has_unsubscribed`) WHERE has_replied = 1;--> statement-breakpoint
CREATE INDEX `campaign_leads_inbox_sent_idx` ON `campaign_leads` (`account_id`,`is_archived`,`last_sent_at`,`id`,`last_reply_at`,`snoozed_until`,`campaign_id`,`lead_id`,`category_id`,`email_account_id`,`team_member_id`,`has_sent`,`has_opened`,`has_clicked`,`has_bounced`,`has_unsubscribed`) WHERE has_replied = 1;--> statement-breakpoint
CREATE INDEX `campaign_leads_snoozed_idx` ON `campaign_leads` (`snoozed_until`) WHERE snoozed_until IS NOT NULL;