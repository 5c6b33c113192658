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
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { benchCampaign, fillMaildir, labMailboxBody, readPass, smtpSend, waitForChecks } from "./lib/bench-mail.mjs";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const SENT = 1_000;
const OTHERS = 9_000;
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
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
