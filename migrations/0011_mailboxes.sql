-- Mailboxes (email accounts), the campaigns they send for and their tags; tags get a color.
CREATE TABLE `email_accounts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`type` text DEFAULT 'SMTP' NOT NULL,
	`from_name` text NOT NULL,
	`from_email` text NOT NULL,
	`username` text NOT NULL,
	`password_ciphertext` text,
	`smtp_host` text NOT NULL,
	`smtp_port` integer NOT NULL,
	`smtp_port_type` text NOT NULL,
	`imap_username` text,
	`imap_password_ciphertext` text,
	`imap_host` text NOT NULL,
	`imap_port` integer NOT NULL,
	`imap_port_type` text NOT NULL,
	`oauth_token_ciphertext` text,
	`max_email_per_day` integer DEFAULT 100 NOT NULL,
	`time_to_wait_in_mins` integer DEFAULT 0 NOT NULL,
	`signature` text,
	`custom_tracking_domain` text,
	`bcc_email` text,
	`different_reply_to_address` text,
	`is_smtp_success` integer,
	`is_imap_success` integer,
	`smtp_failure_error` text,
	`imap_failure_error` text,
	`checked_at` integer,
	`is_suspended` integer DEFAULT false NOT NULL,
	`warmup_enabled` integer DEFAULT false NOT NULL,
	`total_warmup_per_day` integer DEFAULT 10 NOT NULL,
	`daily_rampup` integer DEFAULT 0 NOT NULL,
	`reply_rate_percentage` integer DEFAULT 20 NOT NULL,
	`warmup_key_id` text,
	`auto_adjust_warmup` integer DEFAULT false NOT NULL,
	`is_rampup_enabled` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_accounts_account_email_idx` ON `email_accounts` (`account_id`,`from_email`);--> statement-breakpoint
CREATE INDEX `email_accounts_account_client_idx` ON `email_accounts` (`account_id`,`client_id`);--> statement-breakpoint
CREATE TABLE `campaign_email_accounts` (
	`campaign_id` integer NOT NULL,
	`email_account_id` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	PRIMARY KEY(`campaign_id`, `email_account_id`),
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`email_account_id`) REFERENCES `email_accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `campaign_email_accounts_mailbox_idx` ON `campaign_email_accounts` (`email_account_id`);--> statement-breakpoint
CREATE TABLE `email_account_tags` (
	`email_account_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	PRIMARY KEY(`email_account_id`, `tag_id`),
	FOREIGN KEY (`email_account_id`) REFERENCES `email_accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `email_account_tags_tag_idx` ON `email_account_tags` (`tag_id`);--> statement-breakpoint
ALTER TABLE `tags` ADD `color` text DEFAULT '#9E9E9E' NOT NULL;--> statement-breakpoint
CREATE INDEX `events_mailbox_type_time_idx` ON `events` (`email_account_id`,`type`,`occurred_at`);
