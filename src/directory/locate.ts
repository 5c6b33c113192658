import { blockOfId, firstBlockShard, hasShard, shardDatabase } from "../platform/shards";
import { laterBlocks } from "./id-ranges";

type DirectoryEnv = { DB: D1Database; DIRECTORY: D1Database };

/** The tables whose rows links, queue messages and objects' names name by id (each row carries its account). */
export type NamedTable = "campaign_leads" | "campaigns" | "email_accounts" | "events" | "triage_replays" | "webhook_deliveries";

/**
 * The shard an id was made in: the first MAX_SHARDS blocks are their shards', later ones are listed
 * in the directory (read only for such ids: they exist only on shards that took in a moved account).
 */
async function shardsOfBlocks(env: DirectoryEnv, ids: number[]): Promise<Map<number, number | undefined>> {
  const blocks = new Map(ids.map((id) => [id, blockOfId(id)]));
  const later = [...blocks.values()].some((block) => firstBlockShard(block) === undefined) ? await laterBlocks(env.DIRECTORY) : new Map<number, number>();
  return new Map([...blocks].map(([id, block]) => [id, firstBlockShard(block) ?? later.get(block)]));
}

/** The shards the accounts that left this shard went to (src/moves/): where a row it no longer holds may be now. */
export async function forwardShards(env: DirectoryEnv, shard: number): Promise<number[]> {
  const { results } = await shardDatabase(env, shard)
    .prepare("SELECT DISTINCT to_shard AS shard FROM account_moves WHERE state = 'moved'")
    .all<{ shard: number }>();
  return results.map((row) => row.shard).filter((to) => hasShard(env, to));
}

/**
 * Which shard holds each named row: the shard its id was made in, unless its account has moved from
 * there (then where it went), and for a row that shard no longer holds, the shards its accounts
 * moved to (a move keeps ids). Null for a row no shard holds (deleted, or a forged or stale id).
 */
export async function locateRows(env: DirectoryEnv, table: NamedTable, ids: number[]): Promise<Map<number, number | null>> {
  const located = new Map<number, number | null>(ids.map((id) => [id, null]));
  const byShard = new Map<number, number[]>();
  for (const [id, shard] of await shardsOfBlocks(env, [...located.keys()])) {
    if (shard !== undefined && hasShard(env, shard)) byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
  }
  await Promise.all([...byShard].map(([shard, shardIds]) => locateOn(env, table, shard, shardIds, new Set(), located)));
  return located;
}

async function locateOn(env: DirectoryEnv, table: NamedTable, shard: number, ids: number[], visited: Set<number>, located: Map<number, number | null>): Promise<void> {
  visited.add(shard);
  const { results } = await shardDatabase(env, shard)
    .prepare(
      `SELECT j.value AS id, t.id IS NOT NULL AS present, m.to_shard AS forward FROM json_each(?) j
       LEFT JOIN ${table} t ON t.id = j.value LEFT JOIN account_moves m ON m.account_id = t.account_id AND m.state = 'moved'`,
    )
    .bind(JSON.stringify(ids))
    .all<{ id: number; present: number; forward: number | null }>();
  const onward = new Map<number, number[]>();
  const missing: number[] = [];
  for (const row of results) {
    if (!row.present) missing.push(row.id);
    else if (row.forward === null) located.set(row.id, shard);
    else if (hasShard(env, row.forward) && !visited.has(row.forward)) onward.set(row.forward, [...(onward.get(row.forward) ?? []), row.id]);
  }
  if (missing.length > 0) {
    for (const to of await forwardShards(env, shard)) if (!visited.has(to)) onward.set(to, [...(onward.get(to) ?? []), ...missing]);
  }
  // Each shard is asked once per lookup, so a chain of moves ends.
  for (const [to, toIds] of onward) {
    const pending = toIds.filter((id) => located.get(id) === null);
    if (pending.length > 0 && !visited.has(to)) await locateOn(env, table, to, pending, visited, located);
  }
}

/** The shard holding one named row, or null. */
export async function locateRow(env: DirectoryEnv, table: NamedTable, id: number): Promise<number | null> {
  return (await locateRows(env, table, [id])).get(id) ?? null;
}

/**
 * A handle tagged with `shard` (a session token, an OAuth state): `find` on that shard, then (only
 * when it finds nothing there) on the shards its accounts moved to. The shard it was found on, or null.
 */
export async function findByTag<T>(env: DirectoryEnv, shard: number, find: (shard: number) => Promise<T | null | undefined>): Promise<{ shard: number; found: T } | null> {
  if (!hasShard(env, shard)) return null;
  const here = await find(shard);
  if (here) return { shard, found: here };
  for (const to of await forwardShards(env, shard)) {
    const there = await find(to);
    if (there) return { shard: to, found: there };
  }
  return null;
}
