// `npm run bench:move`: how long moving an account between shards pauses its writes. One account on
// shard 0 owns a campaign of BENCH_MOVE_EVENTS events (default 200,000: bench:analytics' dataset, SQL
// bulk-loaded into shard 0's file, with its 50,000 leads and records) on a throwaway `npm run dev`;
// `npm run move`'s route moves it to shard 1. It prints the pause (from the start to the directory's
// switch: the copy and the check, while the account's writes answer 503), the rows a second, the
// deletion after, and checks the account's analytics read the same before and after.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, datasetAccount, localD1File } from "./lib/bench-tools.mjs";
import { datasetCampaigns, loadEventDatasets, WINDOW } from "./lib/analytics-dataset.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const EVENTS = Number(process.env.BENCH_MOVE_EVENTS ?? 200_000);
const stateDir = mkdtempSync(join(tmpdir(), "salvo-bench-move-"));
const server = await startDevServer({ stateDir, quiet: true });

try {
  const account = await datasetAccount(server, "move-", { shard: 0 });
  loadEventDatasets(localD1File(stateDir), account.id, { sizes: [EVENTS], prefix: "move-" });
  const campaign = datasetCampaigns(localD1File(stateDir), { prefix: "move-", accountId: account.id })[EVENTS];
  const analytics = () => api(server, account.api_key, `/api/v1/campaigns/${campaign}/analytics-by-date?start_date=${WINDOW.start_date}&end_date=${WINDOW.end_date}`);
  const before = JSON.stringify(await analytics());

  const url = new URL(`/admin/v1/accounts/${account.id}/move`, server.url);
  const headers = { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" };
  const started = performance.now();
  let body;
  do {
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ shard: 1 }) });
    body = await response.json();
    if (!response.ok) throw new Error(`move: ${response.status} ${JSON.stringify(body)}`);
  } while (body.state !== "done" && body.state !== "failed");
  const seconds = (performance.now() - started) / 1000;
  if (body.state !== "done") throw new Error(`the move was undone: ${body.error}`);
  const pause = (Date.parse(body.switched_at) - Date.parse(body.started_at)) / 1000;
  const deleting = (Date.parse(body.finished_at) - Date.parse(body.switched_at)) / 1000;
  console.log(`moved account ${account.id}: ${EVENTS.toLocaleString()} events, ${body.copied_rows.toLocaleString()} rows copied and checked, ${body.deleted_rows.toLocaleString()} deleted`);
  console.log(`  writes paused ${pause.toFixed(1)} s (copy and check: ${Math.round(body.copied_rows / pause).toLocaleString()} rows/s)`);
  console.log(`  old rows deleted in ${deleting.toFixed(1)} s after the switch (writes already on shard 1); whole move ${seconds.toFixed(1)} s`);
  const after = JSON.stringify(await analytics());
  console.log(`  analytics-by-date after the move ${after === before ? "equal" : "DIFFERENT"} to before`);
  if (after !== before) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
