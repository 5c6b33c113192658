// Shared pieces of the benchmark scripts: timing, percentiles, the local D1 file, provisioning.
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

/** Every shard's SQLite file of a `wrangler dev --persist-to <stateDir>`: the D1 files with an `accounts` table (the directory has none). */
export function shardD1Files(stateDir) {
  const dir = join(stateDir, ...D1_DIR);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")
    .map((name) => join(dir, name))
    .filter((file) => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts'").get() !== undefined;
      } finally {
        db.close();
      }
    });
}

/**
 * The SQLite file behind shard 0's D1 binding (DB), where most benchmarks place their accounts.
 * Miniflare names the files by an id of its own, so shard 0's is told by its contents: id counters
 * not in another shard's range, and of two such (shard 1 before anything claimed its range), the
 * one with more accounts.
 */
export function localD1File(stateDir) {
  const candidates = shardD1Files(stateDir)
    .flatMap((file) => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        const claimed = db.prepare("SELECT 1 FROM sqlite_sequence WHERE seq >= 4294967296 AND name <> 'accounts' LIMIT 1").get();
        return claimed ? [] : [{ file, accounts: db.prepare("SELECT count(*) AS n FROM accounts").get().n }];
      } finally {
        db.close();
      }
    })
    .sort((a, b) => b.accounts - a.accounts);
  if (candidates.length === 0) throw new Error(`no D1 database of shard 0 under ${join(stateDir, ...D1_DIR)}`);
  return candidates[0].file;
}

/** The SQLite file of the shard that holds an account (account ids are global: the file with its `accounts` row). */
export function accountD1File(stateDir, accountId) {
  const found = shardD1Files(stateDir).filter((file) => {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      return db.prepare("SELECT 1 FROM accounts WHERE id = ?").get(accountId) !== undefined;
    } finally {
      db.close();
    }
  });
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
    .map((file) => {
      const db = new DatabaseSync(file, { readOnly: true });
      try {
        return db.prepare("SELECT account_id FROM campaigns WHERE name LIKE ? LIMIT 1").get(`${prefix}%`);
      } finally {
        db.close();
      }
    })
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
