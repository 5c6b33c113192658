import type { Bindings } from "../env";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import type { MailboxSender } from "./sender.do";
import { lateMailboxes, mailboxIdsOfCampaign } from "./store";

/** Wakes at most this many late mailboxes per minute. */
const REARM_LIMIT = 500;

/** The sender object of a mailbox. */
export function senderStub(env: Bindings, mailboxId: number): DurableObjectStub<MailboxSender> {
  // env.ts leaves the namespace untyped (typing it there would close an import circle).
  return env.MAILBOX_SENDER.get(env.MAILBOX_SENDER.idFromName(String(mailboxId))) as unknown as DurableObjectStub<MailboxSender>;
}

/** Wakes these mailboxes' senders now; a failed wake is logged (the minute cron re-arms late ones). */
export async function wakeMailboxes(env: Bindings, mailboxIds: number[], mode: "now" | "if-idle" = "now"): Promise<void> {
  const results = await Promise.allSettled(mailboxIds.map((id) => senderStub(env, id).wake(id, mode)));
  for (const [index, result] of results.entries()) {
    if (result.status === "rejected") log("warn", "mailbox sender wake failed", { mailbox_id: mailboxIds[index], error: String(result.reason) });
  }
}

/** Wakes the senders of a campaign's mailboxes (it started, or gained leads). */
export async function wakeCampaign(env: Bindings, campaignId: number): Promise<void> {
  await wakeMailboxes(env, await mailboxIdsOfCampaign(database(env.DB), campaignId));
}

/** Minute job: re-arms the senders of mailboxes with ACTIVE campaigns whose wake is late or unknown. */
export async function rearmLateSenders(env: Bindings, at: Date): Promise<number> {
  const ids = await lateMailboxes(database(env.DB), at.getTime(), REARM_LIMIT);
  await wakeMailboxes(env, ids, "if-idle");
  return ids.length;
}
