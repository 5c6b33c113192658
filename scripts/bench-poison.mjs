// `npm run bench:poison` (inside scripts/with-mail-lab.mjs): what a stranger's poison email costs a
// mailbox's read pass (issue 23), against a throwaway `npm run dev` and the lab.
//  1. One lab mailbox (sender8) and one email of ours in the database for its leads to answer.
//  2. Its INBOX gets ROUNDS rounds of three messages, straight into its Maildir: a bounce with 600 KB
//     of blank lines (the pattern that made bounce.ts quadratic: 91 s), an HTML email of 116 KB of
//     unclosed `<a href>` (html-to-text: 234 s), then a genuine reply to our email.
//  3. Read passes through the operator route until every reply is recorded: how many passes, and
//     each pass's wall time and the dev server's CPU time (user + system of its whole process group,
//     from /proc), per message read. The target: well under 1 s of CPU per message.
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { labMailboxBody, waitForChecks } from "./lib/bench-mail.mjs";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const ROUNDS = 5;
const KB = 1_000;
const TICKS = 100; // USER_HZ: /proc reports CPU time in 1/100 s on Linux.
const account = (local) => lab.mailboxes.find((m) => m.email === `${local}@${DOMAIN}`);
const sender = account("sender8");
const lead = account("lead2");

/** CPU seconds (user + system) used so far by every process of the dev server's group. */
function groupCpuSeconds(pgid) {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS;
}

const date = () => new Date().toUTCString();
const head = (from, subject, extra = []) => [`From: ${from}`, `To: ${sender.email}`, `Subject: ${subject}`, `Date: ${date()}`, `Message-ID: <${randomUUID()}@poison.example>`, "MIME-Version: 1.0", ...extra];
const bouncePoison = () =>
  [...head("Mail Delivery System <MAILER-DAEMON@mx.poison.example>", "Undelivered Mail Returned to Sender", ["Content-Type: text/plain"]), "",
    "This is the mail system at host mx.poison.example.", "", "I'm sorry to have to inform you that your message could not be delivered.", "",
    "\r\n".repeat(300 * KB), "-- The body of the message follows", ""].join("\r\n");
const linkPoison = () =>
  [...head("Stranger <stranger@poison.example>", "Offer", ["Content-Type: text/html; charset=utf-8"]), "", '<a href="https://poison.example/x">'.repeat((116 * KB) / 35)].join("\r\n");
const reply = (ours, i) =>
  [...head(`Lead <${lead.email}>`, "Re: Our offer", ["Content-Type: text/plain; charset=utf-8", `In-Reply-To: ${ours}`, `References: ${ours}`]), "", `Yes, let's talk. (${i})`, ""].join("\r\n");

/** Writes messages into the mailbox's Maildir/new, owned like the lab's own mail, in order. */
function fillMaildir(messages) {
  const dir = join(lab.mail_dir, DOMAIN, "sender8", "Maildir", "new");
  const { uid, gid } = statSync(dir);
  const stamp = Math.floor(Date.now() / 1000);
  messages.forEach((raw, i) => {
    const file = join(dir, `${stamp}.M${String(i).padStart(4, "0")}P${process.pid}.poison`);
    writeFileSync(file, raw);
    chownSync(file, uid, gid);
  });
}

async function readPass(server, mailboxId) {
  const response = await fetch(`${server.url}/admin/v1/email-accounts/${mailboxId}/read-pass`, { method: "POST", headers: { Authorization: `Bearer ${server.adminToken}` } });
  const body = await response.json();
  if (!response.ok) throw new Error(`read-pass: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

function database(server, write = false) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: !write });
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

const stateDir = mkdtempSync(join(tmpdir(), "salvo-bench-poison-"));
const server = await startDevServer({ stateDir, quiet: true });
try {
  const owner = await provisionBenchAccount(server, "bench-poison");
  const apiKey = owner.api_key;
  const { id: mailboxId } = await api(server, apiKey, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, sender.email, sender) });
  await waitForChecks(server, apiKey, [mailboxId]);
  const { id: campaignId } = await api(server, apiKey, "/api/v1/campaigns/create", { method: "POST", body: { name: "bench-poison" } });
  await api(server, apiKey, `/api/v1/campaigns/${campaignId}/leads`, { method: "POST", body: { lead_list: [{ email: lead.email }] } });
  const ours = `<bench-poison-${randomUUID()}@${DOMAIN}>`;
  const db = database(server, true);
  const at = Date.now() - 3_600_000;
  db.prepare(
    `INSERT INTO messages (account_id, campaign_id, campaign_lead_id, step, email_account_id, message_id, status, sent_at, created_at, updated_at)
     SELECT account_id, campaign_id, id, 1, ?, ?, 'sent', ?, ?, ? FROM campaign_leads WHERE campaign_id = ?`,
  ).run(mailboxId, ours, at, at, at, campaignId);
  db.close();
  // Whatever an earlier run left in the INBOX is read first, so the figures below are the poison's alone.
  for (let more = true; more; ) more = (await readPass(server, mailboxId)).more;

  const replies = () => {
    const read = database(server);
    const { n } = read.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ? AND type = 'REPLY'").get(campaignId);
    read.close();
    return n;
  };
  fillMaildir(Array.from({ length: ROUNDS }, (_, i) => [bouncePoison(), linkPoison(), reply(ours, i)]).flat());
  console.log(`${ROUNDS} rounds of (a 600 KB bounce of blank lines, 116 KB of unclosed <a href>, a genuine reply) in one INBOX, ${ROUNDS * 3} messages:`);
  let pass = 0;
  for (; replies() < ROUNDS && pass < 4; pass += 1) {
    const cpu = groupCpuSeconds(server.pid);
    const started = performance.now();
    const result = await readPass(server, mailboxId);
    const wall = performance.now() - started;
    const used = (groupCpuSeconds(server.pid) - cpu) * 1000;
    const read = result.replies + result.bounces + result.untracked;
    console.log(
      `   pass ${pass + 1}: ${read} messages (${result.replies} replies, ${result.bounces} bounces, ${result.untracked} answering nothing), ` +
        `${wall.toFixed(0)} ms wall, ${used.toFixed(0)} ms CPU of the dev server: ${read ? (used / read).toFixed(0) : "-"} ms CPU per message`,
    );
  }
  const recorded = replies();
  console.log(`   ${recorded} of ${ROUNDS} genuine replies recorded after ${pass} pass${pass === 1 ? "" : "es"}`);
  if (recorded < ROUNDS) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
