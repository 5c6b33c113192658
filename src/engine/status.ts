import { z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import { scheduleOf } from "../schedule/settings";
import { campaignEmailAccounts, emailAccounts, sequenceSteps, type CampaignStatus } from "../db/schema";
import { connectionUsable, utcDayStart } from "../mailboxes/rules";
import type { Database } from "../platform/db";
import { mailboxSends } from "../mailboxes/sends";
import { IN_DOUBT_REPORT_MS, loadCampaignPlans, loadMailboxWork, unconfirmedSends } from "./store";
import { mailboxSendingStatus, mailboxWarnings, sendingStatus, type MailboxSendingStatus, type MailboxWarning, type SendingStatus } from "./why-not-sending";
import { localDayRange } from "../schedule/window";

/**
 * `sending_status` of a campaign and of a mailbox: the facts why-not-sending.ts reasons on, read
 * with index seeks only (due work is the earliest `due_at` of each arm of `campaign_leads_due_idx`,
 * never a count over the records).
 */

/** Records the engine will not send to, by why (CONTRACT 22/23.4 `details.skipped`). */
export interface SkippedRecords {
  /** BLOCKED at send time because the lead's address is verified invalid. */
  invalid_email: number;
  /** BLOCKED otherwise (block list, a bounce, a block event). */
  blocked: number;
  /** STOPPED because the lead unsubscribed. */
  unsubscribed: number;
}

export type CampaignSendingStatus = SendingStatus & { details: { skipped: SkippedRecords } };

export async function campaignSendingStatus(
  db: Database,
  campaign: { id: number; status: CampaignStatus; schedule: Record<string, unknown> | null },
  now: number,
): Promise<CampaignSendingStatus> {
  const schedule = scheduleOf(campaign.schedule);
  const localStart = schedule ? localDayRange(now, schedule.timezone).start : utcDayStart(now);
  const attached = sql`${campaignEmailAccounts.emailAccountId}`;
  const sends = mailboxSends(attached, sql`${emailAccounts.accountId}`, utcDayStart(now));
  const [steps, mailboxes, facts] = await db.batch([
    db
      .select({ n: sql<number>`count(*)` })
      .from(sequenceSteps)
      .where(and(eq(sequenceSteps.campaignId, campaign.id), isNull(sequenceSteps.deletedAt))),
    db
      .select({
        suspended: emailAccounts.isSuspended,
        isSmtpSuccess: emailAccounts.isSmtpSuccess,
        isImapSuccess: emailAccounts.isImapSuccess,
        maxEmailPerDay: emailAccounts.maxEmailPerDay,
        gapMinutes: emailAccounts.timeToWaitInMins,
        sentToday: sends.capToday,
        lastSentAt: sends.lastSentAt,
        pinnedDue: sql<number | null>`(SELECT min(due_at) FROM campaign_leads WHERE campaign_id = ${campaign.id} AND email_account_id = ${attached} AND due_at IS NOT NULL)`,
      })
      .from(campaignEmailAccounts)
      .innerJoin(emailAccounts, eq(emailAccounts.id, campaignEmailAccounts.emailAccountId))
      .where(eq(campaignEmailAccounts.campaignId, campaign.id)),
    db
      .select({
        openDue: sql<number | null>`(SELECT min(due_at) FROM campaign_leads WHERE campaign_id = ${campaign.id} AND email_account_id IS NULL AND due_at IS NOT NULL)`,
        firstSteps: sql<number>`(SELECT count(*) FROM messages WHERE campaign_id = ${campaign.id} AND step = 1 AND created_at >= ${localStart})`,
        // Ranges of campaign_leads_blocked_idx and campaign_leads_campaign_state_idx: only skipped records are counted.
        invalidEmail: sql<number>`(SELECT count(*) FROM campaign_leads WHERE campaign_id = ${campaign.id} AND state = 'BLOCKED' AND blocked_reason = 'invalid_email')`,
        blocked: sql<number>`(SELECT count(*) FROM campaign_leads WHERE campaign_id = ${campaign.id} AND state = 'BLOCKED' AND blocked_reason IS NOT 'invalid_email')`,
        unsubscribed: sql<number>`(SELECT count(*) FROM campaign_leads WHERE campaign_id = ${campaign.id} AND state = 'STOPPED' AND has_unsubscribed = 1)`,
      })
      .from(sql`(SELECT 1)`),
  ]);
  const pinned = mailboxes.map((m) => m.pinnedDue).filter((v): v is number => v !== null);
  const openDue = facts[0]?.openDue ?? null;
  const all = [...pinned, ...(openDue === null ? [] : [openDue])];
  const waiting = all.filter((t) => t > now);
  const skipped = { invalid_email: facts[0]?.invalidEmail ?? 0, blocked: facts[0]?.blocked ?? 0, unsubscribed: facts[0]?.unsubscribed ?? 0 };
  const status = sendingStatus({
    now,
    status: campaign.status,
    stepCount: steps[0]?.n ?? 0,
    schedule,
    mailboxes: mailboxes.map((m) => ({
      suspended: m.suspended,
      connectionOk: connectionUsable(m),
      sentToday: m.sentToday,
      maxEmailPerDay: m.maxEmailPerDay,
      lastSentAt: m.lastSentAt,
      gapMinutes: m.gapMinutes,
    })),
    firstStepsSentToday: facts[0]?.firstSteps ?? 0,
    firstStepsDue: openDue !== null && openDue <= now ? 1 : 0,
    followUpsDue: pinned.some((t) => t <= now) ? 1 : 0,
    nextDueAt: waiting.length > 0 ? Math.min(...waiting) : null,
  });
  return { ...status, details: { skipped } };
}

export async function mailboxSendingStatusOf(db: Database, mailboxId: number, now: number): Promise<(MailboxSendingStatus & { warnings: MailboxWarning[] }) | null> {
  const [work, unconfirmed] = await Promise.all([
    loadMailboxWork(db, mailboxId, utcDayStart(now)),
    unconfirmedSends(db.$client, mailboxId, now - IN_DOUBT_REPORT_MS),
  ]);
  const warnings = mailboxWarnings({ unconfirmed, days: IN_DOUBT_REPORT_MS / 86_400_000 });
  const mailbox = work.mailbox;
  if (!mailbox) return null;
  const scheduled = work.campaigns.flatMap((row) => {
    const schedule = scheduleOf(row.schedule);
    return schedule ? [{ id: row.id, schedule }] : [];
  });
  const plans = await loadCampaignPlans(
    db,
    mailboxId,
    scheduled.map((c) => c.id),
    new Map(scheduled.map((c) => [c.id, localDayRange(now, c.schedule.timezone).start])),
    now,
  );
  const status = mailboxSendingStatus({
    now,
    suspended: mailbox.isSuspended,
    connectionOk: connectionUsable(mailbox),
    disconnectMessage: mailbox.disconnectCode === null ? null : reconnectAdvice(mailbox),
    sentToday: work.sentToday,
    maxEmailPerDay: mailbox.maxEmailPerDay,
    lastSentAt: work.lastSentAt,
    gapMinutes: mailbox.timeToWaitInMins,
    campaigns: scheduled
      .filter((c) => (plans.get(c.id)?.steps.size ?? 0) > 0)
      .map((c) => ({ schedule: c.schedule, nextDueAt: plans.get(c.id)!.nextDueAt })),
  });
  return { ...status, warnings };
}

/** The disconnect's reason and the way back: a new consent for an OAuth mailbox, new credentials or a passing check otherwise. */
function reconnectAdvice(mailbox: { id: number; authType: "PASSWORD" | "OAUTH"; disconnectCode: string | null; disconnectMessage: string | null }): string {
  const reason = mailbox.disconnectMessage ?? mailbox.disconnectCode ?? "";
  return mailbox.authType === "OAUTH"
    ? `${reason} (reconnect: POST /api/v1/email-accounts/${mailbox.id}/oauth/reconnect)`
    : `${reason} (update the mailbox's credentials, or POST /api/v1/email-accounts/reconnect-failed-email-accounts once it is fixed)`;
}

/** Why nothing goes out, or "sending" (src/engine/why-not-sending.ts); on reads of one campaign or mailbox. */
export const SendingStatusAnswer = z
  .object({
    code: z.string(),
    message: z.string(),
    next_send_at: z.string().nullable(),
    details: z
      .object({
        skipped: z.object({ invalid_email: z.number().int(), blocked: z.number().int(), unsubscribed: z.number().int() }),
      })
      .optional()
      .openapi({ description: "Extension, a campaign's only: records the engine will not send to, by why (`invalid_email`: the lead's address is verified invalid)" }),
  })
  .openapi("SendingStatus");

/** A mailbox's: the same, with what its owner should know besides (emails in doubt). */
export const MailboxSendingStatusAnswer = SendingStatusAnswer.extend({
  warnings: z
    .array(z.object({ code: z.string(), message: z.string() }))
    .openapi({ description: "Extension: `unconfirmed_sends` names campaign emails of the last 7 days that may not have gone out (sending stopped mid-transaction; never sent twice); `warmup_spam_high`, `warmup_blocked` and `warmup_waiting_for_pool` report the mailbox's warmup (CONTRACT 19.4); empty when none" }),
}).openapi("MailboxSendingStatus");

type Presented = z.infer<typeof SendingStatusAnswer>;

/** The answer's form: `next_send_at` as ISO text, and a mailbox's warnings. */
export function presentSendingStatus(status: CampaignSendingStatus): Presented;
export function presentSendingStatus(status: MailboxSendingStatus & { warnings: MailboxWarning[] }): Presented & { warnings: MailboxWarning[] };
export function presentSendingStatus(status: CampaignSendingStatus | (MailboxSendingStatus & { warnings: MailboxWarning[] })): Presented & { warnings?: MailboxWarning[] } {
  return {
    code: status.code,
    message: status.message,
    next_send_at: status.next_send_at === null ? null : new Date(status.next_send_at).toISOString(),
    ...("details" in status && { details: status.details }),
    ...("warnings" in status && { warnings: status.warnings }),
  };
}

