CREATE TABLE `campaign_leads` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`lead_id` integer NOT NULL,
	`state` text DEFAULT 'DRAFTED' NOT NULL,
	`category_id` integer,
	`team_member_id` integer,
	`email_account_id` integer,
	`is_read` integer DEFAULT false NOT NULL,
	`is_important` integer DEFAULT false NOT NULL,
	`is_archived` integer DEFAULT false NOT NULL,
	`snoozed_until` integer,
	`last_sent_at` integer,
	`last_reply_at` integer,
	`has_sent` integer DEFAULT false NOT NULL,
	`has_opened` integer DEFAULT false NOT NULL,
	`has_clicked` integer DEFAULT false NOT NULL,
	`has_replied` integer DEFAULT false NOT NULL,
	`has_bounced` integer DEFAULT false NOT NULL,
	`has_unsubscribed` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`lead_id`) REFERENCES `leads`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`category_id`) REFERENCES `lead_categories`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `campaign_leads_campaign_lead_idx` ON `campaign_leads` (`campaign_id`,`lead_id`);--> statement-breakpoint
CREATE INDEX `campaign_leads_campaign_state_idx` ON `campaign_leads` (`campaign_id`,`state`);--> statement-breakpoint
CREATE INDEX `campaign_leads_lead_idx` ON `campaign_leads` (`lead_id`);--> statement-breakpoint
CREATE TABLE `campaign_tags` (
	`campaign_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	PRIMARY KEY(`campaign_id`, `tag_id`),
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `campaign_tags_tag_idx` ON `campaign_tags` (`tag_id`);--> statement-breakpoint
CREATE TABLE `events` (
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
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_lead_id`) REFERENCES `campaign_leads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_campaign_event_id_idx` ON `events` (`campaign_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `events_campaign_type_time_idx` ON `events` (`campaign_id`,`type`,`occurred_at`,`sequence_number`,`campaign_lead_id`,`ignored`);--> statement-breakpoint
CREATE INDEX `events_record_time_idx` ON `events` (`campaign_lead_id`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `lead_categories` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `leads` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`email` text NOT NULL,
	`first_name` text,
	`last_name` text,
	`company_name` text,
	`phone_number` text,
	`website` text,
	`location` text,
	`linkedin_profile` text,
	`company_url` text,
	`custom_fields` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `leads_account_email_idx` ON `leads` (`account_id`,`email`);--> statement-breakpoint
CREATE TABLE `tags` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_account_name_idx` ON `tags` (`account_id`,`name`);