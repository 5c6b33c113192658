// `npm run bench:move`: how long moving an account between shards pauses its writes. One account on
// shard 0 owns a campaign of BENCH_MOVE_EVENTS events (default 200,000: bench:analytics' dataset, SQL
// bulk-loaded into shard 0's file, with its 50,000 leads and records) on a throwaway `npm run dev`;
// `npm run move`'s route moves it to shard 1 while a poller reads where the move stands every 100 ms.
// It prints each phase's length (copying and verifying are the pause: the account's writes answer
// 503 then), the rows a second, and checks the account's analytics read the same before and after.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, datasetAccount, localD1File } from "./lib/bench-tools.mjs";
import { datasetCampaigns, loadEventDatasets, WINDOW } from "./lib/analytics-dataset.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const EVENTS = Number(process.env.BENCH_MOVE_EVENTS ?? 200_000);
const stateDir = mkdtempSync(join(tmpdir(), "salvo-bench-move-"));
const server = await startDevServer({ stateDir, quiet: true });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  const account = await datasetAccount(server, "move-", { shard: 0 });
  loadEventDatasets(localD1File(stateDir), account.id, { sizes: [EVENTS], prefix: "move-" });
  const campaign = datasetCampaigns(localD1File(stateDir), { prefix: "move-", accountId: account.id })[EVENTS];
  const analytics = () => api(server, account.api_key, `/api/v1/campaigns/${campaign}/analytics-by-date?start_date=${WINDOW.start_date}&end_date=${WINDOW.end_date}`);
  const before = JSON.stringify(await analytics());

  const url = new URL(`/admin/v1/accounts/${account.id}/move`, server.url);
  const headers = { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" };
  const phases = new Map();
  let last = null;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const response = await fetch(url, { headers });
      if (response.ok) {
        const { state } = await response.json();
        if (!phases.has(state)) phases.set(state, performance.now());
        last = state;
      }
      await sleep(100);
    }
  })();
  const started = performance.now();
  let body;
  do {
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ shard: 1 }) });
    body = await response.json();
    if (!response.ok) throw new Error(`move: ${response.status} ${JSON.stringify(body)}`);
  } while (body.state !== "done" && body.state !== "failed");
  const ended = performance.now();
  polling = false;
  await poller;
  if (body.state !== "done") throw new Error(`the move was undone: ${body.error}`);

  const at = (state) => phases.get(state) ?? null;
  const span = (from, to) => ((at(to) ?? ended) - (from === "start" ? started : (at(from) ?? started))) / 1000;
  const pause = span("start", "deleting");
  console.log(`moved account ${account.id}: ${EVENTS.toLocaleString()} events, ${body.copied_rows.toLocaleString()} rows copied, ${body.deleted_rows.toLocaleString()} deleted`);
  console.log(`  copying   ${span("start", "verifying").toFixed(1)} s (${Math.round(body.copied_rows / span("start", "verifying")).toLocaleString()} rows/s)`);
  console.log(`  verifying ${span("verifying", "switching").toFixed(1)} s`);
  console.log(`  switching ${span("switching", "deleting").toFixed(1)} s`);
  console.log(`  deleting  ${span("deleting", "done").toFixed(1)} s (writes already on shard 1)`);
  console.log(`  writes paused ${pause.toFixed(1)} s; whole move ${((ended - started) / 1000).toFixed(1)} s; last state seen by the poller: ${last}`);
  const after = JSON.stringify(await analytics());
  console.log(`  analytics-by-date after the move ${after === before ? "equal" : "DIFFERENT"} to before`);
  if (after !== before) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
