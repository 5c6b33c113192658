-- CONTRACT 21.6's copy reports. The header block of the seed's copy of a spam-test email, as it arrived (CONTRACT 21.6: the
-- email-headers report, and the sending IP and reverse name of the rdns-details report). At most
-- 64 KB; null for results recorded before, or by an operator's checker.
ALTER TABLE `spam_test_results` ADD `raw_headers` text;
--> statement-breakpoint
-- The email a spam-test run sent (its first cell Salvo sent), as handed to the SMTP server: the
-- email-content report. Manual tests' runs have none (their user sends the email).
CREATE TABLE `spam_test_messages` (
	`spam_test_id` integer NOT NULL,
	`run_no` integer NOT NULL,
	`subject` text NOT NULL,
	`text` text NOT NULL,
	`html` text,
	`raw` text,
	`sent_at` integer NOT NULL,
	PRIMARY KEY(`spam_test_id`, `run_no`),
	FOREIGN KEY (`spam_test_id`) REFERENCES `spam_tests`(`id`) ON UPDATE no action ON DELETE cascade
);
