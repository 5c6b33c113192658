import { Cron } from "croner";
import { zonedInstant, zoneOffset } from "../platform/zoned-time";

const DAY_MS = 86_400_000;

/** The object form of `scheduler_cron_value`: on these weekdays, at startHour, in tz. */
interface ScheduleObject {
  tz?: string;
  days: number[];
  startHour: string;
  endHour?: string;
}

/** "MM HH * * d,d,…" from the object form (endHour only bounds a sending window, not the start). */
export function cronFromObject(schedule: ScheduleObject): string {
  const [hour, minute] = schedule.startHour.split(":").map(Number);
  const days = [...new Set(schedule.days)].sort((a, b) => a - b).join(",");
  return `${minute} ${hour} * * ${days || "*"}`;
}

/** A five-field cron expression croner understands. */
export function isFiveFieldCron(expression: string): boolean {
  if (expression.trim().split(/\s+/).length !== 5) return false;
  try {
    new Cron(expression, { paused: true });
    return true;
  } catch {
    return false;
  }
}

/** The first slot of the expression in the zone at or after `from` (ms). */
export function slotAtOrAfter(expression: string, timeZone: string, from: number): number | null {
  const next = new Cron(expression, { timezone: timeZone, paused: true }).nextRun(new Date(from - 1));
  return next ? next.getTime() : null;
}

/**
 * The run after one at `previous`: the first slot at or after the same wall-clock time `everyDays`
 * calendar days later in the zone (so a 23- or 25-hour day around a DST change skips no run).
 */
export function slotAfter(expression: string, timeZone: string, previous: number, everyDays: number): number | null {
  const wall = previous + zoneOffset(previous, timeZone) + everyDays * DAY_MS;
  return slotAtOrAfter(expression, timeZone, zonedInstant(wall, timeZone));
}

/** An active automated test as the scheduler reads it (instants in ms). */
export interface DueTest {
  id: number;
  nextRunAt: number;
  testEndDate: number;
  everyDays: number;
  cron: string;
  timeZone: string;
}

/** One slot a test owes, with where the test stands after it. */
export interface DueSlot {
  slot: number;
  next: number | null;
  finished: boolean;
}

/** A firing catches up at most this many missed slots per test; the next firing does the rest. */
const MAX_SLOTS_PER_FIRING = 50;

/** The runs a test owes at `now`: each slot with where the test stands after it. */
export function dueSlots(test: DueTest, now: number): DueSlot[] {
  const slots: DueSlot[] = [];
  let slot: number | null = test.nextRunAt;
  while (slot !== null && slot <= now && slots.length < MAX_SLOTS_PER_FIRING) {
    const next = slotAfter(test.cron, test.timeZone, slot, test.everyDays);
    const finished = next === null || next > test.testEndDate;
    slots.push({ slot, next: finished ? null : next, finished });
    slot = finished ? null : next;
  }
  return slots;
}

/** A new test's first slot: at or after `start` and not past `end`, else null (nothing to run). */
export function firstSlotWithin(expression: string, timeZone: string, start: number, end: number): number | null {
  const slot = slotAtOrAfter(expression, timeZone, start);
  return slot !== null && slot <= end ? slot : null;
}
