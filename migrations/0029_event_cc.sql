-- A reply's Cc addresses (a JSON array), read from the message or given to /events: the EMAIL_REPLY
-- payload's cc_emails and message-history's cc.
ALTER TABLE `events` ADD `cc_emails` text;
