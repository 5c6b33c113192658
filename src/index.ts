import { createApp } from "./app";
import type { Bindings } from "./platform/env";
import { consumeLogged } from "./platform/queue-log";
import { runScheduled } from "./scheduled";
import { consumeDeadLetters, consumeWebhookBatch, isDeadLetterQueue } from "./webhooks/consumer";
import type { DeliveryMessage } from "./webhooks/queue-message";
import { isTrackingQueue, type TrackedEvent } from "./tracking/queue-message";
import { consumeTrackingBatch } from "./tracking/store";
import { isTriageQueue, triageRowId, type TriageMessage } from "./events/triage-queue";
import { consumeByShard } from "./platform/shards";
import { consumeTriageBatch } from "./triage/queue";

export { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
export { MailboxSender } from "./mailbox-agent/mailbox.do";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  // Each message names a row whose id says its shard: every consumer works on one shard at a time
  // (tracking hits find theirs in recordTrackedEvents, which the unsubscribe link's route shares).
  queue: (batch: MessageBatch<DeliveryMessage | TrackedEvent | TriageMessage>, env: Bindings) =>
    consumeLogged(batch, (counted) => {
      if (isTrackingQueue(counted.queue)) return consumeTrackingBatch(counted as MessageBatch<TrackedEvent>, env);
      if (isTriageQueue(counted.queue)) return consumeByShard(env, counted as MessageBatch<TriageMessage>, triageRowId, consumeTriageBatch);
      const consume = isDeadLetterQueue(counted.queue) ? consumeDeadLetters : consumeWebhookBatch;
      return consumeByShard(env, counted as MessageBatch<DeliveryMessage>, (message) => message.deliveryId, consume);
    }),
} satisfies ExportedHandler<Bindings, DeliveryMessage | TrackedEvent | TriageMessage>;
