// `npm run bench:webhooks`: 10k events ingested into a campaign with one webhook pointing at a
// local receiver; prints deliveries per second from the first ingestion to the last arrival, and
// the p50/p95 delay from each event's ingestion request to its arrival; then single events one at
// a time (the latency a user sees when nothing is queued). Every signature is checked.
import { api, percentile, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";
import { startReceiver } from "./lib/webhook-receiver.mjs";

const EVENTS = 10_000;
const SINGLES = 20;
const PER_CALL = 1000;
const TIMEOUT_MS = 300_000;

let secret = "";
const arrivals = new Map();
let badSignatures = 0;
const receiver = await startReceiver({
  secret: () => secret,
  onDelivery: ({ payload, verified }) => {
    if (!verified) badSignatures += 1;
    arrivals.set(payload.sl_email_lead_map_id, performance.now());
  },
});
const server = await startDevServer({ quiet: process.env.BENCH_VERBOSE !== "1" });
try {
  const account = await provisionBenchAccount(server, "webhooks");
  const key = account.api_key;
  const campaign = await api(server, key, "/api/v1/campaigns/create", { method: "POST", body: { name: "webhook bench" } });
  const emails = Array.from({ length: EVENTS + SINGLES }, (_, i) => `hook${i}@bench.example`);
  for (let i = 0; i < emails.length; i += 400) {
    await api(server, key, `/api/v1/campaigns/${campaign.id}/leads`, {
      method: "POST",
      body: { lead_list: emails.slice(i, i + 400).map((email) => ({ email })) },
    });
  }
  const hook = await api(server, key, `/api/v1/campaigns/${campaign.id}/webhooks`, {
    method: "POST",
    body: { name: "bench", webhook_url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ["EMAIL_OPEN"] },
  });
  secret = hook.secret;

  const ingestedAt = new Map();
  const started = performance.now();
  for (let i = 0; i < EVENTS; i += PER_CALL) {
    const callStarted = performance.now();
    const events = emails.slice(i, i + PER_CALL).map((email) => ({
      type: "OPEN",
      lead_email: email,
      occurred_at: new Date().toISOString(),
    }));
    await api(server, key, `/api/v1/campaigns/${campaign.id}/events`, { method: "POST", body: { events } });
    ingestedAt.set(i, callStarted);
  }
  const ingested = performance.now();
  const records = await api(server, key, `/api/v1/campaigns/${campaign.id}/leads?limit=1`);
  const firstRecord = records.data[0].campaign_lead_map_id;

  while (arrivals.size < EVENTS && performance.now() - started < TIMEOUT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const last = Math.max(...arrivals.values());
  const delays = [...arrivals.entries()]
    .map(([recordId, at]) => at - ingestedAt.get(Math.floor((recordId - firstRecord) / PER_CALL) * PER_CALL))
    .sort((a, b) => a - b);
  console.log(`${EVENTS} events ingested in ${((ingested - started) / 1000).toFixed(1)} s (${EVENTS / PER_CALL} calls of ${PER_CALL})`);
  console.log(`${arrivals.size} of ${EVENTS} deliveries arrived, ${badSignatures} with a bad signature`);
  console.log(`throughput: ${(arrivals.size / ((last - started) / 1000)).toFixed(0)} deliveries/s (first ingestion to last arrival)`);
  console.log(`burst delay from ingestion to arrival: p50 ${(percentile(delays, 50) / 1000).toFixed(2)} s  p95 ${(percentile(delays, 95) / 1000).toFixed(2)} s`);

  const single = [];
  for (let i = EVENTS; i < EVENTS + SINGLES; i += 1) {
    const recordId = firstRecord + i;
    const sentAt = performance.now();
    const events = [{ type: "OPEN", lead_email: emails[i], occurred_at: new Date().toISOString() }];
    await api(server, key, `/api/v1/campaigns/${campaign.id}/events`, { method: "POST", body: { events } });
    while (!arrivals.has(recordId) && performance.now() - sentAt < 30_000) await new Promise((resolve) => setTimeout(resolve, 5));
    single.push((arrivals.get(recordId) ?? Infinity) - sentAt);
  }
  single.sort((a, b) => a - b);
  console.log(`single event, ingestion to arrival: p50 ${(percentile(single, 50) / 1000).toFixed(2)} s  p95 ${(percentile(single, 95) / 1000).toFixed(2)} s (${SINGLES} events, one at a time)`);
} finally {
  receiver.close();
  await server.stop();
}
