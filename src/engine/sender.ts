import { scheduleOf, settingsOf, type CampaignSettings } from "../schedule/settings";
import type { Bindings } from "../platform/env";
import { connectionUsable, utcDayStart } from "../mailboxes/rules";
import { wakeCampaign } from "../mailboxes/wake";
import type { MailboxLogins } from "../mailboxes/login";
import { database, type Database } from "../platform/db";
import { log } from "../platform/logging";
import { getsFollowUps } from "../sequences/variants";
import { composeEmail } from "./compose";
import type { EmailLinks } from "./links";
import { envelopeOf, outgoing, SPARE_AHEAD, type Outgoing, type SmtpSender } from "../mail/smtp";
import { claimRecords, loadCampaignPlans, moreDue, openedRows, openStatement, startPass, type CampaignPlan, type CampaignRow, type ClaimedRecord, type MailboxRow } from "./store";
import { afterStop, failureOutcome, type NextStep } from "./outcome";
import { CONNECTION_RETRY_MS, holdEnd } from "../mailboxes/hold";
import { PendingOutcomes, storeLeftover } from "./pending";
import type { Finished, Opened, SendJournal } from "./journal";
import { gapEndsAt, isInWindow, localDayRange, nextLocalDayStart, nextMailboxDayStart, nextWindowOpen, recordDueAt, recordSchedule, scheduleStartAt, stepDueAt, type Schedule } from "../schedule/window";

/**
 * One pass of a mailbox's sender (its Durable Object runs it on its alarm): send what is due for
 * this mailbox inside each ACTIVE campaign's window, within its daily cap, its gap and each
 * campaign's new-leads cap, and say when to wake next. Each claim leases one campaign's batch of
 * due records, sent as `sendClaimed` says.
 */

/** Sends per claim when the mailbox has no gap to keep (it would otherwise send one per wake). */
const BURST = 100;
/**
 * Messages opened in one D1 batch (with the outcomes before them): each is handed over only after the
 * journal says so, and has its envelope written ahead once its window is open (only an opened message's may be).
 */
const OPEN_WINDOW = 50;
/** A claim that leads to another asks whether the next finds more this many messages before its end: its answer is back before a session's next is due. */
const SPARE_ASK = SPARE_AHEAD + 5;
/** A pass stops after this long or this many sends and wakes again at once (alarm handlers are bounded). */
const PASS_BUDGET_MS = 25_000;
const PASS_MAX_SENDS = 500;
/** A pass that sent nothing and found nothing to do soon looks again no sooner than this. */
const IDLE_RECHECK_MS = 60 * 60_000;
/**
 * Claims in a row that reached no mail server (every record refused, skipped, or outside its lead's
 * window) before the pass moves on: so a mailbox with a gap clears several such records a pass.
 */
const SETTLE_ROUNDS = 5;

export interface PassResult {
  sent: number;
  /** When the object should wake next; null = only when something wakes it (suspended, nothing to do). */
  nextWakeAt: number | null;
}

/** Where a pass spent its time (wall clock across D1 and SMTP calls): the operator route shows it. */
interface PassTimings {
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

/**
 * The step after the record's that it gets, with its due time; null when the sequence ends. In each
 * lead's zone the delay counts calendar days of the lead's zone and the due time is moved into its
 * window (CONTRACT 23.2), so the stored due time is already sendable.
 */
function following(active: ActiveCampaign, record: Pick<ClaimedRecord, "recordId" | "step" | "leadTimezone">, sentAt: number): NextStep {
  const later = [...active.plan.steps.keys()].filter((n) => n > record.step).sort((a, b) => a - b)[0];
  if (later === undefined || !getsFollowUps(record.recordId, active.settings.followUpPercentage)) return { nextStep: null, nextDueAt: null };
  const delay = active.plan.steps.get(later)!.step.delayInDays;
  const zone = recordSchedule(active.schedule, record.leadTimezone).timezone;
  return { nextStep: later, nextDueAt: recordDueAt(active.schedule, record.leadTimezone, stepDueAt(sentAt, delay, zone)) };
}

/** The live step a record's `next_step` names, or the first live one after it (a step may have been removed). */
function stepFor(active: ActiveCampaign, next: number) {
  const numbers = [...active.plan.steps.keys()].filter((n) => n >= next).sort((a, b) => a - b);
  return numbers.length === 0 ? undefined : active.plan.steps.get(numbers[0]!);
}

/**
 * A pass of one mailbox. Only the mailbox's object runs it, one pass at a time: so a journal left,
 * or a claim of the mailbox still held, when a pass begins belongs to a pass that died: what the
 * journal knew is stored, and the claim released, first.
 */
export async function runSenderPass(
  env: Bindings,
  mailboxId: number,
  now: number,
  links: EmailLinks,
  logins: MailboxLogins,
  journal: SendJournal,
  options: PassOptions = {},
): Promise<PassResult> {
  const maxSends = Math.min(options.maxSends ?? PASS_MAX_SENDS, PASS_MAX_SENDS);
  const timings = options.timings ?? { findMs: 0, claimMs: 0, sendMs: 0 };
  let clock = Date.now();
  const lap = (part: keyof PassTimings) => {
    const at = Date.now();
    timings[part] += at - clock;
    clock = at;
  };
  const db = database(env.DB);
  const dayStart = utcDayStart(now);
  const leftover = journal.leftover();
  if (leftover) {
    await storeLeftover(env, db, mailboxId, leftover, now, journal);
    journal.clear();
  }
  const { inDoubt, work } = await startPass(db, mailboxId, now, dayStart);
  for (const doubt of inDoubt) {
    log("warn", "campaign email in doubt: its pass died during the SMTP transaction; it is never sent again", {
      mailbox_id: mailboxId,
      campaign_id: doubt.campaignId,
      record_id: doubt.recordId,
      message_row_id: doubt.messageRowId,
    });
  }
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
    now,
  );
  const active: ActiveCampaign[] = scheduled
    .map((c) => ({ ...c, plan: plans.get(c.row.id)! }))
    .filter((c) => c.plan.steps.size > 0)
    .sort((a, b) => (a.plan.nextDueAt ?? Infinity) - (b.plan.nextDueAt ?? Infinity));
  lap("findMs");
  // Its server refused its sending for now (a 421, its own sending limit) or was out of reach: a wake
  // before the engine's retry (new leads, a START) must not knock again, which such a server counts against it.
  const heldUntil = holdEnd(mailbox.sendHeldUntil, now);
  if (heldUntil !== null) return { sent: 0, nextWakeAt: active.some((c) => c.plan.nextDueAt !== null) ? heldUntil : null };

  const login = await logins.for(mailbox, "smtp", now);
  if (!login.ok) return { sent: 0, nextWakeAt: login.kind === "unavailable" ? now + CONNECTION_RETRY_MS : null };
  // One session for the whole pass (issue 27): every message after the first goes on it after RSET.
  const smtp = logins.smtpSession(mailbox, login.credential);
  try {
    return await sendDue(env, db, { mailbox, sentToday: work.sentToday, lastSentAt: work.lastSentAt, active, smtp, oauth: login.oauth, now, links, journal, maxSends, started: Date.now(), lap }, async (refusal) =>
      logins.refused(mailbox, "smtp", login, refusal, now),
    );
  } finally {
    await smtp.close();
  }
}

interface PassWork {
  mailbox: MailboxRow;
  sentToday: number;
  lastSentAt: number | null;
  active: ActiveCampaign[];
  smtp: SmtpSender;
  oauth: boolean;
  now: number;
  links: EmailLinks;
  journal: SendJournal;
  maxSends: number;
  started: number;
  lap: (part: keyof PassTimings) => void;
}

/**
 * The sending part of a pass: each campaign in turn, claim after claim while due work lasts, within
 * the mailbox's daily cap and gap (a mailbox with a gap sends one email a pass), each campaign's
 * new-leads cap, and the pass's bounds. `refused` reports a held OAuth token the server refused
 * (answers whether the mailbox is now disconnected).
 */
async function sendDue(env: Bindings, db: Database, work: PassWork, refused: (refusal: string) => Promise<boolean>): Promise<PassResult> {
  const { mailbox, active, now, maxSends, lap } = work;
  const senderDomain = mailbox.fromEmail.split("@")[1]!;
  let sent = 0;
  let capLeft = mailbox.maxEmailPerDay - work.sentToday;
  if (capLeft <= 0) return { sent, nextWakeAt: active.some((c) => c.plan.nextDueAt !== null) ? nextMailboxDayStart(now) : null };
  let lastSentAt = work.lastSentAt;
  const wakes: number[] = [];

  campaigns: for (const campaign of active) {
    const { schedule, plan } = campaign;
    const dueAt = plan.nextDueAt;
    if (dueAt === null) continue;
    const start = scheduleStartAt(schedule);
    const gapEnd = gapEndsAt(lastSentAt, mailbox.timeToWaitInMins, schedule.min_time_btw_emails);
    const earliest = Math.max(now, dueAt, start ?? now, gapEnd ?? now);
    // In each lead's zone the due times are already inside each lead's window: the earliest one is when to send.
    const leadZones = schedule.send_in_lead_timezone === true;
    if (earliest > now || (!leadZones && !isInWindow(schedule, now))) {
      const open = leadZones ? earliest : nextWindowOpen(schedule, earliest);
      if (open !== null) wakes.push(open);
      continue;
    }
    const keepsGap = Math.max(mailbox.timeToWaitInMins, schedule.min_time_btw_emails) > 0;
    let newLeadsLeft = Math.max(0, schedule.max_new_leads_per_day - plan.firstStepsToday);
    let claims = 0;
    let settleRounds = 0;
    for (;;) {
      if (capLeft <= 0) {
        wakes.push(nextMailboxDayStart(now));
        break campaigns;
      }
      const limit = Math.min(capLeft, keepsGap ? 1 : BURST, maxSends - sent);
      if (limit <= 0) {
        wakes.push(now);
        break campaigns;
      }
      const { nonce, records } = await claimRecords(env.DB, { campaign: campaign.row, mailboxId: mailbox.id, senderDomain, now, limit, newLeadsLeft });
      lap("claimMs");
      claims += 1;
      if (records.length === 0) {
        // The first claim found only new leads, and the campaign's new-leads cap is reached for its local day.
        if (claims === 1) wakes.push((leadZones ? nextLocalDayStart(now, schedule.timezone) : nextWindowOpen(schedule, nextLocalDayStart(now, schedule.timezone))) ?? now + IDLE_RECHECK_MS);
        else wakes.push(now);
        continue campaigns;
      }
      const firstSteps = records.filter((r) => r.step === 1).length;
      // A full claim with room left in the pass and the day: the pass claims again if more is due then.
      const continues = !keepsGap && records.length === limit && sent + limit < maxSends && capLeft > limit;
      const newLeads = newLeadsLeft > firstSteps;
      const more = continues ? () => moreDue(env.DB, { campaignId: campaign.row.id, mailboxId: mailbox.id, now, newLeads }) : null;
      const outcome = await sendClaimed(env, db, { campaign, mailbox, smtp: work.smtp, oauth: work.oauth, records, nonce, now, links: work.links, journal: work.journal, more });
      lap("sendMs");
      sent += outcome.sent;
      capLeft -= outcome.sent;
      // Counted as claimed, not as sent: a new lead whose email failed still took its place today.
      newLeadsLeft = Math.max(0, newLeadsLeft - firstSteps);
      if (outcome.sent > 0) lastSentAt = now;
      // The first steps it stopped are due at once for the campaign's other mailboxes, which may sleep until their own next due time.
      if (outcome.stop && records.some((r) => r.step === 1)) await wakeCampaign(env, campaign.row.id, mailbox.id);
      if (outcome.oauthRefusal !== null) {
        // A held token refused: the next pass refreshes it; a fresh one refused disconnects the mailbox.
        return { sent, nextWakeAt: (await refused(outcome.oauthRefusal)) ? null : outcome.retryAt };
      }
      if (outcome.stop) return { sent, nextWakeAt: outcome.retryAt };
      const again = gapEndsAt(lastSentAt, mailbox.timeToWaitInMins, schedule.min_time_btw_emails);
      if (keepsGap && outcome.sent > 0) {
        wakes.push(again !== null && again > now ? again : now);
        break campaigns;
      }
      if (sent >= maxSends || Date.now() - work.started > PASS_BUDGET_MS) {
        wakes.push(now);
        break campaigns;
      }
      // No record of the claim reached the server (refused, verified invalid, already sent, or due outside its
      // lead's window and moved into it): nothing held the gap, so claim again, a few rounds at most.
      if (outcome.attempted === 0 && (settleRounds += 1) < SETTLE_ROUNDS) continue;
      // A short claim took everything due; a claim that sent nothing would find the same again.
      if (records.length < limit || outcome.sent === 0) {
        wakes.push(now);
        continue campaigns;
      }
    }
  }
  const nextWakeAt = wakes.length > 0 ? Math.min(...wakes) : null;
  // A pass that sent nothing never asks to run again at once: that would spin.
  if (sent === 0 && nextWakeAt !== null && nextWakeAt <= now) return { sent, nextWakeAt: now + 30_000 };
  return { sent, nextWakeAt };
}

interface ClaimContext {
  campaign: ActiveCampaign;
  mailbox: MailboxRow;
  smtp: SmtpSender;
  /** `smtp` logs in with an OAuth token (a refused login is the token's, not a suspension). */
  oauth: boolean;
  records: ClaimedRecord[];
  nonce: string;
  now: number;
  links: EmailLinks;
  journal: SendJournal;
  /** Whether the pass's next claim would find more (null: it makes none): asked near the claim's end, to open a session for it ahead. */
  more: (() => Promise<boolean>) | null;
}

const NO_STEP_LEFT = "The sequence has no step left to send";

interface Sendable {
  record: ClaimedRecord;
  content: NonNullable<ReturnType<typeof stepFor>>;
}

/** A window's journal entries and, for each of its messages, the row its opening wrote (null: not opened). */
interface OpenedWindow {
  entries: Opened[];
  rowIds: (number | null)[];
}

interface Readied {
  composed: Awaited<ReturnType<typeof composeEmail>>;
  outgoing: Outgoing;
}

/** A record's email composed with its signed links, and readied for the session. */
async function readyEmail(claim: ClaimContext, { record, content }: Sendable): Promise<Readied> {
  const { campaign, mailbox, now } = claim;
  const { recordId, step } = record;
  const composed = await composeEmail({
    recordId,
    spintaxIndex: record.spintaxIndex,
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
  return { composed, outgoing: outgoing(composed.message, copies(mailbox)) };
}

/** The mailbox's own blind copy of each email, if it keeps one. */
function copies(mailbox: MailboxRow): string[] {
  return mailbox.bccEmail ? [mailbox.bccEmail] : [];
}

/**
 * Sends a claim's records one after the other, their messages opened a window at a time. A
 * window's rows turn `sending` (`openStatement`) in the batch that stores the outcomes before them,
 * and the journal (src/engine/journal.ts) in the mailbox object's own storage says which of them is
 * being handed over (durably, before the first byte of its content) and how each ended: a pass that dies at any
 * instant leaves at most ONE message of the mailbox in doubt (the next pass stores what the journal
 * knew, withdraws what was never handed over and releases the rest of the claim: `storeLeftover`,
 * `startPass`), with one D1 round trip per window instead of one per message.
 */
async function sendClaimed(
  env: Bindings,
  db: Database,
  claim: ClaimContext,
): Promise<{ sent: number; attempted: number; stop: boolean; retryAt: number | null; oauthRefusal: string | null }> {
  const { campaign, mailbox, smtp, records, now, journal } = claim;
  const leadZones = campaign.schedule.send_in_lead_timezone === true;
  let attempted = 0;
  const opening = { nonce: claim.nonce, mailboxId: mailbox.id, now };
  const facts = { campaign: campaign.row, mailbox, nonce: claim.nonce, now, recordIds: records.map((r) => r.recordId) };
  const pending = new PendingOutcomes(env, db, facts, journal);
  let sent = 0;
  let stop: { retryAt: number | null } | null = null;
  let oauthRefusal: string | null = null;
  const sendable: Sendable[] = [];
  for (const record of records) {
    const { recordId, step } = record;
    if (record.refusal) {
      pending.settle(
        record.refusal === "invalid_email"
          ? { kind: "refused", recordId, state: "BLOCKED", reason: "invalid_email" }
          : { kind: "refused", recordId, state: record.refusal === "blocked" ? "BLOCKED" : "STOPPED" },
      );
    } else if (leadZones && !isInWindow(recordSchedule(campaign.schedule, record.leadTimezone), now)) {
      // Outside the lead's own hours: due again when its window opens, a first step this claim took from
      // rotation back to it; one pinned before (a re-pin, a subsequence's record on its parent's mailbox) keeps its mailbox.
      pending.settle({ kind: "released", recordId, dueAt: recordDueAt(campaign.schedule, record.leadTimezone, now), unpin: step === 1 && !record.pinned });
    } else if (record.messageStatus !== null && record.messageStatus !== "deferred") {
      // Sent, or in doubt: never again; the record moves on.
      pending.settle({ kind: "skipped", recordId, ...following(campaign, record, now) });
    } else {
      const content = stepFor(campaign, step);
      if (content) sendable.push({ record, content });
      else {
        const rowId = openedRows(await pending.store(openStatement(opening, [record], { status: "failed", error: NO_STEP_LEFT }))).get(recordId);
        pending.settle(rowId === undefined ? { kind: "released", recordId, dueAt: now, unpin: false } : { kind: "failed", recordId, messageRowId: rowId, error: NO_STEP_LEFT });
      }
    }
  }
  // Each message is readied (composed, its links signed, its source built) while the server works on
  // the one before it: pure work, thrown away if the claim stops first.
  const ahead = new Map<number, Promise<Readied>>();
  const readied = (at: number): Promise<Readied> => {
    let promise = ahead.get(at);
    if (!promise) {
      promise = readyEmail(claim, sendable[at]!);
      promise.catch(() => {});
      ahead.set(at, promise);
    }
    return promise;
  };
  // Windows of messages, each opened half way through the one before it: its batch (which stores what
  // ended so far) runs while that window's last messages go, and its first message's envelope can
  // ride behind them. A window is opened once; `known` holds those whose rows are back. The last of
  // several windows stores what ended half way through it too: the claim's final batch, which the
  // pass's next claim waits for, then holds half a window's outcomes, not a window and a half's.
  const windows: Sendable[][] = [];
  for (let first = 0; first < sendable.length; first += OPEN_WINDOW) windows.push(sendable.slice(first, first + OPEN_WINDOW));
  const openings: Promise<OpenedWindow>[] = [];
  let halfway: Promise<unknown> = Promise.resolve();
  const known: OpenedWindow[] = [];
  const openWindow = (k: number): Promise<OpenedWindow> => {
    const started = openings[k];
    if (started) return started;
    const window = windows[k]!;
    const entries = window.map(({ record }): Opened => ({ nonce: claim.nonce, recordId: record.recordId, step: record.step, prior: record.messageStatus === "deferred" ? "deferred" : null }));
    journal.opening({ nonce: claim.nonce, now, campaign: campaign.row }, entries);
    const batch = pending.store(openStatement(opening, window.map(({ record }) => record))).then((rows) => {
      const ids = openedRows(rows);
      return (known[k] = { entries, rowIds: window.map(({ record }) => ids.get(record.recordId) ?? null) });
    });
    batch.catch(() => {});
    return (openings[k] = batch);
  };
  // Sessions open ahead of the messages that need them: the first while the first window opens, each
  // next while the messages before it go, for the next claim's too once it is known to find more.
  let asked = claim.more === null;
  let beyond = 0;
  const openAhead = (done: number) => {
    const left = sendable.length - done;
    smtp.warm(left + beyond);
    if (asked || left >= SPARE_ASK) return;
    asked = true;
    void claim.more!().then(
      (more) => {
        if (!more || stop) return;
        beyond = Infinity;
        smtp.warm(Infinity);
      },
      () => undefined,
    );
  };
  openAhead(0);
  try {
    for (const [k, window] of windows.entries()) {
      if (stop && !openings[k]) {
        for (const { record } of window) pending.settle({ kind: "released", recordId: record.recordId, ...afterStop(record, stop.retryAt, now) });
        continue;
      }
      const { entries, rowIds } = await openWindow(k);
      for (const [index, { record }] of window.entries()) {
        const { recordId, step } = record;
        if (!stop && index > 0 && index === Math.floor(window.length / 2)) {
          if (k + 1 < windows.length) void openWindow(k + 1);
          else if (k > 0) halfway = pending.store().catch(() => undefined);
        }
        const rowId = rowIds[index] ?? null;
        if (rowId === null) {
          // The claim was released, the lead stopped or the campaign paused since the claim: not sent.
          pending.settle({ kind: "released", recordId, dueAt: now, unpin: false });
          continue;
        }
        if (stop) {
          pending.settle({ kind: "withdrawn", recordId, step, prior: entries[index]!.prior, ...afterStop(record, stop.retryAt, now) });
          continue;
        }
        const at = k * OPEN_WINDOW + index;
        const { composed, outgoing: message } = await readied(at);
        ahead.delete(at);
        attempted += 1;
        // The next opened message's envelope rides behind this one: it starts with its DATA answered.
        const upNext = index + 1 < window.length ? { record: window[index + 1]!.record, rowId: rowIds[index + 1] } : { record: windows[k + 1]?.[0]?.record, rowId: known[k + 1]?.rowIds[0] };
        const coming = upNext.record && upNext.rowId != null ? envelopeOf(mailbox.fromEmail, upNext.record.leadEmail, copies(mailbox)) : null;
        const result = await smtp.deliver(message, {
          handingOver: () => journal.handingOver(entries[index]!),
          handedOver: () => (at + 1 < sendable.length ? void readied(at + 1) : undefined),
          ...(coming?.ok ? { next: coming.envelope } : {}),
        });
        const ended = { record: { recordId, step, leadEmail: record.leadEmail } };
        let finished: Finished;
        if (result.ok) {
          finished = {
            ...ended,
            outcome: { kind: "sent", recordId, messageRowId: rowId, subject: composed.subject, sentAt: now, ...following(campaign, record, now) },
            event: { type: "SENT", subject: composed.subject, body: composed.body, messageId: record.messageId },
            suspend: null,
            hold: null,
          };
          sent += 1;
        } else {
          const { failure } = result;
          const what = failure.kind === "unconfirmed" ? "campaign email in doubt: the session was lost after the message was handed over; it is never sent again" : "campaign email not sent";
          log("warn", what, { mailbox_id: mailbox.id, campaign_id: campaign.row.id, record_id: recordId, kind: failure.kind, code: failure.code });
          const verdict = failureOutcome(failure, { recordId, messageRowId: rowId, step, pinned: record.pinned, attempt: record.attempts + 1, now, next: following(campaign, record, now), oauth: claim.oauth });
          oauthRefusal = verdict.oauthRefusal;
          finished = {
            ...ended,
            outcome: verdict.outcome,
            event: verdict.bounce ? { type: "BOUNCE", subject: null, body: failure.text, messageId: null } : null,
            suspend: verdict.suspend,
            hold: verdict.hold,
          };
          if (verdict.stop) stop = { retryAt: verdict.retryAt };
        }
        journal.ended({ nonce: claim.nonce, finished });
        pending.finish(finished);
        if (!stop) openAhead(at + 1);
      }
    }
  } catch (error) {
    // What is done is stored before the error goes up (after an opening on its way, which stores some of
    // it): a finished transaction must not be left in doubt.
    await Promise.allSettled([...openings, halfway]);
    await pending.store().catch(() => undefined);
    throw error;
  }
  await halfway;
  await pending.store();
  journal.clear();
  return { sent, attempted, stop: stop !== null, retryAt: stop?.retryAt ?? null, oauthRefusal };
}
