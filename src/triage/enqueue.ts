import type { Bindings } from "../env";
import { log } from "../platform/logging";
import type { TriageMessage } from "./queue-message";

/** Event ids per queue message: a consumer batch stays a handful of D1 reads and one write. */
const IDS_PER_MESSAGE = 50;

/**
 * Hands the replies an ingestion just committed to the triage queue (call it after the commit).
 * Rows of other types are skipped; duplicates that the commit did not insert are harmless (their
 * categorisation exists already). A failure loses nothing: the minute cron finds replies that were
 * never categorised (src/triage/sweep.ts).
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
