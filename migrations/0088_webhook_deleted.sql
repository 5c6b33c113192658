-- A webhook deleted while deliveries of it are still pending stays, hidden, until they settle: CONTRACT
-- section 14 tries deliveries already queued (the rows would otherwise go with the webhook's, by the
-- foreign key's cascade, and their queue messages would find nothing to send).
ALTER TABLE `webhooks` ADD `deleted_at` integer;
