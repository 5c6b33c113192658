// What a user could run instead of Salvo's engine, against the same lab submission port (STARTTLS + AUTH),
// for bench-engine's side-by-side figures (issue 27, item 5):
//  - the peer: nodemailer's pooled transport, one transport per mailbox with its defaults (what a user
//    would write instead);
//  - two floors of a bare client on raw sockets: a whole session per email (what Salvo did before it
//    reused sessions), and one session per mailbox carrying every message with RSET between them;
//  - the same reused session pipelined as the engine's is (one round trip a message), for a server at a
//    distance (scripts/lib/latency-proxy.mjs), where round trips and not the server's work set the pace.
// Each sends one message, `raw`, that many times, spread over the mailboxes: a whole message as the
// engine sent it, so both sides hand the server the same bytes.
import { readFileSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { connect as connectTls } from "node:tls";
import nodemailer from "nodemailer";

/** Splits `count` sends over the mailboxes and runs each mailbox's share (its recipients, in turn) with `run`; answers emails per second. */
async function spread(senders, count, recipients, run) {
  const shares = senders.map((sender, index) => ({ sender, sends: Array.from({ length: Math.floor(count / senders.length) + (index < count % senders.length ? 1 : 0) }) }));
  const started = performance.now();
  await Promise.all(shares.map(({ sender, sends }) => run(sender, sends.map((_, n) => recipients[(n + senders.indexOf(sender)) % recipients.length]))));
  return count / ((performance.now() - started) / 1000);
}

/** nodemailer's pooled transport, one per mailbox, defaults otherwise. */
export function nodemailerPooled(lab, senders, count, recipients, raw) {
  const ca = readFileSync(lab.ca_file);
  return spread(senders, count, recipients, async (sender, sends) => {
    const transport = nodemailer.createTransport({
      pool: true,
      host: lab.smtp.host,
      port: lab.smtp.port,
      secure: false,
      requireTLS: true,
      auth: { user: sender.email, pass: sender.password },
      tls: { ca, servername: "localhost" },
    });
    try {
      await Promise.all(sends.map((to) => transport.sendMail({ envelope: { from: sender.email, to }, raw })));
    } finally {
      transport.close();
    }
  });
}

/** The message dot-stuffed, with its end-of-data line. */
function dataBlock(raw) {
  const body = raw.replace(/^\./gm, "..");
  return `${body}${body.endsWith("\r\n") ? "" : "\r\n"}.\r\n`;
}

/** A bare SMTP client: reads whole replies, fails on anything but the expected code. */
class BareSession {
  static async open(lab, sender, ca) {
    const session = new BareSession(connectTcp(lab.smtp.port, lab.smtp.host));
    await session.expect(220);
    await session.command("EHLO bench.test", 250);
    await session.command("STARTTLS", 220);
    session.upgrade(ca);
    await session.command("EHLO bench.test", 250);
    await session.command(`AUTH PLAIN ${Buffer.from(`\0${sender.email}\0${sender.password}`).toString("base64")}`, 235);
    return session;
  }

  constructor(socket) {
    this.attach(socket);
  }

  attach(socket) {
    this.socket = socket;
    this.buffer = "";
    this.waiting = null;
    socket.on("data", (chunk) => {
      this.buffer += chunk.toString("latin1");
      this.settle();
    });
    socket.on("error", (error) => this.waiting?.reject(error));
  }

  upgrade(ca) {
    const plain = this.socket;
    plain.removeAllListeners("data");
    this.attach(connectTls({ socket: plain, ca, servername: "localhost" }));
  }

  settle() {
    if (!this.waiting) return;
    const lines = this.buffer.split("\r\n");
    const last = lines.findIndex((line) => /^\d{3} /.test(line) || /^\d{3}$/.test(line));
    if (last < 0) return;
    const reply = lines.slice(0, last + 1).join("\n");
    this.buffer = lines.slice(last + 1).join("\r\n");
    const { resolve, reject, code } = this.waiting;
    this.waiting = null;
    if (Number(reply.slice(0, 3)) === code) resolve(reply);
    else reject(new Error(`expected ${code}, got ${reply}`));
  }

  expect(code) {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, code };
      this.settle();
    });
  }

  command(line, code) {
    this.socket.write(`${line}\r\n`);
    return this.expect(code);
  }

  async send(from, to, raw) {
    await this.command(`MAIL FROM:<${from}>`, 250);
    await this.command(`RCPT TO:<${to}>`, 250);
    await this.command("DATA", 354);
    this.socket.write(dataBlock(raw));
    await this.expect(250);
  }

  async quit() {
    await this.command("QUIT", 221).catch(() => {});
    this.socket.destroy();
  }
}

/** The floor of one session per email: connect, STARTTLS, AUTH, one message, QUIT. */
export function bareSessionPerEmail(lab, senders, count, recipients, raw) {
  const ca = readFileSync(lab.ca_file);
  return spread(senders, count, recipients, async (sender, sends) => {
    for (const to of sends) {
      const session = await BareSession.open(lab, sender, ca);
      await session.send(sender.email, to, raw);
      await session.quit();
    }
  });
}

/** The floor of one session per mailbox: every message on it, RSET between them. */
export function bareReusedSession(lab, senders, count, recipients, raw) {
  const ca = readFileSync(lab.ca_file);
  return spread(senders, count, recipients, async (sender, sends) => {
    const session = await BareSession.open(lab, sender, ca);
    for (const [index, to] of sends.entries()) {
      if (index > 0) await session.command("RSET", 250);
      await session.send(sender.email, to, raw);
    }
    await session.quit();
  });
}

/**
 * The floor of the engine's own protocol on one session per mailbox: PIPELINING (RFC 2920), each
 * message's envelope (RSET, MAIL, RCPT, DATA) written behind the message before it, so a message costs
 * one round trip, as the engine's do. Where the server is far, this is the client to be measured against.
 */
export function bareReusedPipelined(lab, senders, count, recipients, raw) {
  const ca = readFileSync(lab.ca_file);
  const block = dataBlock(raw);
  return spread(senders, count, recipients, async (sender, sends) => {
    const session = await BareSession.open(lab, sender, ca);
    const envelope = (to, first) => `${first ? "" : "RSET\r\n"}MAIL FROM:<${sender.email}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`;
    const answers = async (first) => {
      for (const code of first ? [250, 250, 354] : [250, 250, 250, 354]) await session.expect(code);
    };
    session.socket.write(envelope(sends[0], true));
    await answers(true);
    for (let index = 0; index < sends.length; index += 1) {
      const next = sends[index + 1];
      session.socket.write(next === undefined ? block : block + envelope(next, false));
      await session.expect(250);
      if (next !== undefined) await answers(false);
    }
    await session.quit();
  });
}
