import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { triageReplayRows, triageReplays, type ReplayStatus } from "../db/schema";
import type { Database } from "../platform/db";
import { inList, jsonList, statement } from "../platform/sql";
import type { StoredCategorisation } from "./effects";

/** The SQL of replay jobs (CONTRACT section 20.7): the job row, its diff rows, and applying them. */

export interface ReplayOptions {
  from: number | null;
  to: number | null;
  onlyUncategorised: boolean;
  promptContent: string | null;
  categories: number[] | null;
  limit: number;
}

export type ReplayRow = typeof triageReplays.$inferSelect;

/** How long a chunk may hold the job before another consumer or the cron takes it over. */
const LEASE_MS = 5 * 60_000;

/** Replies a replay would take: at most `limit` of the window. */
export async function countReplayable(d1: D1Database, campaignId: number, options: ReplayOptions): Promise<number> {
  const row = await statement(
    d1,
    sql`SELECT count(*) AS n FROM (SELECT 1 FROM events e WHERE e.campaign_id = ${campaignId} AND e.type = 'REPLY'
          AND (${options.from} IS NULL OR e.occurred_at >= ${options.from}) AND (${options.to} IS NULL OR e.occurred_at <= ${options.to})
          AND (${options.onlyUncategorised ? 1 : 0} = 0 OR e.category_id IS NULL) LIMIT ${options.limit})`,
  ).first<{ n: number }>();
  return row?.n ?? 0;
}

/** A new job; null when the campaign already has one queued or running (the partial unique index). */
export async function insertReplay(
  d1: D1Database,
  job: { accountId: number; campaignId: number; dryRun: boolean; options: ReplayOptions; total: number },
  now: number,
): Promise<number | null> {
  const row = await statement(
    d1,
    sql`INSERT INTO triage_replays (account_id, campaign_id, dry_run, status, options, total, created_at, updated_at)
        VALUES (${job.accountId}, ${job.campaignId}, ${job.dryRun ? 1 : 0}, 'queued', ${JSON.stringify(job.options)}, ${job.total}, ${now}, ${now})
        ON CONFLICT DO NOTHING RETURNING id`,
  ).first<{ id: number }>();
  return row?.id ?? null;
}

export async function findReplay(db: Database, campaignId: number, jobId: number): Promise<ReplayRow | undefined> {
  return db
    .select()
    .from(triageReplays)
    .where(and(eq(triageReplays.id, jobId), eq(triageReplays.campaignId, campaignId)))
    .get();
}

export function diffPage(db: Database, jobId: number, offset: number, limit: number) {
  return db
    .select()
    .from(triageReplayRows)
    .where(eq(triageReplayRows.replayId, jobId))
    .orderBy(desc(triageReplayRows.replyTime), desc(triageReplayRows.eventId))
    .limit(limit)
    .offset(offset);
}

/** Takes the job for one chunk (a new lease), when no live lease holds it. */
export async function leaseReplay(d1: D1Database, jobId: number, token: string, now: number): Promise<ReplayRow | null> {
  const row = await statement(
    d1,
    sql`UPDATE triage_replays SET status = 'running', lease_token = ${token}, lease_until = ${now + LEASE_MS}, updated_at = ${now}
        WHERE id = ${jobId} AND status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < ${now})
        RETURNING id, account_id, campaign_id, dry_run, status, options, cursor, total, processed, changed, unchanged, kept_human, needs_review`,
  ).first<Record<string, unknown>>();
  if (!row) return null;
  return {
    id: Number(row.id),
    accountId: Number(row.account_id),
    campaignId: Number(row.campaign_id),
    dryRun: row.dry_run === 1,
    status: row.status as ReplayStatus,
    options: JSON.parse(String(row.options)) as Record<string, unknown>,
    cursor: row.cursor === null ? null : Number(row.cursor),
    total: Number(row.total),
    processed: Number(row.processed),
    changed: Number(row.changed),
    unchanged: Number(row.unchanged),
    keptHuman: Number(row.kept_human),
    needsReview: Number(row.needs_review),
  } as ReplayRow;
}

/** Jobs no lease holds (never started, or whose chunk died): the minute cron's share. */
export async function idleReplays(d1: D1Database, now: number, limit = 20): Promise<number[]> {
  const rows = await statement(
    d1,
    sql`SELECT id FROM triage_replays WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < ${now}) ORDER BY id LIMIT ${limit}`,
  ).all<{ id: number }>();
  return rows.results.map((row) => row.id);
}

export function failReplay(d1: D1Database, jobId: number, token: string, error: string, now: number) {
  return statement(
    d1,
    sql`UPDATE triage_replays SET status = 'failed', error = ${error.slice(0, 500)}, lease_token = NULL, lease_until = NULL, updated_at = ${now}
        WHERE id = ${jobId} AND lease_token = ${token}`,
  ).run();
}

/** The diff rows a chunk found (changed replies), inserted under the chunk's lease. */
export interface DiffRow {
  eventId: number;
  recordId: number;
  leadEmail: string;
  replyTime: number;
  oldCategoryId: number | null;
  oldSource: string | null;
  oldCategorisedAt: number | null;
  stored: StoredCategorisation;
}

export const leased = (jobId: number, token: string) => sql`EXISTS (SELECT 1 FROM triage_replays WHERE id = ${jobId} AND lease_token = ${token})`;

export function insertDiffRows(jobId: number, token: string, rows: DiffRow[]): SQL {
  const values = rows.map((row) => ({
    event_id: row.eventId,
    campaign_lead_id: row.recordId,
    lead_email: row.leadEmail,
    reply_time: row.replyTime,
    old_category_id: row.oldCategoryId,
    old_source: row.oldSource,
    old_categorised_at: row.oldCategorisedAt,
    new_category_id: row.stored.categoryId,
    new_source: row.stored.source,
    new_confidence: row.stored.confidence,
    new_needs_review: row.stored.needsReview ? 1 : 0,
    provenance: JSON.stringify(row.stored),
  }));
  return sql`INSERT INTO triage_replay_rows (replay_id, event_id, campaign_lead_id, lead_email, reply_time, old_category_id, old_source,
      old_categorised_at, new_category_id, new_source, new_confidence, new_needs_review, provenance)
    SELECT ${jobId}, value ->> '$.event_id', value ->> '$.campaign_lead_id', value ->> '$.lead_email', value ->> '$.reply_time',
      value ->> '$.old_category_id', value ->> '$.old_source', value ->> '$.old_categorised_at', value ->> '$.new_category_id',
      value ->> '$.new_source', value ->> '$.new_confidence', value ->> '$.new_needs_review', value ->> '$.provenance'
    FROM json_each(${jsonList(values)}) WHERE ${leased(jobId, token)}
    ON CONFLICT (replay_id, event_id) DO NOTHING`;
}

interface ChunkCounts {
  processed: number;
  changed: number;
  unchanged: number;
  keptHuman: number;
  needsReview: number;
  cursor: number;
  done: boolean;
}

/** The chunk's counters and cursor, releasing the lease (and completing the job when it is done). */
export function finishChunk(jobId: number, token: string, counts: ChunkCounts, now: number): SQL {
  return sql`UPDATE triage_replays SET processed = processed + ${counts.processed}, changed = changed + ${counts.changed},
      unchanged = unchanged + ${counts.unchanged}, kept_human = kept_human + ${counts.keptHuman}, needs_review = needs_review + ${counts.needsReview},
      cursor = ${counts.cursor}, status = CASE WHEN ${counts.done ? 1 : 0} = 1 OR processed + ${counts.processed} >= total THEN 'completed' ELSE 'running' END,
      applied_at = CASE WHEN dry_run = 0 THEN ${now} ELSE applied_at END,
      lease_token = NULL, lease_until = NULL, updated_at = ${now}
    WHERE id = ${jobId} AND lease_token = ${token}`;
}

/** Diff rows of a job not applied yet (all of them, or those of some replies), with what applying needs. */
export async function pendingDiffRows(d1: D1Database, jobId: number, eventIds: number[] | null) {
  const rows = await statement(
    d1,
    sql`SELECT event_id, campaign_lead_id, old_category_id, old_categorised_at, new_category_id, provenance FROM triage_replay_rows
        WHERE replay_id = ${jobId} AND applied = 0 ${eventIds === null ? sql`` : sql`AND event_id ${inList(eventIds)}`}`,
  ).all<{ event_id: number; campaign_lead_id: number; old_category_id: number | null; old_categorised_at: number | null; new_category_id: number | null; provenance: string }>();
  return rows.results;
}

/** Every REPLY of some records with its category and categorisation (to work out each record's category after applying). */
export async function repliesOfRecords(d1: D1Database, recordIds: number[]) {
  if (recordIds.length === 0) return [];
  const rows = await statement(
    d1,
    sql`SELECT e.id, e.campaign_lead_id, e.occurred_at, e.category_id, p.source, p.confidence, p.prompt_version, p.categorised_at,
          cl.category_id AS record_category_id, cl.category_set_at AS record_category_set_at
        FROM events e JOIN campaign_leads cl ON cl.id = e.campaign_lead_id LEFT JOIN reply_categorisations p ON p.event_id = e.id
        WHERE e.campaign_lead_id ${inList(recordIds)} AND e.type = 'REPLY'`,
  ).all<{
    id: number;
    campaign_lead_id: number;
    occurred_at: number;
    category_id: number | null;
    source: string | null;
    confidence: number | null;
    prompt_version: string | null;
    categorised_at: number | null;
    record_category_id: number | null;
    record_category_set_at: number | null;
  }>();
  return rows.results;
}

/**
 * Applying diff rows (all of a job's pending ones, or those of some replies), as statements for one
 * batch: each reply's new categorisation replaces an automatic one only if the reply is unchanged
 * since the diff was made (same category, same categorisation time, never a person's or an event's);
 * the rows applied carry `nonce`, which guards the rest: the replies' categories, the rows' applied
 * flag, and each touched record's category worked out again by rule 6 (its latest categorised
 * reply), unless a person set the record's category after its replies.
 */
export function applyStatements(jobId: number, eventIds: number[] | null, nonce: string, now: number, guard: SQL = sql`true`): SQL[] {
  const these = (row: string) => (eventIds === null ? sql`` : sql`AND ${sql.raw(row)}.event_id ${inList(eventIds)}`);
  const applied = (row: string) => sql`EXISTS (SELECT 1 FROM reply_categorisations p WHERE p.event_id = ${sql.raw(row)}.event_id AND p.nonce = ${nonce})`;
  const latest = (column: string) =>
    sql.raw(`(SELECT x.${column} FROM events x WHERE x.campaign_lead_id = campaign_leads.id AND x.type = 'REPLY' AND x.category_id IS NOT NULL
      ORDER BY x.occurred_at DESC, x.id DESC LIMIT 1)`);
  return [
    sql`INSERT INTO reply_categorisations (event_id, account_id, campaign_id, campaign_lead_id, category_id, category_name, source, rule_id,
        model, prompt_template_id, prompt_version, confidence, needs_review, reason, categorised_at, nonce)
      SELECT r.event_id, e.account_id, e.campaign_id, e.campaign_lead_id, r.new_category_id, r.provenance ->> '$.categoryName', r.new_source,
        r.provenance ->> '$.ruleId', r.provenance ->> '$.model', r.provenance ->> '$.promptTemplateId', r.provenance ->> '$.promptVersion',
        r.new_confidence, r.new_needs_review, r.provenance ->> '$.reason', ${now}, ${nonce}
      FROM triage_replay_rows r JOIN events e ON e.id = r.event_id
      WHERE r.replay_id = ${jobId} AND r.applied = 0 ${these("r")} AND ${guard}
        AND e.category_id IS r.old_category_id
        AND coalesce((SELECT p.categorised_at FROM reply_categorisations p WHERE p.event_id = r.event_id), -1) = coalesce(r.old_categorised_at, -1)
        AND NOT EXISTS (SELECT 1 FROM reply_categorisations p WHERE p.event_id = r.event_id AND p.source IN ('human', 'event'))
      ON CONFLICT (event_id) DO UPDATE SET category_id = excluded.category_id, category_name = excluded.category_name, source = excluded.source,
        rule_id = excluded.rule_id, model = excluded.model, prompt_template_id = excluded.prompt_template_id, prompt_version = excluded.prompt_version,
        confidence = excluded.confidence, needs_review = excluded.needs_review, reason = excluded.reason, categorised_at = excluded.categorised_at,
        nonce = excluded.nonce
      WHERE reply_categorisations.source NOT IN ('human', 'event')`,
    sql`UPDATE events SET category_id = (SELECT r.new_category_id FROM triage_replay_rows r WHERE r.replay_id = ${jobId} AND r.event_id = events.id)
      WHERE id IN (SELECT r.event_id FROM triage_replay_rows r WHERE r.replay_id = ${jobId} AND r.applied = 0 ${these("r")} AND ${applied("r")})`,
    sql`UPDATE campaign_leads SET category_id = ${latest("category_id")}, category_set_at = ${latest("occurred_at")}, updated_at = ${now}
      WHERE id IN (SELECT r.campaign_lead_id FROM triage_replay_rows r WHERE r.replay_id = ${jobId} AND r.applied = 0 ${these("r")} AND ${applied("r")})
        AND (category_set_at IS NULL OR EXISTS (SELECT 1 FROM events x WHERE x.campaign_lead_id = campaign_leads.id AND x.type = 'REPLY'
          AND x.occurred_at = campaign_leads.category_set_at))`,
    sql`UPDATE triage_replay_rows SET applied = 1
      WHERE replay_id = ${jobId} AND applied = 0 ${these("triage_replay_rows")} AND ${applied("triage_replay_rows")} RETURNING event_id`,
  ];
}

/** Index of the statement of applyStatements whose RETURNING lists the replies applied. */
export const APPLIED_ROWS_STATEMENT = 3;

/** While the job is not applied yet: what guards an apply's statements, so two applies at once apply once. */
export function notAppliedYet(jobId: number): SQL {
  return sql`(SELECT applied_at FROM triage_replays WHERE id = ${jobId}) IS NULL`;
}

/** Marks a dry run applied, returning its id unless another apply did so first. */
export function markApplied(jobId: number, now: number): SQL {
  return sql`UPDATE triage_replays SET applied_at = ${now}, updated_at = ${now} WHERE id = ${jobId} AND applied_at IS NULL RETURNING id`;
}
