import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../db/schema";
import type { Bindings } from "../platform/env";
import { currentShard, SHARD_ID_SPAN } from "../platform/shards";

/** The tables whose ids SQLite hands out (AUTOINCREMENT): each shard's ids for them start in its own range. Accounts take the directory's ids. */
const COUNTED_TABLES = (Object.values(schema) as unknown[])
  .flatMap((value) => (is(value, SQLiteTable) ? [getTableConfig(value)] : []))
  .filter((table) => table.columns.some((column) => column.primary && (column as { autoIncrement?: boolean }).autoIncrement))
  .map((table) => table.name)
  .filter((name) => name !== "accounts");

/**
 * Moves a shard's id counters up to its range (shard k: ids from k·SHARD_ID_SPAN + 1), so its rows'
 * ids never meet another shard's and name their shard (src/platform/shards.ts). AUTOINCREMENT takes
 * the next id from sqlite_sequence, which only ever grows; a counter already in the range is left as
 * it is, so this is safe to run again (each account placed on the shard, and the minute cron for
 * tables a later migration adds). Shard 0's range starts at 0: nothing to do.
 */
export async function claimIdRange(d1: D1Database, shard: number): Promise<void> {
  if (shard === 0) return;
  const floor = shard * SHARD_ID_SPAN;
  const names = JSON.stringify(COUNTED_TABLES);
  // D1 binds every number as REAL, and sqlite_sequence's columns have no type to convert it back:
  // the counter must be stored as an INTEGER, or AUTOINCREMENT refuses the next insert.
  await d1.batch([
    d1.prepare("UPDATE sqlite_sequence SET seq = CAST(?1 AS INTEGER) WHERE seq < ?1 AND name IN (SELECT value FROM json_each(?2))").bind(floor, names),
    d1
      .prepare("INSERT INTO sqlite_sequence (name, seq) SELECT value, CAST(?1 AS INTEGER) FROM json_each(?2) WHERE value NOT IN (SELECT name FROM sqlite_sequence)")
      .bind(floor, names),
  ]);
}

/** The minute cron's job: each shard keeps its range, also for tables a migration added since (count: 1 when a shard above 0 was claimed). */
export async function claimShardIdRange(env: Bindings): Promise<number> {
  const shard = currentShard(env);
  await claimIdRange(env.DB, shard);
  return shard === 0 ? 0 : 1;
}
