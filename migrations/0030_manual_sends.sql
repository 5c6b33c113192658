-- Issue 23: what a mailbox sends outside campaigns (inbox replies, test emails; later forwards and
-- one-off sends), one row per email with its recipient count. With the account's SENT events it is
-- the one count of "sent today by this mailbox" (daily_sent_count, the engine's cap and gap, the
-- manual-send rule). A reply is also a SENT event of its thread (in_events = 1), so the daily count
-- takes it from the events and this table only for its recipients.
CREATE TABLE `manual_sends` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`email_account_id` integer NOT NULL,
	`kind` text NOT NULL,
	`recipients` integer NOT NULL,
	`in_events` integer DEFAULT 0 NOT NULL,
	`message_id` text,
	`sent_at` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`email_account_id`) REFERENCES `email_accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `manual_sends_mailbox_time_idx` ON `manual_sends` (`email_account_id`,`sent_at`,`in_events`,`recipients`);
--> statement-breakpoint
-- A mailbox's sends of a day counted within its own account only (another account's events naming
-- its id count for nothing): the account joins the seek, so the count stays one index range.
DROP INDEX `events_mailbox_type_time_idx`;
--> statement-breakpoint
CREATE INDEX `events_mailbox_type_time_idx` ON `events` (`email_account_id`,`type`,`account_id`,`occurred_at`);
