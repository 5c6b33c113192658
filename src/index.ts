import { createApp } from "./app";
import type { Bindings } from "./env";
import { runScheduled } from "./jobs/scheduled";
import { consumeDeadLetters, consumeWebhookBatch, WEBHOOK_DLQ_NAME } from "./jobs/webhook-consumer";
import type { DeliveryMessage } from "./webhooks/outbox";

export { AuthFailureLimiter, KeyGate } from "./rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  queue: (batch: MessageBatch<DeliveryMessage>, env: Bindings) =>
    batch.queue === WEBHOOK_DLQ_NAME ? consumeDeadLetters(batch, env) : consumeWebhookBatch(batch, env),
} satisfies ExportedHandler<Bindings, DeliveryMessage>;
