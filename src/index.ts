import { createApp } from "./app";
import type { Bindings } from "./env";
import { runScheduled } from "./scheduled";
import { consumeDeadLetters, consumeWebhookBatch, isDeadLetterQueue } from "./webhooks/consumer";
import type { DeliveryMessage } from "./webhooks/queue-message";
import { isTrackingQueue, type TrackedEvent } from "./tracking/queue-message";
import { consumeTrackingBatch } from "./tracking/store";

export { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
export { MailboxSender } from "./engine/sender.do";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  queue: (batch: MessageBatch<DeliveryMessage | TrackedEvent>, env: Bindings) => {
    if (isTrackingQueue(batch.queue)) return consumeTrackingBatch(batch as MessageBatch<TrackedEvent>, env);
    const deliveries = batch as MessageBatch<DeliveryMessage>;
    return isDeadLetterQueue(batch.queue) ? consumeDeadLetters(deliveries, env) : consumeWebhookBatch(deliveries, env);
  },
} satisfies ExportedHandler<Bindings, DeliveryMessage | TrackedEvent>;
