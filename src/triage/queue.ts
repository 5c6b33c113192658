import { sql } from "drizzle-orm";
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";
import { statement } from "../platform/sql";
import { triageReplies } from "./consumer";
import type { TriageMessage } from "../events/triage-queue";
import { advanceReplay } from "./replay";

/**
 * The triage queue's consumer: a batch's replies are categorised together (one write batch), then
 * each replay message advances its job by one chunk. A failure retries the messages it concerns;
 * replies whose messages are lost for good are found again by the minute cron (sweepUntriaged).
 */
export async function consumeTriageBatch(batch: MessageBatch<TriageMessage>, env: Bindings): Promise<void> {
  const replyMessages = batch.messages.filter((m) => !("replay" in m.body));
  const pairs: { campaignId: number; eventId: string }[] = [];
  const rows: number[] = [];
  for (const { body } of replyMessages) {
    if ("replies" in body) pairs.push(...body.replies.eventIds.map((eventId) => ({ campaignId: body.replies.campaignId, eventId })));
    else if ("replyRows" in body) rows.push(...body.replyRows);
  }
  if (replyMessages.length > 0) {
    try {
      await triageReplies(env, pairs, rows);
      for (const message of replyMessages) message.ack();
    } catch (error) {
      log("error", "reply categorisation failed; retrying", { error: error instanceof Error ? error.message : String(error), replies: pairs.length + rows.length });
      for (const message of replyMessages) message.retry({ delaySeconds: 10 });
    }
  }
  for (const message of batch.messages) {
    if (!("replay" in message.body)) continue;
    try {
      await advanceReplay(env, message.body.replay);
      message.ack();
    } catch (error) {
      log("error", "replay chunk failed", { job_id: message.body.replay, error: error instanceof Error ? error.message : String(error) });
      message.ack();
    }
  }
}

/** A reply not categorised this long after it was stored lost its queue message. */
const SWEEP_AFTER_MS = 2 * 60_000;
const SWEEP_WINDOW_MS = 24 * 3_600_000;
const SWEEP_LIMIT = 500;
const ROWS_PER_MESSAGE = 50;

/**
 * The minute cron's safety net: replies stored in the last day, more than two minutes ago, with no
 * categorisation (the enqueue after the ingestion failed, or the message was dropped after its
 * retries) go to the queue again. The consumer skips any that were categorised meanwhile.
 */
export async function sweepUntriaged(env: Bindings, at: Date): Promise<number> {
  if (config(env).categoriser.kind === "off") return 0;
  const now = at.getTime();
  const rows = await statement(
    env.DB,
    sql`SELECT e.id FROM events e INDEXED BY events_reply_created_idx
        WHERE e.type = 'REPLY' AND e.created_at >= ${now - SWEEP_WINDOW_MS} AND e.created_at <= ${now - SWEEP_AFTER_MS}
          AND NOT EXISTS (SELECT 1 FROM reply_categorisations p WHERE p.event_id = e.id)
        ORDER BY e.created_at LIMIT ${SWEEP_LIMIT}`,
  ).all<{ id: number }>();
  const ids = rows.results.map((row) => row.id);
  const messages: { body: TriageMessage }[] = [];
  for (let i = 0; i < ids.length; i += ROWS_PER_MESSAGE) messages.push({ body: { replyRows: ids.slice(i, i + ROWS_PER_MESSAGE) } });
  if (messages.length > 0) await env.TRIAGE_QUEUE.sendBatch(messages);
  return ids.length;
}
