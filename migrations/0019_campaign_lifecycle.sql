ALTER TABLE `campaigns` ADD `parent_campaign_id` integer REFERENCES campaigns(id) ON DELETE SET NULL;
--> statement-breakpoint
ALTER TABLE `campaigns` ADD `team_member_id` integer;
--> statement-breakpoint
CREATE INDEX `campaigns_parent_idx` ON `campaigns` (`parent_campaign_id`) WHERE parent_campaign_id IS NOT NULL;
