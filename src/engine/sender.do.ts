import { DurableObject } from "cloudflare:workers";
import { config } from "../config";
import type { Bindings } from "../env";
import { database } from "../platform/db";
import { loadKeyring } from "../platform/crypto";
import { log } from "../platform/logging";
import { emailLinks } from "./links";
import { runSenderPass, type PassOptions, type PassResult } from "./sender";
import { recordWake } from "./store";

/**
 * One object per mailbox (named by its id): the only code that sends from that mailbox, so its gap
 * and daily cap hold across all its campaigns without any lock. It works on its alarm; `wake` sets
 * the alarm (START, new leads, a mailbox attached or fixed, the minute cron for a late one).
 */
export class MailboxSender extends DurableObject<Bindings> {
  private running: Promise<PassResult> | null = null;

  /** Runs a pass soon: at once when `now`, else only if no alarm is set (the cron's re-arm). */
  async wake(mailboxId: number, mode: "now" | "if-idle" = "now"): Promise<void> {
    this.ctx.storage.kv.put("mailbox", mailboxId);
    const alarm = await this.ctx.storage.getAlarm();
    if (mode === "if-idle" && alarm !== null) return;
    if (alarm === null || alarm > Date.now()) await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.runPass(Date.now());
  }

  /** One pass at `now` (the alarm's time; tests and the operator route give their own clock and bounds). */
  async runPass(now: number, options: PassOptions & { mailboxId?: number } = {}): Promise<PassResult & { timings: PassOptions["timings"] }> {
    if (options.mailboxId !== undefined) this.ctx.storage.kv.put("mailbox", options.mailboxId);
    const timings = { findMs: 0, claimMs: 0, sendMs: 0 };
    if (!this.running) this.running = this.pass(now, { ...options, timings }).finally(() => (this.running = null));
    return { ...(await this.running), timings };
  }

  private async pass(now: number, options: PassOptions): Promise<PassResult> {
    const mailboxId = this.ctx.storage.kv.get<number>("mailbox");
    if (mailboxId === undefined) return { sent: 0, nextWakeAt: null };
    const settings = config(this.env);
    const links = emailLinks(await loadKeyring(settings.secretsKey), settings.publicUrl);
    let result: PassResult;
    try {
      result = await runSenderPass(this.env, mailboxId, now, links, options);
    } catch (error) {
      // Claims not stored stay leased and come back when the lease ends; try again then.
      log("error", "sender pass failed", { mailbox_id: mailboxId, error: String(error) });
      result = { sent: 0, nextWakeAt: now + 60_000 };
    }
    if (result.nextWakeAt === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.max(result.nextWakeAt, Date.now()));
    // With no alarm, the cron looks again in an hour (a lost wake costs at most that).
    await recordWake(database(this.env.DB), mailboxId, result.nextWakeAt ?? now + 3_600_000);
    return result;
  }
}
