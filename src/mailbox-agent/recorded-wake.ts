/**
 * How far past its next wake a mailbox's object records that it will have run a pass. The minute
 * cron re-arms an object whose recorded wake is a minute gone (`rearm.ts`), so a lost alarm is found
 * at most this much later; in exchange the passes in between write nothing to D1 (the pass reads its
 * mailbox's row anyway, and with it the wake recorded): an object that reads its INBOX every five
 * minutes writes every fourth pass, one that sends every minute every sixteenth, where each pass wrote.
 */
export const WAKE_SLACK_MS = 15 * 60_000;

/** What a pass that wakes next at `wakeAt` records for the cron, or null when the wake recorded still stands for it. */
export function wakeToRecord(recorded: number | null, wakeAt: number): number | null {
  if (recorded !== null && wakeAt <= recorded && recorded <= wakeAt + WAKE_SLACK_MS) return null;
  return wakeAt + WAKE_SLACK_MS;
}
