-- Emails sent outside sequences (CONTRACT 21.5: forwards and one-off emails): their progress, which
-- GET /master-inbox/reply-status answers by Message-ID. The email itself waits, when the mailbox's gap
-- holds it back, in the mailbox's Durable Object.
CREATE TABLE `outside_sends` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`email_account_id` integer NOT NULL,
	`campaign_id` integer,
	`kind` text NOT NULL,
	`message_id` text NOT NULL,
	`status` text NOT NULL,
	`status_message` text,
	`scheduled_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`email_account_id`) REFERENCES `email_accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outside_sends_message_id_idx` ON `outside_sends` (`account_id`,`message_id`);
--> statement-breakpoint
CREATE INDEX `outside_sends_mailbox_idx` ON `outside_sends` (`email_account_id`);
