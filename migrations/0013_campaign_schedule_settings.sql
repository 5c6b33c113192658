ALTER TABLE `campaigns` ADD `schedule` text;
--> statement-breakpoint
ALTER TABLE `campaigns` ADD `settings` text;
