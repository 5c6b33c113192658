ALTER TABLE `leads` ADD `is_unsubscribed` integer DEFAULT false NOT NULL;
--> statement-breakpoint
ALTER TABLE `leads` ADD `unsubscribed_at` integer;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `paused_from` text;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `paused_at` integer;
--> statement-breakpoint
PRAGMA defer_foreign_keys = on;
--> statement-breakpoint
CREATE TABLE `__new_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`event_id` text,
	`type` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`sequence_number` integer DEFAULT 1 NOT NULL,
	`email_account_id` integer,
	`from_email` text,
	`to_email` text,
	`subject` text,
	`body` text,
	`message_id` text,
	`link_url` text,
	`is_ooo` integer DEFAULT false NOT NULL,
	`category_id` integer,
	`ignored` integer DEFAULT false NOT NULL,
	`ignored_by_hand` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`body_folded` text,
	`is_machine` integer DEFAULT false NOT NULL,
	`resume_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_events` (`id`, `account_id`, `campaign_id`, `campaign_lead_id`, `event_id`, `type`, `occurred_at`, `sequence_number`, `email_account_id`, `from_email`, `to_email`, `subject`, `body`, `message_id`, `link_url`, `is_ooo`, `category_id`, `ignored`, `ignored_by_hand`, `created_at`, `body_folded`, `is_machine`, `resume_at`)
SELECT `id`, `account_id`, `campaign_id`, `campaign_lead_id`, `event_id`, `type`, `occurred_at`, `sequence_number`, `email_account_id`, `from_email`, `to_email`, `subject`, `body`, `message_id`, `link_url`, `is_ooo`, `category_id`, `ignored`, `ignored_by_hand`, `created_at`, `body_folded`, `is_machine`, `resume_at` FROM `events`;
--> statement-breakpoint
DROP TABLE `events`;
--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;
--> statement-breakpoint
CREATE UNIQUE INDEX `events_campaign_event_id_idx` ON `events` (`campaign_id`,`event_id`);
--> statement-breakpoint
CREATE INDEX `events_campaign_type_time_idx` ON `events` (`campaign_id`,`type`,`occurred_at`,`sequence_number`,`campaign_lead_id`,`ignored`,`is_machine`);
--> statement-breakpoint
CREATE INDEX `events_record_time_idx` ON `events` (`campaign_lead_id`,`occurred_at`);
--> statement-breakpoint
CREATE INDEX `events_mailbox_type_time_idx` ON `events` (`email_account_id`,`type`,`occurred_at`);
