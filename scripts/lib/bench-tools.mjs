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

/**
 * The SQLite file behind shard 0's D1 binding (DB) of a `wrangler dev --persist-to <stateDir>`,
 * where the benchmarks place their accounts. Miniflare names the files by an id of its own, so
 * shard 0's is told by its contents: an `accounts` table (the directory has none) whose id
 * counters are not in another shard's range, and of two such (shard 1 before anything claimed
 * its range), the one with more accounts.
 */
export function localD1File(stateDir) {
  const dir = join(stateDir, "v3", "d1", "miniflare-D1DatabaseObject");
  const candidates = readdirSync(dir)
    .filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")
    .flatMap((name) => {
      const db = new DatabaseSync(join(dir, name), { readOnly: true });
      try {
        if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts'").get()) return [];
        const claimed = db.prepare("SELECT 1 FROM sqlite_sequence WHERE seq >= 17179869184 AND name <> 'accounts' LIMIT 1").get();
        return claimed ? [] : [{ name, accounts: db.prepare("SELECT count(*) AS n FROM accounts").get().n }];
      } finally {
        db.close();
      }
    })
    .sort((a, b) => b.accounts - a.accounts);
  if (candidates.length === 0) throw new Error(`no D1 database of shard 0 under ${dir}`);
  return join(dir, candidates[0].name);
}

/** An account with limits high enough that the benchmark measures the work, not the rate limiter. */
export async function provisionBenchAccount(server, name) {
  const response = await fetch(`${server.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      email: `${name}-${Date.now()}@bench.local`,
      name,
      rate_limit_per_minute: 100_000,
      rate_limit_burst: 10_000,
      // Shard 0, whose database file the benchmarks read and load (localD1File).
      shard: 0,
    }),
  });
  if (response.status !== 201) throw new Error(`provisioning failed: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * The account a benchmark dataset belongs to: the one that already owns campaigns named
 * `${prefix}…` in the local database (given a fresh key), or a newly provisioned one.
 */
export async function datasetAccount(server, prefix) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
  const owner = db.prepare("SELECT account_id FROM campaigns WHERE name LIKE ? LIMIT 1").get(`${prefix}%`);
  db.close();
  if (!owner) return { ...(await provisionBenchAccount(server, prefix)), existing: false };
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
