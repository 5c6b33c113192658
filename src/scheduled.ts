import type { Bindings } from "./env";
import type { ScheduledJob } from "./platform/jobs";
import { requeueOverdue } from "./webhooks/outbox";
import { sealLegacySecrets } from "./webhooks/secrets";
import { releaseDueSnoozes } from "./inbox/snooze-release";
import { startDueSpamTests } from "./deliverability/scheduler";
import { checkPlacements } from "./deliverability/checker";
import { rearmLateSenders } from "./engine/wake";
import { resumePausedRecords } from "./replies/resume";
import { wakeForScheduledReplies } from "./replies/scheduled-replies";
import { recheckMailboxesDaily } from "./mailboxes/recheck";
import { continueCsvImports } from "./lead-lists/import";

/** Every job the minute cron runs (see ScheduledJob for what each must promise). */
export const MINUTE_JOBS: ScheduledJob[] = [
  releaseDueSnoozes,
  startDueSpamTests,
  checkPlacements,
  (env, at) => requeueOverdue(env, at.getTime()),
  sealLegacySecrets,
  rearmLateSenders,
  resumePausedRecords,
  wakeForScheduledReplies,
  recheckMailboxesDaily,
  continueCsvImports,
];

export async function runScheduled(controller: ScheduledController, env: Bindings): Promise<void> {
  const scheduledAt = new Date(controller.scheduledTime);
  const results = await Promise.allSettled(MINUTE_JOBS.map((job) => job(env, scheduledAt)));
  const failure = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failure) throw failure.reason;
}
