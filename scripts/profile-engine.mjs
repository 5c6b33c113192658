// `npm run profile:engine` (with the mail lab): a CPU profile of the Worker while one campaign sends N
// emails (default 400) from M lab mailboxes (default 1), through the devtools protocol of a dev server
// of its own. Writes .wrangler/profile/engine.cpuprofile (open it in Chrome's DevTools) and prints the
// functions with the most time of their own and in all, as issue 27's hunt for CPU per email needs.
// PROFILE_NATIVE=true samples the workerd processes with Linux perf instead (scripts/lib/native-profile.mjs):
// the share of the runtime, SQLite, TLS, V8's collector and the kernel, which JavaScript's profile does
// not see, and the symbols with the most samples (.wrangler/profile/engine.perf.data).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import WebSocket from "ws";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer, workerdCpuMs } from "./lib/dev-server.mjs";
import { nativeProfile } from "./lib/native-profile.mjs";
import { benchCampaign, labMailboxBody, waitForChecks } from "./lib/bench-mail.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const senders = lab.mailboxes.filter((m) => m.role === "sender");
const EMAILS = Number(process.env.N ?? 400);
const NATIVE = process.env.PROFILE_NATIVE === "true";
const MAILBOXES = Number(process.env.M ?? 1);
const INSPECTOR_PORT = process.env.PROFILE_INSPECTOR_PORT ?? "9333";
const out = join(root, ".wrangler", "profile");

/** The profile's functions by time of their own and by time in all (a function counted once per sample). */
function summary(profile, rows = 25) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (node) => `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.split("/").slice(-2).join("/")}:${node.callFrame.lineNumber}`;
  const own = new Map();
  const all = new Map();
  let total = 0;
  profile.samples.forEach((sample, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const key = name(byId.get(sample));
    own.set(key, (own.get(key) ?? 0) + dt);
    const seen = new Set();
    for (let id = sample; id !== undefined; id = parent.get(id)) {
      const k = name(byId.get(id));
      if (!seen.has(k)) all.set(k, (all.get(k) ?? 0) + dt);
      seen.add(k);
    }
  });
  const table = (times, title) =>
    [title, ...[...times].sort((a, b) => b[1] - a[1]).slice(0, rows).map(([k, t]) => `${(t / 1000).toFixed(0).padStart(7)} ms ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`)].join("\n");
  return `${table(own, "Own time")}\n\n${table(all, "In all")}`;
}

/** The Worker's JavaScript, sampled through the devtools protocol; `stop()` writes the profile and answers its summary. */
async function devtoolsProfile() {
  const [target] = await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json`)).json();
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.once("open", resolve));
  let next = 0;
  const pending = new Map();
  socket.on("message", (data) => {
    const message = JSON.parse(data);
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const send = (method, params = {}) => new Promise((resolve) => {
    next += 1;
    pending.set(next, resolve);
    socket.send(JSON.stringify({ id: next, method, params }));
  });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  return {
    async stop() {
      const { result } = await send("Profiler.stop");
      socket.close();
      writeFileSync(join(out, "engine.cpuprofile"), JSON.stringify(result.profile));
      return `Profile: .wrangler/profile/engine.cpuprofile\n\n${summary(result.profile)}`;
    },
  };
}

const server = await startDevServer({ quiet: true, env: { INSPECTOR_PORT } });
try {
  const account = await provisionBenchAccount(server, "profile");
  const ids = [];
  for (const sender of senders.slice(0, MAILBOXES)) ids.push((await api(server, account.api_key, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, sender.email, sender) })).id);
  await waitForChecks(server, account.api_key, ids);
  const leads = Array.from({ length: EMAILS }, (_, i) => ({ email: `lead${(i % 5) + 1}+p${i}@lab.salvo.test`, first_name: `L${i}` }));
  const campaign = await benchCampaign(server, account.api_key, "profile", ids, leads);

  mkdirSync(out, { recursive: true });
  const profiler = NATIVE ? await nativeProfile(server, join(out, "engine.perf.data")) : await devtoolsProfile();
  const cpuBefore = workerdCpuMs(server.pid);
  const started = performance.now();
  await api(server, account.api_key, `/api/v1/campaigns/${campaign}/status`, { method: "POST", body: { status: "START" } });
  for (;;) {
    const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
    const { n } = db.prepare("SELECT count(*) AS n FROM messages WHERE campaign_id = ? AND status = 'sent'").get(campaign);
    db.close();
    if (n >= EMAILS) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = (workerdCpuMs(server.pid) - cpuBefore) / EMAILS;
  console.log(`${EMAILS} emails from ${MAILBOXES} mailbox(es) in ${seconds.toFixed(1)} s (${(EMAILS / seconds).toFixed(1)}/s), workerd CPU ${cpu.toFixed(2)} ms an email (sampling included)\n`);
  console.log(await profiler.stop());
} finally {
  await server.stop();
}
