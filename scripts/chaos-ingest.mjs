// `npm run chaos:ingest`: kills the dev server (SIGKILL, the whole process group) while many
// ingestion and lead-upload calls are in flight, restarts it on the same state, fires the minute
// cron as if it ran later, and prints how many stored events lack a webhook delivery and how many
// deliveries are stuck. Both must be 0: events and their deliveries commit together, and the cron
// re-enqueues whatever a dead process never handed to the queue.
import { DatabaseSync } from "node:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";
import { startReceiver } from "./lib/webhook-receiver.mjs";

const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 3);
const CALLS_IN_FLIGHT = 130;
const EVENTS_PER_CALL = 20;
const LEADS = 2000;
const SETTLE_TIMEOUT_MS = 120_000;
const OVERDUE_MS = 10 * 60_000;

const stateDir = mkdtempSync(join(tmpdir(), "salvo-chaos-"));
let received = 0;
const receiver = await startReceiver({ secret: null, onDelivery: () => (received += 1) });

function query(sql) {
  const db = new DatabaseSync(localD1File(stateDir), { readOnly: true });
  try {
    return db.prepare(sql).get();
  } finally {
    db.close();
  }
}

/** Events of the chaos campaign with no delivery: every event kind here is subscribed. */
function eventsWithoutDelivery(campaignId) {
  return query(`
    SELECT count(*) AS n FROM events e WHERE e.campaign_id = ${campaignId} AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d WHERE d.campaign_id = e.campaign_id
        AND d.payload ->> '$.sl_email_lead_map_id' = e.campaign_lead_id
        AND d.payload ->> '$.event_timestamp' = strftime('%Y-%m-%dT%H:%M:%fZ', e.occurred_at / 1000.0, 'unixepoch'))`).n;
}

function pendingDeliveries(campaignId) {
  return query(`SELECT count(*) AS n FROM webhook_deliveries WHERE campaign_id = ${campaignId} AND status = 'pending'`).n;
}

let server = await startDevServer({ stateDir, quiet: true });
let occurred = Date.parse("2026-01-01T00:00:00Z");
try {
  const account = await provisionBenchAccount(server, "chaos");
  const key = account.api_key;
  const campaign = await api(server, key, "/api/v1/campaigns/create", { method: "POST", body: { name: "chaos" } });
  const emails = Array.from({ length: LEADS }, (_, i) => `chaos${i}@chaos.example`);
  for (let i = 0; i < LEADS; i += 400) {
    await api(server, key, `/api/v1/campaigns/${campaign.id}/leads`, {
      method: "POST",
      body: { lead_list: emails.slice(i, i + 400).map((email) => ({ email })) },
    });
  }
  await api(server, key, `/api/v1/campaigns/${campaign.id}/webhooks`, {
    method: "POST",
    body: { name: "chaos", webhook_url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ["EMAIL_OPEN", "EMAIL_LINK_CLICK"] },
  });

  let calls = 0;
  let failed = 0;
  for (let round = 1; round <= ROUNDS; round += 1) {
    const inFlight = Array.from({ length: CALLS_IN_FLIGHT }, (_, c) => {
      calls += 1;
      const path =
        c % 5 === 4
          ? `/api/v1/campaigns/${campaign.id}/leads`
          : `/api/v1/campaigns/${campaign.id}/events`;
      const body =
        c % 5 === 4
          ? { lead_list: Array.from({ length: 50 }, (_, i) => ({ email: `late${round}-${c}-${i}@chaos.example` })) }
          : {
              events: Array.from({ length: EVENTS_PER_CALL }, (_, i) => ({
                event_id: `r${round}-c${c}-e${i}`,
                type: i % 2 ? "OPEN" : "CLICK",
                lead_email: emails[(c * EVENTS_PER_CALL + i) % LEADS],
                occurred_at: new Date((occurred += 1)).toISOString(),
              })),
            };
      return api(server, key, path, { method: "POST", body }).catch(() => (failed += 1));
    });
    // Let some calls commit and leave others mid-way, then pull the plug.
    await new Promise((resolve) => setTimeout(resolve, 400 + Math.random() * 800));
    await server.kill();
    await Promise.allSettled(inFlight);
    server = await startDevServer({ stateDir, quiet: true });
    console.log(`round ${round}: killed with calls in flight; ${failed} of ${calls} calls so far got no answer`);
  }

  // The cron, as if it fired later (miniflare's trigger takes a scheduled time; wrangler's
  // /__scheduled does not): every delivery the dead processes never enqueued is overdue.
  const later = Date.now() + OVERDUE_MS;
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (pendingDeliveries(campaign.id) > 0 && Date.now() < deadline) {
    await fetch(`${server.url}/cdn-cgi/mf/scheduled?cron=*+*+*+*+*&time=${later}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const events = query(`SELECT count(*) AS n FROM events WHERE campaign_id = ${campaign.id}`).n;
  const deliveries = query(`SELECT count(*) AS n FROM webhook_deliveries WHERE campaign_id = ${campaign.id}`).n;
  const orphans = eventsWithoutDelivery(campaign.id);
  const stuck = pendingDeliveries(campaign.id);
  console.log(`${events} events stored, ${deliveries} deliveries, ${received} arrivals at the receiver`);
  console.log(`events without a delivery: ${orphans}`);
  console.log(`stuck deliveries: ${stuck}`);
  process.exitCode = orphans === 0 && stuck === 0 ? 0 : 1;
} finally {
  receiver.close();
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
