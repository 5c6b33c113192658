/**
 * The pure rules of the analytics families (CONTRACT section 13): rates,
 * date windows and reply-time buckets.
 */
import { daysBetween, parseCalendarDate, zonedDayRange } from "../platform/zoned-time";
import { ApiError } from "../platform/errors";
import type { Window } from "./counters";

/** `part` over `whole` as a percent string with at most 2 decimals (`"12.5%"`); `"0%"` when `whole` is 0. */
export function percent(part: number, whole: number): string {
  if (whole === 0) return "0%";
  return `${Number(((part / whole) * 100).toFixed(2))}%`;
}

/** A calendar-date range in a zone, validated as section 3 does but with its own cap on the days. */
export function dateWindow(startDate: string, endDate: string, timeZone: string, maxDays: number, tooWide: string): Window {
  const [first, last] = [parseCalendarDate(startDate)!, parseCalendarDate(endDate)!];
  if (last < first) throw ApiError.badRequest("end_date must not be before start_date");
  if (daysBetween(first, last) > maxDays) throw ApiError.badRequest(tooWide);
  return zonedDayRange(first, last, timeZone);
}

/** The local calendar days of a window, as `YYYY-MM-DD` with each day's [start, end). */
export function localDays(startDate: string, endDate: string, timeZone: string): { date: string; window: Window }[] {
  const [first, last] = [parseCalendarDate(startDate)!, parseCalendarDate(endDate)!];
  const days: { date: string; window: Window }[] = [];
  for (let day = first; day <= last; day += 86_400_000) {
    days.push({ date: new Date(day).toISOString().slice(0, 10), window: zonedDayRange(day, day, timeZone) });
  }
  return days;
}

/** lead/to-reply-time buckets, first send to first reply (the first three are the docs'). */
export const REPLY_TIME_BUCKETS: { time_range: string; below: number }[] = [
  { time_range: "0-1h", below: 3_600_000 },
  { time_range: "1-6h", below: 6 * 3_600_000 },
  { time_range: "6-24h", below: 24 * 3_600_000 },
  { time_range: "1-3d", below: 3 * 86_400_000 },
  { time_range: "3-7d", below: 7 * 86_400_000 },
  { time_range: "7d+", below: Number.POSITIVE_INFINITY },
];

export function replyTimeBucket(elapsedMs: number): string {
  return REPLY_TIME_BUCKETS.find((bucket) => elapsedMs < bucket.below)!.time_range;
}

/** Items by key, in their order (Map.groupBy is not in this build's library). */
export function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
