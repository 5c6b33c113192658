/**
 * Accounts' data is spread over shards: D1 databases bound as DB (shard 0, the one database of a
 * deployment from before shards), DB_1, DB_2, ... with the same migrations. Code reaches the data
 * through `env.DB`, and this module is the one place that says which shard `env.DB` is: an
 * environment for shard k is the Worker's own with DB bound to that shard's database.
 *
 * Ids are handed out in blocks of ID_BLOCK_SPAN: shard k starts in block k (src/directory/id-ranges.ts),
 * so an id in a link, a queue message or an object's name tells the shard it was made in without a
 * lookup, and no two shards ever hand out the same id. A shard that takes in a moved account with
 * ids above its block goes on in a fresh block beyond the first MAX_SHARDS (the directory lists
 * those), and the moved rows keep their ids: src/directory/locate.ts finds a row whose id's shard no
 * longer holds it. Account ids are the directory's (small: the inbox's search index packs account
 * and row id into one rowid, account · 2^40 + id), and every other id stays below 2^40: 256 blocks
 * of 2^32 ids a table.
 */
export const ID_BLOCK_SPAN = 2 ** 32;
export const ID_BLOCKS = 256;
export const MAX_SHARDS = 64;

/** What this module needs of an environment: its shard bindings (the Worker's, or an object's). */
type Sharded = { DB: D1Database };
type ShardBindings = Record<string, unknown>;

function bindingOf(shard: number): string {
  return shard === 0 ? "DB" : `DB_${shard}`;
}

/** How many shards the environment binds: DB, then DB_1, DB_2, ... until one is missing. */
export function shardCount(env: Sharded): number {
  let count = 1;
  while (count < MAX_SHARDS && (env as unknown as ShardBindings)[bindingOf(count)] !== undefined) count += 1;
  return count;
}

/** Every shard's number, 0 first. */
export function allShards(env: Sharded): number[] {
  return Array.from({ length: shardCount(env) }, (_, shard) => shard);
}

/** The id block an id is in. */
export function blockOfId(id: number): number {
  return Math.floor(id / ID_BLOCK_SPAN);
}

/** The shard whose first block this is (every shard starts in the block of its own number); undefined for a block handed out later. */
export function firstBlockShard(block: number): number | undefined {
  return Number.isInteger(block) && block >= 0 && block < MAX_SHARDS ? block : undefined;
}

/** The Worker's own environment behind each shard's view of it (onShard), and each view's shard. */
const base = new WeakMap<Sharded, Sharded>();
const views = new WeakMap<Sharded, Map<number, Sharded>>();
const shardOfView = new WeakMap<Sharded, number>();

/**
 * The database of a shard, read from the Worker's own bindings (a shard's view has its DB rebound);
 * an unbound shard (a forged or stale id) is an error, never another shard.
 */
export function shardDatabase(env: Sharded, shard: number): D1Database {
  const root = base.get(env) ?? env;
  const d1 = Number.isInteger(shard) && shard >= 0 ? ((root as unknown as ShardBindings)[bindingOf(shard)] as D1Database | undefined) : undefined;
  if (!d1) throw new UnknownShardError(shard);
  return d1;
}

export class UnknownShardError extends Error {
  constructor(shard: number) {
    super(`No database is bound for shard ${shard}`);
  }
}

/** Whether the environment binds this shard (an id from a link may name any). */
export function hasShard(env: Sharded, shard: number): boolean {
  return Number.isInteger(shard) && shard >= 0 && shard < shardCount(env);
}

/**
 * The environment for one shard: the Worker's own, with DB bound to that shard's database. Made
 * once per environment and shard, so what is cached per environment (the parsed config) is too.
 */
export function onShard<E extends Sharded>(env: E, shard: number): E {
  const root = base.get(env) ?? env;
  let byShard = views.get(root);
  if (!byShard) {
    byShard = new Map();
    views.set(root, byShard);
  }
  let view = byShard.get(shard);
  if (!view) {
    view = shard === 0 ? root : { ...root, DB: shardDatabase(root, shard) };
    byShard.set(shard, view);
    base.set(view, root);
    shardOfView.set(view, shard);
  }
  return view as E;
}

/** The shard an environment's DB is (0 for the Worker's own environment). */
export function currentShard(env: Sharded): number {
  return shardOfView.get(env) ?? 0;
}

/** Runs the same work on every shard, side by side. */
export function onEveryShard<E extends Sharded, T>(env: E, work: (shardEnv: E, shard: number) => Promise<T>): Promise<T[]> {
  return Promise.all(allShards(env).map((shard) => work(onShard(env, shard), shard)));
}

/**
 * A queue batch handed to its consumer once per shard, each part with its shard's environment: a
 * message names a row, and `locate` says which shard holds each message's row (null: none does,
 * nothing of it can be found, so it is acknowledged). The parts run side by side; a part that fails
 * fails the whole (after the others have finished), so the platform retries what was not acknowledged.
 */
export async function consumeByShard<E extends Sharded, Body>(
  env: E,
  batch: MessageBatch<Body>,
  locate: (bodies: Body[]) => Promise<Array<number | null>>,
  consume: (part: MessageBatch<Body>, shardEnv: E) => Promise<void>,
): Promise<void> {
  const shards = await locate(batch.messages.map((message) => message.body));
  const groups = new Map<number, Message<Body>[]>();
  batch.messages.forEach((message, index) => {
    const shard = shards[index];
    if (shard === null || shard === undefined) return message.ack();
    groups.set(shard, [...(groups.get(shard) ?? []), message]);
  });
  const outcomes = await Promise.allSettled(
    [...groups].map(([shard, messages]) =>
      // A batch all of one shard (the usual case) goes to its consumer as it came.
      messages.length === batch.messages.length ? consume(batch, onShard(env, shard)) : consume(
        {
          queue: batch.queue,
          metadata: batch.metadata,
          messages,
          ackAll: () => messages.forEach((message) => message.ack()),
          retryAll: (options) => messages.forEach((message) => message.retry(options)),
        },
        onShard(env, shard),
      ),
    ),
  );
  const failed = outcomes.find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

/** A random handle (a session token, an OAuth state) tagged with its row's shard, so presenting it back costs one read on one shard. */
export function tagWithShard(shard: number, value: string): string {
  return `s${shard}.${value}`;
}

/** The shard a tagged handle names; an untagged one is from before shards (shard 0). */
export function shardOfTag(value: string): number {
  const tag = /^s(\d{1,4})\./.exec(value);
  return tag ? Number(tag[1]) : 0;
}
