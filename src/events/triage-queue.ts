import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";

/**
 * The triage queue's doorbell: ingestion (pushed events, the mailbox's reader) rings it after it
 * commits replies; src/triage/ (above events and replies) consumes it. It lives here so neither
 * ingestion path imports the categoriser.
 */

/**
 * The triage queue's messages: replies to categorise, named by their campaign and event ids as the
 * ingestion that stored them knows them (or by row id, from the minute cron's safety net), and
 * chunks of replay jobs.
 */
export type TriageMessage = { replies: { campaignId: number; eventIds: string[] } } | { replyRows: number[] } | { replay: number };

/** The row a triage message names (a campaign, a reply row, a replay job): its shard is the message's. */
export function triageRow(message: TriageMessage): { table: "campaigns" | "events" | "triage_replays"; id: number } {
  if ("replies" in message) return { table: "campaigns", id: message.replies.campaignId };
  if ("replyRows" in message) return { table: "events", id: message.replyRows[0] ?? 0 };
  return { table: "triage_replays", id: message.replay };
}

/** Every environment names its triage queue `salvo-triage…` (see wrangler.toml). */
export function isTriageQueue(name: string): boolean {
  return name.startsWith("salvo-triage");
}

/** Event ids per queue message: a consumer batch stays a handful of D1 reads and one write. */
const IDS_PER_MESSAGE = 50;

/**
 * Hands the replies an ingestion just committed to the triage queue (call it after the commit).
 * Rows of other types are skipped; duplicates that the commit did not insert are harmless (their
 * categorisation exists already). A failure loses nothing: the minute cron finds replies that were
 * never categorised (sweepUntriaged, src/triage/queue.ts).
 */
export async function enqueueReplies(env: Bindings, campaignId: number, rows: { type: string; event_id: string | null }[]): Promise<void> {
  const eventIds = rows.flatMap((row) => (row.type === "REPLY" && row.event_id !== null ? [row.event_id] : []));
  if (eventIds.length === 0) return;
  const messages: { body: TriageMessage }[] = [];
  for (let i = 0; i < eventIds.length; i += IDS_PER_MESSAGE) {
    messages.push({ body: { replies: { campaignId, eventIds: eventIds.slice(i, i + IDS_PER_MESSAGE) } } });
  }
  try {
    await env.TRIAGE_QUEUE.sendBatch(messages);
  } catch (error) {
    log("warn", "triage enqueue failed; the cron will pick the replies up", { error: String(error), replies: eventIds.length });
  }
}
