CREATE TABLE `sequence_steps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`campaign_id` integer NOT NULL,
	`seq_number` integer NOT NULL,
	`delay_in_days` integer NOT NULL,
	`subject` text DEFAULT '' NOT NULL,
	`email_body` text,
	`variant_distribution_type` text DEFAULT 'MANUAL_EQUAL' NOT NULL,
	`lead_distribution_percentage` integer,
	`winning_metric_property` text,
	`deleted_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sequence_steps_campaign_idx` ON `sequence_steps` (`campaign_id`,`seq_number`);
--> statement-breakpoint
CREATE TABLE `sequence_variants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`step_id` integer NOT NULL,
	`label` text NOT NULL,
	`subject` text DEFAULT '' NOT NULL,
	`email_body` text NOT NULL,
	`percentage` integer,
	`position` integer NOT NULL,
	`deleted_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`step_id`) REFERENCES `sequence_steps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sequence_variants_step_idx` ON `sequence_variants` (`step_id`);
