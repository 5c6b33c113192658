import { and, count, eq, gte, inArray, isNotNull, isNull, lt, lte, min, or, sql } from "drizzle-orm";
import { campaignLeads, emailAccounts, leadListImports, messages, outboundReplies, spamTests, webhookDeliveries } from "../db/schema";
import type { Database } from "../platform/db";
import { OVERDUE_AFTER_MS } from "../webhooks/outbox";

export interface OperatorMetrics {
  webhookDeliveries: { pending: number; overdue: number; oldestPendingAt: Date | null };
  sends: { since: Date; sent: number; unconfirmed: number };
  mailboxes: { total: number; suspended: number; failing: number };
  dueJobs: { snoozes: number; scheduledReplies: number; pausedRecords: number; spamTests: number; csvImports: number };
}

/** Midnight UTC of the day `now` falls in: "today" for the operator, whatever the accounts' time zones. */
function startOfUtcDay(now: number): Date {
  const day = new Date(now);
  day.setUTCHours(0, 0, 0, 0);
  return day;
}

/**
 * The operator's summary, every figure counted in D1 in one round trip, each from an index (the
 * pending-delivery, sent-at, unconfirmed, snooze, resume, due-reply, due-test and pending-import indexes),
 * except the mailbox counts, whose table holds one row per mailbox.
 */
export async function readMetrics(db: Database, now: number): Promise<OperatorMetrics> {
  const at = new Date(now);
  const since = startOfUtcDay(now);
  const [deliveries, overdue, sent, unconfirmed, mailboxes, snoozes, replies, paused, tests, imports] = await db.batch([
    db
      .select({ pending: count(), oldest: min(webhookDeliveries.nextAttemptAt) })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.status, "pending")),
    db
      .select({ n: count() })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, new Date(now - OVERDUE_AFTER_MS)))),
    db.select({ n: count() }).from(messages).where(gte(messages.sentAt, since)),
    // Written as the partial index's own condition (messages_unconfirmed_idx), so it is the one read.
    db
      .select({ n: count() })
      .from(messages)
      .where(and(sql`${messages.status} = 'unconfirmed'`, gte(messages.updatedAt, since))),
    db
      .select({
        total: count(),
        suspended: sql<number>`coalesce(sum(${emailAccounts.isSuspended}), 0)`,
        failing: sql<number>`coalesce(sum(${emailAccounts.isSmtpSuccess} = 0 OR ${emailAccounts.isImapSuccess} = 0), 0)`,
      })
      .from(emailAccounts),
    db
      .select({ n: count() })
      .from(campaignLeads)
      .where(and(isNotNull(campaignLeads.snoozedUntil), lte(campaignLeads.snoozedUntil, at))),
    db
      .select({ n: count() })
      .from(outboundReplies)
      .where(and(eq(outboundReplies.status, "SCHEDULED"), lte(outboundReplies.scheduledAt, at))),
    db
      .select({ n: count() })
      .from(campaignLeads)
      .where(and(isNotNull(campaignLeads.resumeAt), lte(campaignLeads.resumeAt, at))),
    db
      .select({ n: count() })
      .from(spamTests)
      .where(and(sql`${spamTests.status} = 'active' AND ${spamTests.testType} = 'automated'`, lte(spamTests.nextRunAt, at))),
    db
      .select({ n: count() })
      .from(leadListImports)
      .where(
        and(
          inArray(leadListImports.state, ["queued", "running"]),
          or(isNull(leadListImports.leaseUntil), lt(leadListImports.leaseUntil, at)),
        ),
      ),
  ]);
  const pending = deliveries[0];
  const mailboxRow = mailboxes[0];
  return {
    webhookDeliveries: { pending: pending?.pending ?? 0, overdue: overdue[0]?.n ?? 0, oldestPendingAt: pending?.oldest ?? null },
    sends: { since, sent: sent[0]?.n ?? 0, unconfirmed: unconfirmed[0]?.n ?? 0 },
    mailboxes: { total: mailboxRow?.total ?? 0, suspended: Number(mailboxRow?.suspended ?? 0), failing: Number(mailboxRow?.failing ?? 0) },
    dueJobs: {
      snoozes: snoozes[0]?.n ?? 0,
      scheduledReplies: replies[0]?.n ?? 0,
      pausedRecords: paused[0]?.n ?? 0,
      spamTests: tests[0]?.n ?? 0,
      csvImports: imports[0]?.n ?? 0,
    },
  };
}

/** Every shard's figures as one deployment's: counts summed, the oldest pending delivery the oldest of all. */
export function sumMetrics(parts: OperatorMetrics[]): OperatorMetrics {
  return parts.reduce((sum, part) => {
    const oldest = [sum.webhookDeliveries.oldestPendingAt, part.webhookDeliveries.oldestPendingAt].filter((at): at is Date => at !== null);
    return {
      webhookDeliveries: {
        pending: sum.webhookDeliveries.pending + part.webhookDeliveries.pending,
        overdue: sum.webhookDeliveries.overdue + part.webhookDeliveries.overdue,
        oldestPendingAt: oldest.length > 0 ? new Date(Math.min(...oldest.map((at) => at.getTime()))) : null,
      },
      sends: { since: sum.sends.since, sent: sum.sends.sent + part.sends.sent, unconfirmed: sum.sends.unconfirmed + part.sends.unconfirmed },
      mailboxes: {
        total: sum.mailboxes.total + part.mailboxes.total,
        suspended: sum.mailboxes.suspended + part.mailboxes.suspended,
        failing: sum.mailboxes.failing + part.mailboxes.failing,
      },
      dueJobs: {
        snoozes: sum.dueJobs.snoozes + part.dueJobs.snoozes,
        scheduledReplies: sum.dueJobs.scheduledReplies + part.dueJobs.scheduledReplies,
        pausedRecords: sum.dueJobs.pausedRecords + part.dueJobs.pausedRecords,
        spamTests: sum.dueJobs.spamTests + part.dueJobs.spamTests,
        csvImports: sum.dueJobs.csvImports + part.dueJobs.csvImports,
      },
    };
  });
}
