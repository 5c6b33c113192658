-- Delivered webhook deliveries older than WEBHOOK_DELIVERY_RETENTION_DAYS are pruned by the minute
-- cron (src/webhooks/retention.ts), oldest first: this index is that range, and holds no pending or
-- failed delivery, which are never pruned.
CREATE INDEX webhook_deliveries_delivered_idx ON webhook_deliveries (delivered_at) WHERE status = 'delivered';
