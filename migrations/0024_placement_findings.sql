ALTER TABLE `spam_test_results` ADD `mailbox_folder` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `message_id` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `spam_score` real;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `spam_required` real;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `spam_action` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `spam_symbols` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `spf` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `dkim` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `dmarc` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `sender_ip` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `sender_host` text;
--> statement-breakpoint
ALTER TABLE `spam_test_results` ADD `link_report` text;
