-- Lead lists (CONTRACT section 16), their members and tags, background CSV imports, and CRM lead tags.
CREATE TABLE `lead_lists` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`name` text NOT NULL,
	`custom_fields` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `lead_lists_account_client_idx` ON `lead_lists` (`account_id`,`client_id`,`id`);
--> statement-breakpoint
CREATE TABLE `lead_list_members` (
	`list_id` integer NOT NULL,
	`lead_id` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	PRIMARY KEY(`list_id`, `lead_id`),
	FOREIGN KEY (`list_id`) REFERENCES `lead_lists`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`lead_id`) REFERENCES `leads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lead_list_members_lead_idx` ON `lead_list_members` (`lead_id`);
--> statement-breakpoint
CREATE TABLE `lead_list_tags` (
	`list_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	PRIMARY KEY(`list_id`, `tag_id`),
	FOREIGN KEY (`list_id`) REFERENCES `lead_lists`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lead_list_tags_tag_idx` ON `lead_list_tags` (`tag_id`);
--> statement-breakpoint
CREATE TABLE `lead_list_imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`list_id` integer NOT NULL,
	`file_name` text NOT NULL,
	`state` text DEFAULT 'queued' NOT NULL,
	`csv` text,
	`columns` text NOT NULL,
	`settings` text NOT NULL,
	`cursor` integer DEFAULT 0 NOT NULL,
	`total` integer NOT NULL,
	`processed` integer DEFAULT 0 NOT NULL,
	`imported` integer DEFAULT 0 NOT NULL,
	`duplicates` integer DEFAULT 0 NOT NULL,
	`blocked` integer DEFAULT 0 NOT NULL,
	`invalid` integer DEFAULT 0 NOT NULL,
	`error` text,
	`failed_passes` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`finished_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`list_id`) REFERENCES `lead_lists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lead_list_imports_list_idx` ON `lead_list_imports` (`list_id`,`id`);
--> statement-breakpoint
CREATE INDEX `lead_list_imports_pending_idx` ON `lead_list_imports` (`state`,`lease_until`);
--> statement-breakpoint
CREATE TABLE `lead_tag_mappings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`lead_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`lead_id`) REFERENCES `leads`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lead_tag_mappings_lead_tag_idx` ON `lead_tag_mappings` (`lead_id`,`tag_id`);
--> statement-breakpoint
CREATE INDEX `lead_tag_mappings_tag_idx` ON `lead_tag_mappings` (`tag_id`);
