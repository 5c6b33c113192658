import { wakeMailboxes } from "../mailboxes/wake";
import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { failInterruptedReplies, mailboxesWithDueReplies } from "./outbound-store";

/** Mailboxes woken per minute at most (the rest the next minute). */
const WAKE_LIMIT = 500;

/**
 * Minute job: wakes the objects of mailboxes with a scheduled reply due (they send it on their
 * pass), and fails replies whose send was interrupted, so none is ever sent twice.
 */
export async function wakeForScheduledReplies(env: Bindings, at: Date): Promise<number> {
  const db = database(env.DB);
  const now = at.getTime();
  const interrupted = await failInterruptedReplies(db, now);
  if (interrupted.length > 0) log("warn", "replies interrupted mid-send marked failed", { count: interrupted.length });
  const ids = await mailboxesWithDueReplies(db, now, WAKE_LIMIT);
  await wakeMailboxes(env, ids);
  return ids.length;
}
