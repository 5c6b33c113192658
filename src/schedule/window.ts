import { zonedDayRange, zonedInstant, zoneOffset } from "../platform/zoned-time";

/**
 * The sending window and the pacing rules (CONTRACT sections 10 and 11), as pure functions of a
 * schedule and instants in ms. All calendar reasoning happens on wall-clock dates in the campaign's
 * IANA zone and goes back to instants through `zonedInstant`, so a DST change moves the window with
 * the local clock (09:00 stays 09:00) and a 23- or 25-hour day is still one day.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export type Schedule = {
  timezone: string;
  /** 0–6, 0 = Sunday; 7 also means Sunday. */
  days_of_the_week: readonly number[];
  /** `HH:MM`, 24 h, in the zone. */
  start_hour: string;
  end_hour: string;
  /** Minutes between two sends of the same mailbox for this campaign. */
  min_time_btw_emails: number;
  /** Step-1 sends per campaign per local day. */
  max_new_leads_per_day: number;
  /** Nothing is sent before it (ISO text or ms); null = no start time. */
  schedule_start_time: string | number | null;
  /** The days and hours apply in each lead's own zone (CONTRACT 23.2); absent = false. */
  send_in_lead_timezone?: boolean;
};

/** `HH:MM` (00:00–23:59) as minutes after midnight; null when malformed. */
export function parseClock(value: string): number | null {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

/** The listed days as 0–6 (7 folded onto Sunday), without repeats, ascending. */
export function normalizeDays(days: readonly number[]): number[] {
  return [...new Set(days.filter((d) => Number.isInteger(d) && d >= 0 && d <= 7).map((d) => d % 7))].sort((a, b) => a - b);
}

/** The local calendar date of an instant in a zone, as that date's midnight UTC in ms. */
function localDate(instant: number, timeZone: string): number {
  const wall = instant + zoneOffset(instant, timeZone);
  return Math.floor(wall / DAY_MS) * DAY_MS;
}

/** `YYYY-MM-DD` of an instant in a zone: the key the campaign's new-leads count is kept under. */
export function localDayKey(instant: number, timeZone: string): string {
  return new Date(localDate(instant, timeZone)).toISOString().slice(0, 10);
}

/** [start, end) of the local day holding an instant, as instants: the range a day's count is read over. */
export function localDayRange(instant: number, timeZone: string): { start: number; end: number } {
  const day = localDate(instant, timeZone);
  return zonedDayRange(day, day, timeZone);
}

/** The instant the next local day begins (when a per-local-day cap resets). */
export function nextLocalDayStart(instant: number, timeZone: string): number {
  return localDayRange(instant, timeZone).end;
}

/**
 * The mailbox cap's day: `max_email_per_day` counts per UTC day (CONTRACT section 10), since a
 * mailbox has no zone of its own and serves campaigns in several.
 */
export function mailboxDayKey(instant: number): string {
  return new Date(instant).toISOString().slice(0, 10);
}

/** When the mailbox cap's day after the one holding `instant` begins. */
export function nextMailboxDayStart(instant: number): number {
  return Math.floor(instant / DAY_MS) * DAY_MS + DAY_MS;
}

/** `schedule_start_time` as ms; null when there is none (or it cannot be read). */
export function scheduleStartAt(schedule: Schedule): number | null {
  const value = schedule.schedule_start_time;
  if (value === null) return null;
  const ms = typeof value === "number" ? value : Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The first instant at which the zone's clock reads `wall` (a wall-clock time given as if UTC) or
 * later. For a time that exists this is `zonedInstant` (the first occurrence of a repeated one); for
 * one a spring-forward jump skips (02:30 in New York on 2026-03-08) it is the jump itself (03:00
 * EDT), the moment the clock passes it: a window from 02:30 is open at 03:00, and one until 02:30 is
 * closed then. `zonedInstant` would say 03:30, leaving half an hour wrong on both edges.
 */
function firstInstantAtOrAfter(wall: number, timeZone: string): number {
  const moved = zonedInstant(wall, timeZone);
  if (moved + zoneOffset(moved, timeZone) === wall) return moved;
  // Skipped: `moved` reads after `wall`; with the later (larger) offset, the clock still read before it.
  let before = wall - zoneOffset(wall + DAY_MS, timeZone);
  let after = moved;
  while (after - before > 1) {
    const mid = Math.floor((before + after) / 2);
    if (mid + zoneOffset(mid, timeZone) >= wall) after = mid;
    else before = mid;
  }
  return after;
}

/**
 * The window on one local date, as instants; null when the date's weekday is not listed or the hours
 * are malformed. Edges use `firstInstantAtOrAfter`, so a repeated autumn hour counts from its first
 * occurrence (the window is then an hour longer in real time) and a skipped spring time is the jump.
 */
function windowOn(schedule: Schedule, date: number): { start: number; end: number } | null {
  const open = parseClock(schedule.start_hour);
  const close = parseClock(schedule.end_hour);
  if (open === null || close === null || close <= open) return null;
  if (!normalizeDays(schedule.days_of_the_week).includes(new Date(date).getUTCDay())) return null;
  const start = firstInstantAtOrAfter(date + open * MINUTE_MS, schedule.timezone);
  const end = firstInstantAtOrAfter(date + close * MINUTE_MS, schedule.timezone);
  return end > start ? { start, end } : null;
}

/** The window holding an instant ([start, end) as instants), or null when the instant is outside it. */
export function currentWindow(schedule: Schedule, instant: number): { start: number; end: number } | null {
  const begins = scheduleStartAt(schedule);
  if (begins !== null && instant < begins) return null;
  const window = windowOn(schedule, localDate(instant, schedule.timezone));
  return window && instant >= window.start && instant < window.end ? window : null;
}

/** Whether mail may go out at this instant: a listed day, between the hours, not before the start time. */
export function isInWindow(schedule: Schedule, instant: number): boolean {
  return currentWindow(schedule, instant) !== null;
}

/**
 * The first instant at or after `instant` inside the window (itself when it is inside); null when the
 * schedule can never open (no days, malformed hours). Eight local dates cover a full week plus today
 * after today's window has closed.
 */
export function nextWindowOpen(schedule: Schedule, instant: number): number | null {
  const begins = scheduleStartAt(schedule);
  const from = begins !== null && begins > instant ? begins : instant;
  const today = localDate(from, schedule.timezone);
  for (let k = 0; k <= 7; k++) {
    const window = windowOn(schedule, today + k * DAY_MS);
    if (window && from < window.end) return Math.max(from, window.start);
  }
  return null;
}

/**
 * The schedule a record is sent under: the campaign's, moved into the lead's own zone when the
 * campaign sends in each lead's zone and the lead has one (CONTRACT 23.2). Only the zone changes:
 * the start time stays one instant, and the caps and gaps stay the campaign's and the mailbox's.
 */
export function recordSchedule(schedule: Schedule, leadZone: string | null): Schedule {
  return schedule.send_in_lead_timezone && leadZone && leadZone !== schedule.timezone ? { ...schedule, timezone: leadZone } : schedule;
}

/**
 * When a record in each lead's zone is due: `dueAt` moved to the first instant inside the lead's
 * window, so the stored due time is already sendable and finding due work stays one range read over
 * due times. Without lead zones the due time is stored as it is and the pass checks the campaign's
 * window. A schedule that never opens keeps `dueAt`.
 */
export function recordDueAt(schedule: Schedule, leadZone: string | null, dueAt: number): number {
  return schedule.send_in_lead_timezone ? (nextWindowOpen(recordSchedule(schedule, leadZone), dueAt) ?? dueAt) : dueAt;
}

/** When new records of an upload are first due: `default` for leads without a zone, `byZone` for these zones. */
export function enrolmentDue(schedule: Schedule | null, zones: Iterable<string>, now: number): { default: number; byZone: Record<string, number> } {
  if (!schedule?.send_in_lead_timezone) return { default: now, byZone: {} };
  const byZone: Record<string, number> = {};
  for (const zone of new Set(zones)) byZone[zone] = recordDueAt(schedule, zone, now);
  return { default: recordDueAt(schedule, null, now), byZone };
}

/**
 * When a step falls due: the previous send plus `delay_in_days` calendar days in the campaign's zone,
 * at the same wall-clock time (10:00 the day before the spring change is due 10:00 the next day, 23
 * hours later; a time that day skips is due when the clock passes it). Calendar days rather than
 * 24-hour periods so that "2 days later" means what the customer reads on a calendar. A 0-day delay
 * is due at once; the window then decides when it actually goes.
 */
export function stepDueAt(previousSentAt: number, delayInDays: number, timeZone: string): number {
  if (delayInDays <= 0) return previousSentAt;
  const wall = previousSentAt + zoneOffset(previousSentAt, timeZone);
  return firstInstantAtOrAfter(wall + delayInDays * DAY_MS, timeZone);
}

/**
 * `stepDueAt` the other way: the latest previous send whose step of `delayInDays` is due by
 * `instant` (every send at or before it is), so that many records' gaps can be tested against one
 * instant in SQL. A send whose wall-clock time an autumn change repeats may be due by then and still
 * fall after it: the bound leaves such a send out, never takes one in early.
 */
export function lastSendDueBy(instant: number, delayInDays: number, timeZone: string): number {
  if (delayInDays <= 0) return instant;
  const wall = instant + zoneOffset(instant, timeZone);
  return firstInstantAtOrAfter(wall - delayInDays * DAY_MS + 1, timeZone) - 1;
}

/**
 * The earliest a mailbox may send again: its last send plus the larger of its own gap
 * (`time_to_wait_in_mins`, across all its campaigns) and the campaign's `min_time_btw_emails`
 * (CONTRACT section 10: "the larger gap wins"). A mailbox that never sent may send at once (null).
 */
export function gapEndsAt(lastSentAt: number | null, mailboxGapMinutes: number, campaignGapMinutes: number): number | null {
  if (lastSentAt === null) return null;
  return lastSentAt + Math.max(mailboxGapMinutes, campaignGapMinutes, 0) * MINUTE_MS;
}

/** How many more sends a cap allows today (0 = reached). */
export function capRemaining(sentToday: number, cap: number): number {
  return Math.max(0, cap - sentToday);
}

/** Whether the mailbox's `max_email_per_day` is reached, counting its campaign sends of this UTC day across all campaigns. */
export function mailboxCapReached(sentTodayAllCampaigns: number, maxEmailPerDay: number): boolean {
  return capRemaining(sentTodayAllCampaigns, maxEmailPerDay) === 0;
}

/** Whether a step-1 send is still allowed today: step-1 sends of this campaign on this local day, against `max_new_leads_per_day`. */
export function newLeadAllowed(firstStepsSentToday: number, schedule: Schedule): boolean {
  return capRemaining(firstStepsSentToday, schedule.max_new_leads_per_day) > 0;
}

/**
 * When a due email may actually go from a mailbox: not before now, its due time or the end of the
 * mailbox's gap, and then at the first window instant. Null when the window never opens. In each
 * lead's zone due times are stored inside each lead's window, so no campaign window applies then.
 */
export function nextSendAt(input: {
  schedule: Schedule;
  now: number;
  dueAt: number;
  lastSentAt: number | null;
  mailboxGapMinutes: number;
}): number | null {
  const { schedule, now, dueAt, lastSentAt, mailboxGapMinutes } = input;
  const gap = gapEndsAt(lastSentAt, mailboxGapMinutes, schedule.min_time_btw_emails) ?? now;
  const earliest = Math.max(now, dueAt, gap);
  return schedule.send_in_lead_timezone ? Math.max(earliest, scheduleStartAt(schedule) ?? earliest) : nextWindowOpen(schedule, earliest);
}
