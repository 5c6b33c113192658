ALTER TABLE `campaign_leads` ADD `revenue_cents` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `sub_sequence_id` integer;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `parent_record_id` integer;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `stop_on_parent_reply` integer DEFAULT false NOT NULL;
--> statement-breakpoint
CREATE INDEX `campaign_leads_sent_view_idx` ON `campaign_leads` (`account_id`,`last_sent_at`,`id`) WHERE has_sent = 1;
--> statement-breakpoint
CREATE INDEX `campaign_leads_parent_idx` ON `campaign_leads` (`parent_record_id`) WHERE parent_record_id IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `notes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`lead_id` integer NOT NULL,
	`message` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_lead_id`) REFERENCES `campaign_leads`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`lead_id`) REFERENCES `leads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notes_record_idx` ON `notes` (`campaign_lead_id`);
--> statement-breakpoint
CREATE INDEX `notes_lead_idx` ON `notes` (`lead_id`);
--> statement-breakpoint
CREATE TABLE `reminders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`remind_at` integer NOT NULL,
	`message` text NOT NULL,
	`email_stats_id` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_lead_id`) REFERENCES `campaign_leads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reminders_record_idx` ON `reminders` (`campaign_lead_id`);
--> statement-breakpoint
CREATE INDEX `reminders_time_idx` ON `reminders` (`remind_at`);
--> statement-breakpoint
CREATE TABLE `outbound_replies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`email_account_id` integer NOT NULL,
	`answers_stats_id` integer NOT NULL,
	`message_id` text NOT NULL,
	`to_email` text NOT NULL,
	`to_name` text,
	`cc` text NOT NULL,
	`bcc` text NOT NULL,
	`subject` text NOT NULL,
	`html` text NOT NULL,
	`in_reply_to` text,
	`references` text,
	`attachments` text NOT NULL,
	`extra` text,
	`status` text NOT NULL,
	`status_message` text,
	`scheduled_at` integer,
	`sent_event_id` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_lead_id`) REFERENCES `campaign_leads`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`email_account_id`) REFERENCES `email_accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbound_replies_message_id_idx` ON `outbound_replies` (`account_id`,`message_id`);
--> statement-breakpoint
CREATE INDEX `outbound_replies_due_idx` ON `outbound_replies` (`scheduled_at`,`email_account_id`) WHERE status = 'SCHEDULED';
--> statement-breakpoint
CREATE INDEX `outbound_replies_record_idx` ON `outbound_replies` (`campaign_lead_id`,`status`);
--> statement-breakpoint
UPDATE `leads` SET `is_unsubscribed` = 1, `unsubscribed_at` = coalesce(`unsubscribed_at`, CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE `id` IN (SELECT `lead_id` FROM `campaign_leads` WHERE `has_unsubscribed` = 1);
