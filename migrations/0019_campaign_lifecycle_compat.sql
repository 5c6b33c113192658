ALTER TABLE `campaigns` ADD `parent_campaign_id` integer REFERENCES campaigns(id) ON DELETE SET NULL;
--> statement-breakpoint
ALTER TABLE `campaigns` ADD `team_member_id` integer;
--> statement-breakpoint
CREATE INDEX `campaigns_parent_idx` ON `campaigns` (`parent_campaign_id`) WHERE parent_campaign_id IS NOT NULL;
--> statement-breakpoint
ALTER TABLE `spam_providers` ADD `provider_num` integer;
--> statement-breakpoint
UPDATE `spam_providers` SET `provider_num` = CASE `id` WHEN 'gmail' THEN 1 WHEN 'google-workspace' THEN 2 WHEN 'outlook' THEN 3 WHEN 'office365' THEN 4 WHEN 'yahoo' THEN 5 WHEN 'aol' THEN 6 WHEN 'icloud' THEN 7 WHEN 'zoho' THEN 8 WHEN 'proton' THEN 9 WHEN 'fastmail' THEN 10 WHEN 'comcast' THEN 11 WHEN 'att' THEN 12 WHEN 'gmx' THEN 13 WHEN 'webde' THEN 14 WHEN 'tonline' THEN 15 WHEN 'orange' THEN 16 WHEN 'libero' THEN 17 WHEN 'seznam' THEN 18 WHEN 'mailru' THEN 19 WHEN 'yandex' THEN 20 WHEN 'qq' THEN 21 WHEN 'netease163' THEN 22 WHEN 'naver' THEN 23 WHEN 'rediffmail' THEN 24 WHEN 'uol' THEN 25 END;
--> statement-breakpoint
CREATE UNIQUE INDEX `spam_providers_num_idx` ON `spam_providers` (`provider_num`);
