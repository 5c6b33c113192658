import { createApp } from "./app";
import type { Bindings } from "./platform/env";
import { consumeLogged } from "./platform/queue-log";
import { runScheduled } from "./scheduled";
import { consumeDeadLetters, consumeWebhookBatch, isDeadLetterQueue } from "./webhooks/consumer";
import type { DeliveryMessage } from "./webhooks/queue-message";
import { isTrackingQueue, type TrackedEvent } from "./tracking/queue-message";
import { consumeTrackingBatch } from "./tracking/store";
import { isTriageQueue, type TriageMessage } from "./events/triage-queue";
import { consumeTriageBatch } from "./triage/queue";

export { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
export { MailboxSender } from "./mailbox-agent/mailbox.do";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  queue: (batch: MessageBatch<DeliveryMessage | TrackedEvent | TriageMessage>, env: Bindings) =>
    consumeLogged(batch, (counted) => {
      if (isTrackingQueue(counted.queue)) return consumeTrackingBatch(counted as MessageBatch<TrackedEvent>, env);
      if (isTriageQueue(counted.queue)) return consumeTriageBatch(counted as MessageBatch<TriageMessage>, env);
      const deliveries = counted as MessageBatch<DeliveryMessage>;
      return isDeadLetterQueue(counted.queue) ? consumeDeadLetters(deliveries, env) : consumeWebhookBatch(deliveries, env);
    }),
} satisfies ExportedHandler<Bindings, DeliveryMessage | TrackedEvent | TriageMessage>;
