// `npm run bench:deliverability`: recording placement results for a large test (25 providers x
// 50 senders = 1250 results), provider-report latency, and the cron's time to start 200 due tests.
import { api, measure, ms, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const server = await startDevServer({ quiet: true });
try {
  const account = await provisionBenchAccount(server, "deliverability");
  const key = account.api_key;
  const campaign = await api(server, key, "/api/v1/campaigns/create", { method: "POST", body: { name: "placement bench" } });
  const regions = await api(server, key, "/api/v1/spam-test/seed/providers");
  const providers = regions.flatMap((r) => r.groups.flatMap((g) => g.providers.map((p) => p.provider_id)));
  const senders = Array.from({ length: 50 }, (_, i) => `sender${i}@bench.example`);
  const base = { test_name: "bench", spam_filters: true, campaign_id: campaign.id, sequence_mapping_id: "1", provider_ids: providers, sender_accounts: senders };
  const test = await api(server, key, "/api/v1/spam-test/manual", { method: "POST", body: base });

  const folders = ["inbox", "tab", "spam", "not_received"];
  const results = providers.flatMap((provider_id, p) =>
    senders.map((sender_email, s) => ({ provider_id, sender_email, folder: folders[(p + s) % folders.length] })),
  );
  const started = performance.now();
  for (let i = 0; i < results.length; i += 1000) {
    await api(server, key, `/api/v1/spam-test/${test.id}/results`, { method: "POST", body: { results: results.slice(i, i + 1000) } });
  }
  console.log(`recorded ${results.length} results (${providers.length} providers x ${senders.length} senders) in ${ms(performance.now() - started)}`);

  const report = await measure(() => api(server, key, "/api/v1/smart-delivery/provider-report", { method: "POST", body: { spam_test_id: test.id } }));
  console.log(`provider report over ${results.length} results: p50 ${ms(report.p50)}  p95 ${ms(report.p95)}`);

  const TESTS = 200;
  const start = new Date(Date.now() - 30_000).toISOString();
  const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
  for (let i = 0; i < TESTS; i += 1) {
    await api(server, key, "/api/v1/spam-test/schedule", {
      method: "POST",
      body: { ...base, test_name: `scheduled ${i}`, provider_ids: providers.slice(0, 5), sender_accounts: senders.slice(0, 2), schedule_start_time: start, test_end_date: end, scheduler_cron_value: "* * * * *" },
    });
  }
  // Every test's first slot is the next minute boundary at the latest.
  await new Promise((resolve) => setTimeout(resolve, 61_000 - (Date.now() % 60_000)));
  const cronStarted = performance.now();
  const fired = await fetch(`${server.url}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
  const cronMs = performance.now() - cronStarted;
  const listed = await api(server, key, "/api/v1/spam-test/report?testType=automated", { method: "POST", body: { limit: 100 } });
  const runs = await api(server, key, `/api/v1/spam-test/report/${listed.data[0].id}/schedule-history`);
  console.log(`cron firing that started ${TESTS} due tests (5 providers x 2 senders each): ${ms(cronMs)} (HTTP ${fired.status}; newest test now has ${runs.data.length} run)`);
} finally {
  await server.stop();
}
