// Shared pieces of the benchmark scripts: timing, percentiles, load, the local D1 file, provisioning.
import autocannon from "autocannon";
import { readdirSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Times `runs` sequential calls of `fn` after `warmup` unmeasured ones; answers p50/p95 in ms. */
export async function measure(fn, { runs = 30, warmup = 3 } = {}) {
  for (let i = 0; i < warmup; i += 1) await fn();
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

export const ms = (value) => `${value.toFixed(1)} ms`;

/** A fixed number of requests, 10 at a time (for CPU per request, steadier than requests per second). */
export function fixedLoad(url, amount, headers = {}) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: 10, amount }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** A small seeded PRNG, so every run builds the same datasets. */
export function mulberry32(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const D1_DIR = ["v3", "d1", "miniflare-D1DatabaseObject"];

/** `read(db)` on a D1 file opened read-only (waiting out the dev server's writes), closed after. */
function readOnly(file, read) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return read(db);
  } finally {
    db.close();
  }
}

/** The SQLite files of a `wrangler dev --persist-to <stateDir>` that hold `table`. */
function d1FilesWith(stateDir, table) {
  const dir = join(stateDir, ...D1_DIR);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")
    .map((name) => join(dir, name))
    .filter((file) => readOnly(file, (db) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined));
}

/** Every shard's SQLite file of a `wrangler dev --persist-to <stateDir>`: the D1 files with an `accounts` table (the directory has none). */
export function shardD1Files(stateDir) {
  return d1FilesWith(stateDir, "accounts");
}

/**
 * The SQLite file behind shard 0's D1 binding (DB), where most benchmarks place their accounts.
 * Miniflare names the files by an id of its own, so shard 0's is told by its contents: id counters
 * not in another shard's range, and of two such (shard 1 before anything claimed its range), the
 * one with more accounts.
 */
export function localD1File(stateDir) {
  const candidates = shardD1Files(stateDir)
    .flatMap((file) =>
      readOnly(file, (db) => {
        const claimed = db.prepare("SELECT 1 FROM sqlite_sequence WHERE seq >= 4294967296 AND name <> 'accounts' LIMIT 1").get();
        return claimed ? [] : [{ file, accounts: db.prepare("SELECT count(*) AS n FROM accounts").get().n }];
      }),
    )
    .sort((a, b) => b.accounts - a.accounts);
  if (candidates.length === 0) throw new Error(`no D1 database of shard 0 under ${join(stateDir, ...D1_DIR)}`);
  return candidates[0].file;
}

/** The SQLite file of the shard that holds an account (account ids are global: the file with its `accounts` row). */
export function accountD1File(stateDir, accountId) {
  const found = shardD1Files(stateDir).filter((file) => readOnly(file, (db) => db.prepare("SELECT 1 FROM accounts WHERE id = ?").get(accountId) !== undefined));
  if (found.length !== 1) throw new Error(`account ${accountId} is in ${found.length} shard files under ${join(stateDir, ...D1_DIR)}, not one`);
  return found[0];
}

/** An account with limits high enough that the benchmark measures the work, not the rate limiter. */
export async function provisionBenchAccount(server, name, { shard = 0 } = {}) {
  const response = await fetch(`${server.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      email: `${name}-${Date.now()}@bench.local`,
      name,
      rate_limit_per_minute: 100_000,
      rate_limit_burst: 10_000,
      // Shard 0 unless told: most benchmarks read and load its file (localD1File).
      shard,
    }),
  });
  if (response.status !== 201) throw new Error(`provisioning failed: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * The account a benchmark dataset belongs to: the one that already owns campaigns named
 * `${prefix}…` in one of the local shards (given a fresh key), or a newly provisioned one on `shard`.
 */
export async function datasetAccount(server, prefix, { shard = 0 } = {}) {
  const owner = shardD1Files(server.stateDir)
    .map((file) => readOnly(file, (db) => db.prepare("SELECT account_id FROM campaigns WHERE name LIKE ? LIMIT 1").get(`${prefix}%`)))
    .find(Boolean);
  if (!owner) return { ...(await provisionBenchAccount(server, prefix, { shard })), existing: false };
  const response = await fetch(`${server.url}/admin/v1/accounts/${owner.account_id}/api-keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.adminToken}` },
  });
  if (response.status !== 201) throw new Error(`minting a key failed: ${response.status} ${await response.text()}`);
  const { api_key } = await response.json();
  return { id: owner.account_id, api_key, existing: true };
}

export async function api(server, apiKey, path, init = {}) {
  const url = new URL(path, server.url);
  const response = await fetch(url, {
    ...init,
    headers: { "Content-Type": "application/json", "X-API-Key": apiKey, ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * `api` as a client should behave while its account is being moved between shards: a 503 (writes
 * paused, `Retry-After` says for how long) or a network error is retried, the same call, after the
 * wait; any other failure throws. Answers the body and how many retries it took.
 */
export async function apiRetrying(server, apiKey, path, init = {}, { maxWaitMs = 5 * 60_000 } = {}) {
  const deadline = Date.now() + maxWaitMs;
  for (let retries = 0; ; retries += 1) {
    let waitMs = 1000;
    try {
      const response = await fetch(new URL(path, server.url), {
        ...init,
        headers: { "Content-Type": "application/json", "X-API-Key": apiKey, ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const body = await response.json().catch(() => null);
      if (response.ok) return { body, retries };
      if (response.status !== 503) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${JSON.stringify(body)}`);
      waitMs = Number(response.headers.get("Retry-After") ?? 1) * 1000 || 1000;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // fetch's network failures are TypeErrors
    }
    if (Date.now() + waitMs > deadline) throw new Error(`${init.method ?? "GET"} ${path}: still refused after ${retries + 1} tries`);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** The directory's SQLite file (DIRECTORY: the D1 file with `directory_accounts`). */
export function directoryD1File(stateDir) {
  const found = d1FilesWith(stateDir, "directory_accounts");
  if (found.length !== 1) throw new Error(`${found.length} directory files under ${join(stateDir, ...D1_DIR)}, not one`);
  return found[0];
}

/**
 * How many rows of one account each table of a shard's file holds: `accounts` by id, a table with
 * `account_id` by it, a table without one through its foreign key to such a table (webhook_attempts
 * by their delivery), the inbox's search indexes by their rowid range. Tables reachable none of these
 * ways (shared catalogues, FTS5's own shadow tables) are left out.
 */
export function accountRowCounts(file, accountId) {
  return readOnly(file, (db) => {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' AND sql NOT LIKE 'CREATE VIRTUAL%'")
      .all()
      .map((row) => row.name);
    const columns = (table) => db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table).map((row) => row.name);
    const scoped = new Set(tables.filter((table) => columns(table).includes("account_id")));
    const counts = {};
    for (const table of tables) {
      if (table === "accounts") {
        counts[table] = db.prepare("SELECT count(*) AS n FROM accounts WHERE id = ?").get(accountId).n;
      } else if (scoped.has(table)) {
        counts[table] = db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE account_id = ?`).get(accountId).n;
      } else {
        const parent = db.prepare(`SELECT "table" AS parent, "from" AS col, "to" AS ref FROM pragma_foreign_key_list(?)`).all(table).find((fk) => scoped.has(fk.parent) || fk.parent === "accounts");
        if (!parent) continue;
        const key = parent.parent === "accounts" ? "id" : "account_id";
        counts[table] = db
          .prepare(`SELECT count(*) AS n FROM "${table}" t JOIN "${parent.parent}" p ON p."${parent.ref ?? "id"}" = t."${parent.col}" WHERE p.${key} = ?`)
          .get(accountId).n;
      }
    }
    // The inbox's search indexes (migration 0051): contentless FTS5 tables keyed account · 2^40 + row
    // id, which cannot be scanned; their documents are read from the index through a vocabulary table
    // (in the connection's own temp schema: the file stays read-only). Every document ends in two
    // U+0001, so each has at least one trigram.
    for (const table of ["lead_search", "reply_search"]) {
      if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(table)) continue;
      db.exec(`CREATE VIRTUAL TABLE temp."${table}_instances" USING fts5vocab(main, "${table}", 'instance')`);
      counts[table] = db.prepare(`SELECT count(DISTINCT doc) AS n FROM temp."${table}_instances" WHERE doc >= ?1 * 1099511627776 AND doc < (?1 + 1) * 1099511627776`).get(accountId).n;
    }
    return counts;
  });
}
