// `npm run chaos:claim` (inside scripts/with-mail-lab.mjs): issue 23's crash-after-a-claim run. One lab
// mailbox sends a one-step campaign to 150 lab leads (no gap, so claims of 50, opened in windows of 25) on a
// throwaway `npm run dev`. The moment a window's rows of the campaign turn `sending` (their SMTP
// transactions are about to start), the dev server is killed (SIGKILL, the whole process group), restarted
// on the same state, and the campaign goes on; several times. The moment is seen from outside: this script
// polls the dev server's D1 file (node:sqlite, read-only, every millisecond or so) for a `sending` row of
// the campaign; no hook in the code. Afterwards it counts what each lead received in the lab's Maildirs and
// checks: every lead got its email exactly once, except at most one message in doubt per kill (status
// `unconfirmed`, received once or not at all, never twice, and only among the rows a kill left `sending`:
// the next pass withdraws those its journal says were never handed over), no lead was left without an
// email and without a report, and every message in doubt is reported by the mailbox's
// `sending_status.warnings` and by the operator metric `sends.unconfirmed`. Exit code 0 when all of that holds.
//   CHAOS_LEADS (default 150): the campaign's leads. CHAOS_KILLS (default 4): how many kills.
//   CHAOS_KILL_DELAY_MS (default 0): each kill waits a random
//   0..this many ms after the row is seen, so some transactions get further (some messages in doubt then
//   did arrive). CHAOS_SETTLE_MS (default 20 min): how long to wait for the campaign to finish after the
//   last kill (the code before this run's fix needed its 15-minute lease to run out).
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { setImmediate } from "node:timers";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { fireMinuteCron, startDevServer } from "./lib/dev-server.mjs";
import { benchCampaign, labMailboxBody, settledLabDeliveries, waitForChecks } from "./lib/bench-mail.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const LEADS = Number(process.env.CHAOS_LEADS ?? 150);
const KILLS = Number(process.env.CHAOS_KILLS ?? 4);
const KILL_DELAY_MS = Number(process.env.CHAOS_KILL_DELAY_MS ?? 0);
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_MS ?? 20 * 60_000);
const WATCH_TIMEOUT_MS = 120_000;
/** After a restart, the minute cron is fired (as if a minute later) when nothing was sent for this long. */
const NUDGE_AFTER_MS = 5_000;
const tag = Date.now().toString(36);
const leadAddress = (i) => `lead${(i % 5) + 1}+k${tag}x${i}@${DOMAIN}`;

const stateDir = mkdtempSync(join(tmpdir(), "salvo-chaos-claim-"));
let server = await startDevServer({ stateDir, quiet: true });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A read-only look at the dev server's D1 file (opened per call: the server may be down or restarting). */
function query(sql, ...params) {
  const db = new DatabaseSync(localD1File(stateDir), { readOnly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.prepare(sql).all(...params);
  } finally {
    db.close();
  }
}

function statusCounts(campaignId) {
  const rows = query("SELECT status, count(*) AS n FROM messages WHERE campaign_id = ? GROUP BY status", campaignId);
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** Records still waiting for the engine: live, with a due time (a claim's lease included). */
function recordsLeft(campaignId) {
  return query("SELECT count(*) AS n FROM campaign_leads WHERE campaign_id = ? AND due_at IS NOT NULL AND state IN ('DRAFTED', 'STARTED', 'INPROGRESS')", campaignId)[0].n;
}

/**
 * Polls the D1 file until a message row of the campaign turns `sending` (one not left so by an
 * earlier kill), then pulls the plug at once. One connection, re-queried in a tight loop: a D1
 * commit is visible to the next query.
 */
async function killWhenSending(campaignId, seen) {
  const db = new DatabaseSync(localD1File(stateDir), { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  const sending = db.prepare("SELECT id, campaign_lead_id, to_email FROM messages WHERE campaign_id = ? AND status = 'sending'");
  const deadline = Date.now() + WATCH_TIMEOUT_MS;
  let nudged = false;
  const started = Date.now();
  try {
    for (;;) {
      const rows = sending.all(campaignId);
      if (rows.some((row) => !seen.has(row.id))) {
        if (KILL_DELAY_MS > 0) await sleep(Math.random() * KILL_DELAY_MS);
        await server.kill();
        // What the dead server left `sending` (after a delay, the pass may have moved on from the row first seen).
        return sending.all(campaignId);
      }
      if (Date.now() > deadline) return null;
      if (!nudged && Date.now() - started > NUDGE_AFTER_MS) {
        nudged = true;
        await nudge();
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    db.close();
  }
}

let nudges = 0;

/** The minute cron, as if it fired two minutes from now: re-arms mailboxes whose wake is late. */
async function nudge() {
  nudges += 1;
  await fireMinuteCron(server);
}

let ok;
try {
  const account = await provisionBenchAccount(server, "chaos-claim");
  const apiKey = account.api_key;
  const sender = lab.mailboxes.find((m) => m.email === "sender3@lab.salvo.test");
  const mailbox = await api(server, apiKey, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, sender.email, sender) });
  await waitForChecks(server, apiKey, [mailbox.id]);
  const leads = Array.from({ length: LEADS }, (_, i) => ({ email: leadAddress(i), first_name: `C${i}` }));
  const campaignId = await benchCampaign(server, apiKey, "chaos-claim", [mailbox.id], leads);
  const started = performance.now();
  await api(server, apiKey, `/api/v1/campaigns/${campaignId}/status`, { method: "POST", body: { status: "START" } });

  let kills = 0;
  // Sent by the running server before the kill: more than none means the kill fell inside a reused
  // SMTP session (one pass carries up to 50 emails on one session; each restart's first pass opens a new one).
  let sentAtStart = 0;
  let killsInReusedSession = 0;
  const seen = new Set();
  const leftAtKills = new Set();
  for (let round = 1; round <= KILLS; round += 1) {
    // Let a few emails go between kills, so the kills fall at different points of the campaign.
    const before = statusCounts(campaignId).sent ?? 0;
    const wait = round === 1 ? 0 : 1 + Math.floor(Math.random() * 6);
    for (const deadline = Date.now() + 60_000; (statusCounts(campaignId).sent ?? 0) < Math.min(before + wait, LEADS - 1) && Date.now() < deadline; ) await sleep(5);
    const inFlight = await killWhenSending(campaignId, seen);
    if (inFlight === null) {
      console.log(`kill ${round}: no message turned sending within ${WATCH_TIMEOUT_MS / 1000} s; nothing left to interrupt`);
      break;
    }
    for (const row of inFlight) {
      seen.add(row.id);
      leftAtKills.add(row.id);
    }
    const counts = statusCounts(campaignId);
    kills += 1;
    const sentBefore = (counts.sent ?? 0) - sentAtStart;
    if (sentBefore > 0) killsInReusedSession += 1;
    console.log(
      `kill ${round}: ${inFlight.length} row(s) left sending by the kill (${inFlight.map((r) => r.to_email).join(", ")}); ${sentBefore} sent before it by this server; messages by status then: ${JSON.stringify(counts)}`,
    );
    server = await startDevServer({ stateDir, quiet: true });
    sentAtStart = statusCounts(campaignId).sent ?? 0;
  }

  // The campaign goes on after the last restart: wait until no record has work left.
  const settleStart = performance.now();
  let nudgedAt = Date.now();
  for (const deadline = Date.now() + SETTLE_MS; recordsLeft(campaignId) > 0; ) {
    if (Date.now() > deadline) break;
    if (Date.now() - nudgedAt > 30_000) {
      nudgedAt = Date.now();
      await nudge();
    }
    await sleep(250);
  }
  const settledIn = (performance.now() - settleStart) / 1000;
  const delivered = await settledLabDeliveries(lab, `+k${tag}x`, DOMAIN);

  const rows = query(
    `SELECT l.email, cl.state, cl.due_at, m.id AS message_row_id, m.status, m.last_error FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id
     LEFT JOIN messages m ON m.campaign_lead_id = cl.id AND m.step = 1 WHERE cl.campaign_id = ? ORDER BY cl.id`,
    campaignId,
  );
  const counts = statusCounts(campaignId);
  const unconfirmed = rows.filter((r) => r.status === "unconfirmed");
  const twice = rows.filter((r) => (delivered.get(r.email.toLowerCase()) ?? 0) > 1);
  const exactlyOnce = rows.filter((r) => (delivered.get(r.email.toLowerCase()) ?? 0) === 1 && r.status === "sent");
  const silentMisses = rows.filter((r) => (delivered.get(r.email.toLowerCase()) ?? 0) === 0 && r.status !== "unconfirmed");
  const doubtNotLeftByAKill = unconfirmed.filter((r) => !leftAtKills.has(r.message_row_id));
  const doubtDelivered = unconfirmed.filter((r) => (delivered.get(r.email.toLowerCase()) ?? 0) === 1).length;
  const states = Object.entries(Object.groupBy(rows, (r) => r.state)).map(([state, list]) => `${state} ${list.length}`).join(", ");

  const mailboxRead = await api(server, apiKey, `/api/v1/email-accounts/${mailbox.id}`);
  const warnings = mailboxRead.sending_status?.warnings ?? [];
  const warned = warnings.find((w) => w.code === "unconfirmed_sends");
  const warnedCount = warned ? Number(/^(\d+) /.exec(warned.message)?.[1] ?? NaN) : 0;
  const metrics = await fetch(`${server.url}/admin/metrics`, { headers: { Authorization: `Bearer ${server.adminToken}` } }).then((r) => r.json());
  const metricCount = metrics.sends?.unconfirmed;

  console.log(`\n${LEADS} leads, 1 mailbox, no gap, ${kills} kills at the moment a row turned sending${KILL_DELAY_MS ? ` (+ 0-${KILL_DELAY_MS} ms)` : ""}; finished ${settledIn.toFixed(1)} s after the last restart (${((performance.now() - started) / 1000).toFixed(1)} s in all)`);
  console.log(`kills that fell inside a reused SMTP session (the server had sent before them): ${killsInReusedSession} of ${kills}`);
  console.log(`messages by status: ${JSON.stringify(counts)}; records: ${states}; the minute cron was fired ${nudges} time(s) after a restart left the engine idle`);
  console.log(`leads who got their email exactly once (message sent): ${exactlyOnce.length} of ${LEADS}`);
  console.log(`messages in doubt (unconfirmed): ${unconfirmed.length} (at most ${kills} allowed, one per kill); of them ${doubtDelivered} arrived once, ${unconfirmed.length - doubtDelivered} never`);
  console.log(`messages in doubt that were not the one a kill left sending: ${doubtNotLeftByAKill.length}`);
  console.log(`leads who got it twice or more: ${twice.length}`);
  console.log(`leads with no email and no report: ${silentMisses.length}${silentMisses.length ? ` (${silentMisses.map((r) => `${r.email} ${r.state}/${r.status}`).join(", ")})` : ""}`);
  console.log(`reported: mailbox sending_status warning ${warned ? JSON.stringify(warned.message) : "none"}; operator metric sends.unconfirmed ${metricCount ?? "absent"}`);
  ok =
    twice.length === 0 &&
    silentMisses.length === 0 &&
    kills > 0 &&
    unconfirmed.length <= kills &&
    doubtNotLeftByAKill.length === 0 &&
    exactlyOnce.length + unconfirmed.length === LEADS &&
    warnedCount === unconfirmed.length &&
    metricCount === unconfirmed.length;
  console.log(ok ? "\nOK: every lead got its email once, except at most one in doubt per kill, each reported" : "\nFAILED");
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
