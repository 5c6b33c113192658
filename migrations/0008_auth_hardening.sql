-- Operators can disable an account: its keys (account and client) stop working while this is set.
ALTER TABLE `accounts` ADD `disabled_at` integer;--> statement-breakpoint
-- Inbox search reads these folded copies (Unicode case folding is done in code at write time).
-- SQLite's lower() folds ASCII only, so rows written before this migration fold ASCII only.
ALTER TABLE `leads` ADD `search_folded` text;--> statement-breakpoint
UPDATE `leads` SET `search_folded` = lower(`email` || char(10) || coalesce(`first_name`, '') || char(10) || coalesce(`last_name`, ''));--> statement-breakpoint
ALTER TABLE `events` ADD `body_folded` text;--> statement-breakpoint
UPDATE `events` SET `body_folded` = lower(`body`) WHERE `type` = 'REPLY' AND `body` IS NOT NULL;
