/**
 * SMTP submission from the Worker over `cloudflare:sockets` (issue 13, item 3): implicit TLS or
 * STARTTLS (required: a server that does not offer it is refused, never used in clear), AUTH PLAIN or
 * LOGIN, one message to one recipient per session. Every step is bounded by a timeout, and every
 * failure comes back as an SmtpFailure with the server's own code and text (smtp-replies.ts).
 * Our own client rather than `worker-mailer` 1.2.1, which goes on in clear (AUTH included) when a
 * STARTTLS server's EHLO does not offer STARTTLS, spins forever on a connection the server closed
 * (its read loop ignores end of stream, so not even its own timeout fires), hands back reply codes
 * only inside error messages, and adds `NOTIFY=NEVER` to RCPT on servers with DSN, which suppresses
 * the bounce reports the engine reads back.
 */
import { connect } from "cloudflare:sockets";
import { connectRefusal, type OutboundPolicy } from "../platform/outbound";
import { quiet } from "./socket-errors";
import { isAddress } from "./address";
import { buildMime, mailbox, type MimeMessage } from "./mime";
import { classifyReply, connectionFailure, parseReply, type SmtpFailure, type SmtpReply, type SmtpStage } from "./smtp-replies";

export interface SmtpSettings {
  host: string;
  port: number;
  security: "starttls" | "tls" | "plain";
  username: string;
  password: string;
}

export interface SmtpOptions {
  /** Plain (unencrypted) SMTP is refused unless the caller's config allows it (local development only). */
  allowPlain: boolean;
  /** The outbound rule the server's host must pass before any connection (src/platform/outbound.ts `mailPolicy`). */
  outbound: OutboundPolicy;
  /** Limit for connecting and for each server reply; 10 s by default. */
  timeoutMs?: number;
  /** The name given in EHLO; by default the domain of the username (or `[127.0.0.1]`). */
  heloName?: string;
}

export type SendResult = { ok: true; messageId: string; reply: SmtpReply } | { ok: false; failure: SmtpFailure };
export type CheckResult = { ok: true; reply: SmtpReply } | { ok: false; failure: SmtpFailure };

const DEFAULT_TIMEOUT_MS = 10_000;

/** Ends the session with the failure it carries; thrown inside, returned by the public functions. */
class SmtpError extends Error {
  constructor(readonly failure: SmtpFailure) {
    super(failure.text);
  }
}

function deadline<T>(promise: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new SmtpError(connectionFailure(`timed out after ${ms} ms waiting for ${what}`)));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const encoder = new TextEncoder();

class Session {
  private socket: Socket;
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private decoder = new TextDecoder();
  private buffer = "";

  constructor(
    private readonly settings: SmtpSettings,
    private readonly timeoutMs: number,
  ) {
    this.socket = connect(
      { hostname: settings.host, port: settings.port },
      { secureTransport: { tls: "on", starttls: "starttls", plain: "off" }[settings.security], allowHalfOpen: false },
    );
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
    quiet(this.socket, this.reader, this.writer);
  }

  private within<T>(promise: Promise<T>, what: string): Promise<T> {
    return deadline(promise, this.timeoutMs, what, () => this.close());
  }

  async opened(): Promise<void> {
    await this.within(this.socket.opened, `a connection to ${this.settings.host}:${this.settings.port}`);
  }

  private async line(what: string): Promise<string> {
    for (;;) {
      const end = this.buffer.indexOf("\r\n");
      if (end >= 0) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return line;
      }
      const { value, done } = await this.within(this.reader.read(), what);
      if (done) throw new SmtpError(connectionFailure(`the server closed the connection while we waited for ${what}`));
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  async reply(what: string): Promise<SmtpReply> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.line(what);
      lines.push(line);
      if (line.charAt(3) !== "-") break;
    }
    const reply = parseReply(lines);
    if (!reply) throw new SmtpError(connectionFailure(`not an SMTP reply to ${what}: ${lines.join("\n").slice(0, 200)}`));
    return reply;
  }

  async write(data: string): Promise<void> {
    await this.within(this.writer.write(encoder.encode(data)), "the server to take our data");
  }

  /** Sends a command and reads its reply; a reply outside `expected` ends the session, classified. */
  async command(stage: SmtpStage, line: string, expected: number[], shown = line): Promise<SmtpReply> {
    await this.write(`${line}\r\n`);
    return this.expect(stage, expected, `the answer to ${shown}`);
  }

  async expect(stage: SmtpStage, expected: number[], what: string): Promise<SmtpReply> {
    const reply = await this.reply(what);
    if (!expected.includes(reply.code)) throw new SmtpError(classifyReply(stage, reply));
    return reply;
  }

  /** Upgrades to TLS after `220` to STARTTLS; anything the server sent beyond that reply is refused (RFC 3207 5). */
  startTls(): void {
    if (this.buffer !== "") throw new SmtpError(connectionFailure("the server sent data after its STARTTLS reply"));
    this.reader.releaseLock();
    this.writer.releaseLock();
    this.socket = this.socket.startTls();
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
    quiet(this.socket, this.reader, this.writer);
    this.decoder = new TextDecoder();
  }

  close(): void {
    this.socket.close().catch(() => {});
  }
}

function ehloName(settings: SmtpSettings, options: SmtpOptions): string {
  if (options.heloName) return options.heloName;
  const domain = settings.username.split("@")[1];
  return domain && /^[A-Za-z0-9.-]+$/.test(domain) ? domain : "[127.0.0.1]";
}

/** Greeting, EHLO, STARTTLS when asked, EHLO again, AUTH. Returns the AUTH reply. */
async function login(session: Session, settings: SmtpSettings, options: SmtpOptions): Promise<SmtpReply> {
  await session.opened();
  await session.expect("greeting", [220], "the greeting");
  const helo = ehloName(settings, options);
  let ehlo = await session.command("ehlo", `EHLO ${helo}`, [250]);
  if (settings.security === "starttls") {
    if (!/^250[ -]STARTTLS\b/im.test(ehlo.text)) {
      throw new SmtpError(connectionFailure(`the server does not offer STARTTLS; refusing to continue in clear:\n${ehlo.text}`));
    }
    await session.command("starttls", "STARTTLS", [220]);
    session.startTls();
    ehlo = await session.command("ehlo", `EHLO ${helo}`, [250]);
  }
  const offered = /^250[ -]AUTH[ =](.*)$/im.exec(ehlo.text)?.[1]?.toUpperCase().split(/\s+/) ?? [];
  if (offered.includes("PLAIN")) {
    const token = base64Utf8(`\0${settings.username}\0${settings.password}`);
    return session.command("auth", `AUTH PLAIN ${token}`, [235], "AUTH PLAIN");
  }
  if (offered.includes("LOGIN")) {
    await session.command("auth", "AUTH LOGIN", [334]);
    await session.command("auth", base64Utf8(settings.username), [334], "the AUTH LOGIN username");
    return session.command("auth", base64Utf8(settings.password), [235], "the AUTH LOGIN password");
  }
  throw new SmtpError({
    kind: "auth_failed",
    code: null,
    text: `the server offers no AUTH PLAIN or LOGIN${offered.length ? ` (it offers ${offered.join(" ")})` : ""}`,
  });
}

function base64Utf8(text: string): string {
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Dot-stuffing (RFC 5321 4.5.2) and the end-of-data line. */
function dataBlock(raw: string): string {
  const body = raw.endsWith("\r\n") ? raw : `${raw}\r\n`;
  return `${body.replace(/^\./gm, "..")}.\r\n`;
}

async function session<T>(
  settings: SmtpSettings,
  options: SmtpOptions,
  run: (session: Session) => Promise<T>,
): Promise<T | { ok: false; failure: SmtpFailure }> {
  if (settings.security === "plain" && !options.allowPlain) {
    return {
      ok: false,
      failure: { kind: "permanent", code: null, text: "unencrypted SMTP is refused: use implicit TLS or STARTTLS" },
    };
  }
  const refused = await connectRefusal(settings.host, options.outbound);
  if (refused) return { ok: false, failure: connectionFailure(refused.message) };
  let open: Session;
  try {
    open = new Session(settings, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  } catch (error) {
    return { ok: false, failure: connectionFailure(`cannot connect: ${(error as Error).message}`) };
  }
  try {
    return await run(open);
  } catch (error) {
    if (error instanceof SmtpError) return { ok: false, failure: error.failure };
    // The runtime reports TLS failures (such as an untrusted certificate) only as "internal error".
    return { ok: false, failure: connectionFailure(`connection or TLS failure: ${(error as Error).message}`) };
  } finally {
    open.close();
  }
}

async function quit(session: Session): Promise<void> {
  await session.command("ehlo", "QUIT", [221]).catch(() => {});
}

/** EHLO and AUTH only (no mail): what saving a mailbox records as `is_smtp_success`. */
export function checkSmtp(settings: SmtpSettings, options: SmtpOptions): Promise<CheckResult> {
  return session(settings, options, async (open) => {
    const reply = await login(open, settings, options);
    await quit(open);
    return { ok: true as const, reply };
  });
}

/**
 * Sends one message to one recipient (and blind copies, `options.bcc`, on the same transaction). `messageId` is the Message-ID it went out with (the caller's
 * own header, or one made here); `reply` is the server's answer to the message (250 ... queued as ...).
 */
export async function sendMail(settings: SmtpSettings, message: MimeMessage, options: SmtpOptions & { bcc?: string[] }): Promise<SendResult> {
  const to = mailbox(message.to).email;
  if (!isAddress(to)) return { ok: false, failure: { kind: "recipient_rejected", code: null, text: `invalid recipient address ${JSON.stringify(to)}` } };
  let built: { raw: string; messageId: string };
  try {
    built = buildMime(message);
  } catch (error) {
    return { ok: false, failure: { kind: "permanent", code: null, text: (error as Error).message } };
  }
  const from = mailbox(message.from).email;
  return session(settings, options, async (open) => {
    await login(open, settings, options);
    await open.command("mail", `MAIL FROM:<${from}>`, [250]);
    await open.command("rcpt", `RCPT TO:<${to}>`, [250, 251]);
    // A refused copy (the mailbox's own bcc) must not cost the lead's email: it is left out.
    for (const copy of (options.bcc ?? []).filter(isAddress)) {
      await open.command("rcpt", `RCPT TO:<${copy}>`, [250, 251]).catch((error: unknown) => {
        if (!(error instanceof SmtpError) || error.failure.kind === "connection") throw error;
      });
    }
    await open.command("data", "DATA", [354]);
    await open.write(dataBlock(built.raw));
    const reply = await open.expect("message", [250], "the answer to the message");
    await quit(open);
    return { ok: true as const, messageId: built.messageId, reply };
  });
}
