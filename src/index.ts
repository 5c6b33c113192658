import { createApp } from "./app";
import type { Bindings } from "./env";
import { runScheduled } from "./scheduled";
import { consumeDeadLetters, consumeWebhookBatch, isDeadLetterQueue } from "./webhooks/consumer";
import type { DeliveryMessage } from "./webhooks/queue-message";

export { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
export { MailboxSender } from "./engine/sender.do";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  queue: (batch: MessageBatch<DeliveryMessage>, env: Bindings) =>
    isDeadLetterQueue(batch.queue) ? consumeDeadLetters(batch, env) : consumeWebhookBatch(batch, env),
} satisfies ExportedHandler<Bindings, DeliveryMessage>;
