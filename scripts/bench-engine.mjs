// `npm run bench:engine` (inside scripts/with-mail-lab.mjs, which starts the lab and makes workerd trust
// its CA). Three figures of the sending engine (issue 13, item 8), against a throwaway `npm run dev`:
//  1. Throughput: 10 lab mailboxes, one campaign, 1,000 leads (lead1..5+N@ addresses), started by the
//     API; emails per second from START until every message is sent, and the workerd process's CPU
//     time per email (utime + stime from /proc, so it includes the runtime, TLS and D1 for each send).
//     In the same run, what a user could run instead on the same lab port (scripts/lib/bench-smtp-peers.mjs),
//     each sending the engine's own message as it reached the lab: nodemailer's pooled transport (the
//     peer: the engine's target is >= 90% of it), and a bare client's floors, a session per email and one
//     reused session per mailbox; then one mailbox alone, the engine against the bare reused session on
//     one connection (target >= 80%; the loopback's round trip is a few hundredths of a millisecond).
//     Then all of it again to the lab's sink domain, which Postfix takes the same way and discards
//     instead of delivering into Maildirs (on a small machine that delivery takes the cores the
//     clients run on, more of them the faster a client goes). To the sink the engine
//     and the peer then run in SINK_ROUNDS interleaved pairs (engine, peer, engine, peer, ...): each
//     pair's ratio is printed and the target is read on the median (single runs of either scatter by
//     tens of percent here). The same pairs then run again with Postfix's inflow flow control off
//     (in_flow_delay, which pauses a bursty client's new messages for up to a second). With it off, the same
//     1,000 emails also go from 20 mailboxes (a second account of the same 10 logins), against the 10's rate. After part 3, one mailbox to the sink with the server 2 and 10 ms away (a
//     relay in between, BENCH_ENGINE_RTT_MS; empty skips it), against the same bare clients and
//     nodemailer's pool through the same relay, and a bare session pipelined as the engine's is.
//  2. One scheduler pass over 10k, 100k and 1M enrolled records (scripts/lib/bench-scheduler.mjs; records bulk-loaded by SQL): the
//     operator route runs a pass that sends at most one email; its own timings split finding work and
//     claiming from sending. Each probe uses a fresh mailbox, so no gap holds it back.
//     Then the same with the same 10 lab mailboxes connected through OAuth (the lab's Microsoft-style
//     provider: SMTP AUTH XOAUTH2 over STARTTLS on the same port, 60-second tokens refreshed by each
//     mailbox's agent), in runs of 500 interleaved with password runs (P O O P P O O P): the OAuth
//     rate as a share of the password rate (issue 24: >= 95%).
//  3. Tracking endpoints against /health in the same run: the open pixel and the click redirect of a
//     real email of part 1, read from a lead's Maildir. Requests per second (autocannon; each route
//     warmed up, then five rounds in rotated order), then workerd's CPU per hit, its recording by the
//     queue's consumer included (eight rounds); each target read on the median of the rounds' ratios
//     to the /health run of the same round. BENCH_ENGINE_SKIP_SCHEDULER=true stops after this part.
// Part 2 runs each size twice: a campaign as before (no lead zones), and one sending in each lead's
// zone (CONTRACT 23.2: leads spread over 12 zones and some without one, due times stored inside
// each lead's window as the engine stores them, 09:00-17:00 every day). BENCH_ENGINE_ONLY_SCHEDULER=true
// runs part 2 alone; BENCH_ENGINE_SIZES=1000000 (comma-separated) picks the sizes; a code base
// without lead zones (BENCH_ENGINE_LEAD_ZONES=false) runs only the first campaign of each size.
// A third campaign per size has ESP matching on (CONTRACT 23.3: `enable_ai_esp_matching`, leads'
// providers spread over google, microsoft, other and unknown, the probe mailboxes on google), so a
// pass claims through the per-provider ranges of `campaign_leads_esp_due_idx`.
// BENCH_ENGINE_VARIANTS=plain,zones,esp (comma-separated) picks the campaigns.
import autocannon from "autocannon";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, fixedLoad, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer, workerdCpuMs } from "./lib/dev-server.mjs";
import { benchCampaign, labMailboxBody, waitForChecks } from "./lib/bench-mail.mjs";
import { labTokens } from "./lib/lab-oauth-client.mjs";
import { defaultDirs, findKeys, labTokenValues } from "./check-no-keys.mjs";
import { bareReusedPipelined, bareReusedSession, bareSessionPerEmail, nodemailerPooled } from "./lib/bench-smtp-peers.mjs";
import { latencyProxy } from "./lib/latency-proxy.mjs";
import { loadRecords, prepareSchedulerDatasets, schedulerPasses } from "./lib/bench-scheduler.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const LEADS = 1_000;
/** Emails of the one-mailbox comparison. */
const ONE_MAILBOX_LEADS = 300;
/** Round trips (ms) at which one mailbox runs again with the server that far away; empty: not run. */
const DISTANCES = (process.env.BENCH_ENGINE_RTT_MS ?? "2,10").split(",").filter((rtt) => rtt.trim() !== "").map(Number);
/** Emails of each password and OAuth run in the paired comparison (issue 24). */
const PAIR_LEADS = 500;
/**
 * Engine-and-peer pairs to the sink; the target is read on their median ratio. Five, since the peer's
 * own rate scatters (356-665/s in consecutive runs on one machine): three pairs' median is one pair's luck.
 */
const SINK_ROUNDS = Number(process.env.BENCH_ENGINE_SINK_ROUNDS ?? 5);
const senders = lab.mailboxes.filter((m) => m.role === "sender");

/** The middle value (the upper of the two middle ones for an even count). */
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/**
 * The campaigns' sent and otherwise finished messages, read straight from shard 0's file. The file is
 * found and opened once, before the run starts: finding it opens every D1 file, and doing that at each
 * poll took 15-20% of a core from the engine it measured (the peer runs with no such poll).
 */
function sentCounter(server, campaignIds) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  const count = db.prepare(`SELECT count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status NOT IN ('sent', 'sending')) AS other
    FROM messages WHERE campaign_id IN (SELECT value FROM json_each(?))`);
  const read = () => count.get(JSON.stringify(campaignIds));
  return {
    /** Polls until `total` messages are finished (15 minutes after `started` at most), then closes the file; answers the counts. */
    async until(total, started) {
      let counts = { sent: 0, other: 0 };
      try {
        while (counts.sent + counts.other < total) {
          if (performance.now() - started > 15 * 60_000) throw new Error(`only ${counts.sent + counts.other} of ${total} finished after 15 minutes`);
          // Often enough that the wait adds little to a run of two or three seconds.
          await new Promise((resolve) => setTimeout(resolve, 20));
          counts = read();
        }
      } finally {
        db.close();
      }
      return counts;
    },
  };
}

/** The 10 senders with their passwords (`count` of them). */
async function passwordMailboxes(server, apiKey, count = 10) {
  const ids = [];
  for (const sender of senders.slice(0, count)) ids.push((await api(server, apiKey, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, sender.email, sender) })).id);
  return ids;
}

/** The same 10 senders connected through the lab's Microsoft-style provider (a consent each, then save-oauth). */
async function oauthMailboxes(server, apiKey) {
  const ids = [];
  for (const sender of senders.slice(0, 10)) {
    const tokens = await labTokens(lab, "microsoft", sender.email);
    const token = { access_token: tokens.access_token, refresh_token: tokens.refresh_token, expiry_date: Date.now() + tokens.expires_in * 1000, scope: tokens.scope, token_type: "Bearer" };
    const saved = await api(server, apiKey, "/api/v1/email-accounts/save-oauth", {
      method: "POST",
      body: { from_name: "Bench", from_email: sender.email, username: sender.email, type: "OUTLOOK", token, max_email_per_day: 10_000, time_to_wait_in_mins: 0 },
    });
    ids.push(saved.id);
  }
  return ids;
}

/**
 * One campaign's send of `count` leads; `mailboxes` makes the account's mailboxes, or names ones it
 * already has; `domain`: the leads' domain (the lab's Maildirs, or its sink).
 */
async function throughput(server, account, { mailboxes = passwordMailboxes, label = "password", count = LEADS, tag = label[0], domain = DOMAIN } = {}) {
  const apiKey = account.api_key;
  const ids = Array.isArray(mailboxes) ? mailboxes : await mailboxes(server, apiKey);
  await waitForChecks(server, apiKey, ids);
  const leads = Array.from({ length: count }, (_, i) => ({ email: `lead${(i % 5) + 1}+${tag}${i}@${domain}`, first_name: `L${i}` }));
  const campaignId = await benchCampaign(server, apiKey, `bench-throughput-${label}`, ids, leads);

  await labDrained();
  const counter = sentCounter(server, [campaignId]);
  const cpuBefore = workerdCpuMs(server.pid);
  const started = performance.now();
  await api(server, apiKey, `/api/v1/campaigns/${campaignId}/status`, { method: "POST", body: { status: "START" } });
  const counts = await counter.until(count, started);
  const seconds = (performance.now() - started) / 1000;
  const cpu = (workerdCpuMs(server.pid) - cpuBefore) / 1000;
  console.log(`\n1. ${count} leads${domain === DOMAIN ? "" : ` at ${domain}`}, ${ids.length} ${label} mailbox(es), no gap: ${counts.sent} sent (${counts.other} not) in ${seconds.toFixed(1)} s`);
  console.log(`   ${(counts.sent / seconds).toFixed(1)} emails/s into the lab; workerd CPU ${((cpu * 1000) / counts.sent).toFixed(2)} ms per email (${cpu.toFixed(1)} s in all)`);
  return { campaignId, ids, rate: counts.sent / seconds };
}

/** What the peer and the floors send from (the 10 lab senders) and to (the five lab leads at `domain`). */
function peerClients(domain) {
  return { recipients: [1, 2, 3, 4, 5].map((n) => `lead${n}@${domain}`), ten: senders.slice(0, 10) };
}

/**
 * The peer and the floors on the same lab port, each sending the engine's own message (`raw`: same
 * bytes to the server), and their ratios to the engine's rates; `engine` and `oneMailbox` are the
 * engine's rates to `domain`; `peer` and `ratio`, when given, the peer's rate and the engine's ratio
 * to it from interleaved pairs (`sinkPairs`), which the peer's own run then does not repeat. Each
 * kind runs once untimed first, so Postfix has the processes for its connections (the peer opens 5
 * per mailbox) before it is timed, as it had for the engine's.
 */
async function sideBySide({ engine, peer, ratio, oneMailbox, domain, raw }) {
  const { recipients, ten } = peerClients(domain);
  const peers = [
    ["nodemailer pooled (peer)", nodemailerPooled],
    ["bare, session per email", bareSessionPerEmail],
    ["bare, reused sessions", bareReusedSession],
  ];
  console.log(`\n   Side by side on the same lab port, ${LEADS} emails over 10 mailboxes to ${domain}, each the engine's message (${raw.length} bytes):`);
  const rates = [["Salvo's engine", engine]];
  for (const [name, run] of peers) {
    if (peer !== undefined && run === nodemailerPooled) {
      rates.push([`${name}, median`, peer]);
      continue;
    }
    await run(lab, ten, 100, recipients, raw);
    await labDrained();
    rates.push([name, await run(lab, ten, LEADS, recipients, raw)]);
  }
  for (const [name, rate] of rates) {
    console.log(`   ${name.padEnd(26)} ${rate.toFixed(1).padStart(7)} emails/s   ${((engine / rate) * 100).toFixed(1).padStart(6)}% of it by the engine`);
  }
  const headline = ratio === undefined ? `${((engine / rates[1][1]) * 100).toFixed(1)}%` : `${(ratio * 100).toFixed(1)}% (median of ${SINK_ROUNDS} pairs; the table shows median rates)`;
  console.log(`   engine / peer: ${headline} (target >= 90%)`);
  await labDrained();
  const bareOne = await bareReusedSession(lab, ten.slice(0, 1), ONE_MAILBOX_LEADS, recipients, raw);
  console.log(`   one mailbox, ${ONE_MAILBOX_LEADS} emails: engine ${oneMailbox.toFixed(1)}/s, bare reused session ${bareOne.toFixed(1)}/s: ${((oneMailbox / bareOne) * 100).toFixed(1)}% (target >= 80%)`);
}

/**
 * One mailbox with the lab's server a round trip away (scripts/lib/latency-proxy.mjs), at each of
 * DISTANCES: the engine against the same clients through the same relay, the issue's bare reused
 * session (a round trip per command), that session pipelined as the engine's is (a round trip per
 * message), and nodemailer's pool (5 connections for the one mailbox). On the loopback a round trip
 * costs a few hundredths of a millisecond, so there only each client's own work per message counts.
 */
async function atDistance(server, raw) {
  const { recipients, ten } = peerClients(lab.sink_domain);
  const [sender] = ten;
  for (const rtt of DISTANCES) {
    const relay = await latencyProxy(lab.smtp, rtt / 2);
    try {
      const far = { ...lab, smtp: { ...lab.smtp, port: relay.port } };
      const account = await provisionBenchAccount(server, `bench-engine-far-${rtt}`);
      const mailboxes = async (s, apiKey) => [(await api(s, apiKey, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(far, sender.email, sender) })).id];
      await labDrained();
      const engine = (await throughput(server, account, { mailboxes, label: `one at ${rtt} ms`, count: ONE_MAILBOX_LEADS, tag: `far${rtt}-`, domain: lab.sink_domain })).rate;
      const clients = [
        ["bare reused session", bareReusedSession],
        ["bare, pipelined as the engine", bareReusedPipelined],
        ["nodemailer pool", nodemailerPooled],
      ];
      const shares = [];
      for (const [name, run] of clients) {
        await labDrained();
        const rate = await run(far, [sender], ONE_MAILBOX_LEADS, recipients, raw);
        shares.push(`${name} ${rate.toFixed(1)}/s (the engine ${((engine / rate) * 100).toFixed(1)}% of it)`);
      }
      console.log(`   one mailbox, the server ${rtt} ms away: engine ${engine.toFixed(1)}/s; ${shares.join("; ")}`);
    } finally {
      await relay.close();
    }
  }
}

/**
 * The engine (10 mailboxes, `ids`) and the peer to the sink in SINK_ROUNDS interleaved pairs, each
 * starting from a drained queue; answers the median rates and prints each pair's ratio and the median one.
 */
async function sinkPairs(server, account, ids, raw, tag = "s") {
  const { recipients, ten } = peerClients(lab.sink_domain);
  await nodemailerPooled(lab, ten, 100, recipients, raw);
  const pairs = [];
  for (let round = 0; round < SINK_ROUNDS; round += 1) {
    const engine = (await throughput(server, account, { mailboxes: ids, label: "password", tag: `${tag}${round}-`, domain: lab.sink_domain })).rate;
    await labDrained();
    const peer = await nodemailerPooled(lab, ten, LEADS, recipients, raw);
    console.log(`   nodemailer pooled (peer) ${peer.toFixed(1)} emails/s: engine / peer ${((engine / peer) * 100).toFixed(1)}% in this pair`);
    pairs.push({ engine, peer, ratio: engine / peer });
  }
  const ratio = median(pairs.map((p) => p.ratio));
  console.log(`   ${SINK_ROUNDS} pairs: engine / peer ${pairs.map((p) => `${(p.ratio * 100).toFixed(1)}%`).join(", ")}; median ${(ratio * 100).toFixed(1)}%`);
  const engine = median(pairs.map((p) => p.engine));
  // The strictest reading: the engine's median against the peer's best run of all.
  const best = Math.max(...pairs.map((p) => p.peer));
  console.log(`   engine's median ${engine.toFixed(1)}/s against the peer's best ${best.toFixed(1)}/s: ${((engine / best) * 100).toFixed(1)}%`);
  return { engine, peer: median(pairs.map((p) => p.peer)), ratio };
}

/** Postfix's queue files (incoming, active, deferred): messages taken and not yet delivered. */
function queuedMessages() {
  const spool = join(lab.runtime_dir, "postfix", "spool");
  return ["incoming", "active", "deferred"].reduce((sum, dir) => sum + readdirSync(join(spool, dir), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length, 0);
}

/**
 * Runs `work` with Postfix's inflow flow control off, then puts the lab's setting back. By default a
 * Postfix whose queue manager falls behind makes each new message wait up to `in_flow_delay` (1 s)
 * before it is taken; nodemailer's 50 connections at once trip it in about half their runs (each
 * then a second or two longer, the machine mostly idle), the engine's 10 rarely. Both readings are
 * true of some server, so the bench prints both: the lab's Postfix as it is, and one that never
 * pauses a client.
 */
async function withoutInflowDelay(work) {
  const config = join(lab.runtime_dir, "postfix", "etc");
  const set = (value) => {
    execFileSync("/usr/sbin/postconf", ["-c", config, "-e", `in_flow_delay = ${value}`]);
    execFileSync("/usr/sbin/postfix", ["-c", config, "reload"], { stdio: "ignore" });
  };
  const before = execFileSync("/usr/sbin/postconf", ["-c", config, "-h", "in_flow_delay"], { encoding: "utf8" }).trim();
  set("0s");
  // The reload replaces the daemons as they go idle: the next run meets the new setting.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  try {
    await work();
  } finally {
    set(before);
  }
}

/**
 * The same 1,000 emails to the sink from 20 mailboxes (a second account connects the same 10 lab
 * logins, an address being one mailbox per account), two campaigns started at once, in rounds
 * against the 10 mailboxes' median rate (`ten`): whether more sessions at once would send faster, or
 * the one workerd thread the dev server runs every object, D1 and the objects' storage on sets the pace.
 */
async function twiceTheMailboxes(server, first, ten) {
  const second = await provisionBenchAccount(server, "bench-engine-twenty");
  const parts = [first, { account: second, ids: await passwordMailboxes(server, second.api_key) }];
  await waitForChecks(server, second.api_key, parts[1].ids);
  const rates = [];
  for (let round = 0; round < 3; round += 1) {
    const campaigns = [];
    for (const [index, { account, ids }] of parts.entries()) {
      const leads = Array.from({ length: LEADS / 2 }, (_, i) => ({ email: `lead${(i % 5) + 1}+t${round}x${index}x${i}@${lab.sink_domain}`, first_name: `L${i}` }));
      campaigns.push({ campaignId: await benchCampaign(server, account.api_key, `bench-twenty-${round}-${index}`, ids, leads), apiKey: account.api_key });
    }
    await labDrained();
    const counter = sentCounter(server, campaigns.map(({ campaignId }) => campaignId));
    const started = performance.now();
    await Promise.all(campaigns.map(({ campaignId, apiKey }) => api(server, apiKey, `/api/v1/campaigns/${campaignId}/status`, { method: "POST", body: { status: "START" } })));
    const { sent } = await counter.until(LEADS, started);
    rates.push(sent / ((performance.now() - started) / 1000));
  }
  const twenty = median(rates);
  console.log(`   20 mailboxes (two accounts of the same 10 logins): ${rates.map((r) => r.toFixed(1)).join(", ")}/s, median ${twenty.toFixed(1)}/s: ${((twenty / ten) * 100).toFixed(1)}% of 10 mailboxes' ${ten.toFixed(1)}/s`);
}

/** Waits (up to 2 minutes) until the lab has delivered what it took, so no earlier run's backlog runs beside the next one. */
async function labDrained() {
  for (let waited = 0; queuedMessages() > 0 && waited < 120_000; waited += 250) await new Promise((resolve) => setTimeout(resolve, 250));
}

/** The newest message in a lab mailbox as the engine sent it: from its own first header (From) on, without what Postfix and Dovecot added above it. */
function newestMessage(user) {
  const home = join(lab.mail_dir, DOMAIN, user, "Maildir");
  const files = ["new", "cur"].flatMap((dir) => readdirSync(join(home, dir)).map((name) => join(home, dir, name)));
  const stored = readFileSync(files.sort().at(-1), "latin1");
  return stored.slice(stored.indexOf("\nFrom: ") + 1);
}

/** A message's text with quoted-printable soft breaks and `=3D` undone (enough to find its links). */
function decoded(raw) {
  return raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
}

const RATE_ROUNDS = 5;
const CPU_HITS = 2000;
const CPU_ROUNDS = 8;


function load(url, duration) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 20, duration, headers: { "User-Agent": "Mozilla/5.0 (Windows NT 10.0) Chrome/131.0" } }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** Opens and clicks recorded for the campaign (the tracking queue writes them a moment later). */
function trackedCount(server, campaignId) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  const { n } = db.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ? AND type IN ('OPEN', 'CLICK')").get(campaignId);
  db.close();
  return n;
}

/** `sent`: a message of the campaign `campaignId` as the lab received it, whose pixel and link are loaded. */
async function tracking(server, campaignId, sent) {
  const raw = decoded(sent);
  const pixel = /src="(http[^"]+\/t\/o\/[^"]+\.gif)"/.exec(raw)?.[1];
  const click = /href="(http[^"]+\/t\/c\/[^"]+)"/.exec(raw)?.[1];
  if (!pixel || !click) throw new Error("no tracked links in the lab's newest message for lead1");
  const local = (link) => `${server.url}${new URL(link).pathname}`;
  console.log(`\n3. Tracking endpoints vs /health (autocannon, 20 connections; each route warmed up, then ${RATE_ROUNDS} rounds of 5 s in rotated order; medians, and the median of each round's ratio to its /health run):`);
  const routes = [["/health", `${server.url}/health`], ["open pixel", local(pixel)], ["click redirect", local(click)]];
  // Each route warmed up on its own, and each run starting with no other route's hits still queued for
  // recording: a route run first after a warm-up of /health alone paid for compiling its own path.
  let hits = 0;
  for (const [name, url] of routes) {
    const result = await load(url, 3);
    if (name !== "/health") hits += result["2xx"] + result["3xx"];
  }
  await trackedAtLeast(server, campaignId, hits);
  const rates = Object.fromEntries(routes.map(([name]) => [name, []]));
  for (let round = 0; round < RATE_ROUNDS; round += 1) {
    for (let i = 0; i < routes.length; i += 1) {
      const [name, url] = routes[(i + round) % routes.length];
      const result = await load(url, 5);
      rates[name].push(result);
      if (name !== "/health") {
        hits += result["2xx"] + result["3xx"];
        await trackedAtLeast(server, campaignId, hits);
      }
    }
  }
  const middle = (runs) => [...runs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(runs.length / 2)];
  for (const [name] of routes) {
    const run = middle(rates[name]);
    console.log(`   ${name.padEnd(16)} ${run.requests.average.toFixed(0).padStart(6)} req/s   p50 ${run.latency.p50} ms   p99 ${run.latency.p99} ms   (rounds ${rates[name].map((r) => r.requests.average.toFixed(0)).join(", ")}; ${rates[name].reduce((sum, r) => sum + r.errors, 0)} errors)`);
  }
  // The dev server's rate drifts over a run by as much as the gap measured: each round's tracking run
  // is read against the /health run of the same round, and the target on the median of those ratios.
  for (const name of ["open pixel", "click redirect"]) {
    const pairs = rates[name].map((run, round) => run.requests.average / rates["/health"][round].requests.average).sort((a, b) => a - b);
    const ofMedians = middle(rates[name]).requests.average / middle(rates["/health"]).requests.average;
    console.log(`   ${name} / health: ${(median(pairs) * 100).toFixed(1)}% (rounds ${pairs.map((r) => (r * 100).toFixed(0)).join(", ")}; medians' ratio ${(ofMedians * 100).toFixed(1)}%) (target >= 90%, issue 27)`);
  }
  const recorded = await trackedAtLeast(server, campaignId, hits);
  console.log(`   recorded ${recorded} OPEN/CLICK events for ${hits} answered hits (the queue writes them in batches)`);

  // Requests per second under a fixed load scatter on a shared machine; workerd's CPU per hit, its
  // recording by the queue's consumer included, holds steadier (as bench:overhead's does). Rounds of
  // the three routes back to back, each tracking route read against the /health run of its round:
  // the dev server's own cost drifts over a run by more than the gap measured, which a pair cancels.
  const cpu = { "/health": [], "open pixel": [], "click redirect": [] };
  const urls = { "/health": `${server.url}/health`, "open pixel": local(pixel), "click redirect": local(click) };
  for (let round = 0; round < CPU_ROUNDS; round += 1) {
    for (const [name, url] of Object.entries(urls)) {
      const before = workerdCpuMs(server.pid);
      const already = trackedCount(server, campaignId);
      const result = await fixedLoad(url, CPU_HITS, { "User-Agent": "Mozilla/5.0 (Windows NT 10.0) Chrome/131.0" });
      const answered = result["2xx"] + result["3xx"];
      if (name !== "/health") await trackedAtLeast(server, campaignId, already + answered);
      cpu[name].push((workerdCpuMs(server.pid) - before) / answered);
    }
  }
  for (const [name, values] of Object.entries(cpu)) {
    const pairs = values.map((value, round) => cpu["/health"][round] / value);
    const share = name === "/health" ? "" : `: ${(median(pairs) * 100).toFixed(1)}% of /health's hits per CPU second (rounds ${pairs.map((r) => (r * 100).toFixed(0)).join(", ")}; target >= 90%, issue 27)`;
    console.log(`   ${name.padEnd(16)} workerd CPU per hit ${median(values).toFixed(2)} ms${share}`);
  }
  console.log(`   (${CPU_HITS} hits per route and round, 10 connections, ${CPU_ROUNDS} rounds; medians, and each round's ratio to its /health run; a hit's CPU includes writing its event)`);
}

/** Waits (up to 20 s) until the campaign has at least `count` opens and clicks; answers how many it has. */
async function trackedAtLeast(server, campaignId, count) {
  let recorded = trackedCount(server, campaignId);
  for (let i = 0; i < 100 && recorded < count; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    recorded = trackedCount(server, campaignId);
  }
  return recorded;
}

const startedAt = Date.now();
const stateDir = mkdtempSync(join(tmpdir(), "salvo-bench-engine-"));
let server = await startDevServer({ stateDir, quiet: true });
try {
  const account = await provisionBenchAccount(server, "bench-engine");
  if (process.env.BENCH_ENGINE_ONLY_SCHEDULER !== "true") await otherParts(server, account, stateDir);
  if (process.env.BENCH_ENGINE_SKIP_SCHEDULER !== "true") {
    const plan = await prepareSchedulerDatasets(server, account.api_key, lab);
    await server.stop();
    loadRecords(localD1File(server.stateDir), account.id, plan);
    server = await startDevServer({ stateDir, quiet: true });
    await schedulerPasses(server, plan);
  }
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}

async function otherParts(server, account, stateDir) {
  const { campaignId, ids, rate } = await throughput(server, account);
  const raw = newestMessage("lead1");
  const oneAccount = await provisionBenchAccount(server, "bench-engine-one");
  const one = await throughput(server, oneAccount, { mailboxes: (s, apiKey) => passwordMailboxes(s, apiKey, 1), label: "one", count: ONE_MAILBOX_LEADS });
  await sideBySide({ engine: rate, oneMailbox: one.rate, domain: DOMAIN, raw });
  // The same to the lab's sink: Postfix takes each message the same way and discards it instead of
  // delivering it into a Maildir, which on this machine takes the cores the clients run on.
  const sink = await sinkPairs(server, account, ids, raw);
  const oneSink = await throughput(server, oneAccount, { mailboxes: one.ids, label: "one", count: ONE_MAILBOX_LEADS, tag: "os", domain: lab.sink_domain });
  await sideBySide({ engine: sink.engine, peer: sink.peer, ratio: sink.ratio, oneMailbox: oneSink.rate, domain: lab.sink_domain, raw });
  await withoutInflowDelay(async () => {
    console.log("\n   The same pairs with Postfix's inflow flow control off (in_flow_delay = 0s):");
    const open = await sinkPairs(server, account, ids, raw, "f");
    console.log(`   engine / peer, flow control off: ${(open.ratio * 100).toFixed(1)}% (median of ${SINK_ROUNDS} pairs)`);
    await twiceTheMailboxes(server, { account, ids }, open.engine);
  });
  // After the sending runs: a dev server that has just answered tens of thousands of requests sends
  // more slowly (one run here: 2.36, 2.69, 2.79 ms of CPU an email, 12,000 requests to /health
  // between them; the local runtime's memory grows with requests, a Worker of ours or not), which
  // the engine's figures above should not carry.
  await tracking(server, campaignId, raw);
  // After tracking, which has always run right after the sink's runs: a round trip of milliseconds
  // per message outweighs the dev server's slowing down.
  await atDistance(server, raw);
  // A second account: the same addresses become its OAuth mailboxes (an address is one mailbox per account).
  const oauthAccount = await provisionBenchAccount(server, "bench-engine-oauth");
  // Password and OAuth runs in the order P O O P P O O P (the load and the database's size drift over a
  // run; this order gives both kinds the same mean position), each kind's mailboxes made once.
  const passwordAccount = await provisionBenchAccount(server, "bench-engine-pairs");
  const kinds = {
    password: { account: passwordAccount, mailboxes: passwordMailboxes, rates: [] },
    oauth: { account: oauthAccount, mailboxes: oauthMailboxes, rates: [] },
  };
  for (const [round, kind] of ["password", "oauth", "oauth", "password", "password", "oauth", "oauth", "password"].entries()) {
    const run = await throughput(server, kinds[kind].account, { mailboxes: kinds[kind].mailboxes, label: kind, count: PAIR_LEADS, tag: `${kind[0]}${round}-` });
    kinds[kind].mailboxes = run.ids;
    kinds[kind].rates.push(run.rate);
  }
  const total = (rates) => rates.reduce((sum, r) => sum + r, 0) / rates.length;
  const [password, oauth] = [total(kinds.password.rates), total(kinds.oauth.rates)];
  console.log(`   password runs ${kinds.password.rates.map((r) => r.toFixed(1)).join(", ")} (mean ${password.toFixed(1)}/s); OAuth runs ${kinds.oauth.rates.map((r) => r.toFixed(1)).join(", ")} (mean ${oauth.toFixed(1)}/s)`);
  console.log(`   OAuth / password: ${((oauth / password) * 100).toFixed(1)}% (target >= 95%: refresh is not on the per-email path)`);
  // The OAuth part handled 10 consents' tokens and their refreshes: none may be found in the dev server's state, logs or traces.
  const leaked = findKeys([stateDir, ...defaultDirs()], labTokenValues(), startedAt);
  for (const { path, keys } of leaked) console.error(`   API key or token value in ${path}: ${keys.join(", ")}`);
  if (leaked.length > 0) throw new Error("an API key or token value leaked into the dev server's state or logs");
  console.log("   no API key or token value in the dev server's state, logs or traces (check:no-keys)");
}
