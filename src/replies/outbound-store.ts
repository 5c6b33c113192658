import { and, eq, inArray, lte, sql } from "drizzle-orm";
import { storeBody, type BodyStore } from "../platform/bodies";
import { campaigns, outboundReplies, type OutboundAttachment, type OutboundReplyStatus } from "../db/schema";
import { visibleCampaigns } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { notMoving } from "../platform/moving";

export type OutboundReplyRow = typeof outboundReplies.$inferSelect;
type NewOutboundReply = Omit<typeof outboundReplies.$inferInsert, "id" | "createdAt" | "updatedAt">;

/** Scheduled replies sent per pass of one mailbox's object (the rest wait for the next pass). */
const DUE_PER_PASS = 20;

/** A reply left QUEUED this long was interrupted mid-send: it is FAILED, never sent twice. */
const STALE_QUEUED_MS = 10 * 60_000;

/** Stores a reply written in the inbox; a large body goes to R2 first (src/platform/bodies.ts). */
export async function insertOutboundReply(db: Database, bodies: BodyStore, reply: NewOutboundReply): Promise<OutboundReplyRow> {
  const now = new Date();
  const html = (await storeBody(bodies, reply.accountId, reply.html))!;
  return db
    .insert(outboundReplies)
    .values({ ...reply, html, createdAt: now, updatedAt: now })
    .returning()
    .get();
}

function scheduledOf(mailboxId: number) {
  return and(eq(outboundReplies.status, "SCHEDULED"), eq(outboundReplies.emailAccountId, mailboxId));
}

/** When the mailbox's next scheduled reply is due (its one row: `at`, null when none waits), as a query the pass's first batch runs. */
export function nextReplyQuery(db: Database, mailboxId: number) {
  return db
    .select({ at: sql<number | null>`min(${outboundReplies.scheduledAt})` })
    .from(outboundReplies)
    .where(scheduledOf(mailboxId));
}

/**
 * One round trip, when the pass found a reply due: takes the mailbox's due scheduled replies
 * (SCHEDULED → QUEUED, so no other pass takes them too) and, read after the claim in the same batch,
 * when the next one still waiting is due (null: none; a past time when more were due than one pass takes).
 */
export async function takeDueReplies(db: Database, mailboxId: number, now: number): Promise<{ due: OutboundReplyRow[]; nextAt: number | null }> {
  const [due, next] = await db.batch([
    db
      .update(outboundReplies)
      .set({ status: "QUEUED", updatedAt: new Date(now) })
      .where(
        inArray(
          outboundReplies.id,
          db
            .select({ id: outboundReplies.id })
            .from(outboundReplies)
            .where(and(scheduledOf(mailboxId), lte(outboundReplies.scheduledAt, new Date(now))))
            .orderBy(outboundReplies.scheduledAt)
            .limit(DUE_PER_PASS),
        ),
      )
      .returning(),
    nextReplyQuery(db, mailboxId),
  ]);
  return { due, nextAt: next[0]?.at ?? null };
}

export function settleReply(
  db: Database,
  id: number,
  status: OutboundReplyStatus,
  statusMessage: string | null,
  sentEventId: number | null,
  now: number,
  attachments?: OutboundAttachment[],
) {
  return db
    .update(outboundReplies)
    .set({ status, statusMessage, sentEventId, updatedAt: new Date(now), ...(attachments && { attachments }) })
    .where(eq(outboundReplies.id, id));
}

/**
 * A claimed reply held back (the mailbox's gap, its server's hold, or its server refusing it for now,
 * with why in `statusMessage`): SCHEDULED again, due at `at`, keeping when it first came due.
 */
export function rescheduleReply(db: Database, id: number, at: number, now: number, statusMessage?: string) {
  return db
    .update(outboundReplies)
    .set({ status: "SCHEDULED", scheduledAt: new Date(at), firstDueAt: sql`coalesce(${outboundReplies.firstDueAt}, ${outboundReplies.scheduledAt})`, updatedAt: new Date(now), ...(statusMessage !== undefined && { statusMessage }) })
    .where(eq(outboundReplies.id, id));
}

/** Mailboxes with a scheduled reply due (the minute cron wakes their objects). */
export async function mailboxesWithDueReplies(db: Database, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectDistinct({ id: outboundReplies.emailAccountId })
    .from(outboundReplies)
    .where(and(eq(outboundReplies.status, "SCHEDULED"), lte(outboundReplies.scheduledAt, new Date(now))))
    .limit(limit);
  return rows.map((row) => row.id);
}

/** Replies whose send was interrupted (the pass died between QUEUED and its outcome). */
export function failInterruptedReplies(db: Database, now: number) {
  return db
    .update(outboundReplies)
    .set({ status: "FAILED", statusMessage: "Sending was interrupted; the reply may not have gone out", updatedAt: new Date(now) })
    .where(and(eq(outboundReplies.status, "QUEUED"), lte(outboundReplies.updatedAt, new Date(now - STALE_QUEUED_MS)), notMoving(sql`${outboundReplies.accountId}`)))
    .returning({ id: outboundReplies.id });
}

/** A reply sent through the inbox, by its Message-ID, in a campaign the caller may see. */
export function replyByMessageId(db: Database, principal: Principal, messageId: string) {
  return db
    .select({ reply: outboundReplies })
    .from(outboundReplies)
    .innerJoin(campaigns, eq(campaigns.id, outboundReplies.campaignId))
    .where(and(eq(outboundReplies.accountId, principal.accountId), eq(outboundReplies.messageId, messageId), visibleCampaigns(principal)))
    .get();
}
