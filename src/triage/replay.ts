import { sql, type SQL } from "drizzle-orm";
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { database, type Database } from "../platform/db";
import { rawBatch } from "../platform/sql";
import { categoryDeliveries } from "../webhooks/fanout";
import { deliveryIds, enqueue, guardValue, insertDeliveries, type NewDelivery } from "../webhooks/outbox";
import { withTrial, type CampaignTriage } from "./allowed";
import { DO_NOT_CONTACT_CATEGORY_ID } from "./categoriser";
import { decideReply, mapLimited, modelOf } from "./consumer";
import { optOutDeliveryIds, optOutStatements, type Outcome, type StoredCategorisation } from "./effects";
import {
  APPLIED_ROWS_STATEMENT,
  applyStatements,
  failReplay,
  finishChunk,
  idleReplays,
  insertDiffRows,
  leased,
  leaseReplay,
  markApplied,
  notAppliedYet,
  pendingDiffRows,
  repliesOfRecords,
  type DiffRow,
  type ReplayOptions,
  type ReplayRow,
} from "./replay-store";
import { campaignContext, namedReplies, replayReplies, type CampaignContext, type ReplyRow } from "./store";
import type { TriageMessage } from "../events/triage-queue";

/**
 * Replays (CONTRACT section 20.7): a campaign's past replies categorised again, in chunks of
 * CHUNK replies, newest first. Each chunk is leased (one worker at a time), its diff rows, counters
 * and cursor written in one batch under the lease, and, for a job that applies as it goes, the
 * chunk's changes applied in that same batch. The triage queue carries the job from chunk to chunk;
 * the minute cron restarts a job whose chunk died (its lease ran out), like `lead_list_imports`.
 * Human and event categories are never touched (`kept_human`).
 */

const CHUNK = 25;
const MODEL_CONCURRENCY = 4;

export async function startReplayChunk(env: Bindings, jobId: number): Promise<void> {
  await env.TRIAGE_QUEUE.send({ replay: jobId } satisfies TriageMessage);
}

/** The campaign's triage, or the replay's own prompt and categories (dry runs); always on, as the replay was asked for. */
function replayTriage(context: CampaignContext, options: ReplayOptions): CampaignTriage {
  const tried = withTrial(context.triage, context.campaign.settings, context.categories, { promptContent: options.promptContent, categories: options.categories });
  return { ...tried, enabled: true };
}

const changedCategory = (old: number | null, stored: StoredCategorisation) => old !== stored.categoryId;

/** One chunk of a job: categorise, count, store the diff (and apply it when the job is not a dry run). */
export async function advanceReplay(env: Bindings, jobId: number, now = Date.now()): Promise<"done" | "more" | "busy"> {
  const token = crypto.randomUUID();
  const job = await leaseReplay(env.DB, jobId, token, now);
  if (!job) return "busy";
  try {
    return await runChunk(env, job, token, now);
  } catch (error) {
    await failReplay(env.DB, jobId, token, error instanceof Error ? error.message : String(error), Date.now());
    throw error;
  }
}

async function runChunk(env: Bindings, job: ReplayRow, token: string, now: number): Promise<"done" | "more"> {
  const db = database(env.DB);
  const options = job.options as unknown as ReplayOptions;
  const remaining = job.total - job.processed;
  const context = await campaignContext(db, job.campaignId);
  const replies =
    remaining > 0 && context
      ? await replayReplies(env.DB, env.BODIES, job.campaignId, { below: job.cursor, from: options.from, to: options.to, onlyUncategorised: options.onlyUncategorised, limit: Math.min(CHUNK, remaining) })
      : [];
  const counts = { processed: replies.length, changed: 0, unchanged: 0, keptHuman: 0, needsReview: 0, cursor: job.cursor ?? 0, done: replies.length < Math.min(CHUNK, remaining) || replies.length === remaining };
  if (replies.length === 0) {
    await rawBatch(env.DB, [finishChunk(job.id, token, { ...counts, done: true }, now)]);
    return "done";
  }
  counts.cursor = Math.min(...replies.map((r) => r.id));
  const settings = config(env).categoriser;
  const triage = replayTriage(context!, options);
  const model = modelOf(env);
  const diff: DiffRow[] = [];
  const outcomes = await mapLimited(replies, MODEL_CONCURRENCY, async (reply) => {
    // A person's or an event's category stays, whatever the rules or the model would say now.
    if (reply.done_source === "human" || reply.done_source === "event" || (reply.done_source === null && reply.category_id !== null)) return null;
    return decideReply({ ...reply, category_id: null }, context!, { model, thresholds: settings, triage });
  });
  outcomes.forEach((outcome, i) => {
    const reply = replies[i]!;
    if (!outcome) {
      counts.keptHuman += 1;
      return;
    }
    if (outcome.stored.needsReview) counts.needsReview += 1;
    if (!changedCategory(reply.category_id, outcome.stored)) {
      counts.unchanged += 1;
      return;
    }
    counts.changed += 1;
    diff.push({
      eventId: reply.id,
      recordId: reply.campaign_lead_id,
      leadEmail: reply.lead_email,
      replyTime: reply.occurred_at,
      oldCategoryId: reply.category_id,
      oldSource: reply.done_source ?? (reply.category_id === null ? null : "event"),
      oldCategorisedAt: reply.done_at,
      stored: outcome.stored,
    });
  });
  const statements: SQL[] = [];
  if (diff.length > 0) statements.push(insertDiffRows(job.id, token, diff));
  let applied: Applied | null = null;
  if (!job.dryRun && diff.length > 0) {
    const contexts = new Map([[job.campaignId, context]]);
    applied = await applyPlan(env, db, job.id, diff.map((d) => d.eventId), diff, replies, contexts, now, leased(job.id, token));
    statements.push(...applied.statements);
  }
  statements.push(finishChunk(job.id, token, counts, now));
  const results = await rawBatch(env.DB, statements);
  if (applied) await enqueue(env, applied.deliveryIds(results, diff.length > 0 ? 1 : 0));
  if (counts.done || job.processed + counts.processed >= job.total) return "done";
  await startReplayChunk(env, job.id);
  return "more";
}

interface Applied {
  statements: SQL[];
  /** The webhook deliveries the statements stored, from the batch's results (the statements start at `offset`). */
  deliveryIds(results: Record<string, unknown>[][], offset: number): number[];
}

type Change = Pick<DiffRow, "eventId" | "oldCategoryId" | "oldCategorisedAt" | "stored">;

/**
 * The statements that apply diff rows (some replies', or every pending one of the job), with the
 * LEAD_CATEGORY_UPDATED of each record whose category ends up different (one per record), and the
 * unsubscribe of leads newly put in Do Not Contact by a reply unchanged since the diff was made.
 */
async function applyPlan(
  env: Bindings,
  db: Database,
  jobId: number,
  eventIds: number[] | null,
  diff: Change[],
  replies: ReplyRow[],
  contexts: Map<number, CampaignContext | null>,
  now: number,
  guard: SQL,
): Promise<Applied> {
  const nonce = crypto.randomUUID();
  const statements = applyStatements(jobId, eventIds, nonce, now, guard);
  const changes = new Map(diff.map((d) => [d.eventId, d]));
  const touched = replies.filter((reply) => changes.has(reply.id));
  for (const reply of touched) {
    if (!contexts.has(reply.campaign_id)) contexts.set(reply.campaign_id, await campaignContext(db, reply.campaign_id));
  }
  const { deliveries, deciders } = await recordChanges(env, touched, new Map(diff.map((d) => [d.eventId, d.stored])), contexts, nonce);
  // Leads the replay puts in Do Not Contact (the reply decides its record, and is unchanged since the diff) are unsubscribed everywhere.
  const dnc: Outcome[] = [];
  for (const reply of touched.filter((r) => deciders.has(r.id))) {
    const change = changes.get(reply.id)!;
    const context = contexts.get(reply.campaign_id);
    const unchanged = reply.category_id === change.oldCategoryId && reply.done_at === change.oldCategorisedAt && reply.done_source !== "human" && reply.done_source !== "event";
    if (context && unchanged && change.stored.categoryId === DO_NOT_CONTACT_CATEGORY_ID) dnc.push({ reply, context, stored: change.stored, markOoo: false });
  }
  const all = [...statements];
  const deliveryAt = deliveries.length > 0 ? all.push(insertDeliveries(deliveries, RECORD_GUARD, now)) - 1 : -1;
  const optOut = await optOutStatements(db, dnc, nonce, now);
  const optOutAt = all.length;
  all.push(...optOut.statements);
  return {
    statements: all,
    deliveryIds: (results, offset) => [
      ...(deliveryAt >= 0 ? deliveryIds(results[offset + deliveryAt]) : []),
      ...optOutDeliveryIds(results, optOut, offset + optOutAt),
    ],
  };
}

/** A replay's delivery holds when the record ends up with the category worked out, and this apply wrote a categorisation. */
const RECORD_GUARD = sql`EXISTS (SELECT 1 FROM campaign_leads cl WHERE cl.id = ${guardValue("record_id")}
    AND cl.category_id IS ${guardValue("category_id")} AND cl.category_set_at IS ${guardValue("category_at")})
  AND EXISTS (SELECT 1 FROM reply_categorisations p WHERE p.campaign_lead_id = ${guardValue("record_id")} AND p.nonce = ${guardValue("nonce")})`;

/**
 * Rule 6 after the change: each touched record's latest categorised reply, and, when that differs
 * from the record's current category (and no person set it after its replies), one
 * LEAD_CATEGORY_UPDATED through the usual fan-out.
 */
async function recordChanges(
  env: Bindings,
  replies: ReplyRow[],
  changes: Map<number, StoredCategorisation>,
  contexts: Map<number, CampaignContext | null>,
  nonce: string,
): Promise<{ deliveries: NewDelivery[]; deciders: Set<number> }> {
  const recordIds = [...new Set(replies.map((r) => r.campaign_lead_id))];
  const all = await repliesOfRecords(env.DB, recordIds);
  const out: NewDelivery[] = [];
  const deciders = new Set<number>();
  for (const recordId of recordIds) {
    const mine = all.filter((r) => r.campaign_lead_id === recordId);
    const first = mine[0];
    const reply = replies.find((r) => r.campaign_lead_id === recordId)!;
    const context = contexts.get(reply.campaign_id);
    if (!first || !context) continue;
    // A category a person set after the replies stays (the apply statements leave such a record alone).
    if (first.record_category_set_at !== null && !mine.some((r) => r.occurred_at === first.record_category_set_at)) continue;
    const after = mine
      .map((r) => ({ ...r, category_id: changes.has(r.id) ? changes.get(r.id)!.categoryId : r.category_id }))
      .filter((r) => r.category_id !== null)
      .sort((a, b) => b.occurred_at - a.occurred_at || b.id - a.id)[0];
    const newCategory = after?.category_id ?? null;
    if (newCategory === first.record_category_id) continue;
    const decided = after && changes.has(after.id) ? changes.get(after.id)! : null;
    if (decided) deciders.add(after!.id);
    const names = context.triage.names;
    out.push(
      ...categoryDeliveries(
        context.webhooks,
        { id: context.campaign.id, name: context.campaign.name, status: context.campaign.status, clientId: context.campaign.clientId },
        {
          reply: null,
          recordId,
          leadId: reply.lead_id,
          leadEmail: reply.lead_email,
          leadName: reply.lead_name,
          oldCategoryId: first.record_category_id,
          oldCategoryName: first.record_category_id === null ? null : (names.get(first.record_category_id) ?? null),
          newCategoryId: newCategory,
          newCategoryName: newCategory === null ? null : (names.get(newCategory) ?? null),
          occurredAt: after?.occurred_at ?? reply.occurred_at,
          provenance: decided
            ? { source: decided.source, confidence: decided.confidence, promptVersion: decided.promptVersion }
            : { source: after?.source ?? "event", confidence: after?.confidence ?? null, promptVersion: after?.prompt_version ?? null },
        },
        { record_id: recordId, category_id: newCategory, category_at: after?.occurred_at ?? null, nonce },
      ),
    );
  }
  return { deliveries: out, deciders };
}

/** Applies a completed dry run's diff to the replies unchanged since (the apply route); null when another apply did first. */
export async function applyDryRun(env: Bindings, jobId: number, now = Date.now()): Promise<{ applied: number; pending: number } | null> {
  const db = database(env.DB);
  const rows = await pendingDiffRows(env.DB, jobId, null);
  const diff: Change[] = rows.map((row) => ({
    eventId: row.event_id,
    oldCategoryId: row.old_category_id,
    oldCategorisedAt: row.old_categorised_at,
    stored: JSON.parse(row.provenance) as StoredCategorisation,
  }));
  const replies = await namedReplies(env.DB, env.BODIES, [], diff.map((d) => d.eventId));
  const plan = await applyPlan(env, db, jobId, null, diff, replies, new Map(), now, notAppliedYet(jobId));
  const results = await rawBatch(env.DB, [...plan.statements, markApplied(jobId, now)]);
  if (results.at(-1)!.length === 0) return null;
  await enqueue(env, plan.deliveryIds(results, 0));
  return { applied: results[APPLIED_ROWS_STATEMENT]!.length, pending: rows.length };
}

/** The minute cron's share: jobs whose lease ran out (or that never started) go back to the queue. */
export async function restartIdleReplays(env: Bindings, at: Date): Promise<number> {
  const ids = await idleReplays(env.DB, at.getTime());
  for (const id of ids) await startReplayChunk(env, id);
  return ids.length;
}
