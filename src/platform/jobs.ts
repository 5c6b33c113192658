import type { Bindings } from "../env";

/**
 * A job run by the every-minute Cron Trigger, given the instant the trigger was scheduled for.
 * Each job must be idempotent for a given minute, because Cron Triggers may fire late or twice.
 */
export type ScheduledJob = (env: Bindings, scheduledAt: Date) => Promise<unknown>;
