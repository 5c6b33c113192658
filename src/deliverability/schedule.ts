import { Cron } from "croner";

const DAY_MS = 86_400_000;

/** The object form of `scheduler_cron_value`: on these weekdays, at startHour, in tz. */
export interface ScheduleObject {
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

/** The run after one at `previous`: the first slot at least `everyDays` days later. */
export function slotAfter(expression: string, timeZone: string, previous: number, everyDays: number): number | null {
  return slotAtOrAfter(expression, timeZone, previous + everyDays * DAY_MS);
}
