import type { Bindings } from "../platform/env";
import { wakeMailboxes } from "../mailboxes/wake";
import { database } from "../platform/db";
import { lateMailboxes } from "./store";

/** Wakes at most this many late mailboxes per minute. */
const REARM_LIMIT = 500;

/** Minute job: re-arms the agents of mailboxes with ACTIVE campaigns whose wake is late or unknown. */
export async function rearmLateSenders(env: Bindings, at: Date): Promise<number> {
  const ids = await lateMailboxes(database(env.DB), at.getTime(), REARM_LIMIT);
  await wakeMailboxes(env, ids, "if-idle");
  return ids.length;
}
