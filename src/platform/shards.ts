/**
 * Accounts' data is spread over shards: D1 databases bound as DB (shard 0, the one database of a
 * deployment from before shards), DB_1, DB_2, ... with the same migrations. Code reaches the data
 * through `env.DB`, and this module is the one place that says which shard `env.DB` is: an
 * environment for shard k is the Worker's own with DB bound to that shard's database.
 *
 * Every shard allocates its ids in a range of its own (shard k: k·SHARD_ID_SPAN and up, see
 * src/directory/id-ranges.ts), so an id in a link, a queue message or an object's name tells the
 * shard it was made in without a lookup, and no two shards ever hand out the same id. Account ids
 * are the directory's (small: the inbox's search index packs account and row id into one rowid,
 * account · 2^40 + id), and every other id stays below 2^40: 2^34 ids a table per shard, 64 shards.
 */
export const SHARD_ID_SPAN = 2 ** 34;
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

/** The shard an id was made in. */
export function shardOfId(id: number): number {
  return Math.floor(id / SHARD_ID_SPAN);
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

/** The environment of the shard an id was made in. */
export function onShardOf<E extends Sharded>(env: E, id: number): E {
  return onShard(env, shardOfId(id));
}

/** Runs the same work on every shard, side by side. */
export function onEveryShard<E extends Sharded, T>(env: E, work: (shardEnv: E, shard: number) => Promise<T>): Promise<T[]> {
  return Promise.all(allShards(env).map((shard) => work(onShard(env, shard), shard)));
}

/**
 * Items (queue messages, tracking hits) grouped by the shard their id was made in, each group with
 * its shard's environment. Ids of a shard this deployment does not bind are dropped: nothing of
 * theirs can be found.
 */
export function groupByShard<E extends Sharded, T>(env: E, items: readonly T[], idOf: (item: T) => number): Array<[E, T[]]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const shard = shardOfId(idOf(item));
    if (!hasShard(env, shard)) continue;
    const group = groups.get(shard) ?? [];
    group.push(item);
    groups.set(shard, group);
  }
  return [...groups].map(([shard, group]) => [onShard(env, shard), group]);
}

/**
 * A queue batch handed to its consumer once per shard, each part with its shard's environment (a
 * message names a row, and the row's id its shard). The parts run side by side; a part that fails
 * fails the whole (after the others have finished), so the platform retries what was not acknowledged.
 * Messages of a shard this deployment does not bind are acknowledged: nothing of theirs can be found.
 */
export async function consumeByShard<E extends Sharded, Body>(
  env: E,
  batch: MessageBatch<Body>,
  idOf: (body: Body) => number,
  consume: (part: MessageBatch<Body>, shardEnv: E) => Promise<void>,
): Promise<void> {
  for (const message of batch.messages) if (!hasShard(env, shardOfId(idOf(message.body)))) message.ack();
  const parts = groupByShard(env, batch.messages, (message) => idOf(message.body));
  const outcomes = await Promise.allSettled(
    parts.map(([shardEnv, messages]) =>
      // A batch all of one shard (the usual case) goes to its consumer as it came.
      messages.length === batch.messages.length ? consume(batch, shardEnv) : consume(
        {
          queue: batch.queue,
          metadata: batch.metadata,
          messages,
          ackAll: () => messages.forEach((message) => message.ack()),
          retryAll: (options) => messages.forEach((message) => message.retry(options)),
        },
        shardEnv,
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
