import type { CampaignStatus } from "../db/schema";
import { holdEnd, type SendHold } from "../mailboxes/hold";
import {
  isInWindow,
  mailboxCapReached,
  newLeadAllowed,
  nextLocalDayStart,
  nextMailboxDayStart,
  nextSendAt,
  nextWindowOpen,
  recordSchedule,
  scheduleStartAt,
  type Schedule,
} from "../schedule/window";

/**
 * A campaign's `sending_status` (issue 13, "why not sending"): the first reason, in a fixed order,
 * that nothing goes out now, and when something next will when that is known. The order runs from
 * what the customer must fix (status, sequence, mailboxes) to what only time fixes (no lead due yet,
 * start time, window, caps), so the answer names the thing to act on first. `mailboxSendingStatus`
 * answers the same question for one mailbox across its campaigns.
 */

type SendingCode =
  | "sending"
  | "drafted"
  | "paused"
  | "stopped"
  | "completed"
  | "archived"
  | "no_sequence"
  | "no_schedule"
  | "no_mailboxes"
  | "all_mailboxes_suspended"
  | "all_mailboxes_failing"
  | "all_mailboxes_held"
  | "no_leads_due"
  | "before_start_time"
  | "outside_window"
  | "outside_lead_windows"
  | "daily_cap_reached"
  | "new_leads_cap_reached";

export type SendingStatus = { code: SendingCode; message: string; next_send_at: number | null };

export type MailboxSnapshot = {
  suspended: boolean;
  /** The last connection check passed (`is_smtp_success`); a failing mailbox is never used. */
  connectionOk: boolean;
  /** Its sends of this UTC day, campaign and manual (src/mailboxes/sends.ts). */
  sentToday: number;
  maxEmailPerDay: number;
  lastSentAt: number | null;
  /** `time_to_wait_in_mins`. */
  gapMinutes: number;
  /** Its server refused its sending for now (or was out of reach): the engine sends nothing through it before this instant. */
  heldUntil: number | null;
};

export type SendingSnapshot = {
  now: number;
  status: CampaignStatus;
  /** Live (not deleted) sequence steps. */
  stepCount: number;
  schedule: Schedule | null;
  /** The campaign's attached mailboxes. */
  mailboxes: readonly MailboxSnapshot[];
  /** Step-1 sends of this campaign on the current local day. */
  firstStepsSentToday: number;
  /** Records whose next step is due now, split because only step 1 counts against the new-leads cap. */
  firstStepsDue: number;
  followUpsDue: number;
  /** When the earliest record not yet due falls due; null when none is waiting. */
  nextDueAt: number | null;
  /** In each lead's zone (CONTRACT 23.4): due records inside their lead's window now, and the earliest opening of the others'. */
  leadWindows?: { dueInWindow: number; nextWindowAt: number | null };
};

const MESSAGES: Record<SendingCode, string> = {
  sending: "Sending",
  drafted: "The campaign has not been started",
  paused: "The campaign is paused",
  stopped: "The campaign is stopped",
  completed: "The campaign is completed",
  archived: "The campaign is archived",
  no_sequence: "The campaign has no sequence steps",
  no_schedule: "The campaign has no schedule",
  no_mailboxes: "No mailboxes are attached to the campaign",
  all_mailboxes_suspended: "Every attached mailbox is suspended",
  all_mailboxes_failing: "No attached mailbox is usable: each is suspended or failing its connection check",
  all_mailboxes_held: "The mail server of every usable mailbox refused its sending for now, or could not be reached: Salvo tries again at next_send_at (each mailbox's sending_status has the server's words)",
  no_leads_due: "No leads are due",
  before_start_time: "The campaign's start time has not been reached",
  outside_window: "Outside the sending window",
  outside_lead_windows: "No due lead is inside its own sending hours now",
  daily_cap_reached: "Every usable mailbox has reached its daily cap",
  new_leads_cap_reached: "The campaign's new leads per day are reached and no follow-up is due",
};

const STATUS_CODES: Partial<Record<CampaignStatus, SendingCode>> = {
  DRAFTED: "drafted",
  PAUSED: "paused",
  STOPPED: "stopped",
  COMPLETED: "completed",
  ARCHIVED: "archived",
};

/** A campaign's reasons, in the order they are tried (the OpenAPI document lists them). */
export const CAMPAIGN_SENDING_CODES = (Object.keys(MESSAGES) as SendingCode[]).filter((code) => code !== "sending");

function result(code: SendingCode, nextSendAt: number | null): SendingStatus {
  return { code, message: MESSAGES[code], next_send_at: nextSendAt };
}

export function sendingStatus(s: SendingSnapshot): SendingStatus {
  const stopped = STATUS_CODES[s.status];
  if (stopped) return result(stopped, null);
  if (s.stepCount === 0) return result("no_sequence", null);
  if (!s.schedule) return result("no_schedule", null);
  const schedule = s.schedule;
  if (s.mailboxes.length === 0) return result("no_mailboxes", null);
  const usable = s.mailboxes.filter((m) => !m.suspended && m.connectionOk);
  if (usable.length === 0) {
    return result(s.mailboxes.every((m) => m.suspended) ? "all_mailboxes_suspended" : "all_mailboxes_failing", null);
  }
  // In each lead's zone (CONTRACT 23.2) the stored due times are already inside each lead's window:
  // the campaign's own window does not apply, and a record's due time is when it can go.
  const leadZones = schedule.send_in_lead_timezone === true;
  const opening = (instant: number) => (leadZones ? instant : nextWindowOpen(schedule, instant));
  const due = s.firstStepsDue + s.followUpsDue > 0;
  // Before "no leads due": a hold releases the follow-ups it stopped with their due time at its end, so
  // a campaign whose only work is those would otherwise hide what its mailboxes' servers said.
  const heldUntil = (mailboxes: readonly MailboxSnapshot[]) => {
    const ends = mailboxes.map((m) => holdEnd(m.heldUntil, s.now));
    return ends.every((end) => end !== null) ? Math.min(...ends) : null;
  };
  const start = scheduleStartAt(schedule);
  const allHeld = heldUntil(usable);
  if (allHeld !== null && (due || s.nextDueAt !== null)) {
    return result("all_mailboxes_held", opening(Math.max(allHeld, due ? s.now : s.nextDueAt!, start ?? s.now)));
  }
  if (!due) {
    return result("no_leads_due", s.nextDueAt === null ? null : opening(Math.max(s.now, s.nextDueAt)));
  }
  if (start !== null && s.now < start) return result("before_start_time", leadZones ? start : nextWindowOpen(schedule, s.now));
  if (!leadZones && !isInWindow(schedule, s.now)) return result("outside_window", nextWindowOpen(schedule, s.now));
  // A due time is stored inside its lead's window, but the window may have closed since it fell due.
  if (leadZones && s.leadWindows && s.leadWindows.dueInWindow === 0) return result("outside_lead_windows", s.leadWindows.nextWindowAt);
  const withRoom = usable.filter((m) => !mailboxCapReached(m.sentToday, m.maxEmailPerDay));
  if (withRoom.length === 0) return result("daily_cap_reached", opening(nextMailboxDayStart(s.now)));
  const roomHeld = heldUntil(withRoom);
  if (roomHeld !== null) return result("all_mailboxes_held", opening(roomHeld));
  if (s.followUpsDue === 0 && !newLeadAllowed(s.firstStepsSentToday, schedule)) {
    return result("new_leads_cap_reached", opening(nextLocalDayStart(s.now, schedule.timezone)));
  }
  const times = withRoom
    .filter((m) => holdEnd(m.heldUntil, s.now) === null)
    .map((m) => nextSendAt({ schedule, now: s.now, dueAt: s.now, lastSentAt: m.lastSentAt, mailboxGapMinutes: m.gapMinutes }))
    .filter((t): t is number => t !== null);
  return result("sending", times.length > 0 ? Math.min(...times) : null);
}

type MailboxSendingCode =
  | "sending"
  | "suspended"
  | "needs_reconnect"
  | "connection_failing"
  | "no_active_campaigns"
  | "daily_cap_reached"
  | "server_refusing"
  | "outside_window"
  | "no_leads_due";

export type MailboxSendingStatus = { code: MailboxSendingCode; message: string; next_send_at: number | null };

export type MailboxStatusSnapshot = MailboxSnapshot & {
  now: number;
  /** Why a person must reconnect it (CONTRACT 18.5), when it is disconnected. */
  disconnectMessage: string | null;
  /**
   * Its ACTIVE campaigns with live steps: each one's schedule and when the earliest of its records
   * this mailbox may send falls due (at or before `now` when one is due now; null when none waits).
   * In each lead's zone, `leadWindows` says whether one of its due records is inside its lead's
   * window now, and when the earliest of the others' windows opens.
   */
  campaigns: readonly { schedule: Schedule; nextDueAt: number | null; leadWindows?: { anyInWindow: boolean; nextWindowAt: number | null } }[];
};

const MAILBOX_MESSAGES: Record<MailboxSendingCode, string> = {
  sending: "Sending",
  suspended: "The mailbox is suspended",
  needs_reconnect: "The mailbox is disconnected and needs a reconnect",
  connection_failing: "The mailbox has not passed its connection check (SMTP, and IMAP once checked)",
  no_active_campaigns: "The mailbox is in no active campaign",
  daily_cap_reached: "The mailbox has reached its daily cap",
  server_refusing: "The mail server refused this mailbox's sending for now, or could not be reached: Salvo tries again at next_send_at (its warnings have the server's words)",
  no_leads_due: "No leads are due for this mailbox",
  outside_window: "No due lead of this mailbox is inside its sending window now",
};

/** A mailbox's reasons, in the order they are tried. */
export const MAILBOX_SENDING_CODES = (Object.keys(MAILBOX_MESSAGES) as MailboxSendingCode[]).filter((code) => code !== "sending");

/**
 * A mailbox's `sending_status`, in the same order as the campaign's: what the customer can fix first
 * (suspension, credentials, attaching it), then what time fixes (its UTC-day cap, its server's hold,
 * due work, windows). `next_send_at` is the earliest instant any of its campaigns may use it: due
 * time, both gaps, the campaign's window, after a reached cap the next UTC day, after a hold its end.
 */
export function mailboxSendingStatus(m: MailboxStatusSnapshot): MailboxSendingStatus {
  const answer = (code: MailboxSendingCode, next: number | null) => ({ code, message: MAILBOX_MESSAGES[code], next_send_at: next });
  if (m.suspended) return answer("suspended", null);
  // CONTRACT 18.5: the reason in its own words, and the way back (POST /email-accounts/{id}/oauth/reconnect for OAuth, new credentials otherwise).
  if (m.disconnectMessage !== null) return { code: "needs_reconnect", message: m.disconnectMessage, next_send_at: null };
  if (!m.connectionOk) return answer("connection_failing", null);
  if (m.campaigns.length === 0) return answer("no_active_campaigns", null);
  const capped = mailboxCapReached(m.sentToday, m.maxEmailPerDay);
  // A hold's follow-ups were released due at its end (the pass stopped): so, as for a campaign, it comes before "no leads due".
  const heldUntil = holdEnd(m.heldUntil, m.now);
  const from = Math.max(capped ? nextMailboxDayStart(m.now) : m.now, heldUntil ?? m.now);
  const waiting = m.campaigns.filter((c): c is (typeof m.campaigns)[number] & { nextDueAt: number } => c.nextDueAt !== null);
  // Due records all outside their leads' windows go when the earliest of those opens.
  const dueAt = (c: (typeof waiting)[number]) => (c.leadWindows && !c.leadWindows.anyInWindow && c.leadWindows.nextWindowAt !== null ? Math.max(c.nextDueAt, c.leadWindows.nextWindowAt) : c.nextDueAt);
  const times = waiting
    .map((c) => nextSendAt({ schedule: c.schedule, now: from, dueAt: dueAt(c), lastSentAt: m.lastSentAt, mailboxGapMinutes: m.gapMinutes }))
    .filter((t): t is number => t !== null);
  const next = times.length > 0 ? Math.min(...times) : null;
  if (capped) return answer("daily_cap_reached", next);
  if (heldUntil !== null && waiting.length > 0) return answer("server_refusing", next);
  const dueNow = waiting.filter((c) => c.nextDueAt <= m.now);
  if (dueNow.length === 0) return answer("no_leads_due", next);
  const inWindow = (c: (typeof dueNow)[number]) => (c.schedule.send_in_lead_timezone === true ? (c.leadWindows?.anyInWindow ?? true) : isInWindow(c.schedule, m.now));
  if (!dueNow.some(inWindow)) return answer("outside_window", next);
  return answer("sending", next);
}

/** Due records of one lead zone (null: none, the campaign's zone applies), as `leadWindowFacts` takes them. */
export type DueGroup = { zone: string | null; count: number };

/**
 * CONTRACT 23.4's `details.lead_timezone` counts from the due records grouped by their lead's zone:
 * how many are inside their own window now and how many outside, how many have no zone of their
 * own, and when the earliest window of those outside opens (null: none outside, or never opens).
 */
export function leadWindowFacts(schedule: Schedule, now: number, groups: readonly DueGroup[]) {
  let inside = 0;
  let outside = 0;
  let withoutZone = 0;
  const openings: number[] = [];
  for (const { zone, count } of groups) {
    const own = recordSchedule(schedule, zone);
    if (zone === null) withoutZone += count;
    if (isInWindow(own, now)) inside += count;
    else {
      outside += count;
      const open = nextWindowOpen(own, now);
      if (open !== null) openings.push(open);
    }
  }
  return { due_in_window: inside, due_outside_window: outside, leads_without_zone: withoutZone, next_window_at: openings.length > 0 ? Math.min(...openings) : null };
}

/** A warning beside a mailbox's `sending_status` (CONTRACT 19's `warnings`, an Extension). */
export type MailboxWarning = { code: "server_refusing" | "unconfirmed_sends"; message: string };

/** How many recipients of emails in doubt a warning names. */
const NAMED_RECIPIENTS = 5;

/**
 * What a mailbox's owner should know besides why it sends or not: its server refusing its sending
 * for now (a 421, a 4xx before the recipient, the provider's own sending limit) or out of reach,
 * until the engine's next try (`held`); and campaign emails in doubt (a pass died during their SMTP
 * transaction, or the server's answer was lost after the message was handed over). Those may or may
 * not have arrived and are never sent again, so the owner may want to check with their recipients;
 * that message starts with the count.
 */
export function mailboxWarnings(facts: {
  now: number;
  held: SendHold | null;
  unconfirmed: { count: number; recipients: readonly string[] };
  days: number;
}): MailboxWarning[] {
  const warnings: MailboxWarning[] = [];
  const { held } = facts;
  if (held !== null && holdEnd(held.until, facts.now) !== null) {
    warnings.push({
      code: "server_refusing",
      message:
        `The mail server refused this mailbox's sending for now, or could not be reached: ${held.reason}. ` +
        `Salvo tries again at ${new Date(held.until).toISOString()}; until then its emails wait, counting no attempt against their leads and bouncing none.`,
    });
  }
  const { count, recipients } = facts.unconfirmed;
  if (count === 0) return warnings;
  const named = recipients.slice(0, NAMED_RECIPIENTS);
  const more = count > named.length ? ` and ${count - named.length} more` : "";
  const emails = count === 1 ? "campaign email" : "campaign emails";
  warnings.push({
    code: "unconfirmed_sends",
    message:
      `${count} ${emails} from this mailbox in the last ${facts.days} days may not have gone out: sending stopped during ` +
      `${count === 1 ? "its" : "their"} SMTP transaction, and Salvo never sends an email twice. ` +
      `Recipients: ${named.join(", ")}${more}.`,
  });
  return warnings;
}
