import { z } from "@hono/zod-openapi";
import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import { espMatchingOn, scheduleOf, settingsOf } from "../schedule/settings";
import { PROVIDERS, type Provider } from "../esp/rules";
import { mailboxProviderSql } from "../esp/store";
import { campaignEmailAccounts, emailAccounts, sequenceSteps, type CampaignStatus } from "../db/schema";
import { heldNow } from "../mailboxes/hold";
import { connectionUsable, utcDayStart } from "../mailboxes/rules";
import type { Database } from "../platform/db";
import { mailboxSends } from "../mailboxes/sends";
import { IN_DOUBT_REPORT_MS, loadCampaignPlans, loadMailboxWork, unconfirmedSends } from "./store";
import { CAMPAIGN_SENDING_CODES, leadWindowFacts, MAILBOX_SENDING_CODES, mailboxSendingStatus, mailboxWarnings, sendingStatus, type DueGroup, type MailboxSendingStatus, type MailboxWarning, type SendingStatus } from "./why-not-sending";
import { localDayRange, type Schedule } from "../schedule/window";

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

/** CONTRACT 23.4's `details.lead_timezone`: counted only in each lead's zone (zeros and null otherwise). */
interface LeadTimezoneDetails {
  enabled: boolean;
  due_in_window: number;
  due_outside_window: number;
  leads_without_zone: number;
  next_window_at: number | null;
}

/** CONTRACT 23.4's `details.esp_matching`. */
interface EspMatchingDetails {
  enabled: boolean;
  /** Usable attached mailboxes (not suspended, connection passing) by provider; a mailbox whose provider is not known yet counts in none. */
  mailboxes: Record<Provider, number>;
  /** Due first sends (unpinned due records) by their recipient's provider. */
  due_by_provider: Record<Provider | "unknown", number>;
  /** Step-1 emails sent since the campaign's local midnight from a mailbox not of the recipient's (known) provider. */
  unmatched_first_sends_today: number;
}

export type CampaignSendingStatus = SendingStatus & { details: { lead_timezone: LeadTimezoneDetails; esp_matching: EspMatchingDetails; skipped: SkippedRecords } };

/**
 * In each lead's zone: the due records of a campaign (pinned to an attached mailbox, or unpinned)
 * grouped by their lead's zone: ranges of campaign_leads_due_idx, each row joined to its lead, so
 * the cost is the due backlog's (about 1 s per million due records with node:sqlite here), never the
 * campaign's. Not read when the campaign sends in its own zone.
 */
function dueByZone(db: Database, campaignId: number, now: number) {
  const pinned = sql`IN (SELECT email_account_id FROM campaign_email_accounts WHERE campaign_id = ${campaignId})`;
  const grouped = sql`SELECT l.timezone AS zone, count(*) AS n FROM (${dueLeads(campaignId, pinned, now)}) AS d JOIN leads l ON l.id = d.lead_id GROUP BY 1`;
  return db.select({ zone: sql<string | null>`g.zone`, n: sql<number>`g.n` }).from(sql`(${grouped}) AS g`);
}

/** The leads of a campaign's due records: pinned to a mailbox `pinned` names (an SQL predicate's tail), or unpinned. */
function dueLeads(campaignId: number, pinned: SQL, now: number): SQL {
  return sql`SELECT lead_id FROM campaign_leads WHERE campaign_id = ${campaignId} AND email_account_id ${pinned} AND due_at <= ${now}
    UNION ALL SELECT lead_id FROM campaign_leads WHERE campaign_id = ${campaignId} AND email_account_id IS NULL AND due_at <= ${now}`;
}

/**
 * Due first sends (unpinned due records) whose recipient is on `provider` (null: not known): a count
 * over one range of campaign_leads_esp_due_idx. Selected under an alias: D1 keys a row by column
 * text, and these differ only in their parameters.
 */
function dueFirstSends(campaignId: number, provider: Provider | null, now: number) {
  return sql<number>`(SELECT count(*) FROM campaign_leads INDEXED BY campaign_leads_esp_due_idx
    WHERE campaign_id = ${campaignId} AND email_account_id IS NULL AND ${provider === null ? sql`esp_provider IS NULL` : sql`esp_provider = ${provider}`} AND due_at <= ${now})`;
}

export async function campaignSendingStatus(
  db: Database,
  campaign: { id: number; status: CampaignStatus; schedule: Record<string, unknown> | null; settings: Record<string, unknown> | null },
  now: number,
): Promise<CampaignSendingStatus> {
  const schedule = scheduleOf(campaign.schedule);
  const localStart = schedule ? localDayRange(now, schedule.timezone).start : utcDayStart(now);
  const attached = sql`${campaignEmailAccounts.emailAccountId}`;
  const sends = mailboxSends(attached, sql`${emailAccounts.accountId}`, utcDayStart(now));
  const leadZones = schedule?.send_in_lead_timezone === true;
  const [steps, mailboxes, facts, ...zoneGroups] = await db.batch([
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
        provider: sql<Provider | null>`${mailboxProviderSql("email_accounts")}`,
        disconnectCode: emailAccounts.disconnectCode,
        heldUntil: emailAccounts.sendHeldUntil,
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
        // Today's first sends (messages_campaign_step range, as `firstSteps`) whose mailbox is not of the recipient's provider.
        unmatched: sql<number>`(SELECT count(*) FROM messages m JOIN campaign_leads cl ON cl.id = m.campaign_lead_id JOIN email_accounts ea ON ea.id = m.email_account_id
          WHERE m.campaign_id = ${campaign.id} AND m.step = 1 AND m.created_at >= ${localStart} AND m.status = 'sent'
            AND cl.esp_provider IS NOT NULL AND cl.esp_provider IS NOT ${mailboxProviderSql("ea")})`,
        dueGoogle: dueFirstSends(campaign.id, "google", now).as("due_google"),
        dueMicrosoft: dueFirstSends(campaign.id, "microsoft", now).as("due_microsoft"),
        dueOther: dueFirstSends(campaign.id, "other", now).as("due_other"),
        dueUnknown: dueFirstSends(campaign.id, null, now).as("due_unknown"),
      })
      .from(sql`(SELECT 1)`),
    ...(leadZones ? [dueByZone(db, campaign.id, now)] : []),
  ]);
  const pinned = mailboxes.map((m) => m.pinnedDue).filter((v): v is number => v !== null);
  const openDue = facts[0]?.openDue ?? null;
  const all = [...pinned, ...(openDue === null ? [] : [openDue])];
  const waiting = all.filter((t) => t > now);
  const skipped = { invalid_email: facts[0]?.invalidEmail ?? 0, blocked: facts[0]?.blocked ?? 0, unsubscribed: facts[0]?.unsubscribed ?? 0 };
  const zones = (zoneGroups[0] ?? []) as { zone: string | null; n: number }[];
  const windows =
    schedule && leadZones
      ? leadWindowFacts(schedule, now, zones.map((g): DueGroup => ({ zone: g.zone, count: Number(g.n) })))
      : { due_in_window: 0, due_outside_window: 0, leads_without_zone: 0, next_window_at: null };
  const usable = mailboxes.filter((m) => !m.suspended && connectionUsable(m));
  const esp: EspMatchingDetails = {
    enabled: espMatchingOn(settingsOf(campaign.settings)),
    mailboxes: Object.fromEntries(PROVIDERS.map((p) => [p, usable.filter((m) => m.provider === p).length])) as Record<Provider, number>,
    due_by_provider: {
      google: facts[0]?.dueGoogle ?? 0,
      microsoft: facts[0]?.dueMicrosoft ?? 0,
      other: facts[0]?.dueOther ?? 0,
      unknown: facts[0]?.dueUnknown ?? 0,
    },
    unmatched_first_sends_today: facts[0]?.unmatched ?? 0,
  };
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
      heldUntil: m.heldUntil?.getTime() ?? null,
    })),
    firstStepsSentToday: facts[0]?.firstSteps ?? 0,
    firstStepsDue: openDue !== null && openDue <= now ? 1 : 0,
    followUpsDue: pinned.some((t) => t <= now) ? 1 : 0,
    nextDueAt: waiting.length > 0 ? Math.min(...waiting) : null,
    ...(leadZones && { leadWindows: { dueInWindow: windows.due_in_window, nextWindowAt: windows.next_window_at } }),
  });
  return { ...status, details: { lead_timezone: { enabled: leadZones, ...windows }, esp_matching: esp, skipped } };
}

export async function mailboxSendingStatusOf(db: Database, mailboxId: number, now: number): Promise<(MailboxSendingStatus & { warnings: MailboxWarning[] }) | null> {
  const [work, unconfirmed] = await Promise.all([
    loadMailboxWork(db, mailboxId, utcDayStart(now)),
    unconfirmedSends(db.$client, mailboxId, now - IN_DOUBT_REPORT_MS),
  ]);
  const mailbox = work.mailbox;
  if (!mailbox) return null;
  const held = heldNow(mailbox, now);
  const warnings = mailboxWarnings({ now, held, unconfirmed, days: IN_DOUBT_REPORT_MS / 86_400_000 });
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
  const windows = await mailboxLeadWindows(db, mailboxId, now, scheduled.filter((c) => c.schedule.send_in_lead_timezone === true && (plans.get(c.id)?.nextDueAt ?? Infinity) <= now));
  const status = mailboxSendingStatus({
    now,
    suspended: mailbox.isSuspended,
    connectionOk: connectionUsable(mailbox),
    disconnectMessage: mailbox.disconnectCode === null ? null : reconnectAdvice(mailbox),
    sentToday: work.sentToday,
    maxEmailPerDay: mailbox.maxEmailPerDay,
    lastSentAt: work.lastSentAt,
    gapMinutes: mailbox.timeToWaitInMins,
    heldUntil: held?.until ?? null,
    campaigns: scheduled
      .filter((c) => (plans.get(c.id)?.steps.size ?? 0) > 0)
      .map((c) => ({ schedule: c.schedule, nextDueAt: plans.get(c.id)!.nextDueAt, ...(windows.has(c.id) && { leadWindows: windows.get(c.id)! }) })),
  });
  return { ...status, warnings };
}

/**
 * For the mailbox's campaigns in each lead's zone with records due: whether one of the due records
 * it may send (pinned to it, or unpinned) is inside its lead's window now (CONTRACT 23.4: a
 * mailbox's `outside_window` means none is), and when the earliest other window opens. Reads the
 * distinct zones of those due records (ranges of campaign_leads_due_idx).
 */
async function mailboxLeadWindows(db: Database, mailboxId: number, now: number, campaigns: { id: number; schedule: Schedule }[]) {
  const windows = new Map<number, { anyInWindow: boolean; nextWindowAt: number | null }>();
  if (campaigns.length === 0) return windows;
  const zonesOf = ({ id }: { id: number }) =>
    db
      .select({ zone: sql<string | null>`z.zone` })
      .from(sql`(SELECT DISTINCT l.timezone AS zone FROM (${dueLeads(id, sql`= ${mailboxId}`, now)}) AS d JOIN leads l ON l.id = d.lead_id) AS z`);
  const [first, ...rest] = campaigns;
  const zones = await db.batch([zonesOf(first!), ...rest.map(zonesOf)]);
  campaigns.forEach(({ id, schedule }, index) => {
    const facts = leadWindowFacts(schedule, now, zones[index]!.map((row) => ({ zone: row.zone, count: 1 })));
    windows.set(id, { anyInWindow: facts.due_in_window > 0, nextWindowAt: facts.next_window_at });
  });
  return windows;
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
    code: z.string().openapi({
      description: `The first reason nothing goes out now, in this order; \`sending\` when something does. A campaign's: ${CAMPAIGN_SENDING_CODES.map((c) => `\`${c}\``).join(", ")}. A mailbox's: ${MAILBOX_SENDING_CODES.map((c) => `\`${c}\``).join(", ")}`,
    }),
    message: z.string(),
    next_send_at: z.string().nullable(),
    details: z
      .object({
        lead_timezone: z
          .object({
            enabled: z.boolean(),
            due_in_window: z.number().int(),
            due_outside_window: z.number().int(),
            leads_without_zone: z.number().int(),
            next_window_at: z.string().nullable(),
          })
          .openapi({ description: "Sending in each lead's zone (CONTRACT 23.2): due records inside / outside their lead's window now, due records whose lead has no zone (the campaign's applies), the earliest window opening of those outside; zeros and null when the campaign sends in its own zone" }),
        esp_matching: z
          .object({
            enabled: z.boolean(),
            mailboxes: z.object({ google: z.number().int(), microsoft: z.number().int(), other: z.number().int() }),
            due_by_provider: z.object({ google: z.number().int(), microsoft: z.number().int(), other: z.number().int(), unknown: z.number().int() }),
            unmatched_first_sends_today: z.number().int(),
          })
          .openapi({ description: "Provider matching (CONTRACT 23.3): usable attached mailboxes by provider, due first sends by recipient provider, first sends since local midnight from a mailbox of another provider than the recipient's" }),
        skipped: z.object({ invalid_email: z.number().int(), blocked: z.number().int(), unsubscribed: z.number().int() }),
      })
      .optional()
      .openapi({ description: "Extension, a campaign's only (CONTRACT 23.4): lead windows, provider matching, and records the engine will not send to, by why (`invalid_email`: the lead's address is verified invalid)" }),
  })
  .openapi("SendingStatus");

/** A mailbox's: the same, with what its owner should know besides (emails in doubt). */
export const MailboxSendingStatusAnswer = SendingStatusAnswer.extend({
  warnings: z
    .array(z.object({ code: z.string(), message: z.string() }))
    .openapi({ description: "Extension: `server_refusing` says the mailbox's server refused its sending for now (a 421, a 4xx before the recipient, the provider's daily limit) or could not be reached, with its words and the next try; `unconfirmed_sends` names campaign emails of the last 7 days that may not have gone out (sending stopped mid-transaction; never sent twice); `warmup_spam_high`, `warmup_blocked` and `warmup_waiting_for_pool` report the mailbox's warmup (CONTRACT 19.4); empty when none" }),
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
    ...("details" in status && {
      details: {
        ...status.details,
        lead_timezone: { ...status.details.lead_timezone, next_window_at: status.details.lead_timezone.next_window_at === null ? null : new Date(status.details.lead_timezone.next_window_at).toISOString() },
      },
    }),
    ...("warnings" in status && { warnings: status.warnings }),
  };
}

