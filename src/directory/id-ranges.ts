import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../db/schema";
import type { Bindings } from "../platform/env";
import { currentShard, ID_BLOCK_SPAN, ID_BLOCKS, MAX_SHARDS } from "../platform/shards";

/** The tables whose ids SQLite hands out (AUTOINCREMENT): each shard's ids for them start in its own range. Accounts take the directory's ids. */
const COUNTED_TABLES = (Object.values(schema) as unknown[])
  .flatMap((value) => (is(value, SQLiteTable) ? [getTableConfig(value)] : []))
  .filter((table) => table.columns.some((column) => column.primary && (column as { autoIncrement?: boolean }).autoIncrement))
  .map((table) => table.name)
  .filter((name) => name !== "accounts");

/**
 * Moves a shard's id counters up to the start of its id block (src/platform/shards.ts), so its rows'
 * ids never meet another shard's. AUTOINCREMENT takes the next id from sqlite_sequence, which only
 * ever grows; a counter already in the block is left as it is, so this is safe to run again (each
 * account placed on the shard, and the minute cron for tables a later migration adds). Block 0
 * starts at 0: nothing to do.
 */
export async function claimIdRange(d1: D1Database, block: number): Promise<void> {
  if (block === 0) return;
  const floor = block * ID_BLOCK_SPAN;
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

/** The block a shard hands out ids from: its latest fresh block, else the one of its own number. */
export async function currentBlock(dir: D1Database, shard: number): Promise<number> {
  const row = await dir.prepare("SELECT max(block) AS block FROM directory_id_blocks WHERE shard = ?").bind(shard).first<{ block: number | null }>();
  return row?.block ?? shard;
}

/** The shards of the blocks handed out beyond the first MAX_SHARDS. */
export async function laterBlocks(dir: D1Database): Promise<Map<number, number>> {
  const { results } = await dir.prepare("SELECT block, shard FROM directory_id_blocks").all<{ block: number; shard: number }>();
  return new Map(results.map((row) => [row.block, row.shard]));
}

export class IdBlocksExhaustedError extends Error {
  constructor() {
    super(`All ${ID_BLOCKS} id blocks are handed out`);
  }
}

/**
 * Gives a shard the next free block and moves its counters there (before it takes in rows whose ids
 * lie above its own block: SQLite's next id is above the largest present, which would otherwise be
 * another shard's).
 */
export async function claimFreshBlock(dir: D1Database, d1: D1Database, shard: number): Promise<number> {
  const row = await dir
    .prepare("INSERT INTO directory_id_blocks (block, shard, claimed_at) SELECT coalesce(max(block) + 1, ?1), ?2, ?3 FROM directory_id_blocks RETURNING block")
    .bind(MAX_SHARDS, shard, Date.now())
    .first<{ block: number }>();
  if (!row || row.block >= ID_BLOCKS) throw new IdBlocksExhaustedError();
  await claimIdRange(d1, row.block);
  return row.block;
}

/** The minute cron's job: each shard keeps its block, also for tables a migration added since (count: 1 when a shard's block was claimed). */
export async function claimShardIdRange(env: Bindings): Promise<number> {
  const block = await currentBlock(env.DIRECTORY, currentShard(env));
  await claimIdRange(env.DB, block);
  return block === 0 ? 0 : 1;
}
