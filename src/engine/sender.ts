import { eq, type SQL } from "drizzle-orm";
import { scheduleOf, settingsOf, type CampaignSettings } from "../schedule/settings";
import { config } from "../config";
import { campaigns as campaignsTable } from "../db/schema";
import type { Bindings } from "../platform/env";
import { planIngestion, type PlannedEvent } from "../events/plan";
import { ingestedDeliveryIds, ingestionStatements, loadIngestContext, type IngestContext } from "../events/store";
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
  openMessage,
  outcomeStatements,
  releaseDeadClaims,
  suspendStatement,
  type CampaignPlan,
  type CampaignRow,
  type ClaimedRecord,
  type MailboxRow,
} from "./store";
import { failureOutcome, type NextStep, type RecordOutcome } from "./outcome";
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
 * campaign's new-leads cap, and say when to wake next. Each claim leases one campaign's batch of
 * due records; each of its messages is written `sending` right before its SMTP transaction, and
 * that transaction's outcome (its SENT or BOUNCE event through the ingestion statements, the
 * message row, the record's next step) commits in one D1 batch before the next message opens.
 */

/** Sends per claim when the mailbox has no gap to keep (it would otherwise send one per wake). */
const BURST = 10;
/** A pass stops after this long or this many sends and wakes again at once (alarm handlers are bounded). */
const PASS_BUDGET_MS = 25_000;
const PASS_MAX_SENDS = 50;
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
function following(active: ActiveCampaign, recordId: number, step: number, sentAt: number): NextStep {
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

/**
 * A pass of one mailbox. Only the mailbox's object runs it, one pass at a time: so a claim of the
 * mailbox still held when a pass begins belongs to a pass that died, and is released first.
 */
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
  for (const doubt of await releaseDeadClaims(env.DB, mailboxId, now)) {
    log("warn", "campaign email in doubt: its pass died during the SMTP transaction; it is never sent again", {
      mailbox_id: mailboxId,
      campaign_id: doubt.campaignId,
      record_id: doubt.recordId,
      message_row_id: doubt.messageRowId,
    });
  }
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

const NO_STEP_LEFT = "The sequence has no step left to send";

/**
 * Sends a claim's records one after the other. Each message's row turns `sending` (`openMessage`)
 * right before its SMTP transaction, and its outcome (message row, the record's next step, its SENT
 * or BOUNCE event through the ingestion statements) commits in one batch right after that
 * transaction, before the next message opens: a pass that dies at any instant leaves at most ONE
 * message of the mailbox in doubt, and the next pass releases the rest of its claim
 * (`releaseDeadClaims`). SMTP session reuse (several messages per session, RSET between) keeps
 * this per message: open the row before its MAIL FROM, store its outcome before the next message's
 * MAIL FROM, never two messages open at once; a session lost mid-message leaves only that one in doubt.
 */
async function sendClaimed(env: Bindings, db: Database, claim: ClaimContext): Promise<{ sent: number; stop: boolean; retryAt: number | null }> {
  const { campaign, mailbox, smtp, records, nonce, now } = claim;
  const opening = { nonce, mailboxId: mailbox.id, now };
  // Outcomes that need no SMTP (refusals, skips, releases) ride along with the next commit.
  let settled: RecordOutcome[] = [];
  let context: IngestContext | null = null;
  let sent = 0;
  let stop: { retryAt: number | null } | null = null;

  for (const record of records) {
    const { recordId, step } = record;
    if (stop) {
      settled.push({ kind: "released", recordId, dueAt: stop.retryAt ?? now, unpin: step === 1 });
      continue;
    }
    if (record.refusal) {
      settled.push({ kind: "refused", recordId, state: record.refusal === "blocked" ? "BLOCKED" : "STOPPED" });
      continue;
    }
    if (record.messageStatus !== null && record.messageStatus !== "deferred") {
      // Sent, or in doubt: never again; the record moves on.
      settled.push({ kind: "skipped", recordId, ...following(campaign, recordId, step, now) });
      continue;
    }
    const content = stepFor(campaign, step);
    if (!content) {
      const rowId = await openMessage(env.DB, opening, record, { status: "failed", error: NO_STEP_LEFT });
      settled.push(rowId === null ? { kind: "released", recordId, dueAt: now, unpin: false } : { kind: "failed", recordId, messageRowId: rowId, error: NO_STEP_LEFT });
      continue;
    }
    const composed = await composeEmail({
      recordId,
      step: {
        seqNumber: step,
        subject: content.step.subject,
        emailBody: content.step.emailBody,
        variants: content.variants.map((v) => ({ id: v.id, subject: v.subject, emailBody: v.emailBody, percentage: v.percentage })),
      },
      lead: { ...record.lead, email: record.leadEmail },
      sender: { fromName: mailbox.fromName, fromEmail: mailbox.fromEmail, signature: mailbox.signature, replyTo: mailbox.differentReplyToAddress },
      settings: campaign.settings,
      thread: record.thread,
      messageId: record.messageId,
      ...(await claim.links.forEmail({
        recordId,
        step,
        mailboxId: mailbox.id,
        sentAt: now,
        customTrackingDomain: mailbox.customTrackingDomain,
        trackOpens: !campaign.settings.trackSettings.includes("DONT_EMAIL_OPEN"),
        trackClicks: !campaign.settings.trackSettings.includes("DONT_LINK_CLICK"),
      })),
    });
    const rowId = await openMessage(env.DB, opening, record);
    if (rowId === null) {
      // The claim was released, the lead stopped or the campaign paused since the claim: not sent.
      settled.push({ kind: "released", recordId, dueAt: now, unpin: false });
      continue;
    }
    const result = await sendMail(smtp, composed.message, { allowPlain: false, bcc: mailbox.bccEmail ? [mailbox.bccEmail] : [] });
    let done: Done;
    if (result.ok) {
      done = {
        outcome: { kind: "sent", recordId, messageRowId: rowId, subject: composed.subject, sentAt: now, ...following(campaign, recordId, step, now) },
        event: { type: "SENT", subject: composed.subject, body: composed.body, messageId: record.messageId },
        suspend: null,
      };
      sent += 1;
    } else {
      const { failure } = result;
      log("warn", "campaign email not sent", { mailbox_id: mailbox.id, campaign_id: campaign.row.id, record_id: recordId, kind: failure.kind, code: failure.code });
      const verdict = failureOutcome(failure, { recordId, messageRowId: rowId, step, attempt: record.attempts + 1, now, next: following(campaign, recordId, step, now) });
      done = { outcome: verdict.outcome, event: verdict.bounce ? { type: "BOUNCE", subject: null, body: failure.text, messageId: null } : null, suspend: verdict.suspend };
      if (verdict.stop) stop = { retryAt: verdict.retryAt };
    }
    context = await storeOutcome(env, db, claim, record, done, settled, context);
    settled = [];
  }
  if (settled.length > 0) await rawBatch(env.DB, outcomeStatements(nonce, settled, now));
  return { sent, stop: stop !== null, retryAt: stop?.retryAt ?? null };
}

/** What one SMTP transaction came to: the record's outcome, the event it records, a suspension. */
interface Done {
  outcome: RecordOutcome;
  event: { type: "SENT" | "BOUNCE"; subject: string | null; body: string | null; messageId: string | null } | null;
  suspend: string | null;
}

/**
 * Commits one transaction's outcome with the outcomes settled before it, in ONE batch: its event
 * through the ingestion statements (analytics, inbox, webhook deliveries as for pushed events), the
 * message row and records, and a refused login's suspension and announcement; then enqueues the
 * deliveries. The ingestion context is read once per claim, at its first event (a claim names each
 * record once), and handed back for the next.
 */
async function storeOutcome(
  env: Bindings,
  db: Database,
  claim: ClaimContext,
  record: ClaimedRecord,
  done: Done,
  settled: RecordOutcome[],
  loaded: IngestContext | null,
): Promise<IngestContext | null> {
  const { campaign, mailbox, now } = claim;
  let context = loaded;
  const statements: SQL[] = [];
  let deliveries: ReturnType<typeof planIngestion>["deliveries"] = [];
  const messageRowId = "messageRowId" in done.outcome ? done.outcome.messageRowId : null;
  if (done.event !== null && messageRowId !== null) {
    context ??= await loadIngestContext(db, eq(campaignsTable.accountId, campaign.row.accountId), campaign.row.accountId, campaign.row.id, {
      recordIds: claim.records.map((r) => r.recordId),
      emails: [],
      categoryIds: [],
    });
    const row = context.records.find((r) => r.id === record.recordId);
    if (row) {
      const planned: PlannedEvent = {
        eventId: `salvo:${done.event.type.toLowerCase()}:${messageRowId}`,
        record: row,
        incoming: {
          type: done.event.type,
          occurredAt: now,
          sequenceNumber: record.step,
          emailAccountId: mailbox.id,
          fromEmail: mailbox.fromEmail,
          isOoo: false,
          categoryId: null,
        },
        toEmail: record.leadEmail,
        subject: done.event.subject,
        body: done.event.body,
        messageId: done.event.messageId,
        linkUrl: null,
      };
      const plan = planIngestion(context, campaign.row, [planned]);
      deliveries = plan.deliveries;
      statements.push(...ingestionStatements(campaign.row, plan.rows, plan.deliveries, now));
    }
  }
  const ingested = statements.length > 0;
  statements.push(...outcomeStatements(claim.nonce, [...settled, done.outcome], now));
  const announce = done.suspend === null ? null : await disconnectAnnouncement(db, mailbox, { smtp: done.suspend, imap: null }, now);
  const announceAt = statements.length;
  if (announce !== null) statements.push(announce);
  if (done.suspend !== null) statements.push(suspendStatement(mailbox.id, done.suspend, now));
  const results = await rawBatch(env.DB, statements);
  if (ingested) await enqueue(env, ingestedDeliveryIds(results, deliveries));
  if (announce !== null) await enqueue(env, deliveryIds(results[announceAt]));
  if (done.suspend !== null) log("warn", "mailbox suspended: its server refused the login", { mailbox_id: mailbox.id });
  return context;
}
