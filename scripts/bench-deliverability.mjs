// `npm run bench:deliverability` (inside scripts/with-mail-lab.mjs), against a throwaway `npm run dev`:
//  1. One placement-checker pass over 25 seed mailboxes (the lab's bench-seed-<provider>, one per
//     catalogue provider) holding 50 test messages each (a manual test, 25 providers x 50 senders),
//     written straight into the seeds' Maildirs: seconds and D1 write batches; then the same with
//     the spam filter on (every message scored by the lab's Rspamd).
//  2. One mailbox's pass sending an automated test's run to all 25 seeds at once (issue 27): the
//     pass's seconds and the SMTP logins it made, with the lab's submission port on the loopback and
//     10 ms away (scripts/lib/latency-proxy.mjs), where a login's round trips are what a session costs.
//  3. The provider report over one run of 10,000 results (25 providers x 50 senders x 8 seeds each),
//     the results typed in through the results route: p50/p95.
//  4. The minute cron starting 200 due scheduled tests (as before).
import { chownSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, localD1File, measure, ms, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { fireMinuteCron, startDevServer } from "./lib/dev-server.mjs";
import { campaignWithStep, labMailboxBody, waitForChecks } from "./lib/bench-mail.mjs";
import { latencyProxy } from "./lib/latency-proxy.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const SENDERS = 50;
const benchSeeds = lab.mailboxes.filter((m) => m.role === "bench-seed");
if (benchSeeds.length !== 25) throw new Error(`the lab has ${benchSeeds.length} bench seeds, not 25: restart it (npm run mail-lab)`);

/** Empties a bench seed, so a run reads only its own messages (Dovecot notices files gone from a Maildir). */
function emptyMaildir(local) {
  const maildir = join(lab.mail_dir, DOMAIN, local, "Maildir");
  for (const sub of ["new", "cur"]) rmSync(join(maildir, sub), { recursive: true, force: true });
}

let fills = 0;

/** Writes messages into a lab mailbox's Maildir/new, owned like the lab's own mail. */
function fillMaildir(local, messages) {
  const maildir = join(lab.mail_dir, DOMAIN, local, "Maildir");
  const { uid, gid } = statSync(lab.mail_dir);
  for (const sub of ["", "new", "cur", "tmp"]) {
    mkdirSync(join(maildir, sub), { recursive: true });
    chownSync(join(maildir, sub), uid, gid);
  }
  chownSync(join(lab.mail_dir, DOMAIN, local), uid, gid);
  const stamp = Math.floor(Date.now() / 1000);
  // Maildir knows a message by its file's base name: a second fill in the same second must not reuse the first's names.
  fills += 1;
  messages.forEach((raw, i) => {
    const file = join(maildir, "new", `${stamp}.M${i}F${fills}P${process.pid}.bench`);
    writeFileSync(file, raw);
    chownSync(file, uid, gid);
  });
}

const testMessage = (token, from, to, i) =>
  [
    `Received: from out.bench.example (out.bench.example [203.0.113.${(i % 250) + 1}]) by mx.${DOMAIN}; ${new Date().toUTCString()}`,
    `Authentication-Results: mx.${DOMAIN}; spf=pass smtp.mailfrom=${from}; dkim=pass header.d=bench.example; dmarc=pass`,
    `From: Bench sender <${from}>`,
    `To: ${to}`,
    `Subject: Placement bench ${i}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <placement-bench-${i}-${Date.now()}@bench.example>`,
    `X-Salvo-Test-Id: ${token}`,
    "X-Salvo-Test-Run: 1",
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Hello, a short note for the bench.\r\n\r\nSalvo placement test ${token}`,
    "",
  ].join("\r\n");

const server = await startDevServer({ quiet: true });
const admin = (path, init = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${server.adminToken}`, ...(init.body ? { "Content-Type": "application/json" } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  }).then(async (response) => {
    const body = await response.json();
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  });

try {
  const account = await provisionBenchAccount(server, "deliverability");
  const key = account.api_key;
  const campaign = await api(server, key, "/api/v1/campaigns/create", { method: "POST", body: { name: "placement bench" } });

  for (const seed of benchSeeds) emptyMaildir(seed.email.split("@")[0]);
  // The operator's part: the catalogue's unread defaults replaced by the lab's 25 bench seeds.
  const { data: defaults } = await admin("/admin/v1/seed-mailboxes");
  for (const seed of defaults) await admin(`/admin/v1/seed-mailboxes/${seed.id}`, { method: "DELETE" });
  for (const seed of benchSeeds) {
    await admin("/admin/v1/seed-mailboxes", {
      method: "POST",
      body: {
        provider_id: seed.provider_id,
        email: seed.email,
        imap_host: lab.imap_tls.host,
        imap_port: lab.imap_tls.port,
        imap_security: "tls",
        password: seed.password,
        inbox_folders: seed.inbox_folders,
        tab_folders: seed.tab_folders,
        spam_folders: seed.spam_folders,
      },
    });
  }
  const providers = benchSeeds.map((seed) => seed.provider_id);
  const senders = Array.from({ length: SENDERS }, (_, i) => `sender${i}@bench.example`);
  const base = { test_name: "bench", spam_filters: true, campaign_id: campaign.id, sequence_mapping_id: "1", provider_ids: providers, sender_accounts: senders };

  // 1. One checker pass over 25 seeds x 50 messages: without a spam filter, then (new messages of
  // another test) with every message scored by the lab's Rspamd.
  for (const spam_filters of [false, true]) {
    const test = await api(server, key, "/api/v1/spam-test/manual", { method: "POST", body: { ...base, spam_filters } });
    benchSeeds.forEach((seed, s) => fillMaildir(seed.email.split("@")[0], senders.map((from, i) => testMessage(test.email_track_id, from, seed.email, s * SENDERS + i))));
    const started = performance.now();
    const pass = await admin("/admin/v1/seed-mailboxes/check", { method: "POST" });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `checker pass${spam_filters ? " with Rspamd scoring" : ""}: ${pass.seeds} seeds, ${pass.messages} messages read, ${pass.recorded} placements recorded in ${seconds.toFixed(2)} s; ` +
        `${pass.d1_write_batches} D1 write batches (one per seed + the deadline sweep); failures ${pass.failures.length}`,
    );
  }
  console.log("  (the lab's Rspamd is one scanner process on this shared machine: its scoring, not the reading, sets the second pass's time)");
  const again = performance.now();
  const idle = await admin("/admin/v1/seed-mailboxes/check", { method: "POST" });
  console.log(`next pass with nothing pending: ${idle.seeds} seeds read in ${ms(performance.now() - again)}`);

  // 2. A run sent to every seed at once from one mailbox, timed on the operator's pass route (its
  // response comes when the pass is over). The mailbox is held while the cron starts the run, so the
  // pass its wake runs claims nothing; the hold is lifted and the timed pass sends all 25.
  const logins = [1, 2].map((n) => lab.mailboxes.find((m) => m.email === `sender${n}@${DOMAIN}`));
  for (const [index, rtt] of [0, 10].entries()) {
    const relay = rtt > 0 ? await latencyProxy(lab.smtp, rtt / 2) : null;
    try {
      const login = logins[index];
      const at = relay ? { ...lab, smtp: { ...lab.smtp, port: relay.port } } : lab;
      const { id: mailboxId } = await api(server, key, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(at, login.email, login) });
      await waitForChecks(server, key, [mailboxId]);
      const d1 = new DatabaseSync(localD1File(server.stateDir));
      d1.exec("PRAGMA busy_timeout = 5000");
      d1.prepare("UPDATE email_accounts SET send_held_until = ?, send_held_reason = 'bench' WHERE id = ?").run(Date.now() + 10 * 60_000, mailboxId);
      const stepCampaign = await campaignWithStep(server, key, `placement sends ${rtt}`);
      while (new Date().getUTCSeconds() >= 50) await new Promise((resolve) => setTimeout(resolve, 500));
      const slot = Date.now() - 55_000;
      const test = await api(server, key, "/api/v1/spam-test/schedule", {
        method: "POST",
        body: {
          test_name: `sends ${rtt}`,
          spam_filters: false,
          campaign_id: stepCampaign,
          sequence_mapping_id: "1",
          provider_ids: providers,
          sender_accounts: [login.email],
          all_email_sent_without_time_gap: true,
          schedule_start_time: new Date(slot).toISOString(),
          test_end_date: new Date(slot + 86_400_000).toISOString(),
          scheduler_cron_value: "* * * * *",
        },
      });
      const cells = d1.prepare("SELECT count(*) AS n, count(sent_at) AS sent, count(send_error) AS failed FROM spam_test_results WHERE spam_test_id = ?");
      await fireMinuteCron(server, 0);
      for (let waited = 0; cells.get(test.id).n < providers.length; waited += 100) {
        if (waited > 60_000) throw new Error(`the cron started no run of test ${test.id}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      d1.prepare("UPDATE email_accounts SET send_held_until = NULL, send_held_reason = NULL WHERE id = ?").run(mailboxId);
      const authLog = join(lab.runtime_dir, "log", "dovecot.log");
      const loginsMade = () => readFileSync(authLog, "utf8").split(`plain(${login.email},127.0.0.1): Finished passdb lookup`).length - 1;
      const before = loginsMade();
      const started = performance.now();
      await admin(`/admin/v1/email-accounts/${mailboxId}/sender-pass`, { method: "POST" });
      const seconds = (performance.now() - started) / 1000;
      const { sent, failed } = cells.get(test.id);
      d1.close();
      console.log(
        `one pass sending a run to ${providers.length} seeds at once, the server ${rtt > 0 ? `${rtt} ms away` : "on the loopback"}: ${sent - failed} sent (${failed} not) in ${seconds.toFixed(2)} s; ${loginsMade() - before} SMTP login(s)`,
      );
    } finally {
      await relay?.close();
    }
  }

  // 3. The provider report over 10,000 results: 8 seeds per provider (7 more, unread, beside the bench seed).
  for (const provider of providers) {
    for (let n = 1; n < 8; n += 1) await admin("/admin/v1/seed-mailboxes", { method: "POST", body: { provider_id: provider, email: `report${n}-${provider}@bench.example` } });
  }
  const big = await api(server, key, "/api/v1/spam-test/manual", { method: "POST", body: { ...base, spam_filters: false } });
  const seeds = big.seed_emails;
  const folders = ["inbox", "tab", "spam", "not_received"];
  const results = seeds.flatMap((seed, p) => senders.map((sender_email, s) => ({ provider_id: seed.provider_id, sender_email, seed_email: seed.email, folder: folders[(p + s) % folders.length] })));
  const recordStarted = performance.now();
  for (let i = 0; i < results.length; i += 1000) {
    await api(server, key, `/api/v1/spam-test/${big.id}/results`, { method: "POST", body: { results: results.slice(i, i + 1000) } });
  }
  console.log(`recorded ${results.length} results by hand (${providers.length} providers x ${senders.length} senders x 8 seeds) in ${ms(performance.now() - recordStarted)}`);
  const report = await measure(() => api(server, key, "/api/v1/smart-delivery/provider-report", { method: "POST", body: { spam_test_id: big.id } }));
  console.log(`provider report over ${results.length} results: p50 ${ms(report.p50)}  p95 ${ms(report.p95)}`);

  // 4. The cron starting 200 due scheduled tests.
  const TESTS = 200;
  const start = new Date(Date.now() - 30_000).toISOString();
  const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
  for (let i = 0; i < TESTS; i += 1) {
    await api(server, key, "/api/v1/spam-test/schedule", {
      method: "POST",
      body: { ...base, spam_filters: false, test_name: `scheduled ${i}`, provider_ids: providers.slice(0, 5), sender_accounts: senders.slice(0, 2), schedule_start_time: start, test_end_date: end, scheduler_cron_value: "* * * * *" },
    });
  }
  // Every test's first slot is the next minute boundary at the latest.
  await new Promise((resolve) => setTimeout(resolve, 61_000 - (Date.now() % 60_000)));
  const cronStarted = performance.now();
  const fired = await fetch(`${server.url}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
  const cronMs = performance.now() - cronStarted;
  const listed = await api(server, key, "/api/v1/spam-test/report?testType=automated", { method: "POST", body: { limit: 100 } });
  const runs = await api(server, key, `/api/v1/spam-test/report/${listed.data[0].id}/schedule-history`);
  console.log(`cron firing that started ${TESTS} due tests (5 providers x 8 seeds x 2 senders each): ${ms(cronMs)} (HTTP ${fired.status}; newest test now has ${runs.data.length} run)`);
} finally {
  await server.stop();
}
