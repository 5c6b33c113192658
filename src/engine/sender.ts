import { eq } from "drizzle-orm";
import { scheduleOf, settingsOf, type CampaignSettings } from "../schedule/settings";
import { config } from "../config";
import { campaigns as campaignsTable } from "../db/schema";
import type { Bindings } from "../platform/env";
import { planIngestion, type PlannedEvent } from "../events/plan";
import { ingestedDeliveryIds, ingestionStatements, loadIngestContext } from "../events/store";
import { connectionUsable, smtpTarget, utcDayStart } from "../mailboxes/rules";
import { storedPassword } from "../mailboxes/store";
import { loadKeyring } from "../platform/crypto";
import { database, type Database } from "../platform/db";
import { log } from "../platform/logging";
import { rawBatch } from "../platform/sql";
import { getsFollowUps } from "../sequences/variants";
import { disconnectAnnouncement } from "../webhooks/disconnect";
import { deliveryIds, enqueue } from "../webhooks/outbox";
import { composeEmail } from "./compose";
import type { EmailLinks } from "./links";
import { sendMail, type SmtpSettings } from "../mail/smtp";
import {
  claimRecords,
  loadCampaignPlans,
  loadMailboxWork,
  outcomeStatements,
  suspendStatement,
  type CampaignPlan,
  type CampaignRow,
  type ClaimedRecord,
  type MailboxRow,
  type RecordOutcome,
} from "./store";
import {
  gapEndsAt,
  isInWindow,
  localDayRange,
  nextLocalDayStart,
  nextMailboxDayStart,
  nextWindowOpen,
  scheduleStartAt,
  stepDueAt,
  type Schedule,
} from "../schedule/window";

/**
 * One pass of a mailbox's sender (its Durable Object runs it on its alarm): send what is due for
 * this mailbox inside each ACTIVE campaign's window, within its daily cap, its gap and each
 * campaign's new-leads cap, and say when to wake next. Each claim is one campaign's batch of due
 * records; its outcomes (SENT and BOUNCE events through the ingestion statements, message rows,
 * the records' next step) commit in one D1 batch.
 */

/** Sends per claim when the mailbox has no gap to keep (it would otherwise send one per wake). */
const BURST = 10;
/** A pass stops after this long or this many sends and wakes again at once (alarm handlers are bounded). */
const PASS_BUDGET_MS = 25_000;
const PASS_MAX_SENDS = 50;
/** Back-off of a recipient's temporary refusal, by attempt; after the last, the email fails. */
const RETRY_DELAYS_MS = [5, 15, 60, 240, 720].map((m) => m * 60_000);
/** A mailbox whose server cannot be reached is tried again after this long. */
const CONNECTION_RETRY_MS = 5 * 60_000;
/** A pass that sent nothing and found nothing to do soon looks again no sooner than this. */
const IDLE_RECHECK_MS = 60 * 60_000;

export interface PassResult {
  sent: number;
  /** When the object should wake next; null = only when something wakes it (suspended, nothing to do). */
  nextWakeAt: number | null;
}

/** Where a pass spent its time (wall clock across D1 and SMTP calls): the operator route shows it. */
export interface PassTimings {
  /** Reading the mailbox, its campaigns and their due work. */
  findMs: number;
  /** Claiming records and writing their message rows. */
  claimMs: number;
  /** Composing, SMTP, and storing the outcomes. */
  sendMs: number;
}

export interface PassOptions {
  /** At most this many sends (the operator route's probe); the default is the pass's own bound. */
  maxSends?: number;
  timings?: PassTimings;
}

interface ActiveCampaign {
  row: CampaignRow;
  schedule: Schedule;
  settings: CampaignSettings;
  plan: CampaignPlan;
}

/** The step after `step` that this record gets, with its due time; null when the sequence ends. */
function following(active: ActiveCampaign, recordId: number, step: number, sentAt: number): { nextStep: number | null; nextDueAt: number | null } {
  const later = [...active.plan.steps.keys()].filter((n) => n > step).sort((a, b) => a - b)[0];
  if (later === undefined || !getsFollowUps(recordId, active.settings.followUpPercentage)) return { nextStep: null, nextDueAt: null };
  const delay = active.plan.steps.get(later)!.step.delayInDays;
  return { nextStep: later, nextDueAt: stepDueAt(sentAt, delay, active.schedule.timezone) };
}

/** The live step a record's `next_step` names, or the first live one after it (a step may have been removed). */
function stepFor(active: ActiveCampaign, next: number) {
  const numbers = [...active.plan.steps.keys()].filter((n) => n >= next).sort((a, b) => a - b);
  return numbers.length === 0 ? undefined : active.plan.steps.get(numbers[0]!);
}

export async function runSenderPass(env: Bindings, mailboxId: number, now: number, links: EmailLinks, options: PassOptions = {}): Promise<PassResult> {
  const maxSends = Math.min(options.maxSends ?? PASS_MAX_SENDS, PASS_MAX_SENDS);
  const timings = options.timings ?? { findMs: 0, claimMs: 0, sendMs: 0 };
  let clock = Date.now();
  const lap = (part: keyof PassTimings) => {
    const at = Date.now();
    timings[part] += at - clock;
    clock = at;
  };
  const db = database(env.DB);
  const settingsOfEnv = config(env);
  const dayStart = utcDayStart(now);
  const work = await loadMailboxWork(db, mailboxId, dayStart);
  const mailbox = work.mailbox;
  if (!mailbox || mailbox.isSuspended || !connectionUsable(mailbox)) return { sent: 0, nextWakeAt: null };
  const scheduled = work.campaigns.flatMap((row) => {
    const schedule = scheduleOf(row.schedule);
    return schedule ? [{ row, schedule, settings: settingsOf(row.settings) }] : [];
  });
  if (scheduled.length === 0) return { sent: 0, nextWakeAt: null };
  const plans = await loadCampaignPlans(
    db,
    mailboxId,
    scheduled.map((c) => c.row.id),
    new Map(scheduled.map((c) => [c.row.id, localDayRange(now, c.schedule.timezone).start])),
  );
  const active: ActiveCampaign[] = scheduled
    .map((c) => ({ ...c, plan: plans.get(c.row.id)! }))
    .filter((c) => c.plan.steps.size > 0)
    .sort((a, b) => (a.plan.nextDueAt ?? Infinity) - (b.plan.nextDueAt ?? Infinity));
  lap("findMs");

  const password = await storedPassword(await loadKeyring(settingsOfEnv.secretsKey), mailbox, "smtp");
  if (password === null) return { sent: 0, nextWakeAt: null };
  const smtp = smtpTarget(mailbox, password);
  const senderDomain = mailbox.fromEmail.split("@")[1]!;

  let sent = 0;
  let capLeft = mailbox.maxEmailPerDay - work.sentToday;
  if (capLeft <= 0) return { sent, nextWakeAt: active.some((c) => c.plan.nextDueAt !== null) ? nextMailboxDayStart(now) : null };
  let lastSentAt = work.lastSentAt;
  const wakes: number[] = [];
  const started = Date.now();

  for (const campaign of active) {
    const { schedule, plan } = campaign;
    const dueAt = plan.nextDueAt;
    if (dueAt === null) continue;
    const start = scheduleStartAt(schedule);
    const gapEnd = gapEndsAt(lastSentAt, mailbox.timeToWaitInMins, schedule.min_time_btw_emails);
    const earliest = Math.max(now, dueAt, start ?? now, gapEnd ?? now);
    if (earliest > now || !isInWindow(schedule, now)) {
      const open = nextWindowOpen(schedule, earliest);
      if (open !== null) wakes.push(open);
      continue;
    }
    if (capLeft <= 0) {
      wakes.push(nextMailboxDayStart(now));
      break;
    }
    const keepsGap = Math.max(mailbox.timeToWaitInMins, schedule.min_time_btw_emails) > 0;
    const limit = Math.min(capLeft, keepsGap ? 1 : BURST, maxSends - sent);
    if (limit <= 0) {
      wakes.push(now);
      break;
    }
    const { nonce, records } = await claimRecords(env.DB, {
      campaign: campaign.row,
      mailboxId,
      senderDomain,
      now,
      limit,
      newLeadsLeft: Math.max(0, schedule.max_new_leads_per_day - plan.firstStepsToday),
    });
    lap("claimMs");
    if (records.length === 0) {
      // Only new leads were due and the campaign's new-leads cap is reached for its local day.
      wakes.push(nextWindowOpen(schedule, nextLocalDayStart(now, schedule.timezone)) ?? now + IDLE_RECHECK_MS);
      continue;
    }
    const outcome = await sendClaimed(env, db, { campaign, mailbox, smtp, records, nonce, now, links });
    lap("sendMs");
    sent += outcome.sent;
    capLeft -= outcome.sent;
    if (outcome.sent > 0) lastSentAt = now;
    if (outcome.stop) return { sent, nextWakeAt: outcome.retryAt };
    const again = gapEndsAt(lastSentAt, mailbox.timeToWaitInMins, schedule.min_time_btw_emails);
    wakes.push(again !== null && again > now ? again : now);
    if (keepsGap && outcome.sent > 0) break;
    if (sent >= maxSends || Date.now() - started > PASS_BUDGET_MS) break;
  }
  const nextWakeAt = wakes.length > 0 ? Math.min(...wakes) : null;
  // A pass that sent nothing never asks to run again at once: that would spin.
  if (sent === 0 && nextWakeAt !== null && nextWakeAt <= now) return { sent, nextWakeAt: now + 30_000 };
  return { sent, nextWakeAt };
}

interface ClaimContext {
  campaign: ActiveCampaign;
  mailbox: MailboxRow;
  smtp: SmtpSettings;
  records: ClaimedRecord[];
  nonce: string;
  now: number;
  links: EmailLinks;
}

/** Sends a claim's records one after the other and stores every outcome in one batch. */
async function sendClaimed(
  env: Bindings,
  db: Database,
  claim: ClaimContext,
): Promise<{ sent: number; stop: boolean; retryAt: number | null }> {
  const { campaign, mailbox, smtp, records, nonce, now } = claim;
  const outcomes: RecordOutcome[] = [];
  const events: { record: ClaimedRecord; type: "SENT" | "BOUNCE"; messageRowId: number; subject: string | null; body: string | null; messageId: string | null }[] = [];
  let suspendReason: string | null = null;
  let stop = false;
  let retryAt: number | null = null;

  for (const record of records) {
    if (record.refusal) {
      outcomes.push({ kind: "refused", recordId: record.recordId, state: record.refusal === "blocked" ? "BLOCKED" : "STOPPED" });
      continue;
    }
    const content = stepFor(campaign, record.step);
    if (record.messageRowId === null || record.messageStatus !== "sending" || stop || !content) {
      if (record.messageRowId !== null && record.messageStatus === "sending" && !content) {
        outcomes.push({ kind: "failed", recordId: record.recordId, messageRowId: record.messageRowId, error: "The sequence has no step left to send" });
      } else if (stop && record.messageRowId !== null && record.messageStatus === "sending") {
        outcomes.push({ kind: "deferred", recordId: record.recordId, messageRowId: record.messageRowId, error: "not attempted", retryAt: retryAt ?? now, unpin: record.step === 1, countAttempt: false });
      } else {
        outcomes.push({ kind: "skipped", recordId: record.recordId, ...following(campaign, record.recordId, record.step, now) });
      }
      continue;
    }
    const composed = await composeEmail({
      recordId: record.recordId,
      step: {
        seqNumber: record.step,
        subject: content.step.subject,
        emailBody: content.step.emailBody,
        variants: content.variants.map((v) => ({ id: v.id, subject: v.subject, emailBody: v.emailBody, percentage: v.percentage })),
      },
      lead: { ...record.lead, email: record.leadEmail },
      sender: { fromName: mailbox.fromName, fromEmail: mailbox.fromEmail, signature: mailbox.signature, replyTo: mailbox.differentReplyToAddress },
      settings: campaign.settings,
      thread: record.thread,
      messageId: record.messageId!,
      ...(await claim.links.forEmail({
        recordId: record.recordId,
        step: record.step,
        mailboxId: mailbox.id,
        sentAt: now,
        customTrackingDomain: mailbox.customTrackingDomain,
        trackOpens: !campaign.settings.trackSettings.includes("DONT_EMAIL_OPEN"),
        trackClicks: !campaign.settings.trackSettings.includes("DONT_LINK_CLICK"),
      })),
    });
    const result = await sendMail(smtp, composed.message, { allowPlain: false, bcc: mailbox.bccEmail ? [mailbox.bccEmail] : [] });
    const rowId = record.messageRowId;
    if (result.ok) {
      outcomes.push({ kind: "sent", recordId: record.recordId, messageRowId: rowId, subject: composed.subject, sentAt: now, ...following(campaign, record.recordId, record.step, now) });
      events.push({ record, type: "SENT", messageRowId: rowId, subject: composed.subject, body: composed.body, messageId: record.messageId });
      continue;
    }
    const { failure } = result;
    log("warn", "campaign email not sent", { mailbox_id: mailbox.id, campaign_id: campaign.row.id, record_id: record.recordId, kind: failure.kind, code: failure.code });
    switch (failure.kind) {
      case "auth_failed":
        suspendReason = failure.text;
        stop = true;
        outcomes.push({ kind: "deferred", recordId: record.recordId, messageRowId: rowId, error: failure.text, retryAt: now, unpin: record.step === 1, countAttempt: false });
        break;
      case "connection":
        stop = true;
        retryAt = now + CONNECTION_RETRY_MS;
        outcomes.push({ kind: "deferred", recordId: record.recordId, messageRowId: rowId, error: failure.text, retryAt, unpin: record.step === 1, countAttempt: false });
        break;
      case "transient": {
        const delay = RETRY_DELAYS_MS[record.attempts - 1];
        outcomes.push(
          delay === undefined
            ? { kind: "failed", recordId: record.recordId, messageRowId: rowId, error: failure.text }
            : { kind: "deferred", recordId: record.recordId, messageRowId: rowId, error: failure.text, retryAt: now + delay, unpin: false, countAttempt: true },
        );
        break;
      }
      case "recipient_rejected":
        outcomes.push({ kind: "bounced", recordId: record.recordId, messageRowId: rowId, error: failure.text });
        events.push({ record, type: "BOUNCE", messageRowId: rowId, subject: null, body: failure.text, messageId: null });
        break;
      case "permanent":
        outcomes.push({ kind: "failed", recordId: record.recordId, messageRowId: rowId, error: failure.text });
        break;
    }
  }

  const statements = [];
  let deliveries: ReturnType<typeof planIngestion>["deliveries"] = [];
  if (events.length > 0) {
    const context = await loadIngestContext(db, eq(campaignsTable.accountId, campaign.row.accountId), campaign.row.accountId, campaign.row.id, {
      recordIds: events.map((e) => e.record.recordId),
      emails: [],
      categoryIds: [],
    });
    const byId = new Map(context.records.map((r) => [r.id, r]));
    const planned: PlannedEvent[] = events.flatMap((e) => {
      const row = byId.get(e.record.recordId);
      if (!row) return [];
      return [
        {
          eventId: `salvo:${e.type.toLowerCase()}:${e.messageRowId}`,
          record: row,
          incoming: {
            type: e.type,
            occurredAt: now,
            sequenceNumber: e.record.step,
            emailAccountId: mailbox.id,
            fromEmail: mailbox.fromEmail,
            isOoo: false,
            categoryId: null,
          },
          toEmail: e.record.leadEmail,
          subject: e.subject,
          body: e.body,
          messageId: e.messageId,
          linkUrl: null,
        },
      ];
    });
    const plan = planIngestion(context, campaign.row, planned);
    deliveries = plan.deliveries;
    statements.push(...ingestionStatements(campaign.row, plan.rows, plan.deliveries, now));
  }
  const ingestionCount = statements.length;
  statements.push(...outcomeStatements(nonce, outcomes, now));
  const announce = suspendReason === null ? null : await disconnectAnnouncement(db, mailbox, { smtp: suspendReason, imap: null }, now);
  const announceAt = statements.length;
  if (announce !== null) statements.push(announce);
  if (suspendReason !== null) statements.push(suspendStatement(mailbox.id, suspendReason, now));
  const results = await rawBatch(env.DB, statements);
  if (ingestionCount > 0) await enqueue(env, ingestedDeliveryIds(results, deliveries));
  if (announce !== null) await enqueue(env, deliveryIds(results[announceAt]));
  if (suspendReason !== null) log("warn", "mailbox suspended: its server refused the login", { mailbox_id: mailbox.id });
  return { sent: events.filter((e) => e.type === "SENT").length, stop, retryAt: suspendReason !== null ? null : retryAt };
}
