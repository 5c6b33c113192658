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
CREATE INDEX `campaign_leads_inbox_reply_idx` ON `campaign_leads` (`account_id`,`is_archived`,`last_reply_at`,`id`) WHERE has_replied = 1;--> statement-breakpoint
CREATE INDEX `campaign_leads_inbox_sent_idx` ON `campaign_leads` (`account_id`,`is_archived`,`last_sent_at`,`id`) WHERE has_replied = 1;--> statement-breakpoint
CREATE INDEX `campaign_leads_snoozed_idx` ON `campaign_leads` (`snoozed_until`) WHERE snoozed_until IS NOT NULL;