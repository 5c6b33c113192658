import { lastSendDueBy, normalizeDays, recordDueAt, recordSchedule, scheduleStartAt, type Schedule } from "./window";

/**
 * Re-dating records when the hours they were dated by change (a campaign's schedule, its
 * `send_in_lead_timezone`, a lead's zone): in each lead's zone a record's due time is stored already
 * moved to its window's opening (CONTRACT 23.2, `recordDueAt`), so a record left as it was waits for
 * the old hours. The due times are recomputed here by the rules that set them, once per group of
 * records sharing a campaign and a lead zone, and the SQL (redating-store.ts) applies the group's
 * instants to its records, however many there are.
 */

/** A group's instants (ms), as the SQL applies them to the campaign's records of one lead zone. */
export interface RedatingGroup {
  campaign: number;
  /** The lead zone (null: none) the records' leads have once the change is made. */
  zone: string | null;
  /** The old hours' next opening, which a record dated by them waits on; null when none waits (no lead windows before, or open now). */
  old: number | null;
  /** The new hours' first instant from now (now itself without lead windows: the pass checks the campaign's window). */
  open: number;
  /** The new hours' first instant from `old`: for a record waiting on `old` whose step's gap ends after `open`. */
  later: number | null;
  /** By the delay (days) of a record's next step: the latest previous send whose gap is over by `open`. */
  cutoffs: Record<string, number>;
}

/** Whether a schedule change moves any record's hours: its zone, days, hours, start time or `send_in_lead_timezone`. */
export function hoursChanged(before: Schedule | null, after: Schedule): boolean {
  if (before === null) return true;
  return (
    before.timezone !== after.timezone ||
    normalizeDays(before.days_of_the_week).join() !== normalizeDays(after.days_of_the_week).join() ||
    before.start_hour !== after.start_hour ||
    before.end_hour !== after.end_hour ||
    scheduleStartAt(before) !== scheduleStartAt(after) ||
    Boolean(before.send_in_lead_timezone) !== Boolean(after.send_in_lead_timezone)
  );
}

/**
 * One group's instants: `before` and `zoneBefore` dated the records, `after` and `zoneAfter` date
 * them now. A record waiting on the old opening whose gap is over by the new one is due then, as at
 * its dating; one whose gap runs on past it takes the new hours' first instant from the old opening,
 * later than its gap, never earlier (its own gap's end is not known to SQL). Null when the change
 * moves none of the group's records (the old opening is the new one; or none waited and the new
 * hours are open now).
 */
export function redatingGroup(change: {
  campaign: number;
  before: Schedule | null;
  after: Schedule;
  zoneBefore: string | null;
  zoneAfter: string | null;
  /** The delays of the campaign's live steps. */
  delays: readonly number[];
  now: number;
}): RedatingGroup | null {
  const { before, after, zoneAfter, now } = change;
  const waitedOn = before?.send_in_lead_timezone ? recordDueAt(before, change.zoneBefore, now) : null;
  const old = waitedOn !== null && waitedOn > now ? waitedOn : null;
  const open = recordDueAt(after, zoneAfter, now);
  if (old === null ? open <= now : old === open) return null;
  // The delay counts calendar days of the zone the step's due time is reckoned in (sender.ts `following`).
  const zone = recordSchedule(after, zoneAfter).timezone;
  return {
    campaign: change.campaign,
    zone: zoneAfter,
    old,
    open,
    later: old === null ? null : recordDueAt(after, zoneAfter, old),
    cutoffs: Object.fromEntries([...new Set(change.delays)].map((days) => [String(days), lastSendDueBy(open, days, zone)])),
  };
}
