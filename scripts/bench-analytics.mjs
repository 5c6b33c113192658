// `npm run bench:analytics`: analytics-by-date latency over 10k, 100k and 1M events (one campaign
// each, 50k leads, a 30-day window; bulk-loaded by SQL into the local D1 file, where the triggers of
// migration 0020 keep the counters as they do for every write), the same statements run straight on
// the SQLite file (node:sqlite: the floor, no Worker or HTTP), a few analytics families on the 1M
// campaign, then ingestion throughput through the events endpoint. Datasets persist in
// .wrangler/bench-analytics (delete it to reload).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, datasetAccount, localD1File, measure, ms } from "./lib/bench-tools.mjs";
import { countStatements, datasetCampaigns, loadEventDatasets, TYPES, WINDOW, WINDOW_START } from "./lib/analytics-dataset.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

// v2: sends carry their mailbox (five of them), so the per-mailbox families have figures to credit.
// v3: every event has an event_id (scripts/lib/analytics-dataset.mjs says why).
const stateDir = join(import.meta.dirname, "..", ".wrangler", "bench-analytics-v3");
const SIZES = [10_000, 100_000, 1_000_000];

mkdirSync(stateDir, { recursive: true });

let server = await startDevServer({ stateDir, quiet: true });
const account = await datasetAccount(server, "bench-");
if (!account.existing) {
  await server.stop();
  loadEventDatasets(localD1File(stateDir), account.id, { sizes: SIZES });
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
