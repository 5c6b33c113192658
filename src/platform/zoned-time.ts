/** Calendar dates and wall-clock times in IANA time zones, through Intl (DST-correct). */

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/**
 * An IANA zone name (`Europe/Paris`, `UTC`, `Etc/GMT+5`). Intl also accepts UTC offsets
 * (`+05:00`), which are not zone names (no DST rules) and are refused, as are `UTC+5`-style
 * spellings; a name starts with a letter and is made of IANA's characters.
 */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
const OFFSET_SPELLING = /^(UTC|GMT|UT|Z)[+-]/i;

export function isTimeZone(name: string): boolean {
  if (!ZONE_NAME.test(name) || OFFSET_SPELLING.test(name)) return false;
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

/** How far the zone's wall clock is ahead of UTC at an instant, in ms. */
export function zoneOffset(instant: number, timeZone: string): number {
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  const wall = Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!);
  return wall - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant a wall-clock time (given as if it were UTC, in ms) happens in a zone. A time skipped
 * by a DST jump moves forward by the gap (02:30 becomes 03:30); a repeated one takes its first occurrence.
 */
export function zonedInstant(wallAsUtc: number, timeZone: string): number {
  // The offsets a day either side cover both sides of any DST change on this day.
  const before = zoneOffset(wallAsUtc - DAY_MS, timeZone);
  const after = zoneOffset(wallAsUtc + DAY_MS, timeZone);
  const candidates = [wallAsUtc - before, wallAsUtc - after].filter((t) => t + zoneOffset(t, timeZone) === wallAsUtc);
  return candidates.length > 0 ? Math.min(...candidates) : wallAsUtc - before;
}

/** `YYYY-MM-DD` that names a real calendar date, as midnight UTC in ms; null otherwise. */
export function parseCalendarDate(value: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = Date.UTC(year, month - 1, day);
  const back = new Date(date);
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 && back.getUTCDate() === day ? date : null;
}

/** Whole calendar days from one date to another (both midnight UTC in ms). */
export function daysBetween(from: number, to: number): number {
  return Math.round((to - from) / DAY_MS);
}

/** [start of the first day, start of the day after the last) in a zone, as instants in ms. */
export function zonedDayRange(firstDay: number, lastDay: number, timeZone: string): { start: number; end: number } {
  return { start: zonedInstant(firstDay, timeZone), end: zonedInstant(lastDay + DAY_MS, timeZone) };
}
