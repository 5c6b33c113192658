/**
 * The triage queue's messages: replies to categorise, named by their campaign and event ids as the
 * ingestion that stored them knows them (or by row id, from the minute cron's safety net), and
 * chunks of replay jobs.
 */
export type TriageMessage = { replies: { campaignId: number; eventIds: string[] } } | { replyRows: number[] } | { replay: number };

/** Every environment names its triage queue `salvo-triage…` (see wrangler.toml). */
export function isTriageQueue(name: string): boolean {
  return name.startsWith("salvo-triage");
}
