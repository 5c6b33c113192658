-- Seed mailboxes: the test inboxes of each provider the placement checker reads over IMAP. The
-- catalogue's default addresses become seeds without IMAP (results for them come from an external
-- checker through the hand-typed results route) so existing tests keep their providers; an operator
-- removes a default once a real seed replaces it.
CREATE TABLE `seed_mailboxes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`provider_id` text NOT NULL,
	`email` text NOT NULL,
	`imap_host` text,
	`imap_port` integer,
	`imap_security` text,
	`imap_username` text,
	`imap_password` text,
	`inbox_folders` text DEFAULT '["INBOX"]' NOT NULL,
	`tab_folders` text DEFAULT '[]' NOT NULL,
	`spam_folders` text DEFAULT '[]' NOT NULL,
	`cursor` text,
	`checked_at` integer,
	`check_error` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`provider_id`) REFERENCES `spam_providers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `seed_mailboxes_email_idx` ON `seed_mailboxes` (`email`);
--> statement-breakpoint
CREATE INDEX `seed_mailboxes_provider_idx` ON `seed_mailboxes` (`provider_id`,`id`);
--> statement-breakpoint
INSERT OR IGNORE INTO `seed_mailboxes` (`provider_id`, `email`) SELECT `id`, `seed_email` FROM `spam_providers` ORDER BY `provider_num`;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `send_at` integer;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `sent_at` integer;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `send_error` text;
--> statement-breakpoint
DROP INDEX `spam_test_results_cell_idx`;
--> statement-breakpoint
CREATE UNIQUE INDEX `spam_test_results_cell_idx` ON `spam_test_results` (`spam_test_id`,`run_no`,`provider_id`,`sender_email`,`seed_email`);
--> statement-breakpoint
CREATE INDEX `spam_test_results_send_idx` ON `spam_test_results` (`sender_email`,`send_at`) WHERE sent_at IS NULL AND send_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `spam_test_results_pending_idx` ON `spam_test_results` (`seed_email`,`spam_test_id`) WHERE folder = 'pending';
--> statement-breakpoint
CREATE UNIQUE INDEX `spam_tests_track_idx` ON `spam_tests` (`email_track_id`);
