-- When the message failed (CONTRACT 13.3 and 13.6 count `failed_count` by it): updated_at is the
-- row's last write, so any write after the failure would move the failure out of its window, and
-- created_at is the first attempt, hours before a failure that ends a run of temporary refusals.
-- The engine's statements that fail a message write it, with the same clock as the failure itself.
ALTER TABLE messages ADD COLUMN failed_at INTEGER;
CREATE INDEX messages_failed_idx ON messages (campaign_id, failed_at) WHERE failed_at IS NOT NULL;

-- Messages already failed: nothing writes a failed message again, so its last write is its failure.
UPDATE messages SET failed_at = updated_at WHERE status = 'failed';
