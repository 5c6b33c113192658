import { ACCOUNT_MOVING } from "../platform/db-errors";
import { jsonListChunks } from "../platform/sql";
import { planMove, quote, TABLES_QUERY, tableShapeQueries, type CopiedTable, type DerivedTable, type MovePlan, type SchemaTable } from "./tables";

/**
 * A move's SQL: its record in the directory, the fence on the two shards, and the bounded chunks
 * that copy, compare and delete an account's rows.
 */

export type MoveState = "copying" | "verifying" | "switching" | "deleting" | "done" | "rolling_back" | "failed";

export interface MoveRow {
  accountId: number;
  fromShard: number;
  toShard: number;
  state: MoveState;
  cursor: MoveCursor;
  copiedRows: number;
  deletedRows: number;
  error: string | null;
  startedAt: number;
  updatedAt: number;
  /** When the directory named the new shard: the account's writes were refused from startedAt to then. */
  switchedAt: number | null;
  finishedAt: number | null;
}

/** Where the bounded steps left off: a table of the plan and the last key done in it. */
export interface MoveCursor {
  table?: number;
  after?: unknown[] | null;
}

type MoveRecord = Omit<MoveRow, "cursor"> & { cursor: string };

export async function findMove(dir: D1Database, accountId: number): Promise<MoveRow | null> {
  const row = await dir
    .prepare(
      `SELECT account_id AS accountId, from_shard AS fromShard, to_shard AS toShard, state, cursor, copied_rows AS copiedRows,
        deleted_rows AS deletedRows, error, started_at AS startedAt, updated_at AS updatedAt, switched_at AS switchedAt, finished_at AS finishedAt
       FROM directory_moves WHERE account_id = ?`,
    )
    .bind(accountId)
    .first<MoveRecord>();
  return row && { ...row, cursor: JSON.parse(row.cursor) as MoveCursor };
}

/** Moves not finished (the minute cron goes on with them). */
export async function unfinishedMoves(dir: D1Database): Promise<number[]> {
  const { results } = await dir.prepare("SELECT account_id AS id FROM directory_moves WHERE state NOT IN ('done', 'failed') ORDER BY updated_at").all<{ id: number }>();
  return results.map((row) => row.id);
}

/** Records a new move (over the account's last, finished one). */
export async function startMove(dir: D1Database, accountId: number, fromShard: number, toShard: number, now: number): Promise<void> {
  await dir
    .prepare(
      `INSERT INTO directory_moves (account_id, from_shard, to_shard, state, cursor, copied_rows, deleted_rows, error, started_at, updated_at, switched_at, finished_at)
       VALUES (?1, ?2, ?3, 'copying', '{}', 0, 0, NULL, ?4, ?4, NULL, NULL)
       ON CONFLICT (account_id) DO UPDATE SET from_shard = ?2, to_shard = ?3, state = 'copying', cursor = '{}', copied_rows = 0, deleted_rows = 0,
         error = NULL, started_at = ?4, updated_at = ?4, switched_at = NULL, finished_at = NULL`,
    )
    .bind(accountId, fromShard, toShard, now)
    .run();
}

/** Takes the move's lease until `until`, unless another worker holds it; whether it was taken. */
export async function takeLease(dir: D1Database, accountId: number, token: string, until: number, now: number): Promise<boolean> {
  const { meta } = await dir
    .prepare("UPDATE directory_moves SET lease_token = ?, lease_until = ? WHERE account_id = ? AND state NOT IN ('done', 'failed') AND (lease_until IS NULL OR lease_until < ?)")
    .bind(token, until, accountId, now)
    .run();
  return (meta.changes ?? 0) > 0;
}

export async function releaseLease(dir: D1Database, accountId: number, token: string): Promise<void> {
  await dir.prepare("UPDATE directory_moves SET lease_token = NULL, lease_until = NULL WHERE account_id = ? AND lease_token = ?").bind(accountId, token).run();
}

/** Saves a move's progress, if the lease is still `token`'s; `finished` stamps the end (done or failed). Whether it was saved. */
export async function saveMove(dir: D1Database, move: MoveRow, now: number, token: string, finished = false): Promise<boolean> {
  const { meta } = await dir
    .prepare(
      "UPDATE directory_moves SET state = ?, cursor = ?, copied_rows = ?, deleted_rows = ?, error = ?, updated_at = ?, switched_at = ?, finished_at = ? WHERE account_id = ? AND lease_token = ?",
    )
    .bind(move.state, JSON.stringify(move.cursor), move.copiedRows, move.deletedRows, move.error, now, move.switchedAt, finished ? now : null, move.accountId, token)
    .run();
  return (meta.changes ?? 0) > 0;
}

/** The directory's word for the account's shard changes (listing an account from before shards, which the directory did not list). */
export async function switchDirectory(dir: D1Database, accountId: number, email: string, shard: number, now: number): Promise<void> {
  await dir
    .prepare("INSERT INTO directory_accounts (account_id, shard, email, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET shard = excluded.shard")
    .bind(accountId, shard, email, now)
    .run();
}

/** The shard's schema, planned. */
export async function loadPlan(d1: D1Database): Promise<MovePlan> {
  const { results: tables } = await d1.prepare(TABLES_QUERY).all<{ name: string; sql: string }>();
  // Virtual tables' shadows and SQLite's own are read too: planMove leaves them out by name.
  const shapes = await d1.batch<Record<string, unknown>>(tables.flatMap((table) => tableShapeQueries(table.name).map((sql) => d1.prepare(sql))));
  return planMove(
    tables.map((table, index): SchemaTable => ({
      name: table.name,
      sql: table.sql,
      columns: shapes[2 * index]!.results as SchemaTable["columns"],
      fks: (shapes[2 * index + 1]!.results as SchemaTable["fks"]).map((fk) => ({ from: fk.from, table: fk.table, to: fk.to ?? "rowid" })),
    })),
  );
}

/** The account's email on a shard (its `accounts` row), for the directory. */
export async function accountEmail(d1: D1Database, accountId: number): Promise<string | null> {
  return (await d1.prepare("SELECT email FROM accounts WHERE id = ?").bind(accountId).first<{ email: string }>())?.email ?? null;
}

// --- The fence ------------------------------------------------------------------------------

const OPS = [
  { op: "INSERT", ref: "NEW" },
  { op: "UPDATE", ref: "OLD" },
  { op: "DELETE", ref: "OLD" },
] as const;

/**
 * The fence's triggers on a shard: a write to a row of an account whose `account_moves` row is
 * closed is refused, whoever makes it (a route, a queue consumer, the cron, a mailbox's object,
 * a worker that still thinks the account lives here). With no such row they cost one probe of an
 * empty table.
 */
export async function raiseFence(d1: D1Database, plan: MovePlan): Promise<void> {
  await d1.batch(
    plan.copied.flatMap((table) =>
      OPS.map(({ op, ref }) =>
        d1.prepare(
          `CREATE TRIGGER IF NOT EXISTS ${quote(`account_fence_${table.name}_${op.toLowerCase()}`)} BEFORE ${op} ON ${quote(table.name)}
           WHEN ${table.passes[op] ? `NOT (${table.passes[op]}) AND ` : ""}EXISTS (SELECT 1 FROM account_moves WHERE open = 0 AND account_id = ${table.owner(ref)})
           BEGIN SELECT RAISE(ABORT, '${ACCOUNT_MOVING}'); END`,
        ),
      ),
    ),
  );
}

/** Drops the fence's triggers once no account is fenced on the shard. */
export async function lowerFenceIfUnused(d1: D1Database, plan: MovePlan): Promise<void> {
  const fenced = await d1.prepare("SELECT 1 FROM account_moves WHERE open = 0 LIMIT 1").first();
  if (fenced) return;
  await d1.batch(plan.copied.flatMap((table) => OPS.map(({ op }) => d1.prepare(`DROP TRIGGER IF EXISTS ${quote(`account_fence_${table.name}_${op.toLowerCase()}`)}`))));
}

/** Closes the account on a shard: `toShard` on the one it leaves, null on the one it moves into. */
export async function fenceAccount(d1: D1Database, accountId: number, toShard: number | null, now: number): Promise<void> {
  await d1
    .prepare("INSERT INTO account_moves (account_id, to_shard, state, open, since) VALUES (?1, ?2, 'copying', 0, ?3) ON CONFLICT (account_id) DO UPDATE SET to_shard = ?2, state = 'copying', open = 0, since = ?3")
    .bind(accountId, toShard, now)
    .run();
}

/** When the account's fence rose on a shard. */
export async function fencedSince(d1: D1Database, accountId: number): Promise<number> {
  return (await d1.prepare("SELECT since FROM account_moves WHERE account_id = ?").bind(accountId).first<{ since: number }>())?.since ?? 0;
}

/** The shard the account left sends whatever names its rows on (the row stays, and keeps refusing writes). */
export async function markMoved(d1: D1Database, accountId: number): Promise<void> {
  await d1.prepare("UPDATE account_moves SET state = 'moved' WHERE account_id = ?").bind(accountId).run();
}

/** Moves finished between the two times (their old shards' fences may lift), with the shard each left. */
export async function movesFinishedBetween(dir: D1Database, from: number, to: number): Promise<{ accountId: number; fromShard: number }[]> {
  const { results } = await dir
    .prepare("SELECT account_id AS accountId, from_shard AS fromShard FROM directory_moves WHERE state = 'done' AND finished_at > ? AND finished_at <= ?")
    .bind(from, to)
    .all<{ accountId: number; fromShard: number }>();
  return results;
}

/** Stops refusing writes of accounts that left the shard (their forwarding stays); how many were still fenced. */
export async function liftFences(d1: D1Database, accountIds: number[]): Promise<number> {
  const { meta } = await d1
    .prepare("UPDATE account_moves SET open = 1 WHERE state = 'moved' AND open = 0 AND account_id IN (SELECT value FROM json_each(?))")
    .bind(JSON.stringify(accountIds))
    .run();
  return meta.changes ?? 0;
}

/** Lifts the fence of an account on a shard. */
export async function unfenceAccount(d1: D1Database, accountId: number): Promise<void> {
  await d1.prepare("DELETE FROM account_moves WHERE account_id = ?").bind(accountId).run();
}

/** The mover's own writes: the fence opens for them inside their batch, and closes before it commits. */
function insideFence(d1: D1Database, accountId: number, statements: D1PreparedStatement[]): D1PreparedStatement[] {
  return [
    d1.prepare("UPDATE account_moves SET open = 1 WHERE account_id = ?").bind(accountId),
    ...statements,
    d1.prepare("UPDATE account_moves SET open = 0 WHERE account_id = ?").bind(accountId),
  ];
}

// --- Chunks ---------------------------------------------------------------------------------

/** Rows a chunk reads at most, and the bytes its rows may start within (a chunk's writes are split so no statement binds more than D1 takes: jsonListChunks). */
const CHUNK_ROWS = 500;
const CHUNK_BYTES = 4_000_000;

function keyList(table: { key: string[] }): string {
  return table.key.map((column) => (column === "rowid" ? "t.rowid" : `t.${quote(column)}`)).join(", ");
}

/**
 * The next chunk of the account's rows of a table after `after` (its key's values), in key order: up
 * to CHUNK_ROWS rows, and no more rows than start within CHUNK_BYTES (at least one), so a table of
 * large rows (D1 takes rows up to 2 MB) comes in smaller chunks.
 */
export async function readChunk(
  d1: D1Database,
  table: CopiedTable,
  accountId: number,
  after: unknown[] | null | undefined,
  columns = table.columns,
  maxBytes = CHUNK_BYTES,
): Promise<{ rows: unknown[][]; keys: unknown[][]; last: unknown[] | null }> {
  const keyColumns = keyList(table);
  const keyNames = table.key.map((_, index) => `__k${index}`);
  const paging = after ? `AND (${keyColumns}) > (${after.map((_, index) => `?${index + 3}`).join(", ")})` : "";
  // The window runs over the (at most CHUNK_ROWS) rows the inner query picked, not the table.
  const sql = `SELECT __key, __row FROM (
      SELECT __key, __row, ${keyNames.join(", ")}, sum(length(__row)) OVER (ORDER BY ${keyNames.join(", ")} ROWS UNBOUNDED PRECEDING) - length(__row) AS __before
      FROM (SELECT json_array(${keyColumns}) AS __key, json_array(${columns.map((column) => `t.${quote(column)}`).join(", ")}) AS __row,
              ${table.key.map((column, index) => `${column === "rowid" ? "t.rowid" : `t.${quote(column)}`} AS ${keyNames[index]}`).join(", ")}
            FROM ${quote(table.name)} t WHERE (${table.belongs}) ${paging} ORDER BY ${keyColumns} LIMIT ${CHUNK_ROWS}))
    WHERE __before < ?2 ORDER BY ${keyNames.join(", ")}`;
  const { results } = await d1
    .prepare(sql)
    .bind(accountId, maxBytes, ...(after ?? []))
    .all<{ __key: string; __row: string }>();
  const keys = results.map((row) => JSON.parse(row.__key) as unknown[]);
  return { rows: results.map((row) => JSON.parse(row.__row) as unknown[]), keys, last: keys.at(-1) ?? null };
}

/** Writes a chunk of rows into the target, inside its fence (the columns the target's triggers fill go in empty). */
export async function insertChunk(d1: D1Database, table: CopiedTable, accountId: number, rows: unknown[][]): Promise<void> {
  const values = table.columns.map((column, index) => (table.filled.includes(column) ? "NULL" : `value ->> '$[${index}]'`));
  const sql = `INSERT INTO ${quote(table.name)} (${table.columns.map(quote).join(", ")}) SELECT ${values.join(", ")} FROM json_each(?) ORDER BY key`;
  await d1.batch(insideFence(d1, accountId, jsonListChunks(rows).map((part) => d1.prepare(sql).bind(JSON.stringify(part)))));
}

/** Sets back, on the target, the columns its triggers numbered (read from the source for the same rows: each row its key's values, then the restored columns'). */
export async function restoreChunk(d1: D1Database, table: CopiedTable, accountId: number, rows: unknown[][]): Promise<void> {
  const keyCount = table.key.length;
  const set = table.restored.map((column, index) => `${quote(column)} = j.value ->> '$[${keyCount + index}]'`).join(", ");
  const match = table.key.map((column, index) => `${column === "rowid" ? `${quote(table.name)}.rowid` : `${quote(table.name)}.${quote(column)}`} = j.value ->> '$[${index}]'`).join(" AND ");
  const sql = `UPDATE ${quote(table.name)} SET ${set} FROM json_each(?) j WHERE ${match}`;
  await d1.batch(insideFence(d1, accountId, jsonListChunks(rows).map((part) => d1.prepare(sql).bind(JSON.stringify(part)))));
}


/** Deletes a chunk of the account's rows of a table (children are deleted before their parents), inside the fence; how many went. */
export async function deleteChunk(d1: D1Database, table: CopiedTable, accountId: number): Promise<number> {
  const keys = keyList(table);
  const target = table.key[0] === "rowid" ? "rowid" : `(${table.key.map(quote).join(", ")})`;
  const [, deleted] = await d1.batch(
    insideFence(d1, accountId, [
      // RETURNING counts the table's own rows (the changes count would add what triggers changed).
      d1.prepare(`DELETE FROM ${quote(table.name)} WHERE ${target} IN (SELECT ${keys} FROM ${quote(table.name)} t WHERE ${table.belongs} LIMIT ${CHUNK_ROWS}) RETURNING 1`).bind(accountId),
    ]),
  );
  return deleted!.results.length;
}

/** A derived table's rows for the account (live ones: counters at zero are as good as none), in one order. */
export async function derivedRows(d1: D1Database, table: DerivedTable, accountId: number): Promise<string> {
  const columns = table.columns.map(quote).join(", ");
  const { results } = await d1
    .prepare(`SELECT json_group_array(json_array(${columns})) AS rows FROM (SELECT ${columns} FROM ${quote(table.name)} t WHERE ${table.belongs} ORDER BY ${columns})`)
    .bind(accountId)
    .all<{ rows: string }>();
  return results[0]?.rows ?? "[]";
}

/** Deletes a derived table's rows left for an account that is gone from the shard (the counters its rows' deletes took to zero). */
export async function deleteDerived(d1: D1Database, table: DerivedTable, accountId: number, campaignIds: number[], clientIds: number[]): Promise<void> {
  const ids = table.parent === null ? [accountId] : table.parent === "clients" ? clientIds : campaignIds;
  if (ids.length === 0) return;
  await d1.batch(insideFence(d1, accountId, [d1.prepare(`DELETE FROM ${quote(table.name)} WHERE ${quote(table.column)} IN (SELECT value FROM json_each(?))`).bind(JSON.stringify(ids))]));
}

/** The ids of the account's rows of a table (campaigns, clients: what its derived rows hang on). */
export async function accountIds(d1: D1Database, table: "campaigns" | "clients", accountId: number): Promise<number[]> {
  const { results } = await d1.prepare(`SELECT id FROM ${table} WHERE account_id = ?`).bind(accountId).all<{ id: number }>();
  return results.map((row) => row.id);
}

/** Whether the account has webhook deliveries still to send (one may be in flight). */
export async function hasPendingDeliveries(d1: D1Database, accountId: number): Promise<boolean> {
  return (await d1.prepare("SELECT 1 FROM webhook_deliveries WHERE account_id = ? AND status = 'pending' LIMIT 1").bind(accountId).first()) !== null;
}

/** The account's mailboxes (their objects follow the account). */
export async function accountMailboxes(d1: D1Database, accountId: number): Promise<number[]> {
  const { results } = await d1.prepare("SELECT id FROM email_accounts WHERE account_id = ?").bind(accountId).all<{ id: number }>();
  return results.map((row) => row.id);
}

/** The digests of the account's keys (their gates read the account's shard again). */
export async function accountKeyDigests(d1: D1Database, accountId: number): Promise<string[]> {
  const { results } = await d1
    .prepare("SELECT key_hash AS hash FROM account_keys WHERE account_id = ?1 UNION SELECT key_hash FROM client_keys WHERE account_id = ?1")
    .bind(accountId)
    .all<{ hash: string }>();
  return results.map((row) => row.hash);
}
