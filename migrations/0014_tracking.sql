ALTER TABLE `events` ADD `is_machine` integer DEFAULT false NOT NULL;--> statement-breakpoint
DROP INDEX `events_campaign_type_time_idx`;--> statement-breakpoint
CREATE INDEX `events_campaign_type_time_idx` ON `events` (`campaign_id`,`type`,`occurred_at`,`sequence_number`,`campaign_lead_id`,`ignored`,`is_machine`);
