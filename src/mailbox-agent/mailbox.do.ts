import { DurableObject } from "cloudflare:workers";
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import { blockOfId, firstBlockShard, onShard } from "../platform/shards";
import { locateRow } from "../directory/locate";
import { loadKeyring } from "../platform/crypto";
import { log } from "../platform/logging";
import { emailLinks } from "../engine/links";
import { runReaderPass, type ReadResult } from "./read-pass";
import type { ReaderCursor } from "../mail/reader";
import { runSenderPass, type PassOptions, type PassResult } from "../engine/sender";
import { SendJournal } from "../engine/journal";
import { passStart, recordWake } from "./store";
import { wakeToRecord } from "./recorded-wake";
import { sendDueReplies, sendReply, type Delivery, type ReplyDoor, type ReplyToSend } from "../replies/outbound";
import { deliverManualEmail, ManualSessions, type ManualEmail, type ManualMailDoor, type ManualOutcome } from "../manual-mail/send";
import { sendDueTestEmails } from "../deliverability/test-sender";
import { sendDueOutsideEmails, sendOutside, type OutsideMailDoor, type OutsideSend } from "../manual-mail/outside";
import { MailboxLogins, type AccessResult } from "../mailboxes/login";
import { mailboxById } from "../mailboxes/store";
import type { WakeMode } from "../mailboxes/wake";
import { TokenKeeper } from "./tokens";
import { runWarmupPass } from "../warmup/send";
import { sendOtpEmail } from "../warmup/otp";
import { warmupDoor } from "./warmup-door";

/** After a read that left messages waiting, the next one comes this soon. */
const READ_AGAIN_MS = 1_000;

type RunOptions = PassOptions & { mailboxId?: number; read?: boolean };

/**
 * One object per mailbox (named by its id): the only code that sends from that mailbox (campaign
 * passes, scheduled and immediate inbox replies, test emails: one at a time), so its gap, daily cap
 * and manual allowance hold across all its campaigns without any lock, and the one that reads its INBOX
 * (a cursor of UIDVALIDITY and last UID in its storage). It works on its alarm, set to the sooner of
 * the next send and the next read; `wake` sets it at once (START, new leads, a mailbox attached or
 * fixed, the minute cron for a late one).
 */
export class MailboxSender extends DurableObject<Bindings> implements ManualMailDoor, ReplyDoor, OutsideMailDoor {
  private running: Promise<unknown> | null = null;
  private reading: Promise<ReadResult> | null = null;
  /**
   * The soonest wake asked for (`ask`) since the running pass began. The alarm a pass sets at its end
   * would replace one asked for while it ran (and while the alarm handler runs `getAlarm` answers null,
   * so every such ask sets one), for work the pass may have read too early to see: it keeps the sooner.
   */
  private asked = Infinity;

  /** The Worker's environment; `this.env` is its mailbox's shard's once the object knows its mailbox. */
  private readonly root: Bindings;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.root = env;
    const mailboxId = this.kv.get<number>("mailbox");
    if (mailboxId !== undefined) this.env = onShard(env, this.kv.get<number>("shard") ?? firstBlockShard(blockOfId(mailboxId)) ?? 0);
  }

  private get kv() {
    return this.ctx.storage.kv;
  }

  private readonly journal = new SendJournal(this.ctx.storage.kv, () => this.ctx.storage.sync());

  /**
   * The mailbox this object serves (its name is the mailbox's id): kept for its alarms, with the
   * shard that holds it, where the object reads and writes from then on (until a move relocates it).
   */
  private async serve(mailboxId: number): Promise<void> {
    if (this.kv.get<number>("mailbox") === mailboxId && this.kv.get<number>("shard") !== undefined) return;
    const shard = (await locateRow(this.root, "email_accounts", mailboxId)) ?? firstBlockShard(blockOfId(mailboxId)) ?? 0;
    this.kv.put("mailbox", mailboxId);
    this.kv.put("shard", shard);
    this.env = onShard(this.root, shard);
  }

  /**
   * The mailbox's account is about to be copied to another shard (src/moves/): the pass in flight
   * finishes, and no pass runs until `relocate` (a pass would only meet the move's fence, and an email
   * sent whose result could not be written would stay in doubt).
   */
  async hold(mailboxId: number): Promise<void> {
    await this.serve(mailboxId);
    this.kv.put("held", true);
    await this.exclusive(async () => undefined);
  }

  /** The mailbox's account now lives on `shard` (or stayed, after a move undone): passes go on there, at once. */
  async relocate(mailboxId: number, shard: number): Promise<void> {
    await this.exclusive(async () => {
      this.kv.put("mailbox", mailboxId);
      this.kv.put("shard", shard);
      this.kv.delete("held");
      this.env = onShard(this.root, shard);
    });
    await this.ctx.storage.setAlarm(Date.now());
  }

  /** The one keeper of this mailbox's OAuth access token (CONTRACT 18.4). */
  private readonly tokens = new TokenKeeper(() => this.env, this.ctx.storage.kv);

  private async logins(): Promise<MailboxLogins> {
    return new MailboxLogins(this.env, database(this.env.DB), await loadKeyring(config(this.env).secretsKey), this.tokens);
  }

  /** The access token for a use outside this object (the connection check); refreshed here if due. */
  async accessToken(mailboxId: number): Promise<AccessResult> {
    await this.serve(mailboxId);
    const mailbox = await mailboxById(database(this.env.DB), mailboxId);
    if (!mailbox || mailbox.authType !== "OAUTH") return { ok: false, kind: "unavailable", message: "The mailbox does not sign in through OAuth" };
    return this.tokens.accessToken(mailbox, Date.now());
  }

  /** A server refused the token this object gave out: the next use refreshes. */
  async forgetAccessToken(): Promise<void> {
    await this.tokens.forget();
  }

  /** Runs a pass soon: at once when `now` or `read` (which makes the read due), else only if no alarm is set (the cron's re-arm). */
  async wake(mailboxId: number, mode: WakeMode = "now"): Promise<void> {
    await this.serve(mailboxId);
    if (mode === "read") this.kv.delete("nextReadAt");
    if (mode !== "if-idle") return this.ask(Date.now());
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now());
  }

  /** Sets the alarm to `at` unless it is set sooner; a pass running now keeps it too. */
  private async ask(at: number): Promise<void> {
    this.asked = Math.min(this.asked, at);
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > at) await this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    // The clock is read when the pass begins: one waiting behind a manual send runs at its own time.
    await this.exclusive(() => this.pass(Date.now(), {}));
  }

  /**
   * One pass at `now` (the alarm's time; tests and the operator route give their own clock and
   * bounds): a read of the INBOX when one is due (unless `read: false`), the replies scheduled from
   * the inbox that are due, the spam-test emails that are due (so a mailbox's sending, test emails
   * included, stays in this one object), then the campaign sending.
   */
  async runPass(now: number, options: RunOptions = {}): Promise<PassResult & { timings: PassOptions["timings"] }> {
    if (options.mailboxId !== undefined) await this.serve(options.mailboxId);
    const timings = { findMs: 0, claimMs: 0, sendMs: 0 };
    // One pass at a time, each at its own clock: a pass asked for while another runs waits for it
    // (sharing it would answer with the other pass's clock, e.g. an alarm's real time).
    return { ...(await this.exclusive(() => this.pass(now, { ...options, timings }))), timings };
  }

  /**
   * A manual email (a test email; later a forward or a one-off send) under the manual-send rule:
   * sent between passes, never during one, so the mailbox's gap and allowance hold.
   */
  async sendManualEmail(email: ManualEmail): Promise<ManualOutcome> {
    await this.serve(email.mailboxId);
    return this.exclusive(async () => deliverManualEmail(this.env, await this.logins(), email, Date.now()));
  }

  /** The warmup unblock code's email (CONTRACT 19.4), between passes like every other send. */
  async sendWarmupOtp(mailboxId: number, code: string): Promise<{ ok: true } | { ok: false; message: string }> {
    await this.serve(mailboxId);
    return this.exclusive(async () => sendOtpEmail(this.env, warmupDoor(database(this.env.DB), await this.logins()), mailboxId, code, Date.now()));
  }

  /** A forward or one-off email (CONTRACT 21.5); one the gap holds back waits in this object's storage, and it wakes for it. */
  async sendOutsideEmail(send: OutsideSend): Promise<ManualOutcome> {
    await this.serve(send.email.mailboxId);
    const outcome = await this.exclusive(async () => sendOutside(this.env, database(this.env.DB), await this.logins(), this.kv, send, Date.now()));
    if (!outcome.ok && outcome.kind === "wait") await this.ask(outcome.until);
    return outcome;
  }

  /** An inbox reply to send now; one the gap holds back is queued by the route, and this object wakes for it. */
  async sendInboxReply(reply: ReplyToSend): Promise<Delivery> {
    await this.serve(reply.emailAccountId);
    const delivery = await this.exclusive(async () => sendReply(this.env, await this.logins(), reply, Date.now()));
    if (!delivery.ok && delivery.kind === "wait") await this.ask(delivery.until);
    return delivery;
  }

  /** Sends one thing at a time: a pass or a manual send asked for while another runs waits for it. */
  private async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.running) await this.running.catch(() => undefined);
    const run = work().finally(() => (this.running = null));
    this.running = run;
    return run;
  }

  /** Reads the INBOX now, whatever the schedule (tests, the operator route, the replies benchmark). */
  async runRead(now: number, mailboxId: number): Promise<ReadResult> {
    await this.serve(mailboxId);
    return this.read(mailboxId, now);
  }

  /** One read at a time: a read asked for while one runs shares it (the cursor moves once). */
  private read(mailboxId: number, now: number): Promise<ReadResult> {
    if (!this.reading) this.reading = this.readOnce(mailboxId, now).finally(() => (this.reading = null));
    return this.reading;
  }

  private async readOnce(mailboxId: number, now: number): Promise<ReadResult> {
    let result: ReadResult = { cursor: null, more: false, outcome: null };
    try {
      result = await runReaderPass(this.env, await this.logins(), mailboxId, now, this.kv.get<ReaderCursor>("cursor") ?? null);
      if (result.cursor) this.kv.put("cursor", result.cursor);
    } catch (error) {
      log("error", "mailbox read failed", { mailbox_id: mailboxId, error: String(error) });
    }
    this.kv.put("nextReadAt", result.more ? now + READ_AGAIN_MS : now + config(this.env).mailboxPollMs);
    return result;
  }

  /**
   * The pass's scheduled replies and held emails, on one SMTP session: when each part next has one
   * due, and whether a send was tried (it may have held the mailbox).
   */
  private async manualPart(mailboxId: number, now: number, logins: MailboxLogins, replyDue: number | null) {
    const manual = new ManualSessions(logins);
    let nextReplyAt: number | null = null;
    let nextOutsideAt: number | null;
    try {
      nextReplyAt = await sendDueReplies(this.env, logins, mailboxId, now, replyDue, manual);
    } catch (error) {
      // Claimed replies stay QUEUED; the minute cron marks them failed rather than send twice.
      log("error", "scheduled replies failed", { mailbox_id: mailboxId, error: String(error) });
    }
    try {
      nextOutsideAt = await sendDueOutsideEmails(this.env, database(this.env.DB), logins, this.kv, now, manual);
    } catch (error) {
      log("error", "held emails failed", { mailbox_id: mailboxId, error: String(error) });
      nextOutsideAt = now + 60_000;
    }
    await manual.close();
    return { nextReplyAt, nextOutsideAt, tried: manual.tried };
  }

  private async pass(now: number, options: RunOptions): Promise<PassResult> {
    const mailboxId = this.kv.get<number>("mailbox");
    if (mailboxId === undefined || this.kv.get<boolean>("held")) return { sent: 0, nextWakeAt: null };
    this.asked = Infinity;
    if (options.read !== false && (this.kv.get<number>("nextReadAt") ?? 0) <= now) await this.read(mailboxId, now);
    const logins = await this.logins();
    const start = await passStart(database(this.env.DB), mailboxId).catch((error: unknown) => {
      // Replies and test emails are looked at again in a minute; the pass's other parts try on their own.
      log("error", "pass start failed", { mailbox_id: mailboxId, error: String(error) });
      return { mailbox: undefined, recordedWakeAt: null, nextReplyAt: now + 60_000, nextTestSendAt: now + 60_000 };
    });
    const { nextReplyAt, nextOutsideAt, tried } = await this.manualPart(mailboxId, now, logins, start.nextReplyAt);
    // The mailbox as this pass finds it: the test emails send from it, and warmup learns from it
    // whether it is off; read again when a manual send may have held it or ended its hold (or the start found none).
    let found = start.mailbox;
    let nextTestSendAt: number | null;
    try {
      if (tried || found === undefined) found = await mailboxById(database(this.env.DB), mailboxId);
      nextTestSendAt = await sendDueTestEmails(this.env, logins, found, now, start.nextTestSendAt);
    } catch (error) {
      // Claimed test emails count as sent; their cells reach the deadline as not_received.
      log("error", "spam test emails failed", { mailbox_id: mailboxId, error: String(error) });
      nextTestSendAt = now + 60_000;
    }
    const settings = config(this.env);
    const links = emailLinks(await loadKeyring(settings.secretsKey), settings.publicUrl);
    let result: PassResult;
    try {
      result = await runSenderPass(this.env, mailboxId, now, links, logins, this.journal, options);
    } catch (error) {
      // The next pass releases the claim this one held (its message in flight, if any, turns unconfirmed).
      log("error", "sender pass failed", { mailbox_id: mailboxId, error: String(error) });
      result = { sent: 0, nextWakeAt: now + 60_000 };
    }
    // Warmup after the campaign's turn: a due campaign email goes first, and its send holds the gap.
    let nextWarmupAt: number | null;
    try {
      nextWarmupAt = await runWarmupPass(this.env, warmupDoor(database(this.env.DB), logins), mailboxId, now, found);
    } catch (error) {
      log("error", "warmup pass failed", { mailbox_id: mailboxId, error: String(error) });
      nextWarmupAt = now + 60_000;
    }
    const wakeAt = Math.min(result.nextWakeAt ?? Infinity, this.kv.get<number>("nextReadAt") ?? Infinity, nextReplyAt ?? Infinity, nextTestSendAt ?? Infinity, nextOutsideAt ?? Infinity, nextWarmupAt ?? Infinity, this.asked);
    if (wakeAt === Infinity) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.max(wakeAt, Date.now()));
    // With no alarm, the cron looks again in an hour (a lost wake costs at most that).
    const recorded = wakeToRecord(start.recordedWakeAt, wakeAt === Infinity ? now + 3_600_000 : wakeAt);
    if (recorded !== null) await recordWake(database(this.env.DB), mailboxId, recorded);
    return result;
  }
}
