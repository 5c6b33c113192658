import { config } from "../config";
import { database } from "../platform/db";
import type { Bindings } from "../platform/env";
import type { ScheduledJob } from "../platform/jobs";
import { log } from "../platform/logging";
import { mailPolicy } from "../platform/outbound";
import { connectionChecker, runConnectionCheck, type ConnectionChecker } from "./connection-check";
import { claimMailboxesToRecheck } from "./store";

/** A mailbox's check is re-run once it is this old (CONTRACT section 10: "daily"). */
export const RECHECK_AFTER_MS = 24 * 60 * 60 * 1000;
/** Mailboxes re-checked per minute: 28,800 a day, and a firing that ends well inside its minute when servers answer. */
const RECHECKS_PER_MINUTE = 20;
/** Each check holds an SMTP and an IMAP socket at once, and an invocation may have six open. */
const CONCURRENT_CHECKS = 3;

/**
 * Re-checks (with their stored passwords) up to `limit` mailboxes whose last check is over a day
 * old, oldest first; answers the ids it took. A check that throws (a password that no longer
 * decrypts) is logged and the mailbox waits for the next day, like one whose check ran.
 */
export async function recheckMailboxes(
  env: Bindings,
  now: number,
  check: ConnectionChecker = connectionChecker(mailPolicy(config(env))),
  limit = RECHECKS_PER_MINUTE,
): Promise<number[]> {
  const claimed = await claimMailboxesToRecheck(database(env.DB), now - RECHECK_AFTER_MS, now, limit);
  const queue = [...claimed];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      const id = row.id;
      await runConnectionCheck(env, row, {}, check).catch((error: Error) =>
        log("error", "mailbox connection re-check failed", { mailbox_id: id, error: error.message }),
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_CHECKS }, worker));
  return claimed.map((row) => row.id);
}

/** The minute cron's part of "run daily": a bounded batch of the mailboxes due, when checks are on. */
export const recheckMailboxesDaily: ScheduledJob = async (env, scheduledAt) => {
  const settings = config(env);
  if (!settings.mailboxConnectionChecks) return 0;
  return (await recheckMailboxes(env, scheduledAt.getTime())).length;
};
