// `npm run mail-lab:check`: proves a running mail lab (npm run mail-lab) works end to end, with a
// minimal SMTP and IMAP dialogue over node:net/node:tls that trusts only the lab's own CA.
// Prints one PASS/FAIL line per check and exits non-zero if any failed.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { labTokens, xoauth2 } from "./lib/lab-oauth-client.mjs";
import { LAB_JSON as jsonPath } from "./lib/mail-lab.mjs";

const GTUBE = "XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X";
const TIMEOUT_MS = 10000;

if (!existsSync(jsonPath)) {
  console.error("FAIL .mail-lab.json not found: start the lab first (npm run mail-lab).");
  process.exit(1);
}
const lab = JSON.parse(readFileSync(jsonPath, "utf8"));
const ca = readFileSync(lab.ca_file);
const box = (role, local) => lab.mailboxes.find((m) => m.role === role && m.email.startsWith(`${local}@`));
const sender1 = box("sender", "sender1");
const lead1 = box("lead", "lead1");
const seedGmail = box("seed", "seed-gmail");

/** A line-oriented connection that can be upgraded to TLS in place (STARTTLS). */
class Conn {
  constructor(socket) {
    this.buffer = "";
    this.waiters = [];
    this.attach(socket);
  }

  static open({ host, port }, implicitTls) {
    return new Promise((resolve, reject) => {
      const socket = implicitTls
        ? tlsConnect({ host, port, ca, servername: "localhost" }, () => resolve(new Conn(socket)))
        : netConnect({ host, port }, () => resolve(new Conn(socket)));
      socket.once("error", reject);
      socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error(`timeout talking to ${host}:${port}`)));
    });
  }

  attach(socket) {
    this.socket = socket;
    this.onData = (chunk) => {
      this.buffer += chunk.toString("latin1");
      this.flush();
    };
    this.onError = (error) => {
      for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    };
    socket.on("data", this.onData);
    socket.on("error", this.onError);
  }

  flush() {
    while (this.waiters.length > 0) {
      const index = this.buffer.indexOf("\r\n");
      if (index < 0) return;
      const line = this.buffer.slice(0, index);
      this.buffer = this.buffer.slice(index + 2);
      this.waiters.shift().resolve(line);
    }
  }

  line() {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.flush();
    });
  }

  write(text) {
    this.socket.write(text);
  }

  upgrade() {
    this.socket.off("data", this.onData);
    this.socket.off("error", this.onError);
    return new Promise((resolve, reject) => {
      const secure = tlsConnect({ socket: this.socket, ca, servername: "localhost" }, () => {
        secure.off("error", reject);
        this.attach(secure);
        resolve(secure);
      });
      secure.once("error", reject);
    });
  }

  close() {
    this.socket.destroy();
  }
}

/** Reads one SMTP reply (all its continuation lines) and returns { code, text }. */
async function smtpReply(conn) {
  const lines = [];
  for (;;) {
    const line = await conn.line();
    lines.push(line);
    if (line[3] !== "-") return { code: Number(line.slice(0, 3)), text: lines.join("\n") };
  }
}

async function smtpCommand(conn, command, expected) {
  conn.write(`${command}\r\n`);
  const reply = await smtpReply(conn);
  if (expected !== undefined && reply.code !== expected) {
    const shown = command.startsWith("AUTH") ? "AUTH ..." : command;
    throw new Error(`${shown} answered ${reply.text}`);
  }
  return reply;
}

/**
 * One SMTP session: connect (STARTTLS, implicit TLS or plain), AUTH PLAIN, one message.
 * Returns the server's reply to the first failing step's command instead of throwing when asked to.
 */
async function submit({ endpoint, user, password, to, subject, body, token }) {
  const conn = await Conn.open(endpoint, endpoint.security === "tls");
  try {
    if ((await smtpReply(conn)).code !== 220) throw new Error("no 220 greeting");
    let ehlo = await smtpCommand(conn, "EHLO check.local", 250);
    if (endpoint.security === "starttls") {
      if (/AUTH/.test(ehlo.text)) throw new Error("AUTH is offered before STARTTLS");
      await smtpCommand(conn, "STARTTLS", 220);
      await conn.upgrade();
      ehlo = await smtpCommand(conn, "EHLO check.local", 250);
    }
    const mechanism = token ? "XOAUTH2" : "PLAIN";
    if (!new RegExp(`AUTH[ =][^\\n]*${mechanism}`).test(ehlo.text)) throw new Error(`AUTH ${mechanism} not offered: ${ehlo.text}`);
    const initial = token ? xoauth2(user, token) : Buffer.from(`\0${user}\0${password}`).toString("base64");
    let auth = await smtpCommand(conn, `AUTH ${mechanism} ${initial}`);
    // A refused XOAUTH2 login first sends its reason as a 334 challenge, answered with an empty line.
    if (auth.code === 334) auth = await smtpCommand(conn, "");
    if (auth.code !== 235) return { stage: "auth", reply: auth };
    await smtpCommand(conn, `MAIL FROM:<${user}>`, 250);
    const rcpt = await smtpCommand(conn, `RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return { stage: "rcpt", reply: rcpt };
    await smtpCommand(conn, "DATA", 354);
    const messageId = `<${randomBytes(8).toString("hex")}@check.lab.salvo.test>`;
    const message = [
      `From: <${user}>`,
      `To: <${to}>`,
      `Subject: ${subject}`,
      `Message-ID: ${messageId}`,
      `Date: ${new Date().toUTCString()}`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "",
      body,
    ].join("\r\n");
    const queued = await smtpCommand(conn, `${message}\r\n.`, 250);
    await smtpCommand(conn, "QUIT", 221);
    return { stage: "sent", reply: queued, messageId };
  } finally {
    conn.close();
  }
}

let tagCount = 0;

/** Sends one tagged IMAP command and returns its untagged lines; throws unless it ends OK. */
async function imapCommand(conn, command) {
  const tag = `C${++tagCount}`;
  conn.write(`${tag} ${command}\r\n`);
  const untagged = [];
  for (;;) {
    const line = await conn.line();
    if (line.startsWith(`${tag} `)) {
      const shown = /^(LOGIN|AUTHENTICATE) /.test(command) ? command.split(" ")[0] : command;
      if (!line.startsWith(`${tag} OK`)) throw new Error(`${shown} answered ${line}`);
      return untagged;
    }
    // A refused XOAUTH2 login first sends its reason as a continuation, answered with an empty line.
    if (line.startsWith("+ ")) conn.write("\r\n");
    else untagged.push(line);
  }
}

const quote = (text) => `"${text.replace(/["\\]/g, "\\$&")}"`;

/** Polls a mailbox folder over IMAP until a message with this subject appears; returns the folders it is in. */
async function findOverImap({ endpoint, user, password, subject, folders, token }) {
  const conn = await Conn.open(endpoint, endpoint.security === "tls");
  try {
    const greeting = await conn.line();
    if (!greeting.startsWith("* OK")) throw new Error(`IMAP greeting ${greeting}`);
    if (endpoint.security === "starttls") {
      await imapCommand(conn, "STARTTLS");
      await conn.upgrade();
    }
    await imapCommand(conn, token ? `AUTHENTICATE XOAUTH2 ${xoauth2(user, token)}` : `LOGIN ${quote(user)} ${quote(password)}`);
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const found = [];
      for (const folder of folders) {
        await imapCommand(conn, `EXAMINE ${quote(folder)}`);
        const lines = await imapCommand(conn, `UID SEARCH HEADER Subject ${quote(subject)}`);
        if (lines.some((line) => /^\* SEARCH \d/.test(line))) found.push(folder);
      }
      if (found.length > 0 || Date.now() > deadline) {
        await imapCommand(conn, "LOGOUT").catch(() => {});
        return found;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    conn.close();
  }
}

let failures = 0;
async function check(name, run) {
  try {
    const detail = await run();
    console.log(`PASS ${name}${detail ? ` (${detail})` : ""}`);
  } catch (error) {
    failures++;
    console.log(`FAIL ${name}: ${error.message}`);
  }
}

const run = randomBytes(4).toString("hex");
const imapStarttls = lab.imap;
const imapTls = lab.imap_tls ?? lab.imap;

await check(`SMTP ${lab.smtp.security} ${lab.smtp.port} + AUTH: sender1 -> lead1, then IMAP ${lab.imap.security} ${lab.imap.port}: in lead1's INBOX`, async () => {
  const subject = `lab check ${run} plain`;
  const sent = await submit({ endpoint: lab.smtp, user: sender1.email, password: sender1.password, to: lead1.email, subject, body: "Hello from the mail lab check." });
  if (sent.stage !== "sent") throw new Error(`${sent.stage} answered ${sent.reply.text}`);
  const found = await findOverImap({ endpoint: imapStarttls, user: lead1.email, password: lead1.password, subject, folders: ["INBOX", "Junk"] });
  if (found.join() !== "INBOX") throw new Error(`found in [${found.join(", ")}], expected INBOX only`);
  return sent.reply.text;
});

await check("GTUBE: sender1 -> seed-gmail is filed into seed-gmail's Junk (not INBOX)", async () => {
  const subject = `lab check ${run} gtube`;
  const sent = await submit({ endpoint: lab.smtp, user: sender1.email, password: sender1.password, to: seedGmail.email, subject, body: `This is spam by definition.\r\n${GTUBE}` });
  if (sent.stage !== "sent") throw new Error(`${sent.stage} answered ${sent.reply.text}`);
  const found = await findOverImap({ endpoint: imapTls, user: seedGmail.email, password: seedGmail.password, subject, folders: ["INBOX", "Junk"] });
  if (found.join() !== "Junk") throw new Error(`found in [${found.join(", ")}], expected Junk only`);
});

for (const key of ["smtp_tls", "smtp_plain"]) {
  if (!lab[key]) continue;
  await check(`SMTP ${lab[key].security} ${lab[key].port} + AUTH delivers too`, async () => {
    const subject = `lab check ${run} ${key}`;
    const sent = await submit({ endpoint: lab[key], user: sender1.email, password: sender1.password, to: lead1.email, subject, body: `Sent over ${key}.` });
    if (sent.stage !== "sent") throw new Error(`${sent.stage} answered ${sent.reply.text}`);
    const found = await findOverImap({ endpoint: imapTls, user: lead1.email, password: lead1.password, subject, folders: ["INBOX"] });
    if (found.length !== 1) throw new Error("not delivered to lead1's INBOX");
  });
}

await check("the lab's OAuth provider: sender1 (Google-style app) and lead1 (Microsoft-style) sign in; SMTP AUTH XOAUTH2 sender1 -> lead1, IMAP AUTHENTICATE XOAUTH2 finds it", async () => {
  if (!lab.oauth) throw new Error(".mail-lab.json has no oauth: restart the lab");
  const subject = `lab check ${run} xoauth2`;
  const senderToken = (await labTokens(lab, "google", sender1.email)).access_token;
  const sent = await submit({ endpoint: lab.smtp_tls, user: sender1.email, token: senderToken, to: lead1.email, subject, body: "Sent with an OAuth token." });
  if (sent.stage !== "sent") throw new Error(`${sent.stage} answered ${sent.reply.text}`);
  const leadToken = (await labTokens(lab, "microsoft", lead1.email)).access_token;
  const found = await findOverImap({ endpoint: imapTls, user: lead1.email, token: leadToken, subject, folders: ["INBOX"] });
  if (found.length !== 1) throw new Error("not found in lead1's INBOX");
});

await check("a made-up OAuth token is refused with 535", async () => {
  const sent = await submit({ endpoint: lab.smtp_tls, user: sender1.email, token: "made-up", to: lead1.email, subject: "x", body: "x" });
  if (sent.stage !== "auth" || sent.reply.code !== 535) throw new Error(`got ${sent.stage}: ${sent.reply.text}`);
  return sent.reply.text;
});

await check("a wrong password is refused with 535", async () => {
  const sent = await submit({ endpoint: lab.smtp, user: sender1.email, password: "wrong", to: lead1.email, subject: "x", body: "x" });
  if (sent.stage !== "auth" || sent.reply.code !== 535) throw new Error(`got ${sent.stage}: ${sent.reply.text}`);
  return sent.reply.text;
});

await check("an unknown lab address is refused at RCPT with 550", async () => {
  const sent = await submit({ endpoint: lab.smtp, user: sender1.email, password: sender1.password, to: `nobody-${run}@lab.salvo.test`, subject: "x", body: "x" });
  if (sent.stage !== "rcpt" || sent.reply.code !== 550) throw new Error(`got ${sent.stage}: ${sent.reply.text}`);
  return sent.reply.text;
});

await check("mail to any other domain is refused (the lab never relays)", async () => {
  const sent = await submit({ endpoint: lab.smtp, user: sender1.email, password: sender1.password, to: "someone@example.com", subject: "x", body: "x" });
  if (sent.stage !== "rcpt" || sent.reply.code < 500) throw new Error(`got ${sent.stage}: ${sent.reply.text}`);
  return sent.reply.text;
});

if (!lab.rspamd) console.log("SKIP Rspamd: the lab runs without it (MAIL_LAB_RSPAMD=off)");
else await check("Rspamd answers /checkv2: a clean message is not rejected, GTUBE is", async () => {
  const score = async (body) => {
    const message = `From: ${sender1.email}\r\nTo: ${seedGmail.email}\r\nSubject: lab check ${run} rspamd\r\nMessage-ID: <rspamd-${run}@lab.salvo.test>\r\n\r\n${body}\r\n`;
    const response = await fetch(`${lab.rspamd.url}/checkv2`, { method: "POST", body: message });
    if (!response.ok) throw new Error(`rspamd answered ${response.status}`);
    return response.json();
  };
  const clean = await score("Hello, a plain note between colleagues.");
  const gtube = await score(`Spam by definition.\r\n${GTUBE}`);
  if (clean.action === "reject") throw new Error(`the clean message was rejected (score ${clean.score})`);
  if (gtube.action !== "reject") throw new Error(`GTUBE got action ${gtube.action}`);
  return `clean ${clean.score}/${clean.required_score} ${clean.action}; GTUBE ${gtube.action}`;
});

console.log(failures === 0 ? "mail lab: all checks passed" : `mail lab: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
