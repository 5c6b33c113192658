import { sql } from "drizzle-orm";
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { rawBatch } from "../platform/sql";
import { notMoving } from "../platform/moving";

const DAY_MS = 86_400_000;
/** Deliveries removed per statement pair: a bounded write, well inside one D1 query's limits. */
export const PRUNE_CHUNK = 500;
/** Chunks per cron firing: up to 5,000 deliveries a minute, 7.2 million a day, more than any shard produces. */
const CHUNKS_PER_RUN = 10;

/**
 * Delivered deliveries (and their attempts) whose delivery is older than the cutoff, oldest first,
 * one chunk per D1 batch. Only `delivered` rows are in the index's range: a pending delivery (still
 * being tried) or a failed one (which the user reads as failed and may retrigger) is never touched,
 * and a redelivered one counts from its new delivery. Answers how many deliveries went.
 */
export async function pruneDeliveredBefore(d1: D1Database, cutoff: number, chunk = PRUNE_CHUNK, maxChunks = CHUNKS_PER_RUN): Promise<number> {
  const oldest = sql`SELECT id FROM webhook_deliveries INDEXED BY webhook_deliveries_delivered_idx
    WHERE status = 'delivered' AND delivered_at < ${cutoff} AND ${notMoving(sql`account_id`)} ORDER BY delivered_at LIMIT ${chunk}`;
  let pruned = 0;
  for (let round = 0; round < maxChunks; round += 1) {
    // Both statements read the same chunk: a batch runs as one transaction, nothing writes between them.
    const [, removed] = await rawBatch(d1, [
      sql`DELETE FROM webhook_attempts WHERE delivery_id IN (${oldest})`,
      sql`DELETE FROM webhook_deliveries WHERE id IN (${oldest}) RETURNING id`,
    ]);
    pruned += removed!.length;
    if (removed!.length < chunk) break;
  }
  return pruned;
}

/** The minute cron's retention pass (WEBHOOK_DELIVERY_RETENTION_DAYS; 0 keeps every delivery). */
export async function pruneWebhookDeliveries(env: Bindings, at: Date): Promise<number> {
  const days = config(env).webhookDeliveryRetentionDays;
  if (days === null) return 0;
  return pruneDeliveredBefore(env.DB, at.getTime() - days * DAY_MS);
}
