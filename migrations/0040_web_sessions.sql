-- Web app sessions (issue 29): a signed-in browser holds a random token in an HttpOnly cookie; only its
-- SHA-256 digest is kept here. A session acts as the API key it was opened with (key_kind + key_hash,
-- resolved through that key's KeyGate on every request), so deleting, resetting or deactivating the
-- key ends its sessions too. expires_at slides with use, never past created_at + the absolute lifetime.
CREATE TABLE `web_sessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`client_id` integer,
	`token_hash` text NOT NULL,
	`key_kind` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_last4` text NOT NULL,
	`user_agent` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `web_sessions_token_idx` ON `web_sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `web_sessions_account_idx` ON `web_sessions` (`account_id`,`client_id`,`expires_at`);
