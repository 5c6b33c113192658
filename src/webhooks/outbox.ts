import { sql } from "drizzle-orm";
import { rawBatch, statement } from "../platform/sql";
import type { Bindings } from "../config";
import { log } from "../platform/logging";

export interface NewDelivery {
  accountId: number;
  webhookId: number;
  campaignId: number;
  eventType: string;
  payload: Record<string, unknown>;
}

export interface DeliveryMessage {
  deliveryId: number;
}

const SEND_BATCH_LIMIT = 100;

/** Stores deliveries (one statement, however many) and hands them to the queue. */
export async function storeAndEnqueue(env: Bindings, deliveries: NewDelivery[], now = Date.now()): Promise<number[]> {
  if (deliveries.length === 0) return [];
  const rows = deliveries.map((d) => ({
    account_id: d.accountId,
    webhook_id: d.webhookId,
    campaign_id: d.campaignId,
    message_id: `msg_${crypto.randomUUID().replaceAll("-", "")}`,
    event_type: d.eventType,
    payload: JSON.stringify(d.payload),
  }));
  const [inserted] = await rawBatch(env.DB, [
    sql`INSERT INTO webhook_deliveries (account_id, webhook_id, campaign_id, message_id, event_type, payload, created_at)
        SELECT value ->> '$.account_id', value ->> '$.webhook_id', value ->> '$.campaign_id', value ->> '$.message_id',
               value ->> '$.event_type', value ->> '$.payload', ${now}
        FROM json_each(${JSON.stringify(rows)})
        RETURNING id`,
  ]);
  const ids = inserted!.map((row) => Number(row.id));
  await enqueue(env, ids, now);
  return ids;
}

/**
 * Sends delivery ids to the queue and marks them enqueued. A failure here loses nothing: the rows
 * stay unmarked and the minute cron sends them again.
 */
export async function enqueue(env: Bindings, ids: number[], now = Date.now()): Promise<void> {
  for (let i = 0; i < ids.length; i += SEND_BATCH_LIMIT) {
    const chunk = ids.slice(i, i + SEND_BATCH_LIMIT);
    try {
      await env.WEBHOOK_QUEUE.sendBatch(chunk.map((deliveryId) => ({ body: { deliveryId } satisfies DeliveryMessage })));
    } catch (error) {
      log("warn", "webhook enqueue failed; the cron will retry", { error: String(error), deliveries: chunk.length });
      return;
    }
    await statement(
      env.DB,
      sql`UPDATE webhook_deliveries SET enqueued_at = ${now} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(chunk)}))`,
    ).run();
  }
}

const STRANDED_AFTER_MS = 60_000;

/** Pending deliveries that never reached the queue (the producer failed after storing them). */
export async function enqueueStranded(env: Bindings, now: number): Promise<void> {
  const rows = await statement(
    env.DB,
    sql`SELECT id FROM webhook_deliveries WHERE status = 'pending' AND enqueued_at IS NULL AND created_at <= ${now - STRANDED_AFTER_MS}
        ORDER BY id LIMIT 1000`,
  ).all<{ id: number }>();
  await enqueue(
    env,
    rows.results.map((row) => row.id),
    now,
  );
}
