// `npm run bench:warmup`, part 2 (inside scripts/with-mail-lab.mjs): the reader's extra cost per pass
// with warmup on (issue 26), against a throwaway `npm run dev` and the lab.
//
// One receiving mailbox (warm9) holds 500 ordinary messages. Each round times two read passes through
// the operator route (the pass the mailbox's object runs):
//  - plain: one new ordinary message, no warmup mail awaited (warmup off, or on with everything placed);
//  - warmup: one new ordinary message and K warmup emails from warm10, delivered by the lab's Postfix
//    (its Sieve files those whose Message-ID starts `<wu.[0-3]` into Junk, a quarter), recorded as sent
//    in warmup_messages the way the sender's object records them; the pass keeps them out of the
//    replies, finds each in INBOX or Junk, moves the Junk ones back, marks them read and important.
// Prints the medians and the extra cost per pass and per warmup email, for bench/RESULTS.md.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fillMaildir, labMailboxBody, readPass, smtpSend, waitForChecks } from "./lib/bench-mail.mjs";
import { api, localD1File, percentile, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 15);
const BATCHES = (process.env.BENCH_WARMUP_AWAITED ?? "1,10").split(",").map(Number);
const receiver = lab.mailboxes.find((m) => m.email.startsWith("warm9@"));
const sender = lab.mailboxes.find((m) => m.email.startsWith("warm10@"));

const ordinary = (tag) =>
  [`From: someone@news.example`, `To: ${receiver.email}`, `Subject: Note ${tag}`, `Date: ${new Date().toUTCString()}`, `Message-ID: <plain-${tag}@news.example>`, "", `Nothing about warmup (${tag}).`, ""].join("\r\n");
const warmupEmail = (messageId, subject) =>
  [`From: Warm Ten <${sender.email}>`, `To: ${receiver.email}`, `Subject: ${subject}`, `Date: ${new Date().toUTCString()}`, `Message-ID: ${messageId}`, "", "Hi, how did the week go? Talk soon.", ""].join("\r\n");

/** Messages in a Maildir folder of the receiver (`""` INBOX, `".Junk"` the spam folder), new and cur. */
function held(folder) {
  const base = join(lab.mail_dir, receiver.email.split("@")[1], receiver.email.split("@")[0], "Maildir", folder);
  return ["new", "cur"].reduce((n, sub) => n + (existsSync(join(base, sub)) ? readdirSync(join(base, sub)).length : 0), 0);
}

/** K warmup emails recorded as the sender's object records them, then sent through the lab; answers when all are delivered. */
async function sendWarmup(server, ids, k, round) {
  const before = held("") + held(".Junk");
  const db = new DatabaseSync(localD1File(server.stateDir));
  db.exec("PRAGMA busy_timeout = 5000");
  const insert = db.prepare("INSERT INTO warmup_messages (sender_id, receiver_id, kind, message_id, subject, sent_at) VALUES (?, ?, 'warmup', ?, ?, ?)");
  const messages = Array.from({ length: k }, (_, i) => ({ id: `<wu.${randomBytes(12).toString("hex")}@lab.salvo.test>`, subject: `Catching up ${round}.${i}` }));
  for (const m of messages) insert.run(ids.sender, ids.receiver, m.id, m.subject, Date.now());
  db.close();
  for (const m of messages) await smtpSend(lab, sender, receiver.email, warmupEmail(m.id, m.subject));
  for (const started = Date.now(); held("") + held(".Junk") < before + k; ) {
    if (Date.now() - started > 60_000) throw new Error("the lab did not deliver the warmup mail");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return messages.filter((m) => /^<wu\.[0-3]/.test(m.id)).length;
}

function placed(server, ids) {
  const db = new DatabaseSync(localD1File(server.stateDir), { readOnly: true });
  const row = db.prepare("SELECT count(*) AS open FROM warmup_messages WHERE receiver_id = ? AND landed IS NULL").get(ids.receiver);
  db.close();
  return row.open === 0;
}

async function timedPass(server, mailboxId) {
  const start = performance.now();
  await readPass(server, mailboxId);
  return performance.now() - start;
}

const stateDir = mkdtempSync(join(tmpdir(), "salvo-bench-warmup-"));
const server = await startDevServer({ stateDir, quiet: true });
try {
  const owner = await provisionBenchAccount(server, "bench-warmup");
  // Warmup stays off on both: the benchmark drives the sends itself, so no object's own warmup pass runs in between.
  const save = (box) => api(server, owner.api_key, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, box.email, box) });
  const ids = { receiver: (await save(receiver)).id, sender: (await save(sender)).id };
  await waitForChecks(server, owner.api_key, [ids.receiver, ids.sender]);
  fillMaildir(lab, receiver, Array.from({ length: 500 }, (_, i) => ordinary(`backlog-${i}`)));
  for (let more = true; more; ) more = (await readPass(server, ids.receiver)).more;

  const plain = [];
  const withWarmup = new Map(BATCHES.map((k) => [k, []]));
  let junked = 0;
  let sent = 0;
  for (let round = 0; round < ROUNDS; round++) {
    fillMaildir(lab, receiver, [ordinary(`plain-${round}`)]);
    plain.push(await timedPass(server, ids.receiver));
    for (const k of BATCHES) {
      junked += await sendWarmup(server, ids, k, `${round}-${k}`);
      sent += k;
      fillMaildir(lab, receiver, [ordinary(`warm-${round}-${k}`)]);
      withWarmup.get(k).push(await timedPass(server, ids.receiver));
      if (!placed(server, ids)) throw new Error("a read pass left warmup mail unplaced");
    }
  }
  const median = (values) => percentile([...values].sort((a, b) => a - b), 50);
  const base = median(plain);
  console.log(`receiver: 500-message INBOX, ${ROUNDS} rounds; ${sent} warmup emails delivered by the lab, ${junked} of them filed into Junk and moved back`);
  console.log(`plain pass (one new ordinary message, nothing awaited): median ${base.toFixed(1)} ms, p95 ${percentile([...plain].sort((a, b) => a - b), 95).toFixed(1)} ms`);
  for (const [k, values] of withWarmup) {
    const m = median(values);
    console.log(`pass placing ${k} warmup email(s) too: median ${m.toFixed(1)} ms; extra ${(m - base).toFixed(1)} ms a pass, ${((m - base) / k).toFixed(1)} ms a warmup email`);
  }
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
