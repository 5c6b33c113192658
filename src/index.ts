import { createApp } from "./app";
import type { Bindings } from "./platform/env";
import { consumeLogged } from "./platform/queue-log";
import { runScheduled } from "./scheduled";
import { consumeDeadLetters, consumeWebhookBatch, isDeadLetterQueue } from "./webhooks/consumer";
import type { DeliveryMessage } from "./webhooks/queue-message";
import { isTrackingQueue, type TrackingMessage } from "./tracking/queue-message";
import { consumeTrackingBatch } from "./tracking/store";
import { isTriageQueue, triageRow, type TriageMessage } from "./events/triage-queue";
import { consumeByShard } from "./platform/shards";
import { locateRows, type NamedTable } from "./directory/locate";
import { consumeTriageBatch } from "./triage/queue";

export { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
export { MailboxSender } from "./mailbox-agent/mailbox.do";

const app = createApp();

/** Where each message's row is (src/directory/locate.ts): the shard its consumer works on. */
function locator<Body>(env: Bindings, rowOf: (body: Body) => { table: NamedTable; id: number }) {
  return async (bodies: Body[]): Promise<Array<number | null>> => {
    const rows = bodies.map(rowOf);
    const byTable = new Map<NamedTable, number[]>();
    for (const row of rows) byTable.set(row.table, [...(byTable.get(row.table) ?? []), row.id]);
    const found = new Map(await Promise.all([...byTable].map(async ([table, ids]) => [table, await locateRows(env, table, ids)] as const)));
    return rows.map((row) => found.get(row.table)?.get(row.id) ?? null);
  };
}

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
  // Each message names a row, whose shard the consumer works on, one shard at a time (tracking hits
  // find theirs in recordTrackedEvents, which the unsubscribe link's route shares).
  queue: (batch: MessageBatch<DeliveryMessage | TrackingMessage | TriageMessage>, env: Bindings) =>
    consumeLogged(batch, (counted) => {
      if (isTrackingQueue(counted.queue)) return consumeTrackingBatch(counted as MessageBatch<TrackingMessage>, env);
      if (isTriageQueue(counted.queue)) return consumeByShard(env, counted as MessageBatch<TriageMessage>, locator(env, triageRow), consumeTriageBatch);
      const consume = isDeadLetterQueue(counted.queue) ? consumeDeadLetters : consumeWebhookBatch;
      return consumeByShard(env, counted as MessageBatch<DeliveryMessage>, locator(env, (message: DeliveryMessage) => ({ table: "webhook_deliveries", id: message.deliveryId })), consume);
    }),
} satisfies ExportedHandler<Bindings, DeliveryMessage | TrackingMessage | TriageMessage>;
