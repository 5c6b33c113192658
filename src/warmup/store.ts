import { and, desc, eq, gte, inArray, isNull, lt, sql, type SQL } from "drizzle-orm";
import { accounts, emailAccounts, warmupMessages, warmupOtps } from "../db/schema";
import type { Database } from "../platform/db";
import { rawBatch } from "../platform/sql";
import { BLOCK_HARD_BOUNCES, BLOCK_POLICY_REJECTIONS, DAY_MS, NOT_FOUND_AFTER_MS } from "./rules";

/**
 * Warmup's SQL: the pool, what a mailbox sent today, the sends and where they landed, the counters
 * and the day-by-day statistics (CONTRACT 19). Every figure is read from `warmup_messages`, which the
 * senders write at send and the receivers' readers fill.
 */

/** A pool member (rules.ts `isPoolMember`), as SQL over `email_accounts`. */
export const memberCondition: SQL = sql`${emailAccounts.warmupEnabled} = 1 AND ${emailAccounts.isSuspended} = 0
  AND ${emailAccounts.warmupBlockedReason} IS NULL AND ${emailAccounts.warmupBouncedReason} IS NULL
  AND ${emailAccounts.isSmtpSuccess} = 1 AND ${emailAccounts.isImapSuccess} = 1 AND ${emailAccounts.disconnectCode} IS NULL`;

export interface PoolMember {
  id: number;
  accountId: number;
  fromEmail: string;
  fromName: string;
  type: string;
  smtpHost: string;
}

/**
 * The members of the pool `accountId` belongs to: its account's (clients' mailboxes included), or
 * with the deployment scope and the account's flag, those of every flagged account.
 */
export async function poolMembers(db: Database, scope: "account" | "deployment", accountId: number): Promise<PoolMember[]> {
  const shared = scope === "deployment" && (await db.select({ shared: accounts.warmupSharedPool }).from(accounts).where(eq(accounts.id, accountId)).get())?.shared === true;
  const where = shared
    ? and(sql`${emailAccounts.accountId} IN (SELECT id FROM accounts WHERE warmup_shared_pool = 1)`, memberCondition)
    : and(eq(emailAccounts.accountId, accountId), memberCondition);
  return db
    .select({ id: emailAccounts.id, accountId: emailAccounts.accountId, fromEmail: emailAccounts.fromEmail, fromName: emailAccounts.fromName, type: emailAccounts.type, smtpHost: emailAccounts.smtpHost })
    .from(emailAccounts)
    .where(where)
    .orderBy(emailAccounts.id);
}

/** Whether `receiverId` is still a member of the pool `accountId` belongs to (checked just before each send). */
export async function stillMember(db: Database, scope: "account" | "deployment", accountId: number, receiverId: number): Promise<boolean> {
  return (await poolMembers(db, scope, accountId)).some((m) => m.id === receiverId);
}

/** What a mailbox sent as warmup in [start, end): first emails and replies, and its latest send ever. */
export async function warmupSent(db: Database, mailboxId: number, start: number, end: number): Promise<{ warmup: number; replies: number; receivers: number[] }> {
  const rows = await db
    .select({ kind: warmupMessages.kind, receiverId: warmupMessages.receiverId })
    .from(warmupMessages)
    .where(and(eq(warmupMessages.senderId, mailboxId), gte(warmupMessages.sentAt, new Date(start)), lt(warmupMessages.sentAt, new Date(end))));
  return {
    warmup: rows.filter((r) => r.kind === "warmup").length,
    replies: rows.filter((r) => r.kind === "reply").length,
    receivers: rows.filter((r) => r.kind === "warmup").map((r) => r.receiverId),
  };
}

export interface NewWarmupMessage {
  senderId: number;
  receiverId: number;
  kind: "warmup" | "reply";
  replyToId: number | null;
  messageId: string;
  subject: string;
  sentAt: number;
}

/** Records a warmup email before it goes, so a receiver's reader knows it whatever happens next. */
export async function insertWarmupMessage(db: Database, message: NewWarmupMessage): Promise<number> {
  const row = await db
    .insert(warmupMessages)
    .values({ ...message, sentAt: new Date(message.sentAt) })
    .returning({ id: warmupMessages.id })
    .get();
  return row.id;
}

/** The server did not take it: the server's words and their kind (policy, bounce, other); with what the refusal causes (`also`), in one batch. */
export async function markRefused(db: Database, id: number, refusal: { text: string; kind: string }, also: SQL[] = []): Promise<void> {
  await rawBatch(db.$client, [db.update(warmupMessages).set({ status: "refused", error: refusal.text, errorKind: refusal.kind }).where(eq(warmupMessages.id, id)), ...also]);
}

/**
 * A bounce came back to `senderId` for a warmup email it sent: refused with the report's words and, a
 * hard one, its receiver out of the pool and the sender blocked when it makes 3 in 7 days, in one
 * batch; nothing when the email is not the sender's own.
 */
export async function markRefusedByMessageId(db: Database, senderId: number, messageId: string, refusal: { text: string; kind: string }, now: number): Promise<void> {
  const own = and(eq(warmupMessages.messageId, messageId), eq(warmupMessages.senderId, senderId));
  const receiver = sql`(SELECT ${warmupMessages.receiverId} FROM ${warmupMessages} WHERE ${own})`;
  await rawBatch(db.$client, [
    db.update(warmupMessages).set({ status: "refused", error: refusal.text, errorKind: refusal.kind }).where(own),
    ...(refusal.kind === "bounce" ? [bouncedStatement(receiver, refusal.text), blockStatement(senderId, now, sql`EXISTS (SELECT 1 FROM ${warmupMessages} WHERE ${own})`)] : []),
  ]);
}

/** A reply went out: the email it answers is replied. */
export async function markReplied(db: Database, id: number, at: number): Promise<void> {
  await db.update(warmupMessages).set({ repliedAt: new Date(at) }).where(eq(warmupMessages.id, id));
}

/**
 * Warmup mail this mailbox received and found (first emails, not replies), unanswered, since `since`,
 * newest first: the reply candidates. Those the reply rate does not pick stay unanswered until they
 * age out, so the oldest first would fill every place with them once enough wait.
 */
export async function unanswered(db: Database, receiverId: number, since: number, limit: number) {
  return db
    .select({ id: warmupMessages.id, senderId: warmupMessages.senderId, messageId: warmupMessages.messageId, subject: warmupMessages.subject })
    .from(warmupMessages)
    .where(
      and(
        eq(warmupMessages.receiverId, receiverId),
        eq(warmupMessages.kind, "warmup"),
        inArray(warmupMessages.landed, ["inbox", "spam"]),
        isNull(warmupMessages.repliedAt),
        gte(warmupMessages.landedAt, new Date(since)),
      ),
    )
    .orderBy(desc(warmupMessages.landedAt))
    .limit(limit);
}

/**
 * For the batch that records a refusal of `mailboxId`'s warmup mail (at send, or a bounce read back),
 * after it: 3 policy rejections in the UTC day or 3 hard bounces in 7 days block its warmup with the
 * latest servers' words (CONTRACT 19.4), so the mailbox leaves the pool in the same commit; only
 * `when` that holds (the refused email is the mailbox's own). Counted from when warmup was last
 * turned on or unblocked: a person who lifts a block starts afresh.
 */
export function blockStatement(mailboxId: number, now: number, when: SQL = sql`1`): SQL {
  // Mail sent before warmup was last turned on or unblocked belongs to the block that was lifted.
  const lifted = sql`(SELECT max(coalesce(warmup_enabled_at, 0), coalesce(warmup_unblocked_at, 0)) FROM email_accounts WHERE id = ${mailboxId})`;
  const refusals = sql`FROM warmup_messages WHERE sender_id = ${mailboxId} AND status = 'refused' AND sent_at >= ${lifted}
    AND ((error_kind = 'policy' AND sent_at >= ${now - (now % DAY_MS)}) OR (error_kind = 'bounce' AND sent_at >= ${now - 7 * DAY_MS}))`;
  const words = sql`(SELECT group_concat(error, ' | ') FROM (SELECT error ${refusals} AND error IS NOT NULL ORDER BY sent_at DESC, id DESC LIMIT 3))`;
  return sql`UPDATE email_accounts SET warmup_blocked_reason = coalesce(nullif(${words}, ''), 'its warmup mail was refused')
    WHERE id = ${mailboxId} AND warmup_blocked_reason IS NULL AND ${when}
      AND ((SELECT count(*) ${refusals} AND error_kind = 'policy') >= ${BLOCK_POLICY_REJECTIONS}
        OR (SELECT count(*) ${refusals} AND error_kind = 'bounce') >= ${BLOCK_HARD_BOUNCES})`;
}

/** Warmup mail to this address bounced: the address leaves the pool (19.5). For the batch that records the bounce. */
export function bouncedStatement(mailboxId: number | SQL, reason: string): SQL {
  return sql`UPDATE email_accounts SET warmup_bounced_reason = ${reason} WHERE id = ${mailboxId} AND warmup_bounced_reason IS NULL`;
}

export interface Awaited {
  id: number;
  senderId: number;
  kind: "warmup" | "reply";
  messageId: string;
  subject: string;
  sentAt: number;
}

/** Warmup mail sent to `receiverId` that its reader has not placed yet (oldest first). */
export async function awaitedBy(db: Database, receiverId: number, limit: number): Promise<Awaited[]> {
  const rows = await db
    .select({ id: warmupMessages.id, senderId: warmupMessages.senderId, kind: warmupMessages.kind, messageId: warmupMessages.messageId, subject: warmupMessages.subject, sentAt: warmupMessages.sentAt })
    .from(warmupMessages)
    .where(and(eq(warmupMessages.receiverId, receiverId), isNull(warmupMessages.landed), eq(warmupMessages.status, "sent")))
    .orderBy(warmupMessages.sentAt)
    .limit(limit);
  return rows.map((r) => ({ ...r, sentAt: r.sentAt.getTime() }));
}

/** Where the receiver first found a message; rescued (moved out of spam) and opened (set \Seen) when it did so. */
export async function recordLanding(db: Database, id: number, landed: "inbox" | "spam", now: number, acted: { rescued: boolean; opened: boolean }): Promise<void> {
  await db
    .update(warmupMessages)
    .set({ landed, landedAt: new Date(now), rescuedAt: acted.rescued ? new Date(now) : null, openedAt: acted.opened ? new Date(now) : null })
    .where(and(eq(warmupMessages.id, id), isNull(warmupMessages.landed)));
}

/** Messages to `receiverId` no reader found within 24 h: `not_found`. */
export async function expireUnfound(db: Database, receiverId: number, now: number): Promise<void> {
  await db
    .update(warmupMessages)
    .set({ landed: "not_found", landedAt: new Date(now) })
    .where(and(eq(warmupMessages.receiverId, receiverId), isNull(warmupMessages.landed), eq(warmupMessages.status, "sent"), lt(warmupMessages.sentAt, new Date(now - NOT_FOUND_AFTER_MS))));
}

/** Which of these Message-IDs are warmup mail or an unblock code's email (Salvo's, by the Message-ID recorded at send). */
export async function warmupMessageIds(db: Database, messageIds: string[]): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  const found = new Set<string>();
  for (let i = 0; i < messageIds.length; i += 45) {
    const chunk = messageIds.slice(i, i + 45);
    const [sent, codes] = await db.batch([
      db.select({ messageId: warmupMessages.messageId }).from(warmupMessages).where(inArray(warmupMessages.messageId, chunk)),
      db.select({ messageId: warmupOtps.messageId }).from(warmupOtps).where(inArray(warmupOtps.messageId, chunk)),
    ]);
    for (const row of [...sent, ...codes]) if (row.messageId) found.add(row.messageId);
  }
  return found;
}

export interface WarmupCounters {
  totalSent: number;
  totalSpam: number;
  /** Warmup mail of the last 7 days whose landing is known, of it in the inbox, and in spam. */
  observed: number;
  inbox: number;
  spam: number;
  todaySent: number;
}

/** The lifetime, 7-day and today counters of each mailbox (`warmup_details`). */
export async function warmupCounters(db: Database, ids: number[], now: number, dayStart: number): Promise<Map<number, WarmupCounters>> {
  const counters = new Map(ids.map((id) => [id, { totalSent: 0, totalSpam: 0, observed: 0, inbox: 0, spam: 0, todaySent: 0 }]));
  if (ids.length === 0) return counters;
  const weekStart = now - 7 * DAY_MS;
  const rows = await db
    .select({
      id: warmupMessages.senderId,
      totalSent: sql<number>`sum(${warmupMessages.status} = 'sent')`,
      totalSpam: sql<number>`sum(${warmupMessages.landed} = 'spam')`,
      observed: sql<number>`sum(${warmupMessages.landed} IS NOT NULL AND ${warmupMessages.sentAt} >= ${weekStart})`,
      inbox: sql<number>`sum(${warmupMessages.landed} = 'inbox' AND ${warmupMessages.sentAt} >= ${weekStart})`,
      spam: sql<number>`sum(${warmupMessages.landed} = 'spam' AND ${warmupMessages.sentAt} >= ${weekStart})`,
      todaySent: sql<number>`sum(${warmupMessages.status} = 'sent' AND ${warmupMessages.sentAt} >= ${dayStart})`,
    })
    .from(warmupMessages)
    .where(inArray(warmupMessages.senderId, ids))
    .groupBy(warmupMessages.senderId);
  for (const row of rows) {
    counters.set(row.id, {
      totalSent: Number(row.totalSent ?? 0),
      totalSpam: Number(row.totalSpam ?? 0),
      observed: Number(row.observed ?? 0),
      inbox: Number(row.inbox ?? 0),
      spam: Number(row.spam ?? 0),
      todaySent: Number(row.todaySent ?? 0),
    });
  }
  return counters;
}

export interface DayStats {
  day: number;
  sent: number;
  inbox: number;
  spam: number;
  rescued: number;
  opened: number;
  replied: number;
}

/**
 * A mailbox's warmup statistics per UTC day of [firstDay, lastDay] (the message's send day): what
 * it sent, where receivers found it, how much was moved out of spam and read, and the replies it
 * received (by the reply's day); zeros included. Plus the lifetime totals and mail it received.
 */
export async function warmupStatsOf(db: Database, mailboxId: number, firstDay: number, lastDay: number) {
  const end = lastDay + DAY_MS;
  const dayOf = sql<number>`(${warmupMessages.sentAt} - ${warmupMessages.sentAt} % ${DAY_MS})`;
  const [sent, replies, totals, received] = await db.batch([
    db
      .select({
        day: dayOf,
        sent: sql<number>`count(*)`,
        inbox: sql<number>`sum(${warmupMessages.landed} = 'inbox')`,
        spam: sql<number>`sum(${warmupMessages.landed} = 'spam')`,
        rescued: sql<number>`sum(${warmupMessages.rescuedAt} IS NOT NULL)`,
        opened: sql<number>`sum(${warmupMessages.openedAt} IS NOT NULL)`,
      })
      .from(warmupMessages)
      .where(and(eq(warmupMessages.senderId, mailboxId), eq(warmupMessages.status, "sent"), gte(warmupMessages.sentAt, new Date(firstDay)), lt(warmupMessages.sentAt, new Date(end))))
      .groupBy(dayOf),
    db
      .select({ day: dayOf, n: sql<number>`count(*)` })
      .from(warmupMessages)
      .where(and(eq(warmupMessages.receiverId, mailboxId), eq(warmupMessages.kind, "reply"), eq(warmupMessages.status, "sent"), gte(warmupMessages.sentAt, new Date(firstDay)), lt(warmupMessages.sentAt, new Date(end))))
      .groupBy(dayOf),
    db
      .select({
        sent: sql<number>`count(*)`,
        inbox: sql<number>`coalesce(sum(${warmupMessages.landed} = 'inbox'), 0)`,
        spam: sql<number>`coalesce(sum(${warmupMessages.landed} = 'spam'), 0)`,
      })
      .from(warmupMessages)
      .where(and(eq(warmupMessages.senderId, mailboxId), eq(warmupMessages.status, "sent"))),
    db
      .select({ n: sql<number>`count(*)` })
      .from(warmupMessages)
      .where(and(eq(warmupMessages.receiverId, mailboxId), inArray(warmupMessages.landed, ["inbox", "spam"]))),
  ]);
  const days: DayStats[] = [];
  for (let day = firstDay; day <= lastDay; day += DAY_MS) {
    const s = sent.find((r) => Number(r.day) === day);
    const r = replies.find((row) => Number(row.day) === day);
    days.push({
      day,
      sent: Number(s?.sent ?? 0),
      inbox: Number(s?.inbox ?? 0),
      spam: Number(s?.spam ?? 0),
      rescued: Number(s?.rescued ?? 0),
      opened: Number(s?.opened ?? 0),
      replied: Number(r?.n ?? 0),
    });
  }
  const total = totals[0] ?? { sent: 0, inbox: 0, spam: 0 };
  return { days, sent: Number(total.sent), inbox: Number(total.inbox), spam: Number(total.spam), received: Number(received[0]?.n ?? 0) };
}
