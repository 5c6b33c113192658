import { claimFreshBlock, claimIdRange, currentBlock } from "../directory/id-ranges";
import { shardOfAccount } from "../directory/placement";
import { invalidateKeys } from "../keys/auth";
import { senderStub } from "../mailbox-agent/stub";
import { isUniqueViolation } from "../platform/db-errors";
import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";
import { config } from "../config";
import { hasShard, shardDatabase } from "../platform/shards";
import {
  accountEmail,
  accountIds,
  accountKeyDigests,
  accountMailboxes,
  deleteChunk,
  deleteDerived,
  derivedRows,
  fenceAccount,
  fencedSince,
  findMove,
  hasPendingDeliveries,
  insertChunk,
  liftFences,
  loadPlan,
  lowerFenceIfUnused,
  markMoved,
  movesFinishedBetween,
  raiseFence,
  readChunk,
  releaseLease,
  restoreChunk,
  saveMove,
  startMove,
  switchDirectory,
  takeLease,
  unfenceAccount,
  unfinishedMoves,
  type MoveRow,
} from "./store";
import type { CopiedTable, MovePlan } from "./tables";

/**
 * Moving an account between shards (issue 30), in bounded steps that any worker can take up where
 * the last stopped (the state and cursor live in the directory):
 *
 * 1. copying: the account's mailboxes hold (each object finishes the pass in flight, then waits),
 *    both shards fence the account (every write to its rows is refused: src/moves/store.ts), and its
 *    rows are copied table by table, parents first, in key order, ids kept. The target's triggers
 *    rebuild what they keep (counters, search, credit) as the rows go in.
 * 2. verifying: every copied row and every derived row of the account is compared, shard against
 *    shard; any difference undoes the move (rolling_back, then failed) and nothing changes.
 * 3. switching: the directory names the new shard, the old shard forwards the account's ids, the new
 *    one lifts its fence, the account's keys and mailboxes are told.
 * 4. deleting: the old shard's rows go, children first; its fence stays ten minutes more (the
 *    minute cron lifts it), so a writer that still thinks the account lives there is refused, never lost.
 *
 * Writes are paused, not logged: for the copy and the check, the account's writes are answered 503
 * with Retry-After (queues retry, mailboxes wait), so nothing written during the move can be lost
 * or copied twice.
 */

export type MoveRequest =
  | { ok: true; move: MoveRow }
  | { ok: false; reason: "unknown_shard" | "not_found" | "same_shard" | "busy"; move?: MoveRow };

/** Starts a move (or finds the one in progress to the same shard). */
export async function requestMove(env: Bindings, accountId: number, toShard: number, now: number): Promise<MoveRequest> {
  if (!hasShard(env, toShard)) return { ok: false, reason: "unknown_shard" };
  const current = await findMove(env.DIRECTORY, accountId);
  if (current && !finished(current)) return current.toShard === toShard ? { ok: true, move: current } : { ok: false, reason: "busy", move: current };
  const fromShard = await shardOfAccount(env, accountId);
  if (!hasShard(env, fromShard) || !(await accountEmail(shardDatabase(env, fromShard), accountId))) return { ok: false, reason: "not_found" };
  if (fromShard === toShard) return { ok: false, reason: "same_shard" };
  await startMove(env.DIRECTORY, accountId, fromShard, toShard, now);
  return { ok: true, move: (await findMove(env.DIRECTORY, accountId))! };
}

function finished(move: MoveRow): boolean {
  return move.state === "done" || move.state === "failed";
}

/** Takes steps of an account's move (one at least) until it is finished or `deadline` has passed; its state after. */
export async function advanceMove(env: Bindings, accountId: number, deadline: number): Promise<MoveRow | null> {
  // Two workers stepping one move from the same cursor could undo each other's steps (one copying
  // again after the other switched): the lease lets one through, the other answers where it stands.
  const token = crypto.randomUUID();
  if (!(await takeLease(env.DIRECTORY, accountId, token, deadline + LEASE_SLACK_MS, Date.now()))) return findMove(env.DIRECTORY, accountId);
  try {
    // The lease is only taken on a move not finished.
    let move = (await findMove(env.DIRECTORY, accountId))!;
    const source = shardDatabase(env, move.fromShard);
    const target = shardDatabase(env, move.toShard);
    const plan = await loadPlan(source);
    // At least one step a call, whatever the deadline.
    do {
      const next = await step(env, plan, source, target, move);
      const now = Date.now();
      if (!(await saveMove(env.DIRECTORY, next, now, token, finished(next)))) return await findMove(env.DIRECTORY, accountId);
      move = { ...next, updatedAt: now, finishedAt: finished(next) ? now : null };
    } while (!finished(move) && Date.now() < deadline);
    return move;
  } finally {
    await releaseLease(env.DIRECTORY, accountId, token);
  }
}

/** Past its deadline, how long a worker may still be in its last step (a mailbox's pass in flight, which hold waits for). */
const LEASE_SLACK_MS = 5 * 60_000;

/**
 * The minute cron's job: unfinished moves go on (a move whose operator went away still ends). A move
 * whose step fails does not hold up the others or the lifting of old fences; the job then fails with
 * its error, which the cron's log line names.
 */
export async function continueMoves(env: Bindings, at: Date): Promise<number> {
  let advanced = 0;
  let failure: unknown = null;
  const deadline = Date.now() + CRON_BUDGET_MS;
  for (const accountId of await unfinishedMoves(env.DIRECTORY)) {
    if (Date.now() >= deadline) break;
    try {
      await advanceMove(env, accountId, deadline);
      advanced += 1;
    } catch (error) {
      failure ??= error;
    }
  }
  await liftOldFences(env, at.getTime());
  if (failure !== null) throw failure;
  return advanced;
}

const CRON_BUDGET_MS = 40_000;

/**
 * How long the shard an account left keeps refusing its writes after the move: longer than anything
 * that could still aim there (a key gate's cached shard lives a minute; mailbox objects are told at
 * once; queue messages and links are forwarded). Then its fence lifts, and once no account is fenced
 * the shard's fence triggers go (forwarding stays).
 */
const FENCE_KEPT_MS = 10 * 60_000;

async function liftOldFences(env: Bindings, now: number): Promise<void> {
  // The minute cron sees each finished move in this window many times over: lifting is idempotent.
  const moves = await movesFinishedBetween(env.DIRECTORY, now - FENCE_KEPT_MS - 3_600_000, now - FENCE_KEPT_MS);
  for (const shard of new Set(moves.map((move) => move.fromShard))) {
    if (!hasShard(env, shard)) continue;
    const d1 = shardDatabase(env, shard);
    const lifted = await liftFences(d1, moves.filter((move) => move.fromShard === shard).map((move) => move.accountId));
    if (lifted > 0) await lowerFenceIfUnused(d1, await loadPlan(d1));
  }
}

async function step(env: Bindings, plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow): Promise<MoveRow> {
  switch (move.state) {
    case "copying":
      return copyStep(env, plan, source, target, move);
    case "verifying":
      return verifyStep(plan, source, target, move);
    case "switching":
      return switchStep(env, plan, source, target, move);
    case "deleting":
      return deleteStep(plan, source, move, "done", target);
    case "rolling_back":
      return rollBackStep(env, plan, source, target, move);
    default:
      return move;
  }
}

/** Before the first row: mailboxes hold, both shards fence, the target gets ids above the account's. */
async function prepare(env: Bindings, plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow): Promise<void> {
  const mailboxes = await accountMailboxes(source, move.accountId);
  await Promise.all(mailboxes.map((id) => senderStub(env, id).hold(id)));
  await Promise.all([raiseFence(source, plan), raiseFence(target, plan)]);
  const now = Date.now();
  await Promise.all([fenceAccount(source, move.accountId, move.toShard, now), fenceAccount(target, move.accountId, null, now)]);
  // The target's counters must be in its block before rows with lower ids arrive (a shard no account
  // was ever placed on may not have claimed it yet), and past the account's ids when those lie above
  // it: SQLite's next id is above the largest present, which would be another shard's.
  const [sourceBlock, targetBlock] = await Promise.all([currentBlock(env.DIRECTORY, move.fromShard), currentBlock(env.DIRECTORY, move.toShard)]);
  if (sourceBlock > targetBlock) await claimFreshBlock(env.DIRECTORY, target, move.toShard);
  else await claimIdRange(target, targetBlock);
}

/** The tables with columns to set back after the copy, after the copied ones in the cursor's count. */
function restoredTables(plan: MovePlan): CopiedTable[] {
  return plan.copied.filter((table) => table.restored.length > 0);
}

async function copyStep(env: Bindings, plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow): Promise<MoveRow> {
  if (move.cursor.table === undefined) {
    await prepare(env, plan, source, target, move);
    return { ...move, cursor: { table: 0, after: null } };
  }
  const index = move.cursor.table;
  if (index >= plan.copied.length) return restoreStep(plan, source, target, move, index - plan.copied.length);
  const table = plan.copied[index]!;
  if (table.late && move.cursor.after === null) {
    // Every webhook post in flight when the fence rose has ended (and its outcome landed) before these
    // are copied: MOVE_WEBHOOK_GRACE_SECONDS, longer than a post may take (DELIVERY_TIMEOUT_MS) and its write.
    const wait = (await fencedSince(source, move.accountId)) + config(env).moveWebhookGraceMs - Date.now();
    if (wait > 0 && (await hasPendingDeliveries(source, move.accountId))) {
      await scheduler.wait(Math.min(wait, 1_000));
      return move;
    }
  }
  const chunk = await readChunk(source, table, move.accountId, move.cursor.after);
  if (chunk.rows.length === 0) return { ...move, cursor: { table: index + 1, after: null } };
  try {
    await insertChunk(target, table, move.accountId, chunk.rows);
  } catch (error) {
    // A chunk written by a step whose progress was never saved (the worker died in between): go on after it.
    if (!isUniqueViolation(error)) throw error;
    const after = await lastCopiedKey(target, table, move.accountId, move.cursor.after);
    // Nothing of the chunk is there: the conflict is with another row, which no retry mends.
    if (JSON.stringify(after) === JSON.stringify(move.cursor.after ?? null)) throw error;
    return { ...move, cursor: { table: index, after } };
  }
  return { ...move, copiedRows: move.copiedRows + chunk.rows.length, cursor: { table: index, after: chunk.last } };
}

/** The last key of the account's rows of a table already on the target. */
async function lastCopiedKey(target: D1Database, table: CopiedTable, accountId: number, after: unknown[] | null | undefined): Promise<unknown[] | null> {
  let last = after ?? null;
  for (;;) {
    const chunk = await readChunk(target, table, accountId, last, []);
    if (!chunk.last) return last;
    last = chunk.last;
  }
}

async function restoreStep(plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow, index: number): Promise<MoveRow> {
  const table = restoredTables(plan)[index];
  if (!table) return { ...move, state: "verifying", cursor: { table: 0, after: null } };
  const chunk = await readChunk(source, table, move.accountId, move.cursor.after, table.restored);
  if (chunk.rows.length === 0) return { ...move, cursor: { table: (move.cursor.table ?? 0) + 1, after: null } };
  await restoreChunk(target, table, move.accountId, chunk.rows.map((row, i) => [...chunk.keys[i]!, ...row]));
  return { ...move, cursor: { table: move.cursor.table, after: chunk.last } };
}

async function verifyStep(plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow): Promise<MoveRow> {
  const index = move.cursor.table ?? 0;
  const table = plan.copied[index];
  if (!table) {
    for (const derived of plan.derived) {
      const [there, here] = await Promise.all([derivedRows(source, derived, move.accountId), derivedRows(target, derived, move.accountId)]);
      if (there !== here) return fail(move, `${derived.name} differs after the copy`);
    }
    return { ...move, state: "switching", cursor: {} };
  }
  const [there, here] = await Promise.all([readChunk(source, table, move.accountId, move.cursor.after), readChunk(target, table, move.accountId, move.cursor.after)]);
  if (JSON.stringify(there.rows) !== JSON.stringify(here.rows)) return fail(move, `${table.name} differs after the copy`);
  if (there.rows.length === 0) return { ...move, cursor: { table: index + 1, after: null } };
  return { ...move, cursor: { table: index, after: there.last } };
}

function fail(move: MoveRow, error: string): MoveRow {
  log("error", "account move undone", { account_id: move.accountId, error });
  return { ...move, state: "rolling_back", error, cursor: { table: undefined } };
}

async function switchStep(env: Bindings, plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow): Promise<MoveRow> {
  const email = (await accountEmail(target, move.accountId))!;
  await switchDirectory(env.DIRECTORY, move.accountId, email, move.toShard, Date.now());
  await markMoved(source, move.accountId);
  await unfenceAccount(target, move.accountId);
  await lowerFenceIfUnused(target, plan);
  await invalidateKeys(env, await accountKeyDigests(target, move.accountId));
  const mailboxes = await accountMailboxes(target, move.accountId);
  await Promise.all(mailboxes.map((id) => senderStub(env, id).relocate(id, move.toShard)));
  return { ...move, state: "deleting", switchedAt: Date.now(), cursor: { table: plan.copied.length - 1 } };
}

/** One chunk of the account's rows deleted from a shard, children first; then what its derived tables kept. */
async function deleteStep(plan: MovePlan, from: D1Database, move: MoveRow, then: "done" | "failed", idsFrom = from): Promise<MoveRow> {
  const index = move.cursor.table ?? plan.copied.length - 1;
  const table = plan.copied[index];
  if (!table) {
    const [campaigns, clients] = await Promise.all([accountIds(idsFrom, "campaigns", move.accountId), accountIds(idsFrom, "clients", move.accountId)]);
    for (const derived of plan.derived) await deleteDerived(from, derived, move.accountId, campaigns, clients);
    return { ...move, state: then, cursor: {} };
  }
  const deleted = await deleteChunk(from, table, move.accountId);
  if (deleted === 0) return { ...move, cursor: { table: index - 1 } };
  return { ...move, deletedRows: move.deletedRows + deleted };
}

/** Undoing a move that failed its check: the target's copy goes, both fences lift, the mailboxes go on where they were. */
async function rollBackStep(env: Bindings, plan: MovePlan, source: D1Database, target: D1Database, move: MoveRow): Promise<MoveRow> {
  const undone = await deleteStep(plan, target, move, "failed", source);
  if (undone.state !== "failed") return { ...undone, state: "rolling_back" };
  await Promise.all([unfenceAccount(source, move.accountId), unfenceAccount(target, move.accountId)]);
  await Promise.all([lowerFenceIfUnused(source, plan), lowerFenceIfUnused(target, plan)]);
  const mailboxes = await accountMailboxes(source, move.accountId);
  await Promise.all(mailboxes.map((id) => senderStub(env, id).relocate(id, move.fromShard)));
  return { ...undone, deletedRows: move.deletedRows };
}
