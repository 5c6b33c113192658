-- Webhook signing secrets leave plain text (issue 12). SQL cannot encrypt, so the existing secrets
-- move to the nullable legacy_secret column; the minute cron encrypts each into secret_ciphertext
-- and clears it (src/webhooks/secrets.ts), and deliveries sign with the legacy value until then.
ALTER TABLE `webhooks` ADD `secret_ciphertext` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_secret_ciphertext` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_secret_expires_at` integer;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `legacy_secret` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `secret_key_ciphertext` text;--> statement-breakpoint
UPDATE `webhooks` SET `legacy_secret` = `secret`;--> statement-breakpoint
ALTER TABLE `webhooks` DROP COLUMN `secret`;--> statement-breakpoint
CREATE INDEX `webhooks_legacy_secret_idx` ON `webhooks` (`id`) WHERE legacy_secret IS NOT NULL;
