import { allShards, onShard, shardDatabase } from "../platform/shards";
import { accountsPerShard, findAccountShard } from "./store";

type DirectoryEnv = { DB: D1Database; DIRECTORY: D1Database };

/**
 * The shard a new account goes to when the operator names none: the one with the most room (the
 * smallest database, as D1 reports its size), then the one with the fewest accounts, then the first.
 */
export async function roomiestShard(env: DirectoryEnv): Promise<number> {
  const shards = allShards(env);
  const [sizes, accounts] = await Promise.all([
    Promise.all(shards.map(async (shard) => (await shardDatabase(env, shard).prepare("SELECT 1").run()).meta.size_after ?? 0)),
    accountsPerShard(env.DIRECTORY),
  ]);
  const count = (shard: number) => accounts.get(shard) ?? 0;
  return [...shards].sort((x, y) => sizes[x]! - sizes[y]! || count(x) - count(y) || x - y)[0]!;
}

/** The shard an account lives on: the directory's word, else shard 0 (an account from before shards). */
export async function shardOfAccount(env: DirectoryEnv, accountId: number): Promise<number> {
  return (await findAccountShard(env.DIRECTORY, accountId)) ?? 0;
}

/** The environment of an account's shard. */
export async function onAccountShard<E extends DirectoryEnv>(env: E, accountId: number): Promise<E> {
  return onShard(env, await shardOfAccount(env, accountId));
}
