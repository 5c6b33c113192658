ALTER TABLE `campaign_leads` ADD `next_step` integer DEFAULT 1;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `due_at` integer;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `claim_token` text;
--> statement-breakpoint
UPDATE `campaign_leads` SET `due_at` = `created_at` WHERE `has_sent` = 0 AND `state` IN ('DRAFTED', 'STARTED', 'INPROGRESS');
--> statement-breakpoint
UPDATE `campaign_leads` SET `next_step` = NULL WHERE `has_sent` = 1;
--> statement-breakpoint
CREATE INDEX `campaign_leads_due_idx` ON `campaign_leads` (`campaign_id`,`email_account_id`,`due_at`) WHERE due_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `campaign_leads_claim_idx` ON `campaign_leads` (`claim_token`) WHERE claim_token IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`step` integer NOT NULL,
	`sequence_step_id` integer,
	`variant_id` integer,
	`email_account_id` integer NOT NULL,
	`message_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`to_email` text,
	`subject` text,
	`sent_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_lead_id`) REFERENCES `campaign_leads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_record_step_idx` ON `messages` (`campaign_lead_id`,`step`);
--> statement-breakpoint
CREATE INDEX `messages_campaign_step_time_idx` ON `messages` (`campaign_id`,`step`,`created_at`);
--> statement-breakpoint
CREATE INDEX `messages_message_id_idx` ON `messages` (`message_id`);
--> statement-breakpoint
CREATE TABLE `block_list` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`email_or_domain` text NOT NULL,
	`source` text DEFAULT 'manual' NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `block_list_account_scope_value_idx` ON `block_list` (`account_id`,coalesce("client_id", 0),`email_or_domain`);
--> statement-breakpoint
ALTER TABLE `email_accounts` ADD `engine_wake_at` integer;
