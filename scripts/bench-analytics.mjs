// `npm run bench:analytics`: analytics-by-date latency over 10k, 100k and 1M events (one campaign
// each, 50k leads, a 30-day window; bulk-loaded by SQL into the local D1 file, where the triggers of
// migration 0020 keep the counters as they do for every write), the same statements run straight on
// the SQLite file (node:sqlite: the floor, no Worker or HTTP), a few analytics families on the 1M
// campaign, then ingestion throughput through the events endpoint. Datasets persist in
// .wrangler/bench-analytics (delete it to reload).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, datasetAccount, localD1File, measure, ms, mulberry32 } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

// v2: sends carry their mailbox (five of them), so the per-mailbox families have figures to credit.
const stateDir = join(import.meta.dirname, "..", ".wrangler", "bench-analytics-v2");
const MAILBOXES = 5;
const SIZES = [10_000, 100_000, 1_000_000];
const LEADS = 50_000;
const WINDOW = { start_date: "2026-03-01", end_date: "2026-03-30" };
const WINDOW_START = Date.parse("2026-03-01T00:00:00Z");
const WINDOW_MS = 30 * 86_400_000;
const TYPES = ["SENT", "SENT", "SENT", "OPEN", "OPEN", "CLICK", "REPLY", "BOUNCE", "BLOCK", "UNSUBSCRIBE"];

mkdirSync(stateDir, { recursive: true });

/** Loads one campaign per size straight into SQLite (once): far faster than the API, and what the issue asks. */
function loadDatasets(file, accountId) {
  const db = new DatabaseSync(file);
  const now = Date.now();
  db.exec("BEGIN");
  const insertLead = db.prepare("INSERT INTO leads (account_id, email, created_at) VALUES (?, ?, ?)");
  for (let i = 0; i < LEADS; i += 1) insertLead.run(accountId, `lead${i}@bench.example`, now);
  const leadIds = db.prepare("SELECT id FROM leads WHERE account_id = ? ORDER BY id").all(accountId).map((r) => r.id);
  const random = mulberry32(42);
  for (const size of SIZES) {
    const { lastInsertRowid: campaignId } = db
      .prepare("INSERT INTO campaigns (account_id, name, status, created_at, updated_at) VALUES (?, ?, 'ACTIVE', ?, ?)")
      .run(accountId, `bench-${size}`, now, now);
    const insertRecord = db.prepare(
      "INSERT INTO campaign_leads (account_id, campaign_id, lead_id, state, created_at, updated_at) VALUES (?, ?, ?, 'INPROGRESS', ?, ?)",
    );
    const recordIds = leadIds.map((leadId) => Number(insertRecord.run(accountId, campaignId, leadId, now, now).lastInsertRowid));
    const insertEvent = db.prepare(
      "INSERT INTO events (account_id, campaign_id, campaign_lead_id, type, occurred_at, sequence_number, ignored, email_account_id, from_email, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (let i = 0; i < size; i += 1) {
      const type = TYPES[i % TYPES.length];
      insertEvent.run(
        accountId,
        campaignId,
        recordIds[Math.floor(random() * recordIds.length)],
        type,
        WINDOW_START + Math.floor(random() * WINDOW_MS),
        1 + (i % 3),
        type === "REPLY" && i % 7 === 0 ? 1 : 0,
        type === "SENT" ? 1 + (i % MAILBOXES) : null,
        type === "SENT" ? `mailbox${1 + (i % MAILBOXES)}@bench.example` : null,
        now,
      );
    }
    console.log(`loaded campaign ${campaignId}: ${LEADS} leads, ${size} events`);
  }
  db.exec("COMMIT");
  db.exec("ANALYZE");
  db.close();
}

/**
 * analytics-by-date's statements for one campaign and the 30-day window, as src/analytics/store.ts
 * campaignCounts builds them (hour counters, record spans, out-of-office replies, records).
 */
function countStatements(db, campaignId) {
  const start = WINDOW_START;
  const end = WINDOW_START + WINDOW_MS;
  const ids = JSON.stringify([campaignId]);
  const types = JSON.stringify(["SENT", "OPEN", "CLICK", "REPLY", "BOUNCE", "BLOCK", "UNSUBSCRIBE"]);
  const kinds = JSON.stringify(["SENT1", "OPEN", "OPEN_HUMAN", "CLICK", "CLICK_HUMAN"]);
  const bound = (text, ...params) => {
    const statement = db.prepare(text);
    return { all: () => statement.all(...params) };
  };
  return [
    bound(
      `SELECT campaign_id, type, sum(total), sum(human), sum(counted) FROM event_hour_counts
       WHERE campaign_id IN (SELECT value FROM json_each(?)) AND type IN (SELECT value FROM json_each(?)) AND hour >= ? AND hour < ?
       GROUP BY campaign_id, type`,
      ids, types, start, end,
    ),
    bound(
      `SELECT sp.campaign_id, sp.kind, count(*) FROM event_spans sp INDEXED BY event_spans_last_idx
       WHERE sp.campaign_id IN (SELECT value FROM json_each(?)) AND sp.kind IN (SELECT value FROM json_each(?))
         AND sp.last_at >= ? AND sp.first_at < ?
         AND (sp.first_at >= ? OR EXISTS (SELECT 1 FROM event_span_kinds k JOIN events e INDEXED BY events_record_time_idx
           WHERE e.campaign_lead_id = sp.campaign_lead_id AND e.occurred_at >= ? AND e.occurred_at < ?
             AND k.kind = sp.kind AND e.type = k.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)))
       GROUP BY sp.campaign_id, sp.kind`,
      ids, kinds, start, end, start, start, end,
    ),
    bound(
      `SELECT cl.campaign_id, count(*), sum(e.ignored = 0) FROM campaign_leads cl INDEXED BY campaign_leads_campaign_category_idx
       JOIN events e INDEXED BY events_record_time_idx ON e.campaign_lead_id = cl.id
       WHERE cl.campaign_id IN (SELECT value FROM json_each(?)) AND cl.category_id IN (SELECT value FROM json_each('[6]'))
         AND e.occurred_at >= ? AND e.occurred_at < ? AND e.type = 'REPLY' GROUP BY cl.campaign_id`,
      ids, start, end,
    ),
    bound(
      `SELECT campaign_id, sum(state <> 'STOPPED'), sum(state = 'DRAFTED') FROM campaign_leads INDEXED BY campaign_leads_campaign_state_idx
       WHERE campaign_id IN (SELECT value FROM json_each(?)) GROUP BY campaign_id`,
      ids,
    ),
  ];
}

/** Campaign id by dataset size. */
function datasetCampaigns(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  const rows = db.prepare("SELECT id, name FROM campaigns WHERE name LIKE 'bench-%'").all();
  db.close();
  return Object.fromEntries(rows.map((row) => [Number(row.name.slice("bench-".length)), row.id]));
}

let server = await startDevServer({ stateDir, quiet: true });
const account = await datasetAccount(server, "bench-");
if (!account.existing) {
  await server.stop();
  loadDatasets(localD1File(stateDir), account.id);
  server = await startDevServer({ stateDir, quiet: true });
}
const campaigns = datasetCampaigns(localD1File(stateDir));

try {
  const query = new URLSearchParams(WINDOW);
  console.log("\nanalytics-by-date, 30-day window, 30 sequential requests after 3 warm-ups:");
  const results = [];
  for (const size of SIZES) {
    const { p50, p95 } = await measure(() => api(server, account.api_key, `/api/v1/campaigns/${campaigns[size]}/analytics-by-date?${query}`));
    results.push({ size, p50 });
    console.log(`  ${String(size).padStart(9)} events: p50 ${ms(p50)}  p95 ${ms(p95)}`);
  }
  const [small, , large] = results;
  console.log(`  growth 10k -> 1M events (x100): p50 x${(large.p50 / small.p50).toFixed(1)}`);

  console.log("\nfloor: analytics-by-date's statements straight on the SQLite file (node:sqlite), same runs:");
  const floor = new DatabaseSync(localD1File(stateDir), { readOnly: true });
  for (const size of SIZES) {
    const statements = countStatements(floor, campaigns[size]);
    const { p50, p95 } = await measure(async () => statements.forEach((statement) => statement.all()));
    console.log(`  ${String(size).padStart(9)} events: p50 ${ms(p50)}  p95 ${ms(p95)}`);
  }
  floor.close();

  console.log("\nanalytics families on the 1M-event campaign (same window; p50 against analytics-by-date's):");
  const big = campaigns[1_000_000];
  const families = [
    ["top-level-analytics-by-date", `/api/v1/campaigns/${big}/top-level-analytics-by-date?${query}`],
    ["analytics (lifetime)", `/api/v1/campaigns/${big}/analytics?`],
    ["analytics/overall-stats-v2", `/api/v1/analytics/overall-stats-v2?${query}&campaign_ids=${big}`],
    ["analytics/day-wise-overall-stats", `/api/v1/analytics/day-wise-overall-stats?${query}&campaign_ids=${big}`],
    ["sequence-analytics", `/api/v1/campaigns/${big}/sequence-analytics?${query}`],
    ["statistics (first 100 sends)", `/api/v1/campaigns/${big}/statistics?limit=100`],
    ["statistics (opened, first 100)", `/api/v1/campaigns/${big}/statistics?limit=100&email_status=opened`],
    ["leads-statistics (first 100)", `/api/v1/campaigns/${big}/leads-statistics?limit=100`],
    ["mailbox-statistics", `/api/v1/campaigns/${big}/mailbox-statistics?${query}`],
    ["analytics/campaign/overall-stats", `/api/v1/analytics/campaign/overall-stats?${query}&campaign_ids=${big}`],
    ["analytics/lead/overall-stats", `/api/v1/analytics/lead/overall-stats?${query}&campaign_ids=${big}`],
    ["day-wise-overall-stats-by-sent-time", `/api/v1/analytics/day-wise-overall-stats-by-sent-time?${query}&campaign_ids=${big}`],
    ["day-wise-positive-reply-stats-by-sent-time", `/api/v1/analytics/day-wise-positive-reply-stats-by-sent-time?${query}&campaign_ids=${big}`],
    ["mailbox/name-wise-health-metrics", `/api/v1/analytics/mailbox/name-wise-health-metrics?${query}&campaign_ids=${big}`],
    ["mailbox/provider-wise-overall-performance", `/api/v1/analytics/mailbox/provider-wise-overall-performance?${query}&campaign_ids=${big}`],
  ];
  for (const [name, path] of families) {
    const { p50, p95 } = await measure(() => api(server, account.api_key, path), { runs: 10, warmup: 2 });
    console.log(`  ${name.padEnd(44)} p50 ${ms(p50)}  p95 ${ms(p95)}  (x${(p50 / large.p50).toFixed(1)})`);
  }

  // Fresh addresses per run: an earlier run's UNSUBSCRIBE events opted its leads out everywhere.
  const RUN = Date.now().toString(36);
  const campaign = await api(server, account.api_key, "/api/v1/campaigns/create", { method: "POST", body: { name: "ingest" } });
  const emails = Array.from({ length: 2000 }, (_, i) => `ingest${i}-${RUN}@bench.example`);
  for (let i = 0; i < emails.length; i += 400) {
    await api(server, account.api_key, `/api/v1/campaigns/${campaign.id}/leads`, {
      method: "POST",
      body: { lead_list: emails.slice(i, i + 400).map((email) => ({ email })) },
    });
  }
  const CALLS = 20;
  const PER_CALL = 1000;
  const started = performance.now();
  for (let call = 0; call < CALLS; call += 1) {
    const events = Array.from({ length: PER_CALL }, (_, i) => ({
      event_id: `c${call}-${i}`,
      type: TYPES[i % TYPES.length],
      lead_email: emails[(call * PER_CALL + i) % emails.length],
      occurred_at: new Date(WINDOW_START + i * 1000).toISOString(),
    }));
    await api(server, account.api_key, `/api/v1/campaigns/${campaign.id}/events`, { method: "POST", body: { events } });
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`\ningestion: ${CALLS * PER_CALL} events in ${CALLS} calls of ${PER_CALL}: ${Math.round((CALLS * PER_CALL) / seconds)} events/s`);
} finally {
  await server.stop();
}
