/**
 * Warmup's share of the mailbox's pass (CONTRACT 19.4), run by the mailbox's own object after its
 * campaign sending (a due campaign email goes first): the day's warmup emails to pool partners at
 * their planned times, and replies to the share of received warmup mail the reply rate picks, all
 * inside the mailbox's gap (and, with auto-adjust, its cap). Logging in and the mailbox's day come
 * through the object's door, so this module knows nothing of how a mailbox signs in.
 */
import { eq, type SQL } from "drizzle-orm";
import { config, type WarmupConfig } from "../config";
import { emailAccounts } from "../db/schema";
import type { SmtpSender } from "../mail/smtp";
import type { SmtpFailure } from "../mail/smtp-replies";
import type { Bindings } from "../platform/env";
import { database, type Database } from "../platform/db";
import { log } from "../platform/logging";
import { zonedInstant } from "../platform/zoned-time";
import { warmupEmail, warmupReply } from "./corpus";
import { DAY_MS, SEND_FROM_HOUR, answers, choosePartners, nextWindowOpening, providerOf, refusalKind, sendTimes, zonedDay } from "./rules";
import { blockStatement, bouncedStatement, insertWarmupMessage, markRefused, markReplied, poolMembers, unanswered, warmupSent, type PoolMember } from "./store";
import { stateOf, targetOf } from "./view";

export type MailboxRecord = typeof emailAccounts.$inferSelect;

/**
 * What became of one warmup email: sent; refused, the pass going on; or refused so that the pass
 * ends (the login refused, or the mailbox's sending held by its server), with when to come back.
 */
type Delivery = "sent" | "refused" | { stopUntil: number };

/** What the mailbox's object lends warmup: its login, its server's hold and its day's figures (src/mailbox-agent/warmup-door.ts). */
export interface WarmupDoor {
  /**
   * A session to send as the mailbox (the caller closes it), or null when it cannot log in; `refused`
   * reports a refused login.
   */
  smtp(
    mailbox: MailboxRecord,
    now: number,
  ): Promise<{ session: SmtpSender; refused: (text: string) => Promise<void>; hold: (failure: SmtpFailure) => { until: number; statement: SQL } | null } | null>;
  /** The hold its server put on the mailbox's sending, if it still holds at `now` (the engine's rule): its end, and what a refused send is told. */
  held(mailbox: MailboxRecord, now: number): { until: number; message: string } | null;
  /** Campaign mail of the UTC day (for auto-adjust), what the cap counts, and the latest send of any kind (the gap). */
  day(mailbox: MailboxRecord, now: number): Promise<{ campaignToday: number; capToday: number; lastSentAt: number | null }>;
}

/** Replies sent per pass at most, and how far back received mail is still answered. */
const REPLY_WINDOW_MS = 2 * DAY_MS;
const CANDIDATES = 200;
/** With nothing planned, look again in this long (a pool that grows, settings that change). */
const IDLE_MS = 3_600_000;

/** The mailbox's login as the door lent it, with the one SMTP session the pass's warmup emails share (issue 27). */
type PassLogin = NonNullable<Awaited<ReturnType<WarmupDoor["smtp"]>>>;

interface Plan {
  mailbox: MailboxRecord;
  members: PoolMember[];
  times: number[];
  /** The receivers of the day's first emails still to send, in order. */
  partners: number[];
  sentFirst: number;
  repliesToday: number;
}

/**
 * Sends what is due now and answers when to come back (null: warmup is off for this mailbox).
 * Each email is recorded before it goes (its Message-ID is how every reader knows it), so a pass
 * that dies mid-send leaves a record that turns `not_found`, never an unknown message.
 */
export async function runWarmupPass(env: Bindings, door: WarmupDoor, mailboxId: number, now: number, seen?: { warmupEnabled: boolean }): Promise<number | null> {
  // Off in the row the pass already read: no read of its own (a mailbox turned on meanwhile warms from the next pass).
  if (seen?.warmupEnabled === false) return null;
  const db = database(env.DB);
  const settings = config(env).warmup;
  // Read again when on: the campaign's sends of this pass may have suspended it.
  const mailbox = await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailboxId)).get();
  if (!mailbox?.warmupEnabled) return null;
  const members = await poolMembers(db, settings.poolScope, mailbox.accountId);
  const state = stateOf(mailbox, settings, now, members.length);
  if (state !== "warming" || !members.some((m) => m.id === mailbox.id)) return now + IDLE_MS;
  // Its server refused its sending for now: warmup mail waits with the campaign's.
  const held = door.held(mailbox, now);
  if (held !== null) return held.until;
  const opens = nextWindowOpening(now, settings.timeZone);
  if (opens !== null) return opens;
  const day = await door.day(mailbox, now);
  const plan = await planOf(db, settings, mailbox, members, day.campaignToday, now);
  let lastSentAt = day.lastSentAt;
  let capUsed = day.capToday;
  const gapMs = mailbox.timeToWaitInMins * 60_000;
  const gapEnd = () => (lastSentAt === null ? now : lastSentAt + gapMs);
  const capFull = () => mailbox.autoAdjustWarmup && capUsed >= mailbox.maxEmailPerDay;
  // Under a shared cap a reply takes only the room the day's first emails still to come leave: answered
  // mail arrives all day, and replies sent as it comes would fill the cap before the evening's first email.
  const replyRoom = () => !mailbox.autoAdjustWarmup || capUsed + (plan.times.length - plan.sentFirst) < mailbox.maxEmailPerDay;
  let login: PassLogin | null | undefined;
  /** Set when a refusal ends the pass: when to come back. */
  let stoppedUntil: number | null = null;
  const send = async (work: () => Promise<Delivery>) => {
    login ??= await door.smtp(mailbox, now);
    if (!login) return;
    const delivery = await work();
    lastSentAt = now;
    capUsed++;
    if (typeof delivery === "object") stoppedUntil = delivery.stopUntil;
  };
  const goOn = () => login !== null && stoppedUntil === null;

  try {
    // First emails due by now, one after another while the gap allows.
    while (plan.sentFirst < plan.times.length && plan.times[plan.sentFirst]! <= now && gapEnd() <= now && !capFull()) {
      const partner = plan.partners.shift();
      const receiver = plan.members.find((m) => m.id === partner);
      plan.sentFirst++;
      if (!receiver) continue;
      await send(() => sendFirst(db, mailbox, receiver, login!, now));
      if (!goOn() || gapMs > 0) break;
    }
    // Replies to the share of received warmup mail the reply rate picks, within the daily limit.
    const replyLimit = mailbox.dailyReplyLimit ?? Infinity;
    if (goOn() && plan.repliesToday < replyLimit && gapEnd() <= now && replyRoom()) {
      const candidates = (await unanswered(db, mailbox.id, now - REPLY_WINDOW_MS, CANDIDATES)).filter((m) => answers(m.messageId, mailbox.replyRatePercentage));
      for (const original of candidates) {
        if (plan.repliesToday >= replyLimit || gapEnd() > now || !replyRoom()) break;
        const partner = plan.members.find((m) => m.id === original.senderId);
        if (!partner) continue;
        plan.repliesToday++;
        await send(() => sendAnswer(db, mailbox, partner, original, login!, now));
        if (!goOn()) break;
      }
    }
  } finally {
    await login?.session.close();
  }
  if (stoppedUntil !== null) return stoppedUntil;
  const next = plan.sentFirst < plan.times.length ? plan.times[plan.sentFirst]! : zonedInstant(zonedDay(now, settings.timeZone) + DAY_MS + SEND_FROM_HOUR * 3_600_000, settings.timeZone);
  return Math.max(next, gapEnd(), now + 1_000);
}

async function planOf(db: Database, settings: WarmupConfig, mailbox: MailboxRecord, members: PoolMember[], campaignToday: number, now: number): Promise<Plan> {
  const day = zonedDay(now, settings.timeZone);
  const start = zonedInstant(day, settings.timeZone);
  const target = targetOf(mailbox, settings, now, campaignToday, "warming");
  const sent = await warmupSent(db, mailbox.id, start, zonedInstant(day + DAY_MS, settings.timeZone));
  // The plan never shrinks below what was already sent today (auto-adjust may lower the target).
  const times = sendTimes(mailbox.id, day, Math.max(target, sent.warmup), settings.timeZone);
  const asPartner = (m: PoolMember) => ({ id: m.id, provider: providerOf(m.type, m.smtpHost), domain: m.fromEmail.split("@")[1] ?? "" });
  const partners = choosePartners(asPartner(mailbox), members.map(asPartner), times.length - sent.warmup, day, sent.receivers);
  return { mailbox, members, times, partners, sentFirst: sent.warmup, repliesToday: sent.replies };
}

function newMessageId(mailbox: MailboxRecord): string {
  const random = [...crypto.getRandomValues(new Uint8Array(12))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `<wu.${random}@${mailbox.fromEmail.split("@")[1] ?? "salvo.invalid"}>`;
}

async function sendFirst(db: Database, mailbox: MailboxRecord, receiver: PoolMember, login: PassLogin, now: number): Promise<Delivery> {
  const messageId = newMessageId(mailbox);
  const content = warmupEmail(messageId, mailbox.fromName, receiver.fromName, mailbox.warmupKeyId ?? "");
  const id = await insertWarmupMessage(db, { senderId: mailbox.id, receiverId: receiver.id, kind: "warmup", replyToId: null, messageId, subject: content.subject, sentAt: now });
  return deliver(db, mailbox, receiver, id, { messageId, content, headers: {} }, login, now);
}

async function sendAnswer(
  db: Database,
  mailbox: MailboxRecord,
  receiver: PoolMember,
  original: { id: number; messageId: string; subject: string },
  login: PassLogin,
  now: number,
): Promise<Delivery> {
  const messageId = newMessageId(mailbox);
  const content = warmupReply(messageId, original.subject, mailbox.fromName, receiver.fromName, mailbox.warmupKeyId ?? "");
  const id = await insertWarmupMessage(db, { senderId: mailbox.id, receiverId: receiver.id, kind: "reply", replyToId: original.id, messageId, subject: content.subject, sentAt: now });
  const sent = await deliver(db, mailbox, receiver, id, { messageId, content, headers: { "In-Reply-To": original.messageId, References: original.messageId } }, login, now);
  if (sent === "sent") await markReplied(db, original.id, now);
  return sent;
}

async function deliver(
  db: Database,
  mailbox: MailboxRecord,
  receiver: PoolMember,
  id: number,
  message: { messageId: string; content: { subject: string; text: string; html: string }; headers: Record<string, string> },
  login: PassLogin,
  now: number,
): Promise<Delivery> {
  const result = await login.session.send({
    from: { email: mailbox.fromEmail, name: mailbox.fromName },
    to: { email: receiver.fromEmail, name: receiver.fromName },
    subject: message.content.subject,
    text: message.content.text,
    html: message.content.html,
    headers: { "Message-ID": message.messageId, ...message.headers },
  });
  if (result.ok) return "sent";
  const hold = login.hold(result.failure);
  await refused(db, mailbox, receiver, id, result.failure, now, hold?.statement);
  if (result.failure.kind === "auth_failed") {
    await login.refused(result.failure.text);
    return { stopUntil: now + IDLE_MS };
  }
  return hold === null ? "refused" : { stopUntil: hold.until };
}

/** A refused warmup email: recorded with the server's words; a bounce takes the address out of the pool; enough refusals block the sender. */
async function refused(db: Database, mailbox: MailboxRecord, receiver: PoolMember, id: number, failure: SmtpFailure, now: number, hold: SQL | undefined): Promise<void> {
  const kind = failure.kind === "recipient_rejected" || failure.kind === "permanent" ? refusalKind(failure.code, failure.text) : "other";
  const bounced = kind === "bounce" && failure.kind === "recipient_rejected";
  // The reply's text is its lines as the server wrote them, code included.
  await markRefused(db, id, { text: failure.text, kind }, [
    ...(hold ? [hold] : []),
    ...(bounced ? [bouncedStatement(receiver.id, failure.text)] : []),
    ...(kind !== "other" ? [blockStatement(mailbox.id, now)] : []),
  ]);
  log("warn", "warmup email refused", { mailbox_id: mailbox.id, receiver_id: receiver.id, kind, code: failure.code });
}
