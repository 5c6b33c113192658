/**
 * Verification's SQL: background jobs and their items (progress is the row each chunk advances,
 * like `lead_list_imports`) and the results stored on leads.
 */
import { and, asc, eq, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { verificationJobItems, verificationJobs } from "../db/schema";
import type { Scope } from "../platform/access";
import type { Database } from "../platform/db";
import { inList, jsonList, jsonListChunks, rawBatch } from "../platform/sql";
import { MAILBOX_REASONS, type VerificationResult } from "./rules";
import { notMoving } from "../platform/moving";

export type JobRow = typeof verificationJobs.$inferSelect;

/** How long a worker holds a job before another may take it over. */
export const LEASE_MS = 60_000;

export function newJobId(): string {
  return `vj_${crypto.randomUUID().replaceAll("-", "")}`;
}

function insertJob(scope: Scope, publicId: string, kind: JobRow["kind"], total: number | SQL, webhookUrl: string | null, now: number): SQL {
  return sql`INSERT INTO verification_jobs (public_id, account_id, client_id, kind, total, webhook_url, created_at, updated_at)
             VALUES (${publicId}, ${scope.accountId}, ${scope.clientId}, ${kind}, ${total}, ${webhookUrl}, ${now}, ${now})`;
}

const jobIdOf = (publicId: string) => sql`(SELECT id FROM verification_jobs WHERE public_id = ${publicId})`;

/** A job over addresses given (POST /verify-emails): the job and its items in one batch. */
export async function createEmailJob(d1: D1Database, scope: Scope, emails: string[], webhookUrl: string | null, now: number): Promise<string> {
  const publicId = newJobId();
  const items = emails.map((email, position) => ({ p: position, e: email }));
  await rawBatch(d1, [
    insertJob(scope, publicId, "emails", emails.length, webhookUrl, now),
    ...jsonListChunks(items).map(
      (chunk) => sql`INSERT INTO verification_job_items (job_id, position, email)
                     SELECT ${jobIdOf(publicId)}, v.value ->> '$.p', v.value ->> '$.e' FROM json_each(${jsonList(chunk)}) AS v`,
    ),
  ]);
  return publicId;
}

/**
 * A job over leads (POST /leads/verify, `verify_emails: flag` uploads): the leads the selection
 * names, within the caller's scope, not verified since `checkedBefore`; the job's total is what
 * that selection found. One batch.
 */
export async function createLeadJob(d1: D1Database, scope: Scope, selection: SQL, checkedBefore: number, now: number): Promise<{ publicId: string; total: number }> {
  const publicId = newJobId();
  const visible = scope.clientId === null ? sql`l.account_id = ${scope.accountId}` : sql`l.account_id = ${scope.accountId} AND l.client_id = ${scope.clientId}`;
  const results = await rawBatch(d1, [
    insertJob(scope, publicId, "leads", 0, null, now),
    sql`INSERT INTO verification_job_items (job_id, position, email, lead_id)
        SELECT ${jobIdOf(publicId)}, row_number() OVER (ORDER BY l.id) - 1, l.email, l.id FROM leads l
        WHERE ${visible} AND l.id IN (${selection}) AND (l.verified_at IS NULL OR l.verified_at < ${checkedBefore})`,
    sql`UPDATE verification_jobs SET total = (SELECT count(*) FROM verification_job_items WHERE job_id = verification_jobs.id),
          state = CASE WHEN (SELECT count(*) FROM verification_job_items WHERE job_id = verification_jobs.id) = 0 THEN 'completed' ELSE state END,
          finished_at = CASE WHEN (SELECT count(*) FROM verification_job_items WHERE job_id = verification_jobs.id) = 0 THEN ${now} ELSE NULL END
        WHERE public_id = ${publicId} RETURNING total`,
  ]);
  return { publicId, total: Number(results[2]![0]?.total ?? 0) };
}

/** A job the caller may see (its account's; for a client key its client's), or undefined. */
export function findJob(db: Database, scope: Scope, publicId: string) {
  const account = eq(verificationJobs.accountId, scope.accountId);
  return db
    .select()
    .from(verificationJobs)
    .where(and(eq(verificationJobs.publicId, publicId), scope.clientId === null ? account : and(account, eq(verificationJobs.clientId, scope.clientId))))
    .get();
}

export function jobById(db: Database, id: number) {
  return db.select().from(verificationJobs).where(eq(verificationJobs.id, id)).get();
}

/** Finished results of a job, in order, from `offset`. */
export async function jobResults(db: Database, jobId: number, offset: number, limit: number): Promise<VerificationResult[]> {
  const rows = await db
    .select({ result: verificationJobItems.result })
    .from(verificationJobItems)
    .where(and(eq(verificationJobItems.jobId, jobId), sql`${verificationJobItems.result} IS NOT NULL`))
    .orderBy(asc(verificationJobItems.position))
    .limit(limit)
    .offset(offset);
  return rows.map((row) => row.result as unknown as VerificationResult);
}

/** Takes an unfinished job whose lease is free (or lapsed); undefined when another worker holds it. */
export function leaseJob(db: Database, id: number, now: number) {
  return db
    .update(verificationJobs)
    .set({ state: "running", leaseUntil: new Date(now + LEASE_MS), updatedAt: new Date(now) })
    .where(
      and(
        eq(verificationJobs.id, id),
        inArray(verificationJobs.state, ["queued", "running"]),
        or(isNull(verificationJobs.leaseUntil), lt(verificationJobs.leaseUntil, new Date(now))),
      ),
    )
    .returning()
    .get();
}

/** The next unchecked items of a job (positions from `processed`). */
export function pendingItems(db: Database, job: JobRow, limit: number) {
  return db
    .select({ position: verificationJobItems.position, email: verificationJobItems.email, leadId: verificationJobItems.leadId })
    .from(verificationJobItems)
    .where(and(eq(verificationJobItems.jobId, job.id), sql`${verificationJobItems.position} >= ${job.processed}`))
    .orderBy(asc(verificationJobItems.position))
    .limit(limit);
}

/**
 * Whether a check's result (`v`: its status, and whether the external verifier looked at the mailbox)
 * replaces the lead's mark: a verdict on the mailbox itself (the verifier's, a hard bounce of Salvo's
 * own mail) stands against a DNS-only check unless that finds the address invalid; a hard bounce
 * stands unless a mailbox check made after it says otherwise.
 */
function replacesMark(checkedAt: number): SQL {
  return sql`(v.value ->> '$.checked' = 1 OR v.value ->> '$.status' = 'invalid' OR coalesce(leads.verification_reason, '') NOT ${inList(MAILBOX_REASONS)})
    AND (leads.verification_reason IS NOT 'hard_bounce' OR (v.value ->> '$.checked' = 1 AND coalesce(leads.verified_at, 0) < ${checkedAt}))`;
}

const markRow = (result: VerificationResult) => ({ status: result.status, reason: result.reason, checked: result.mailbox_checked ? 1 : 0 });

/**
 * Stores the verification on leads (by id, while each still has the address checked): status,
 * reason, when, where it replaces the lead's mark (`replacesMark`).
 */
export function storeOnLeadsStatement(entries: { leadId: number; email: string; result: VerificationResult }[], now: number): SQL {
  const rows = entries.map(({ leadId, email, result }) => ({ id: leadId, email, ...markRow(result) }));
  return sql`UPDATE leads SET verification_status = v.value ->> '$.status', verification_reason = v.value ->> '$.reason', verified_at = ${now}
             FROM json_each(${jsonList(rows)}) AS v WHERE leads.id = v.value ->> '$.id' AND leads.email = v.value ->> '$.email' AND ${replacesMark(now)}`;
}

/** Stores results on the scope's leads with those addresses, where each replaces the lead's mark (`replacesMark`). */
export async function storeOnLeadsByEmail(d1: D1Database, scope: Scope, results: VerificationResult[], now: number): Promise<void> {
  if (results.length === 0) return;
  const rows = results.map((result) => ({ email: result.email, ...markRow(result) }));
  await rawBatch(d1, [
    sql`UPDATE leads SET verification_status = v.value ->> '$.status', verification_reason = v.value ->> '$.reason', verified_at = ${now}
        FROM json_each(${jsonList(rows)}) AS v
        WHERE leads.account_id = ${scope.accountId} AND coalesce(leads.client_id, 0) = ${scope.clientId ?? 0} AND leads.email = v.value ->> '$.email'
          AND ${replacesMark(now)}`,
  ]);
}

/**
 * One chunk's results, the leads' marks (lead jobs) and the job's counters and cursor, in one batch,
 * guarded by the cursor: a second worker on the same chunk (after a lapsed lease) writes nothing.
 */
export async function storeChunk(
  d1: D1Database,
  job: JobRow,
  items: { position: number; email: string; leadId: number | null }[],
  results: VerificationResult[],
  now: number,
): Promise<boolean> {
  const counts = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
  for (const result of results) counts[result.status] += 1;
  const processed = job.processed + items.length;
  const done = processed >= job.total;
  const current = sql`EXISTS (SELECT 1 FROM verification_jobs WHERE id = ${job.id} AND processed = ${job.processed})`;
  const onLeads = items.flatMap((item, index) => (item.leadId === null ? [] : [{ leadId: item.leadId, email: item.email, result: results[index]! }]));
  const [, , updated] = await rawBatch(d1, [
    // An upsert that always meets its row: json_each is walked once, each row found by its key.
    sql`INSERT INTO verification_job_items (job_id, position, email, result)
        SELECT ${job.id}, v.value ->> '$.p', '', v.value ->> '$.r'
        FROM json_each(${jsonList(items.map((item, index) => ({ p: item.position, r: JSON.stringify(results[index]) })))}) AS v WHERE ${current}
        ON CONFLICT (job_id, position) DO UPDATE SET result = excluded.result`,
    onLeads.length > 0 ? sql`${storeOnLeadsStatement(onLeads, now)} AND ${current}` : sql`SELECT 1`,
    sql`UPDATE verification_jobs SET processed = ${processed},
          valid = valid + ${counts.valid}, invalid = invalid + ${counts.invalid}, risky = risky + ${counts.risky}, unknown = unknown + ${counts.unknown},
          state = ${done ? "completed" : "running"}, finished_at = ${done ? now : null}, lease_until = ${done ? null : now + LEASE_MS}, updated_at = ${now},
          webhook_state = CASE WHEN ${done ? 1 : 0} AND webhook_url IS NOT NULL THEN 'pending' ELSE webhook_state END,
          webhook_next_at = CASE WHEN ${done ? 1 : 0} AND webhook_url IS NOT NULL THEN ${now} ELSE webhook_next_at END
        WHERE id = ${job.id} AND processed = ${job.processed} RETURNING id`,
  ]);
  if (updated!.length === 0) return false;
  Object.assign(job, { processed, state: done ? "completed" : "running", ...counts });
  return true;
}

/** Frees a job's lease (its pass ran out of time), or counts a failed pass (failing the job at the cap). */
export async function endPass(db: Database, id: number, failed: { maxPasses: number; error: string } | null, now: number): Promise<void> {
  if (!failed) {
    await db.update(verificationJobs).set({ leaseUntil: null }).where(and(eq(verificationJobs.id, id), eq(verificationJobs.state, "running")));
    return;
  }
  await db
    .update(verificationJobs)
    .set({
      failedPasses: sql`${verificationJobs.failedPasses} + 1`,
      state: sql`CASE WHEN ${verificationJobs.failedPasses} + 1 >= ${failed.maxPasses} THEN 'failed' ELSE ${verificationJobs.state} END`,
      error: sql`CASE WHEN ${verificationJobs.failedPasses} + 1 >= ${failed.maxPasses} THEN ${failed.error} ELSE NULL END`,
      finishedAt: sql`CASE WHEN ${verificationJobs.failedPasses} + 1 >= ${failed.maxPasses} THEN ${now} ELSE NULL END`,
      leaseUntil: null,
      updatedAt: new Date(now),
    })
    .where(and(eq(verificationJobs.id, id), eq(verificationJobs.state, "running")));
}

/** Jobs no worker holds (a lapsed waitUntil, or one too big for it), oldest first. */
export function idleJobs(db: Database, at: Date, limit: number) {
  return db
    .select({ id: verificationJobs.id })
    .from(verificationJobs)
    .where(and(inArray(verificationJobs.state, ["queued", "running"]), or(isNull(verificationJobs.leaseUntil), lt(verificationJobs.leaseUntil, at)), notMoving(sql`${verificationJobs.accountId}`)))
    .orderBy(asc(verificationJobs.id))
    .limit(limit);
}
