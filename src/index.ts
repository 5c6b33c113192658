import { createApp } from "./app";
import type { Bindings } from "./env";
import { runScheduled } from "./jobs/scheduled";
import { consumeDeadLetters, consumeWebhookBatch, isDeadLetterQueue } from "./jobs/webhook-consumer";
import type { DeliveryMessage } from "./webhooks/outbox";

export { AuthFailureLimiter, KeyGate } from "./rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  queue: (batch: MessageBatch<DeliveryMessage>, env: Bindings) =>
    isDeadLetterQueue(batch.queue) ? consumeDeadLetters(batch, env) : consumeWebhookBatch(batch, env),
} satisfies ExportedHandler<Bindings, DeliveryMessage>;
