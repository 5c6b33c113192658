-- Categories: the latest categorised reply wins, so records remember when theirs was set.
ALTER TABLE `campaign_leads` ADD `category_set_at` integer;
--> statement-breakpoint
UPDATE `campaign_leads` SET `category_set_at` = coalesce(
  (SELECT max(`occurred_at`) FROM `events` e WHERE e.`campaign_lead_id` = `campaign_leads`.`id` AND e.`type` = 'REPLY' AND e.`category_id` IS NOT NULL),
  `updated_at`)
WHERE `category_id` IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `ingest_marks` (
	`nonce` text PRIMARY KEY NOT NULL,
	`events_before` integer NOT NULL
);
--> statement-breakpoint
-- Deliveries: due time instead of an "enqueued" mark; pending rows past it are enqueued again.
DROP INDEX IF EXISTS `webhook_deliveries_unsent_idx`;
--> statement-breakpoint
UPDATE `webhook_deliveries` SET `next_attempt_at` = coalesce(`next_attempt_at`, `created_at`) WHERE `status` = 'pending';
--> statement-breakpoint
ALTER TABLE `webhook_deliveries` DROP COLUMN `enqueued_at`;
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status = 'pending';
