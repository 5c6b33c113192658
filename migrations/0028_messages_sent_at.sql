CREATE INDEX `messages_sent_at_idx` ON `messages` (`sent_at`) WHERE sent_at IS NOT NULL;
