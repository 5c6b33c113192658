ALTER TABLE `campaign_leads` ADD `resume_at` integer;
--> statement-breakpoint
CREATE INDEX `campaign_leads_resume_idx` ON `campaign_leads` (`resume_at`) WHERE resume_at IS NOT NULL;
--> statement-breakpoint
ALTER TABLE `events` ADD `resume_at` integer;
