import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { mailboxIdsOfCampaigns } from "./store";
import type { AccessResult, TokenSource } from "./login";
import type { MailboxRow } from "./rules";

/**
 * The doorbell of a mailbox's agent (its Durable Object, `src/mailbox-agent/`): features that give a
 * mailbox work (START, new leads, an attached or fixed mailbox, a scheduled reply) ring it here. Only
 * `wake` is typed, so these features need not import the agent that sits above them.
 */
export interface MailboxDoorbell {
  wake(mailboxId: number, mode: WakeMode): Promise<void>;
  accessToken(mailboxId: number): Promise<AccessResult>;
  forgetAccessToken(): Promise<void>;
  /** Mails the mailbox's warmup unblock code to its own address (CONTRACT 19.4), one send among its others. */
  sendWarmupOtp(mailboxId: number, code: string): Promise<{ ok: true } | { ok: false; message: string }>;
}

/** `now`: a pass at once; `if-idle`: only when no alarm is set (the cron's re-arm); `read`: a pass at once that reads the INBOX whatever its schedule (a live fetch). */
export type WakeMode = "now" | "if-idle" | "read";

/** The Durable Object of a mailbox, named by its id. */
export function mailboxObject(env: Bindings, mailboxId: number): DurableObjectStub {
  return env.MAILBOX_SENDER.get(env.MAILBOX_SENDER.idFromName(String(mailboxId)));
}

/** An OAuth mailbox's access token from its agent, the only holder (the connection check runs outside it). */
export function agentTokens(env: Bindings): TokenSource {
  const door = (mailbox: MailboxRow) => mailboxObject(env, mailbox.id) as unknown as MailboxDoorbell;
  return {
    accessToken: (mailbox) => door(mailbox).accessToken(mailbox.id),
    forget: (mailbox) => door(mailbox).forgetAccessToken(),
  };
}

/** The warmup unblock code's email, sent by the mailbox's agent. */
export function sendWarmupOtp(env: Bindings, mailboxId: number, code: string): Promise<{ ok: true } | { ok: false; message: string }> {
  return (mailboxObject(env, mailboxId) as unknown as MailboxDoorbell).sendWarmupOtp(mailboxId, code);
}

/** Wakes these mailboxes' agents now; a failed wake is logged (the minute cron re-arms late ones). */
export async function wakeMailboxes(env: Bindings, mailboxIds: number[], mode: WakeMode = "now"): Promise<void> {
  const results = await Promise.allSettled(mailboxIds.map((id) => (mailboxObject(env, id) as unknown as MailboxDoorbell).wake(id, mode)));
  for (const [index, result] of results.entries()) {
    if (result.status === "rejected") log("warn", "mailbox sender wake failed", { mailbox_id: mailboxIds[index], error: String(result.reason) });
  }
}

/** Wakes the agents of a campaign's mailboxes (it started, gained leads, or a held mailbox gave its first steps back), but `except`'s. */
export async function wakeCampaign(env: Bindings, campaignId: number, except: number | null = null): Promise<void> {
  await wakeMailboxes(env, (await mailboxIdsOfCampaigns(database(env.DB), [campaignId])).filter((id) => id !== except));
}

/** Wakes the agents of these campaigns' mailboxes, each once, with one read however many campaigns. */
export async function wakeCampaigns(env: Bindings, campaignIds: readonly number[]): Promise<void> {
  if (campaignIds.length > 0) await wakeMailboxes(env, await mailboxIdsOfCampaigns(database(env.DB), campaignIds));
}
