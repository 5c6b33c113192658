/**
 * Background verification (CONTRACT 22): a job's addresses are checked in chunks, each chunk's
 * results, the leads' marks and the job's counters committed together (store.ts `storeChunk`), so
 * the progress a caller reads is the row the work advances. The request's waitUntil starts a job;
 * the minute cron carries on what that leaves (like CSV imports: nothing to configure per
 * environment). A completed job with a `webhook_url` posts its status once.
 */
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { verifierSettings, verifyAddresses } from "./check";
import { endPass, idleJobs, jobById, leaseJob, pendingItems, storeChunk } from "./store";
import { deliverCompletion } from "./webhook";

/** Addresses per chunk: one read, the distinct domains' lookups, one batch. */
const CHUNK = 500;
/** How long one pass (a waitUntil, or a cron run) works before it leaves the rest. */
const PASS_BUDGET_MS = 20_000;
const JOBS_PER_CRON = 3;
const MAX_FAILED_PASSES = 5;

/** Works on one job for at most `budgetMs`; what is left waits for the next pass. */
export async function runVerificationJob(env: Bindings, jobId: number, budgetMs = PASS_BUDGET_MS): Promise<void> {
  const db = database(env.DB);
  const started = Date.now();
  const job = await leaseJob(db, jobId, started);
  if (!job) return;
  const settings = verifierSettings(config(env));
  try {
    // At least one chunk per pass, then more while the budget lasts.
    while (job.processed < job.total) {
      const items = await pendingItems(db, job, CHUNK);
      if (items.length === 0) break;
      const now = Date.now();
      const results = await verifyAddresses(env.DB, settings, items.map((item) => item.email), now);
      if (!(await storeChunk(env.DB, job, items, results, now))) return;
      if (job.processed < job.total && Date.now() - started >= budgetMs) return await endPass(db, jobId, null, Date.now());
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log("warn", "verification pass failed", { job_id: job.publicId, error: message });
    await endPass(db, jobId, { maxPasses: MAX_FAILED_PASSES, error: `The verification failed ${MAX_FAILED_PASSES} times and was stopped` }, Date.now());
    return;
  }
  const finished = await jobById(db, jobId);
  if (finished?.state === "completed" && finished.webhookUrl) await deliverCompletion(env, finished);
}

/** Minute job: carries on the verification jobs no worker holds. */
export async function continueVerificationJobs(env: Bindings, at: Date): Promise<number> {
  const pending = await idleJobs(database(env.DB), at, JOBS_PER_CRON);
  for (const { id } of pending) await runVerificationJob(env, id, PASS_BUDGET_MS / JOBS_PER_CRON);
  return pending.length;
}
