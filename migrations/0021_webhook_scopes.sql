-- Webhooks get a scope (issue 15): user, client or campaign; existing rows are campaign scope.
-- campaign_id becomes nullable, which SQLite can only do by rebuilding the table. Dropping the old
-- `webhooks` would cascade-delete every delivery (and attempt) through their foreign keys, so those
-- two tables are parked in key-less copies first and rebuilt after; deliveries also lose NOT NULL
-- on campaign_id (events without a campaign) and gain an index for the per-webhook delivery log.
CREATE TABLE `__new_webhooks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`association_type` text DEFAULT 'campaign' NOT NULL,
	`client_id` integer,
	`campaign_id` integer,
	`webhook_type` text,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`event_types` text NOT NULL,
	`category_ids` text NOT NULL,
	`secret_ciphertext` text,
	`previous_secret_ciphertext` text,
	`previous_secret_expires_at` integer,
	`legacy_secret` text,
	`secret_key_ciphertext` text,
	`disabled_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "webhooks_scope_target" CHECK((association_type = 'user' AND client_id IS NULL AND campaign_id IS NULL)
        OR (association_type = 'client' AND client_id IS NOT NULL AND campaign_id IS NULL)
        OR (association_type = 'campaign' AND client_id IS NULL AND campaign_id IS NOT NULL))
);
--> statement-breakpoint
INSERT INTO `__new_webhooks` (`id`, `account_id`, `association_type`, `client_id`, `campaign_id`, `webhook_type`, `name`, `url`,
	`event_types`, `category_ids`, `secret_ciphertext`, `previous_secret_ciphertext`, `previous_secret_expires_at`, `legacy_secret`,
	`secret_key_ciphertext`, `disabled_at`, `created_at`, `updated_at`)
SELECT `id`, `account_id`, 'campaign', NULL, `campaign_id`, NULL, `name`, `url`, `event_types`, `category_ids`, `secret_ciphertext`,
	`previous_secret_ciphertext`, `previous_secret_expires_at`, `legacy_secret`, `secret_key_ciphertext`, `disabled_at`, `created_at`, `updated_at`
FROM `webhooks`;
--> statement-breakpoint
CREATE TABLE `__parked_webhook_deliveries` AS SELECT * FROM `webhook_deliveries`;
--> statement-breakpoint
CREATE TABLE `__parked_webhook_attempts` AS SELECT * FROM `webhook_attempts`;
--> statement-breakpoint
DROP TABLE `webhook_attempts`;
--> statement-breakpoint
DROP TABLE `webhook_deliveries`;
--> statement-breakpoint
DROP TABLE `webhooks`;
--> statement-breakpoint
ALTER TABLE `__new_webhooks` RENAME TO `webhooks`;
--> statement-breakpoint
CREATE INDEX `webhooks_campaign_idx` ON `webhooks` (`campaign_id`);
--> statement-breakpoint
CREATE INDEX `webhooks_account_scope_idx` ON `webhooks` (`account_id`,`association_type`,`client_id`);
--> statement-breakpoint
CREATE INDEX `webhooks_legacy_secret_idx` ON `webhooks` (`id`) WHERE legacy_secret IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`webhook_id` integer NOT NULL,
	`campaign_id` integer,
	`message_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_attempt_at` integer,
	`last_status_code` integer,
	`last_error` text,
	`next_attempt_at` integer,
	`delivered_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `webhook_deliveries` (`id`, `account_id`, `webhook_id`, `campaign_id`, `message_id`, `event_type`, `payload`, `status`, `attempts`,
	`last_attempt_at`, `last_status_code`, `last_error`, `next_attempt_at`, `delivered_at`, `created_at`)
SELECT `id`, `account_id`, `webhook_id`, `campaign_id`, `message_id`, `event_type`, `payload`, `status`, `attempts`,
	`last_attempt_at`, `last_status_code`, `last_error`, `next_attempt_at`, `delivered_at`, `created_at`
FROM `__parked_webhook_deliveries`;
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_message_idx` ON `webhook_deliveries` (`message_id`);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_campaign_time_idx` ON `webhook_deliveries` (`campaign_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`id`);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending';
--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`outcome` text NOT NULL,
	`duration_ms` integer NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `webhook_attempts` (`id`, `delivery_id`, `attempted_at`, `status_code`, `error`, `outcome`, `duration_ms`)
SELECT `id`, `delivery_id`, `attempted_at`, `status_code`, `error`, `outcome`, `duration_ms` FROM `__parked_webhook_attempts`;
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`);
--> statement-breakpoint
DROP TABLE `__parked_webhook_attempts`;
--> statement-breakpoint
DROP TABLE `__parked_webhook_deliveries`;
--> statement-breakpoint
CREATE TABLE `untracked_replies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`email_account_id` integer NOT NULL,
	`message_key` text NOT NULL,
	`from_email` text,
	`from_name` text,
	`to_email` text NOT NULL,
	`subject` text NOT NULL,
	`message_id` text,
	`received_at` integer NOT NULL,
	`text_body` text NOT NULL,
	`html_body` text,
	`attachments` text NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`email_account_id`) REFERENCES `email_accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `untracked_replies_message_idx` ON `untracked_replies` (`email_account_id`,`message_key`);
--> statement-breakpoint
CREATE INDEX `untracked_replies_account_time_idx` ON `untracked_replies` (`account_id`,`received_at`);
