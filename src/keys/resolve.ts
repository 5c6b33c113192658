import { findKeyListing, listKey } from "../directory/store";
import { hasShard, shardDatabase } from "../platform/shards";
import { findKeyOwner, type KeyOwner } from "./store";
import type { KeyKind } from "./rules";

/** A key's owner and the shard its account lives on. */
export type ShardedOwner = KeyOwner & { shard: number };

/**
 * Finds a key: the directory names its account's shard, that shard's row says whether the key is
 * live. A key the directory does not list is from before shards (shard 0, the database they all
 * lived in); found there, it is listed, so the directory fills itself as keys are used.
 */
export async function resolveKey(env: { DB: D1Database; DIRECTORY: D1Database }, kind: KeyKind, keyHash: string): Promise<ShardedOwner | null> {
  const listing = await findKeyListing(env.DIRECTORY, keyHash);
  const shard = listing?.shard ?? 0;
  if (!hasShard(env, shard)) return null;
  const owner = await findKeyOwner(shardDatabase(env, shard), kind, keyHash);
  if (!owner) return null;
  if (!listing) await listKey(env.DIRECTORY, keyHash, owner.accountId);
  return { ...owner, shard };
}
