CREATE TABLE `saved_searches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`search_string` text NOT NULL,
	`filter_details` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `saved_searches_account_idx` ON `saved_searches` (`account_id`,`client_id`,`id`);--> statement-breakpoint
CREATE TABLE `spam_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`group_id` text NOT NULL,
	`group_name` text NOT NULL,
	`region_id` text NOT NULL,
	`region_name` text NOT NULL,
	`seed_email` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `spam_test_folders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `spam_test_folders_account_idx` ON `spam_test_folders` (`account_id`);--> statement-breakpoint
CREATE TABLE `spam_test_results` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`spam_test_id` integer NOT NULL,
	`run_no` integer NOT NULL,
	`provider_id` text NOT NULL,
	`sender_email` text NOT NULL,
	`seed_email` text NOT NULL,
	`folder` text DEFAULT 'pending' NOT NULL,
	`received_at` integer,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`spam_test_id`) REFERENCES `spam_tests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `spam_test_results_cell_idx` ON `spam_test_results` (`spam_test_id`,`run_no`,`provider_id`,`sender_email`);--> statement-breakpoint
CREATE TABLE `spam_test_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`spam_test_id` integer NOT NULL,
	`run_no` integer NOT NULL,
	`slot_at` integer NOT NULL,
	`started_at` integer NOT NULL,
	FOREIGN KEY (`spam_test_id`) REFERENCES `spam_tests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `spam_test_runs_slot_idx` ON `spam_test_runs` (`spam_test_id`,`slot_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `spam_test_runs_no_idx` ON `spam_test_runs` (`spam_test_id`,`run_no`);--> statement-breakpoint
CREATE TABLE `spam_test_senders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`spam_test_id` integer NOT NULL,
	`from_email` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`spam_test_id`) REFERENCES `spam_tests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `spam_test_senders_test_email_idx` ON `spam_test_senders` (`spam_test_id`,`from_email`);--> statement-breakpoint
CREATE TABLE `spam_tests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`campaign_id` integer NOT NULL,
	`folder_id` integer,
	`test_name` text NOT NULL,
	`description` text,
	`test_type` text NOT NULL,
	`spam_filters` integer NOT NULL,
	`spam_filter_names` text NOT NULL,
	`link_checker` integer NOT NULL,
	`sequence_mapping_id` text NOT NULL,
	`provider_ids` text NOT NULL,
	`all_email_sent_without_time_gap` integer NOT NULL,
	`min_time_btwn_emails` integer NOT NULL,
	`min_time_unit` text NOT NULL,
	`is_warmup` integer NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`email_track_id` text NOT NULL,
	`schedule_start_time` integer,
	`test_end_date` integer,
	`every_days` integer,
	`scheduler_cron_value` text,
	`time_zone` text,
	`next_run_at` integer,
	`test_run_no` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`folder_id`) REFERENCES `spam_test_folders`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `spam_tests_account_idx` ON `spam_tests` (`account_id`,`test_type`,`id`);--> statement-breakpoint
CREATE INDEX `spam_tests_due_idx` ON `spam_tests` (`next_run_at`) WHERE status = 'active' AND test_type = 'automated';