-- Reply categorisation (CONTRACT section 20): custom lead categories, prompt templates, each
-- reply's categorisation and where it came from, replay jobs and the test route's daily count.
ALTER TABLE `lead_categories` ADD `sentiment_type` text;
--> statement-breakpoint
ALTER TABLE `lead_categories` ADD `colour_code` text;
--> statement-breakpoint
-- The name case-folded in code (foldText): unique per account, and compared with the built-in names.
ALTER TABLE `lead_categories` ADD `name_folded` text;
--> statement-breakpoint
ALTER TABLE `lead_categories` ADD `updated_at` integer;
--> statement-breakpoint
UPDATE `lead_categories` SET `name_folded` = lower(`name`);
--> statement-breakpoint
CREATE UNIQUE INDEX `lead_categories_account_name_idx` ON `lead_categories` (`account_id`,`name_folded`) WHERE account_id IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `prompt_templates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`prompt_content` text NOT NULL,
	`categories` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `prompt_templates_campaign_idx` ON `prompt_templates` (`campaign_id`,`id`);
--> statement-breakpoint
CREATE INDEX `prompt_templates_account_idx` ON `prompt_templates` (`account_id`);
--> statement-breakpoint
CREATE TABLE `reply_categorisations` (
	`event_id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`category_id` integer,
	`category_name` text,
	`source` text NOT NULL,
	`rule_id` text,
	`model` text,
	`prompt_template_id` integer,
	`prompt_version` text,
	`confidence` real,
	`needs_review` integer DEFAULT false NOT NULL,
	`reason` text,
	`categorised_at` integer NOT NULL,
	`nonce` text,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `reply_categorisations_record_idx` ON `reply_categorisations` (`campaign_lead_id`);
--> statement-breakpoint
-- Replies not categorised yet are found by their creation time (the minute cron's safety net).
CREATE INDEX `events_reply_created_idx` ON `events` (`created_at`) WHERE type = 'REPLY';
--> statement-breakpoint
CREATE TABLE `triage_replays` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`campaign_id` integer NOT NULL,
	`dry_run` integer NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`options` text NOT NULL,
	`cursor` integer,
	`total` integer DEFAULT 0 NOT NULL,
	`processed` integer DEFAULT 0 NOT NULL,
	`changed` integer DEFAULT 0 NOT NULL,
	`unchanged` integer DEFAULT 0 NOT NULL,
	`kept_human` integer DEFAULT 0 NOT NULL,
	`needs_review` integer DEFAULT 0 NOT NULL,
	`lease_token` text,
	`lease_until` integer,
	`applied_at` integer,
	`error` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- One job per campaign at a time.
CREATE UNIQUE INDEX `triage_replays_live_idx` ON `triage_replays` (`campaign_id`) WHERE status IN ('queued', 'running');
--> statement-breakpoint
CREATE INDEX `triage_replays_status_idx` ON `triage_replays` (`status`, `lease_until`) WHERE status IN ('queued', 'running');
--> statement-breakpoint
CREATE TABLE `triage_replay_rows` (
	`replay_id` integer NOT NULL,
	`event_id` integer NOT NULL,
	`campaign_lead_id` integer NOT NULL,
	`lead_email` text NOT NULL,
	`reply_time` integer NOT NULL,
	`old_category_id` integer,
	`old_source` text,
	`old_categorised_at` integer,
	`new_category_id` integer,
	`new_source` text NOT NULL,
	`new_confidence` real,
	`new_needs_review` integer NOT NULL,
	`provenance` text NOT NULL,
	`applied` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`replay_id`, `event_id`),
	FOREIGN KEY (`replay_id`) REFERENCES `triage_replays`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `triage_test_usage` (
	`account_id` integer NOT NULL,
	`day` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`account_id`, `day`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
