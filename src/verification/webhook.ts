/**
 * A completed job's status POSTed once to its `webhook_url` (CONTRACT 22): the first 1,000 results,
 * unsigned (the job has no webhook of §5 to hold a secret), `webhook-id` = the job id, with §5's URL
 * rule, timeout and retry schedule. The first try follows the job's last chunk; the minute cron
 * makes the retries (`webhook_next_at`).
 */
import { and, asc, eq, lte, sql } from "drizzle-orm";
import { config } from "../config";
import { verificationJobs } from "../db/schema";
import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { guardedFetch, urlPolicy } from "../platform/outbound";
import { DELIVERY_TIMEOUT_MS, judge, WEBHOOK_URL_RULES } from "../webhooks/delivery-rules";
import { jobById, jobResults, type JobRow } from "./store";
import { notMoving } from "../platform/moving";

export const WEBHOOK_RESULTS = 1_000;
const RETRIES_PER_CRON = 20;

/** The status answer (GET /verify-emails/status) of a job, with these results. */
export function jobStatus(job: JobRow, data: unknown[]) {
  return {
    ok: true as const,
    success: true as const,
    job_id: job.publicId,
    status: job.state,
    total: job.total,
    processed: job.processed,
    counts: { valid: job.valid, invalid: job.invalid, risky: job.risky, unknown: job.unknown },
    data,
  };
}

/** One try of a completed job's POST, unless another worker already settled it. */
export async function deliverCompletion(env: Bindings, job: JobRow, now = Date.now()): Promise<void> {
  if (!job.webhookUrl || job.webhookState === "delivered" || job.webhookState === "failed") return;
  const db = database(env.DB);
  const attempt = job.webhookAttempts + 1;
  // Claim the try: only the worker that moves attempts from its value posts.
  const claimed = await db
    .update(verificationJobs)
    .set({ webhookState: "pending", webhookAttempts: attempt, webhookNextAt: new Date(now + DELIVERY_TIMEOUT_MS * 6) })
    .where(and(eq(verificationJobs.id, job.id), eq(verificationJobs.webhookAttempts, job.webhookAttempts)))
    .returning({ id: verificationJobs.id })
    .get();
  if (!claimed) return;
  const body = JSON.stringify(jobStatus(job, await jobResults(db, job.id, 0, WEBHOOK_RESULTS)));
  let answer: { status: number; retryAfter: string | null } | null = null;
  try {
    const { response } = await guardedFetch(
      job.webhookUrl,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", "User-Agent": "Salvo-Webhooks/1", "webhook-id": job.publicId, "webhook-timestamp": String(Math.floor(now / 1000)) },
        body,
      },
      urlPolicy(config(env)),
      { ...WEBHOOK_URL_RULES, redirects: 0, timeoutMs: DELIVERY_TIMEOUT_MS },
    );
    await response.body?.cancel();
    answer = { status: response.status, retryAfter: response.headers.get("Retry-After") };
  } catch (error) {
    log("warn", "verification webhook failed", { job_id: job.publicId, attempt, error: error instanceof Error ? error.message : String(error) });
  }
  const verdict = judge(answer, attempt, now);
  const retry = verdict.outcome === "retry" && attempt <= 6;
  await db
    .update(verificationJobs)
    .set({
      webhookState: verdict.outcome === "delivered" ? "delivered" : retry ? "pending" : "failed",
      webhookNextAt: retry ? new Date(now + verdict.delaySeconds * 1000) : null,
    })
    .where(and(eq(verificationJobs.id, job.id), eq(verificationJobs.webhookAttempts, attempt)));
}

/** Minute job: the completion POSTs due again (a retry, or a first try whose worker died). */
export async function retryVerificationWebhooks(env: Bindings, at: Date): Promise<number> {
  const db = database(env.DB);
  const due = await db
    .select({ id: verificationJobs.id })
    .from(verificationJobs)
    .where(and(eq(verificationJobs.webhookState, "pending"), lte(verificationJobs.webhookNextAt, at), sql`${verificationJobs.state} = 'completed'`, notMoving(sql`${verificationJobs.accountId}`)))
    .orderBy(asc(verificationJobs.webhookNextAt))
    .limit(RETRIES_PER_CRON);
  for (const { id } of due) {
    const job = await jobById(db, id);
    if (job) await deliverCompletion(env, job, at.getTime());
  }
  return due.length;
}
