-- The mailbox's server refused its sending for now (a 421, a 4xx before the recipient, the provider's
-- own sending limit) or could not be reached: when the engine tries again, and the server's words.
-- Set by the batch that stores that outcome, cleared by the next one that stores a sent email; the
-- mailbox's sending_status warns while it holds (`server_refusing`).
ALTER TABLE `email_accounts` ADD `send_held_until` integer;
--> statement-breakpoint
ALTER TABLE `email_accounts` ADD `send_held_reason` text;
