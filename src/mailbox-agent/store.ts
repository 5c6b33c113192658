import { and, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { campaignEmailAccounts, campaigns, emailAccounts } from "../db/schema";
import type { Database } from "../platform/db";
import { nextTestSendQuery } from "../deliverability/test-send-store";
import type { MailboxRow } from "../mailboxes/rules";
import { mailboxQuery } from "../mailboxes/store";
import { nextReplyQuery } from "../replies/outbound-store";

/**
 * Mailboxes the minute cron should wake: in an ACTIVE campaign (sending) or a PAUSED one (its leads
 * still reply; a suspended mailbox is still read), or with warmup on (it sends and reads warmup
 * mail), and late (their object's next wake passed a minute ago, or was never set). Bounded per minute.
 */
export async function lateMailboxes(db: Database, now: number, limit: number): Promise<number[]> {
  const inCampaign = sql`EXISTS (SELECT 1 FROM ${campaignEmailAccounts} INNER JOIN ${campaigns} ON ${campaigns.id} = ${campaignEmailAccounts.campaignId}
    WHERE ${campaignEmailAccounts.emailAccountId} = ${emailAccounts.id} AND ${inArray(campaigns.status, ["ACTIVE", "PAUSED"])})`;
  const rows = await db
    .select({ id: emailAccounts.id })
    .from(emailAccounts)
    .where(and(or(inCampaign, eq(emailAccounts.warmupEnabled, true)), or(isNull(emailAccounts.engineWakeAt), lte(emailAccounts.engineWakeAt, new Date(now - 60_000)))))
    .limit(limit);
  return rows.map((row) => row.id);
}

/** Writes by when the mailbox's sender will have run its next pass, so the minute cron can tell a lost alarm. */
export async function recordWake(db: Database, mailboxId: number, wakeAt: number): Promise<void> {
  await db.update(emailAccounts).set({ engineWakeAt: new Date(wakeAt) }).where(eq(emailAccounts.id, mailboxId));
}

/** What a pass reads before it sends, in one D1 round trip: the mailbox's row with the wake it recorded, and when its next scheduled reply and its next test email are due. */
export async function passStart(
  db: Database,
  mailboxId: number,
): Promise<{ mailbox: MailboxRow | undefined; recordedWakeAt: number | null; nextReplyAt: number | null; nextTestSendAt: number | null }> {
  const [[mailbox], reply, test] = await db.batch([mailboxQuery(db, mailboxId), nextReplyQuery(db, mailboxId), nextTestSendQuery(db, mailboxId)]);
  return { mailbox, recordedWakeAt: mailbox?.engineWakeAt?.getTime() ?? null, nextReplyAt: reply[0]?.at ?? null, nextTestSendAt: test[0]?.at ?? null };
}
