import type { Bindings } from "../env";
import { enqueueStranded } from "../webhooks/outbox";
import { sealLegacySecrets } from "../webhooks/secrets";
import { releaseDueSnoozes } from "./snooze-release";
import { startDueSpamTests } from "./spam-test-scheduler";

/** A job run by the every-minute Cron Trigger, given the instant the trigger was scheduled for. */
export type ScheduledJob = (env: Bindings, scheduledAt: Date) => Promise<void>;

/**
 * Every job the minute cron runs. Each job must be idempotent for a given minute, because
 * Cron Triggers may fire late or twice.
 */
export const MINUTE_JOBS: ScheduledJob[] = [
  releaseDueSnoozes,
  startDueSpamTests,
  (env, at) => enqueueStranded(env, at.getTime()),
  sealLegacySecrets,
];

export async function runScheduled(controller: ScheduledController, env: Bindings): Promise<void> {
  const scheduledAt = new Date(controller.scheduledTime);
  const results = await Promise.allSettled(MINUTE_JOBS.map((job) => job(env, scheduledAt)));
  const failure = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failure) throw failure.reason;
}
