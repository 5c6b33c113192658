import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { DatabaseSync } from "node:sqlite";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";
import { campaignWithStep, labMailboxBody, waitForChecks, withoutGap } from "./lib/bench-mail.mjs";
const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const senders = lab.mailboxes.filter((m) => m.role === "sender");
const N = Number(process.env.N ?? 300), M = Number(process.env.M ?? 1);
const server = await startDevServer({ quiet: true, env: { INSPECTOR_PORT: "9333" } });
try {
  const account = await provisionBenchAccount(server, "prof");
  const ids = [];
  for (const s of senders.slice(0, M)) ids.push((await api(server, account.api_key, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, s.email, s) })).id);
  await waitForChecks(server, account.api_key, ids);
  const cid = await campaignWithStep(server, account.api_key, "prof");
  const leads = Array.from({ length: N }, (_, i) => ({ email: `lead${(i % 5) + 1}+p${i}@lab.salvo.test`, first_name: `L${i}` }));
  await api(server, account.api_key, `/api/v1/campaigns/${cid}/leads`, { method: "POST", body: { lead_list: leads } });
  await api(server, account.api_key, `/api/v1/campaigns/${cid}/email-accounts`, { method: "POST", body: { email_account_ids: ids } });
  withoutGap(server, [cid]);
  const targets = await (await fetch("http://127.0.0.1:9333/json")).json();
  console.log(targets.map((t) => t.title + " " + t.webSocketDebuggerUrl).join("\n"));
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((r) => ws.once("open", r));
  let id = 0; const pending = new Map();
  ws.on("message", (d) => { const m = JSON.parse(d); if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); } });
  const send = (method, params = {}) => new Promise((r) => { id += 1; pending.set(id, r); ws.send(JSON.stringify({ id, method, params })); });
  await send("Profiler.enable"); await send("Profiler.setSamplingInterval", { interval: 200 }); await send("Profiler.start");
  const t0 = performance.now();
  await api(server, account.api_key, `/api/v1/campaigns/${cid}/status`, { method: "POST", body: { status: "START" } });
  for (;;) {
    const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
    const { n } = db.prepare("SELECT count(*) AS n FROM messages WHERE campaign_id = ? AND status = 'sent'").get(cid); db.close();
    if (n >= N) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const secs = (performance.now() - t0) / 1000;
  const { result } = await send("Profiler.stop");
  writeFileSync("/tmp/prof/engine.cpuprofile", JSON.stringify(result.profile));
  console.log(`${N} in ${secs.toFixed(1)} s = ${(N / secs).toFixed(1)}/s`);
  ws.close();
} finally { await server.stop(); }
