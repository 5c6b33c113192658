import type { Bindings } from "./env";

/**
 * A job run by the every-minute Cron Trigger, given the instant the trigger was scheduled for.
 * Each job must be idempotent for a given minute, because Cron Triggers may fire late or twice.
 * It answers how many items it took on (the cron's log line reports the count).
 */
export type ScheduledJob = (env: Bindings, scheduledAt: Date) => Promise<number>;
