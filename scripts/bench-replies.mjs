// `npm run bench:replies` (inside scripts/with-mail-lab.mjs): reading replies back (issue 14, item 9),
// against a throwaway `npm run dev` and the lab.
//  1. A campaign sends 1,000 emails from one lab mailbox (sender9); then its INBOX is filled with
//     10,000 messages straight into its Maildir: 1,000 replies (In-Reply-To our emails, from the leads)
//     and 9,000 others (newsletters, answering nothing of ours).
//  2. The whole backlog is read through the operator route (100 messages a pass, as the mailbox's own
//     object reads), timed: seconds, messages per second, D1 write batches per message.
//  3. An incremental pass over the full mailbox with one new reply: its time (it must not grow with
//     the mailbox).
//  4. A reply sent by a lead through the lab's SMTP, timed from sending until inbox-replies lists it,
//     with the object reading on its own schedule (MAILBOX_POLL_SECONDS of .dev.vars; the production
//     default of 300 s adds up to that long).
//  5. Replies scheduled in the inbox for the same moment (20, what one pass takes), sent by one pass
//     of the mailbox's object (the operator's pass route, which answers when the pass is over): its
//     seconds and the SMTP logins it made, with the lab's submission port on the loopback and 10 ms
//     away (scripts/lib/latency-proxy.mjs), where a login's round trips are what a session costs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { benchCampaign, fillMaildir, labMailboxBody, readPass, smtpSend, waitForChecks } from "./lib/bench-mail.mjs";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";
import { latencyProxy } from "./lib/latency-proxy.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const SENT = 1_000;
const OTHERS = 9_000;
/** Scheduled replies one pass of a mailbox takes (DUE_PER_PASS of src/replies/outbound-store.ts). */
const SCHEDULED = 20;
const account = (local) => lab.mailboxes.find((m) => m.email === `${local}@${DOMAIN}`);
const sender = account("sender9");

function sentMessages(server, campaignId) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  const rows = db.prepare("SELECT message_id, to_email, subject FROM messages WHERE campaign_id = ? AND status = 'sent'").all(campaignId);
  db.close();
  return rows;
}

function replyCount(server, campaignId) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  const { n } = db.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ? AND type = 'REPLY'").get(campaignId);
  db.close();
  return n;
}

const date = () => new Date().toUTCString();
const reply = (to, i) =>
  [`From: ${to.to_email}`, `To: ${sender.email}`, `Subject: Re: ${to.subject}`, `Date: ${date()}`, `Message-ID: <bench-reply-${i}-${Date.now()}@${DOMAIN}>`,
    `In-Reply-To: ${to.message_id}`, `References: ${to.message_id}`, "", `Sounds good, let's talk. (${i})`, "", "On Mon, someone wrote:", "> the question", ""].join("\r\n");
const other = (i) =>
  [`From: news${i % 50}@news.example`, `To: ${sender.email}`, `Subject: Newsletter ${i}`, `Date: ${date()}`, `Message-ID: <news-${i}-${Date.now()}@news.example>`, "",
    `Issue ${i}: nothing to do with any campaign.`, ""].join("\r\n");

const stateDir = mkdtempSync(join(tmpdir(), "salvo-bench-replies-"));
const server = await startDevServer({ stateDir, quiet: true });
try {
  const owner = await provisionBenchAccount(server, "bench-replies");
  const apiKey = owner.api_key;
  const { id: mailboxId } = await api(server, apiKey, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, sender.email, sender) });
  await waitForChecks(server, apiKey, [mailboxId]);
  const leads = Array.from({ length: SENT }, (_, i) => ({ email: `lead${(i % 5) + 1}+r${i}@${DOMAIN}`, first_name: `R${i}` }));
  const campaignId = await benchCampaign(server, apiKey, "bench-replies", [mailboxId], leads);
  await api(server, apiKey, `/api/v1/campaigns/${campaignId}/status`, { method: "POST", body: { status: "START" } });
  let sent = [];
  for (const started = Date.now(); sent.length < SENT; sent = sentMessages(server, campaignId)) {
    if (Date.now() - started > 10 * 60_000) throw new Error(`only ${sent.length} of ${SENT} sent`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // Let the object's own first read settle (it starts from this moment's INBOX).
  await readPass(server, mailboxId);

  fillMaildir(lab, sender, [...sent.map((m, i) => reply(m, i)), ...Array.from({ length: OTHERS }, (_, i) => other(i))]);
  const total = SENT + OTHERS;
  let passes = 0;
  let batches = 0;
  const first = performance.now();
  for (let more = true; more; passes += 1) {
    const result = await readPass(server, mailboxId);
    more = result.more;
    batches += result.d1_write_batches;
  }
  const replies = replyCount(server, campaignId);
  const seconds = (performance.now() - first) / 1000;
  console.log(`\n1. Backlog of ${total} messages (${SENT} replies to our emails, ${OTHERS} others) in one INBOX:`);
  console.log(`   read in ${seconds.toFixed(1)} s over ${passes} passes of the operator route: ${(total / seconds).toFixed(0)} messages/s; ${replies} replies recorded (the object's own scheduled reads may take some passes)`);
  console.log(`   D1 write batches: ${batches} (${(batches / total).toFixed(3)} per message; one per pass with news, whatever it holds)`);

  fillMaildir(lab, sender, [reply(sent[0], SENT + 1)]);
  const incremental = performance.now();
  const one = await readPass(server, mailboxId);
  console.log(`2. Incremental pass over the ${total + 1}-message INBOX with one new reply: ${(performance.now() - incremental).toFixed(0)} ms (${one.replies} recorded)`);

  const lead = account("lead2");
  const target = sent.find((m) => m.to_email.startsWith("lead2+"));
  const raw = reply(target, SENT + 2);
  const sentAt = Date.now();
  await smtpSend(lab, lead, sender.email, raw);
  const subject = `Re: ${target.subject}`;
  for (;;) {
    const page = await api(server, apiKey, "/api/v1/master-inbox/inbox-replies?fetch_message_history=true", { method: "POST", body: { limit: 20 } });
    const listed = page.messages?.some((m) => m.email_history?.some((h) => h.type === "REPLY" && h.subject === subject && h.email_body?.includes(`(${SENT + 2})`)));
    if (listed) break;
    if (Date.now() - sentAt > 10 * 60_000) throw new Error("the reply was never listed");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const poll = readFileSync(join(root, ".dev.vars"), "utf8").match(/^MAILBOX_POLL_SECONDS=(\d+)/m)?.[1] ?? "300";
  console.log(`3. A lead's reply sent through the lab's SMTP was listed by inbox-replies ${((Date.now() - sentAt) / 1000).toFixed(1)} s later (MAILBOX_POLL_SECONDS=${poll}; the wait is at most one interval plus a pass)`);

  // 4. Scheduled replies due together. They are scheduled an hour ahead and then made due in D1, so
  // the object's own passes (its next wake is that hour) leave them to the timed pass.
  const d1 = new DatabaseSync(localD1File(server.stateDir));
  d1.exec("PRAGMA busy_timeout = 5000");
  const threads = d1.prepare("SELECT id FROM events WHERE campaign_id = ? AND type = 'REPLY' ORDER BY id LIMIT ?").all(campaignId, 2 * SCHEDULED);
  const authLog = join(lab.runtime_dir, "log", "dovecot.log");
  // SMTP logins only: Dovecot names an IMAP login's session in the same line, SASL for Postfix none.
  const smtpLogins = () => readFileSync(authLog, "utf8").split(`plain(${sender.email},127.0.0.1): Finished passdb lookup`).length - 1;
  for (const [round, rtt] of [0, 10].entries()) {
    const relay = rtt > 0 ? await latencyProxy(lab.smtp, rtt / 2) : null;
    try {
      d1.prepare("UPDATE email_accounts SET smtp_port = ? WHERE id = ?").run(relay?.port ?? lab.smtp.port, mailboxId);
      const later = new Date(Date.now() + 3_600_000).toISOString();
      for (const thread of threads.slice(round * SCHEDULED, (round + 1) * SCHEDULED)) {
        await api(server, apiKey, `/api/v1/campaigns/${campaignId}/reply-email-thread`, {
          method: "POST",
          body: { email_stats_id: String(thread.id), email_body: `<p>Scheduled answer ${thread.id}.</p>`, scheduled_time: later },
        });
      }
      d1.prepare("UPDATE outbound_replies SET scheduled_at = ? WHERE email_account_id = ? AND status = 'SCHEDULED'").run(Date.now() - 1_000, mailboxId);
      const before = smtpLogins();
      const started = performance.now();
      const response = await fetch(`${server.url}/admin/v1/email-accounts/${mailboxId}/sender-pass?max_sends=0`, { method: "POST", headers: { Authorization: `Bearer ${server.adminToken}` } });
      if (!response.ok) throw new Error(`sender-pass: ${response.status} ${await response.text()}`);
      const seconds = (performance.now() - started) / 1000;
      const states = d1.prepare("SELECT status, count(*) AS n FROM outbound_replies WHERE email_account_id = ? GROUP BY status").all(mailboxId);
      console.log(
        `${round === 0 ? "4." : "  "} One pass sending ${SCHEDULED} scheduled replies due together, the server ${rtt > 0 ? `${rtt} ms away` : "on the loopback"}: ${seconds.toFixed(2)} s; ` +
          `${smtpLogins() - before} SMTP login(s); replies by status ${states.map((row) => `${row.status} ${row.n}`).join(", ")}`,
      );
    } finally {
      await relay?.close();
    }
  }
  d1.close();
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
