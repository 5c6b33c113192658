import type { Bindings } from "./platform/env";
import type { ScheduledJob } from "./platform/jobs";
import { log } from "./platform/logging";
import { requeueOverdue } from "./webhooks/outbox";
import { sealLegacySecrets } from "./webhooks/secrets";
import { pruneWebhookDeliveries } from "./webhooks/retention";
import { releaseDueSnoozes } from "./inbox/snooze-release";
import { startDueSpamTests } from "./deliverability/scheduler";
import { checkPlacements } from "./deliverability/checker";
import { rearmLateSenders } from "./mailbox-agent/rearm";
import { resumePausedRecords } from "./replies/resume";
import { wakeForScheduledReplies } from "./replies/scheduled-replies";
import { recheckMailboxesDaily } from "./mailboxes/recheck";
import { continueCsvImports } from "./lead-lists/import";
import { sweepUntriaged } from "./triage/queue";
import { restartIdleReplays } from "./triage/replay";
import { continueVerificationJobs } from "./verification/jobs";
import { retryVerificationWebhooks } from "./verification/webhook";
import { learnProviders } from "./verification/providers";
import { claimShardIdRange } from "./directory/id-ranges";
import { currentShard, onEveryShard } from "./platform/shards";
import { continueMoves } from "./moves/run";

/** Every job the minute cron runs, by the name its log line gives it (see ScheduledJob for what each must promise). */
const MINUTE_JOBS_BY_NAME: Record<string, ScheduledJob> = {
  release_snoozes: releaseDueSnoozes,
  start_spam_tests: startDueSpamTests,
  check_placements: checkPlacements,
  requeue_webhook_deliveries: (env, at) => requeueOverdue(env, at.getTime()),
  seal_legacy_secrets: sealLegacySecrets,
  prune_webhook_deliveries: pruneWebhookDeliveries,
  rearm_late_senders: rearmLateSenders,
  resume_paused_records: resumePausedRecords,
  wake_scheduled_replies: wakeForScheduledReplies,
  recheck_mailboxes: recheckMailboxesDaily,
  continue_csv_imports: continueCsvImports,
  categorise_missed_replies: sweepUntriaged,
  continue_triage_replays: restartIdleReplays,
  continue_email_verifications: continueVerificationJobs,
  retry_verification_webhooks: retryVerificationWebhooks,
  learn_email_providers: learnProviders,
  claim_id_ranges: claimShardIdRange,
  continue_account_moves: continueMovesOnce,
};

/** Moves span shards: the job runs once, from shard 0's turn. */
function continueMovesOnce(env: Bindings, at: Date): Promise<number> {
  return currentShard(env) === 0 ? continueMoves(env, at) : Promise.resolve(0);
}

export const MINUTE_JOBS: ScheduledJob[] = Object.values(MINUTE_JOBS_BY_NAME);

type JobOutcome = { count: number; duration_ms: number } | { error: string; duration_ms: number };

/** A job runs on every shard side by side; its count is theirs summed, and it fails when one shard's run does. */
async function runJob(job: ScheduledJob, env: Bindings, scheduledAt: Date): Promise<{ outcome: JobOutcome; failure?: unknown }> {
  const started = Date.now();
  try {
    const counts = await onEveryShard(env, (shardEnv) => job(shardEnv, scheduledAt));
    const count = counts.reduce((sum, shardCount) => sum + shardCount, 0);
    return { outcome: { count, duration_ms: Date.now() - started } };
  } catch (failure) {
    // The message only: a stack or the error object could carry a request's values.
    const error = failure instanceof Error ? failure.message : String(failure);
    return { outcome: { error, duration_ms: Date.now() - started }, failure };
  }
}

/**
 * Runs every job side by side, then logs ONE line for the firing (each job's count or error, and
 * the durations), and fails the invocation with the first failure so the platform records it too.
 */
export async function runScheduled(controller: ScheduledController, env: Bindings): Promise<void> {
  const started = Date.now();
  const scheduledAt = new Date(controller.scheduledTime);
  const names = Object.keys(MINUTE_JOBS_BY_NAME);
  const results = await Promise.all(names.map((name) => runJob(MINUTE_JOBS_BY_NAME[name]!, env, scheduledAt)));
  const failed = names.filter((_, index) => "failure" in results[index]!);
  log(failed.length > 0 ? "error" : "info", "cron run", {
    cron: controller.cron,
    scheduled_at: scheduledAt.toISOString(),
    duration_ms: Date.now() - started,
    jobs: Object.fromEntries(names.map((name, index) => [name, results[index]!.outcome])),
    failed,
  });
  const failure = results.find((result) => "failure" in result);
  if (failure) throw failure.failure;
}
