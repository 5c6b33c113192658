// `npm run bench:shards` (issue 30's done-when): accounts on two shards against two accounts in one
// database. Account A (shard 0), B (shard 1) and C (shard 0) each own a campaign of 1,000,000 events
// (bench:analytics' dataset, SQL bulk-loaded into the file of the account's shard), so shard 0 holds
// two accounts' 2M events as one database did before shards, and shard 1 holds B's 1M alone.
//   1. analytics-by-date p50 per account, interleaved rounds: B on its own shard against A and C
//      sharing one database (target: B within 10% of the one-database figure);
//   2. ingestion through the events endpoint into two accounts on two shards side by side, into two
//      accounts on one shard side by side, and into one account alone: same events, same concurrency,
//      alternated over several rounds (target: two shards >= 1.6x one shard);
//   3. the databases' side alone, server stopped: SQLite writers on two shard files against one.
// Datasets persist in .wrangler/bench-shards (delete it to reload); the shard files are copied
// aside once loaded and put back before every run, so each run starts from the same 2M + 1M events.
import { execFileSync } from "node:child_process";
import { Worker } from "node:worker_threads";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { accountD1File, api, datasetAccount, ms, percentile } from "./lib/bench-tools.mjs";
import { countStatements, datasetCampaigns, loadEventDatasets, TYPES, WINDOW, WINDOW_START } from "./lib/analytics-dataset.mjs";
import { startDevServer, workerdTicks } from "./lib/dev-server.mjs";

const stateDir = join(import.meta.dirname, "..", ".wrangler", "bench-shards");
const SIZE = 1_000_000;
const SHARD_ID_SPAN = 2 ** 32;
const ACCOUNTS = [
  { label: "A", shard: 0, prefix: "shards-a-" },
  { label: "B", shard: 1, prefix: "shards-b-" },
  { label: "C", shard: 0, prefix: "shards-c-" },
];
const ANALYTICS_WARMUP = 3;
const ANALYTICS_ROUNDS = Number(process.env.BENCH_SHARDS_ANALYTICS_ROUNDS ?? 40);
// Ingestion: each configuration pushes CALLS calls of PER_CALL events with CONCURRENCY calls in
// flight, shared evenly by its accounts; the configurations alternate for INGEST_ROUNDS rounds.
const PER_CALL = 1000;
const CALLS = Number(process.env.BENCH_SHARDS_CALLS ?? 40);
const CONCURRENCY = 4;
const INGEST_ROUNDS = Number(process.env.BENCH_SHARDS_INGEST_ROUNDS ?? 4);
// Each configuration's accounts get a fresh campaign with one lead per EVENTS_PER_LEAD events it is
// sent, so every run pushes into records of the same size (with the same leads reused, a record's
// events pile up and the rate halved over four rounds).
const EVENTS_PER_LEAD = 10;
// Before each configuration, workerd must be idle (below IDLE_CORES over a second): the replies of
// the previous one are categorised in the background (the triage queue) on the same thread.
const IDLE_CORES = 0.1;
const IDLE_TIMEOUT_MS = 120_000;
// USER_HZ: /proc reports CPU time in these ticks a second.
const TICKS_PER_SECOND = 100;

mkdirSync(stateDir, { recursive: true });
const snapshotDir = join(stateDir, "datasets");
const load = () => execFileSync("uptime", { encoding: "utf8" }).trim().replace(/^.*load average/, "load average");

/** The shard a D1 file is, by its id counters (shard k's ids start at k·2^34 once its range is claimed). */
function shardOfFile(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const { seq } = db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM sqlite_sequence WHERE name <> 'accounts'").get();
    return Math.floor(Number(seq) / SHARD_ID_SPAN);
  } finally {
    db.close();
  }
}

function eventCount(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare("SELECT count(*) AS n FROM events").get().n;
  } finally {
    db.close();
  }
}

/** Puts the shard files as loaded back in place (with the server stopped): earlier runs' ingestion is gone. */
function restoreDatasets() {
  if (!existsSync(snapshotDir)) return;
  const d1Dir = join(stateDir, "v3", "d1", "miniflare-D1DatabaseObject");
  for (const name of readdirSync(snapshotDir)) {
    for (const suffix of ["-wal", "-shm"]) rmSync(join(d1Dir, name + suffix), { force: true });
    copyFileSync(join(snapshotDir, name), join(d1Dir, name));
  }
}

function saveDatasets(files) {
  rmSync(snapshotDir, { recursive: true, force: true });
  mkdirSync(snapshotDir);
  for (const file of new Set(files)) copyFileSync(file, join(snapshotDir, basename(file)));
}

console.log(`bench:shards, ${new Date().toISOString()}, ${load()}`);
restoreDatasets();
let server = await startDevServer({ stateDir, quiet: true });
const accounts = [];
try {
  for (const spec of ACCOUNTS) accounts.push({ ...spec, ...(await datasetAccount(server, spec.prefix, { shard: spec.shard })) });
  for (const account of accounts) account.file = accountD1File(stateDir, account.id);
  const toLoad = accounts.filter((account) => !account.existing);
  if (toLoad.length > 0) {
    await server.stop();
    for (const account of toLoad) {
      const started = Date.now();
      console.log(`loading account ${account.label} (id ${account.id}, shard ${account.shard}): ${SIZE} events ...`);
      loadEventDatasets(account.file, account.id, { sizes: [SIZE], prefix: account.prefix });
      console.log(`  ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    saveDatasets(accounts.map((account) => account.file));
    server = await startDevServer({ stateDir, quiet: true });
  }
  for (const account of accounts) {
    account.campaign = datasetCampaigns(account.file, { prefix: account.prefix, accountId: account.id })[SIZE];
    const fileShard = shardOfFile(account.file);
    const campaignShard = Math.floor(account.campaign / SHARD_ID_SPAN);
    if (fileShard !== account.shard || campaignShard !== account.shard) {
      throw new Error(`account ${account.label} should be on shard ${account.shard}: its file is shard ${fileShard}, its campaign ${account.campaign} shard ${campaignShard}`);
    }
  }
  console.log("\ndatasets:");
  for (const account of accounts) {
    console.log(`  account ${account.label}: id ${account.id}, shard ${account.shard}, campaign ${account.campaign} (${SIZE} events); its shard's file holds ${eventCount(account.file)} events`);
  }

  // 1. analytics-by-date, interleaved: each round asks A, B and C once, starting one further along each time.
  const query = new URLSearchParams(WINDOW);
  const times = new Map(accounts.map((account) => [account.label, []]));
  for (let round = 0; round < ANALYTICS_WARMUP + ANALYTICS_ROUNDS; round += 1) {
    for (let i = 0; i < accounts.length; i += 1) {
      const account = accounts[(round + i) % accounts.length];
      const started = performance.now();
      await api(server, account.api_key, `/api/v1/campaigns/${account.campaign}/analytics-by-date?${query}`);
      if (round >= ANALYTICS_WARMUP) times.get(account.label).push(performance.now() - started);
    }
  }
  const p = (values, q) => percentile([...values].sort((a, b) => a - b), q);
  console.log(`\nanalytics-by-date, 30-day window, ${ANALYTICS_ROUNDS} interleaved rounds (A, B, C; start rotated) after ${ANALYTICS_WARMUP} warm-ups:`);
  for (const account of accounts) {
    const own = times.get(account.label);
    const where = account.shard === 1 ? "shard 1, alone in its database" : "shard 0, two accounts (2M events) in one database";
    console.log(`  account ${account.label} (${where}): p50 ${ms(p(own, 50))}  p95 ${ms(p(own, 95))}`);
  }
  const oneDatabase = p([...times.get("A"), ...times.get("C")], 50);
  const ownShard = p(times.get("B"), 50);
  const analyticsRatio = ownShard / oneDatabase;
  console.log(
    `  one-database figure (A and C pooled): p50 ${ms(oneDatabase)}; B on its own shard: p50 ${ms(ownShard)} = x${analyticsRatio.toFixed(2)}` +
      ` -> ${analyticsRatio <= 1.1 ? "within" : "NOT within"} 10% (target: B no more than 1.10x)`,
  );

  // The floor: analytics-by-date's statements straight on each shard's file (node:sqlite), interleaved the same way.
  const floors = accounts.map((account) => {
    const db = new DatabaseSync(account.file, { readOnly: true });
    return { account, db, statements: countStatements(db, account.campaign), times: [] };
  });
  for (let round = 0; round < ANALYTICS_WARMUP + ANALYTICS_ROUNDS; round += 1) {
    for (let i = 0; i < floors.length; i += 1) {
      const floor = floors[(round + i) % floors.length];
      const started = performance.now();
      floor.statements.forEach((statement) => statement.all());
      if (round >= ANALYTICS_WARMUP) floor.times.push(performance.now() - started);
    }
  }
  console.log("  floor: the same statements straight on each shard's SQLite file (node:sqlite), same rounds:");
  for (const floor of floors) {
    floor.db.close();
    console.log(`    account ${floor.account.label} (shard ${floor.account.shard}): p50 ${ms(p(floor.times, 50))}  p95 ${ms(p(floor.times, 95))}`);
  }
  const floorOneDatabase = p([...floors[0].times, ...floors[2].times], 50);
  console.log(`    B's floor against A's and C's pooled: x${(p(floors[1].times, 50) / floorOneDatabase).toFixed(2)}`);

  // 2. ingestion. Fresh leads per run: an earlier run's UNSUBSCRIBE events opted its leads out everywhere.
  const RUN = Date.now().toString(36);
  /** A fresh campaign of the account with `leads` fresh leads, for one configuration of one round. */
  async function ingestTarget(account, name, leads) {
    const campaign = await api(server, account.api_key, "/api/v1/campaigns/create", { method: "POST", body: { name } });
    const emails = Array.from({ length: leads }, (_, i) => `${name}-${i}@bench.example`);
    for (let i = 0; i < emails.length; i += 400) {
      await api(server, account.api_key, `/api/v1/campaigns/${campaign.id}/leads`, {
        method: "POST",
        body: { lead_list: emails.slice(i, i + 400).map((email) => ({ email })) },
      });
    }
    return { account, campaign: campaign.id, emails };
  }
  /** Waits until workerd is idle: the background work of what came before (reply categorisation) is done. */
  async function idle() {
    const deadline = Date.now() + IDLE_TIMEOUT_MS;
    for (;;) {
      const before = workerdTicks(server.pid);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if ((workerdTicks(server.pid) - before) / TICKS_PER_SECOND < IDLE_CORES) return;
      if (Date.now() > deadline) throw new Error(`workerd still busy ${IDLE_TIMEOUT_MS / 1000} s after the last ingestion`);
    }
  }
  const byLabel = (label) => accounts.find((account) => account.label === label);
  const configurations = [
    { name: "two shards (A on 0, B on 1)", key: "two", accounts: [byLabel("A"), byLabel("B")] },
    { name: "one shard  (A and C on 0)", key: "one", accounts: [byLabel("A"), byLabel("C")] },
    { name: "one account alone (A on 0)", key: "alone", accounts: [byLabel("A")] },
  ];

  /** Pushes CALLS calls of PER_CALL events, CONCURRENCY in flight shared evenly by the accounts; answers events/s and workerd's cores busy. */
  async function ingest(configuration, round) {
    const perAccount = CALLS / configuration.accounts.length;
    const workersPerAccount = CONCURRENCY / configuration.accounts.length;
    const targets = [];
    for (const account of configuration.accounts) {
      targets.push(await ingestTarget(account, `ingest-${RUN}-${round}-${configuration.key}-${account.label}`, (perAccount * PER_CALL) / EVENTS_PER_LEAD));
    }
    await idle();
    const ticksBefore = workerdTicks(server.pid);
    const started = performance.now();
    await Promise.all(
      targets.flatMap(({ account, campaign, emails }) =>
        Array.from({ length: workersPerAccount }, async (_, worker) => {
          for (let call = worker; call < perAccount; call += workersPerAccount) {
            const events = Array.from({ length: PER_CALL }, (_, i) => ({
              event_id: `${call}-${i}`,
              type: TYPES[i % TYPES.length],
              lead_email: emails[(call * PER_CALL + i) % emails.length],
              occurred_at: new Date(WINDOW_START + i * 1000).toISOString(),
            }));
            const answer = await api(server, account.api_key, `/api/v1/campaigns/${campaign}/events`, { method: "POST", body: { events } });
            if (answer.accepted !== PER_CALL) throw new Error(`ingestion accepted ${answer.accepted} of ${PER_CALL}: ${JSON.stringify(answer)}`);
          }
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const cores = (workerdTicks(server.pid) - ticksBefore) / TICKS_PER_SECOND / seconds;
    return { events: CALLS * PER_CALL, seconds, rate: (CALLS * PER_CALL) / seconds, cores };
  }

  console.log(
    `\ningestion: ${CALLS} calls of ${PER_CALL} events per configuration, ${CONCURRENCY} calls in flight (shared evenly by its accounts), ${INGEST_ROUNDS} rounds, order rotated each round;` +
      ` each account a fresh campaign with a lead per ${EVENTS_PER_LEAD} events; workerd idle before each:`,
  );
  const totals = new Map(configurations.map((configuration) => [configuration.key, { events: 0, seconds: 0, rates: [] }]));
  for (let round = 0; round < INGEST_ROUNDS; round += 1) {
    const figures = new Map();
    for (let i = 0; i < configurations.length; i += 1) {
      const configuration = configurations[(round + i) % configurations.length];
      const result = await ingest(configuration, round);
      figures.set(configuration.key, result);
      const total = totals.get(configuration.key);
      total.events += result.events;
      total.seconds += result.seconds;
      total.rates.push(result.rate);
    }
    const line = configurations.map((c) => `${c.key} ${Math.round(figures.get(c.key).rate)}/s (workerd ${figures.get(c.key).cores.toFixed(2)} cores)`).join(", ");
    console.log(`  round ${round + 1}: ${line}; two/one x${(figures.get("two").rate / figures.get("one").rate).toFixed(2)}  [${load()}]`);
  }
  const rate = (key) => totals.get(key).events / totals.get(key).seconds;
  console.log("  over all rounds:");
  for (const configuration of configurations) {
    console.log(`    ${configuration.name.padEnd(28)} ${String(Math.round(rate(configuration.key))).padStart(6)} events/s`);
  }
  const ingestRatio = rate("two") / rate("one");
  console.log(`  two shards / one shard: x${ingestRatio.toFixed(2)} (target >= 1.6x: ${ingestRatio >= 1.6 ? "met" : "NOT met"}); two shards / one account alone: x${(rate("two") / rate("alone")).toFixed(2)}`);
} finally {
  await server.stop();
}
await writeFloor();
console.log(`\nafter: ${load()}`);

/**
 * The databases' side alone, with the server stopped: what two SQLite files take from two threads
 * side by side, against two threads on one file (SQLite's one writer) and one thread alone. Each
 * thread inserts batches of PER_CALL events into its account's dataset campaign (the counters'
 * triggers run), each batch one transaction, rolled back so the datasets stay as they are.
 */
async function writeFloor() {
  const BATCHES = 20;
  const byLabel = (label) => accounts.find((account) => account.label === label);
  const setups = [
    { key: "two", name: "two files (A's shard 0, B's shard 1)", accounts: [byLabel("A"), byLabel("B")] },
    { key: "one", name: "one file (A and C on shard 0)", accounts: [byLabel("A"), byLabel("C")] },
    { key: "alone", name: "one thread (A on shard 0)", accounts: [byLabel("A")] },
  ];
  const worker = `
    const { workerData, parentPort } = require("node:worker_threads");
    const { DatabaseSync } = require("node:sqlite");
    const { file, accountId, campaignId, batches, perBatch, tag } = workerData;
    const db = new DatabaseSync(file);
    db.exec("PRAGMA busy_timeout = 60000");
    const records = db.prepare("SELECT id FROM campaign_leads WHERE campaign_id = ? LIMIT 5000").all(campaignId).map((row) => row.id);
    const insert = db.prepare("INSERT INTO events (account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number, created_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?)");
    const types = ${JSON.stringify(TYPES)};
    parentPort.once("message", () => {
      for (let batch = 0; batch < batches; batch += 1) {
        db.exec("BEGIN IMMEDIATE");
        for (let i = 0; i < perBatch; i += 1) {
          insert.run(accountId, campaignId, records[(batch * perBatch + i) % records.length], tag + "-" + batch + "-" + i, types[i % types.length], ${WINDOW_START} + i * 1000, Date.now());
        }
        db.exec("ROLLBACK");
      }
      db.close();
      parentPort.postMessage("done");
    });
    parentPort.postMessage("ready");
  `;
  const run = async (setup, round) => {
    const threads = setup.accounts.map(
      (account) =>
        new Worker(worker, {
          eval: true,
          workerData: { file: account.file, accountId: account.id, campaignId: account.campaign, batches: BATCHES * (2 / setup.accounts.length), perBatch: PER_CALL, tag: `floor-${round}-${setup.key}` },
        }),
    );
    await Promise.all(threads.map((thread) => new Promise((resolve) => thread.once("message", resolve))));
    const started = performance.now();
    await Promise.all(threads.map((thread) => new Promise((resolve, reject) => (thread.once("message", resolve), thread.once("error", reject), thread.postMessage("go")))));
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(threads.map((thread) => thread.terminate()));
    return (2 * BATCHES * PER_CALL) / seconds;
  };
  console.log(`\nfloor, server stopped: ${2 * BATCHES} transactions of ${PER_CALL} event inserts (rolled back) per setup, from node:sqlite threads, 3 rounds:`);
  const rates = new Map(setups.map((setup) => [setup.key, []]));
  for (let round = 0; round < 3; round += 1) {
    for (let i = 0; i < setups.length; i += 1) {
      const setup = setups[(round + i) % setups.length];
      rates.get(setup.key).push(await run(setup, round));
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  for (const setup of setups) console.log(`  ${setup.name.padEnd(38)} ${String(Math.round(median(rates.get(setup.key)))).padStart(7)} events/s (median of 3)`);
  console.log(`  two files / one file: x${(median(rates.get("two")) / median(rates.get("one"))).toFixed(2)}`);
}
