/**
 * SMTP submission from the Worker over `cloudflare:sockets` (issue 13, item 3): implicit TLS or
 * STARTTLS (required: a server that does not offer it is refused, never used in clear), AUTH PLAIN or
 * LOGIN, one message to one recipient per session. Every command is bounded in time and in what the
 * server may send back (line-socket.ts), and every failure comes back as an SmtpFailure with the server's own code and text (smtp-replies.ts).
 * Our own client rather than `worker-mailer` 1.2.1, which goes on in clear (AUTH included) when a
 * STARTTLS server's EHLO does not offer STARTTLS, spins forever on a connection the server closed
 * (its read loop ignores end of stream, so not even its own timeout fires), hands back reply codes
 * only inside error messages, and adds `NOTIFY=NEVER` to RCPT on servers with DSN, which suppresses
 * the bounce reports the engine reads back.
 */
import { LineSocket, LineSocketError } from "./line-socket";
import { connectRefusal, type OutboundPolicy } from "../platform/outbound";
import { needsSmtpUtf8, smtpAddress } from "./address";
import { buildMime, mailbox, type MimeMessage } from "./mime";
import { classifyReply, connectionFailure, parseReply, type SmtpFailure, type SmtpReply, type SmtpStage } from "./smtp-replies";
import { utf8Base64 } from "../platform/bytes";
import { oauthErrorAcknowledgement, oauthInitialResponse, oauthMechanism, type MailCredential } from "./sasl";

export type SmtpSettings = {
  host: string;
  port: number;
  security: "starttls" | "tls" | "plain";
  username: string;
} & MailCredential;

interface SmtpOptions {
  /** Plain (unencrypted) SMTP is refused unless the caller's config allows it (local development only). */
  allowPlain: boolean;
  /** The outbound rule the server's host must pass before any connection (src/platform/outbound.ts `mailPolicy`). */
  outbound: OutboundPolicy;
  /** Limit for connecting and greeting, and for each command with its reply; 10 s by default. */
  timeoutMs?: number;
  /** The name given in EHLO; by default the domain of the username (or `[127.0.0.1]`). */
  heloName?: string;
}

type SendResult = { ok: true; messageId: string; reply: SmtpReply } | { ok: false; failure: SmtpFailure };
type CheckResult = { ok: true; reply: SmtpReply } | { ok: false; failure: SmtpFailure };

const DEFAULT_TIMEOUT_MS = 10_000;
/** The most an SMTP reply may take, continuation lines included (an EHLO answer is a few hundred bytes). */
const MAX_REPLY_BYTES = 64 * 1024;

/** Ends the session with the failure it carries; thrown inside, returned by the public functions. */
class SmtpError extends Error {
  constructor(readonly failure: SmtpFailure) {
    super(failure.text);
  }
}

/**
 * One SMTP session over the shared line socket: each command and its reply is one exchange (one
 * deadline, one byte budget). A session can carry several transactions (RSET between them) when
 * the sender reuses it; today each message opens its own.
 */
class Session {
  private readonly socket: LineSocket;

  constructor(
    private readonly settings: SmtpSettings,
    private readonly timeoutMs: number,
  ) {
    this.socket = new LineSocket(settings);
  }

  /** One exchange; a socket failure (timeout, closed, too large, TLS) ends the session as `connection`. */
  private async exchange<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await this.socket.within(what, { timeoutMs: this.timeoutMs, maxBytes: MAX_REPLY_BYTES }, run);
    } catch (error) {
      if (error instanceof LineSocketError) throw new SmtpError(connectionFailure(error.message));
      throw error;
    }
  }

  /** Connects and reads the greeting. */
  async greeting(): Promise<SmtpReply> {
    return this.exchange("the greeting", async () => {
      await this.socket.opened();
      return this.expected("greeting", [220], await this.reply("the greeting"));
    });
  }

  private async reply(what: string): Promise<SmtpReply> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.socket.line();
      lines.push(line);
      if (line.charAt(3) !== "-") break;
    }
    const reply = parseReply(lines);
    if (!reply) throw new SmtpError(connectionFailure(`not an SMTP reply to ${what}: ${lines.join("\n").slice(0, 200)}`));
    return reply;
  }

  private expected(stage: SmtpStage, codes: number[], reply: SmtpReply): SmtpReply {
    if (!codes.includes(reply.code)) throw new SmtpError(classifyReply(stage, reply));
    return reply;
  }

  /** Sends a command and reads its reply; a reply outside `expected` ends the session, classified. */
  command(stage: SmtpStage, line: string, expected: number[], shown = line): Promise<SmtpReply> {
    const what = `the answer to ${shown}`;
    return this.exchange(what, async () => {
      await this.socket.write(`${line}\r\n`);
      return this.expected(stage, expected, await this.reply(what));
    });
  }

  /**
   * The message after DATA's 354, dot-stuffed, and the server's verdict on it. From the message's
   * first byte on, a session lost (closed, timed out, broken, an answer that is no reply) leaves its
   * fate unknown, since the server may have taken it: that is `unconfirmed`, which no sender may
   * retry (a retry could deliver it twice). A reply the server did give keeps its own meaning.
   */
  async message(block: string): Promise<SmtpReply> {
    const what = "the answer to the message";
    try {
      return await this.exchange(what, async () => {
        await this.socket.write(block);
        return this.expected("message", [250], await this.reply(what));
      });
    } catch (error) {
      if (error instanceof SmtpError && error.failure.kind !== "connection") throw error;
      const text = error instanceof SmtpError ? error.failure.text : `connection or TLS failure: ${(error as Error).message}`;
      throw new SmtpError({ kind: "unconfirmed", code: null, text: `${text} (after the message was handed over: it may have been taken)` });
    }
  }

  /** Upgrades to TLS after `220` to STARTTLS. */
  startTls(): void {
    try {
      this.socket.startTls();
    } catch (error) {
      if (error instanceof LineSocketError) throw new SmtpError(connectionFailure(error.message));
      throw error;
    }
  }

  close(): void {
    this.socket.close();
  }
}

function ehloName(settings: SmtpSettings, options: SmtpOptions): string {
  if (options.heloName) return options.heloName;
  const domain = settings.username.split("@")[1];
  return domain && /^[A-Za-z0-9.-]+$/.test(domain) ? domain : "[127.0.0.1]";
}

/** Greeting, EHLO, STARTTLS when asked, EHLO again, AUTH. Returns the AUTH reply. */
async function login(session: Session, settings: SmtpSettings, options: SmtpOptions): Promise<SmtpReply> {
  await session.greeting();
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
  if (settings.accessToken !== undefined) {
    const mechanism = oauthMechanism(offered);
    if (!mechanism) {
      throw new SmtpError({ kind: "auth_failed", code: null, text: `the server offers no AUTH XOAUTH2 or OAUTHBEARER${offered.length ? ` (it offers ${offered.join(" ")})` : ""}` });
    }
    const initial = utf8Base64(oauthInitialResponse(mechanism, settings.username, settings.accessToken, settings));
    const reply = await session.command("auth", `AUTH ${mechanism} ${initial}`, [235, 334], `AUTH ${mechanism}`);
    // 334: the token was refused and the server sends its error as a challenge; the acknowledgement brings its 5xx.
    if (reply.code === 334) return session.command("auth", utf8Base64(oauthErrorAcknowledgement(mechanism)), [235], `the ${mechanism} error acknowledgement`);
    return reply;
  }
  if (offered.includes("PLAIN")) {
    const token = utf8Base64(`\0${settings.username}\0${settings.password}`);
    return session.command("auth", `AUTH PLAIN ${token}`, [235], "AUTH PLAIN");
  }
  if (offered.includes("LOGIN")) {
    await session.command("auth", "AUTH LOGIN", [334]);
    await session.command("auth", utf8Base64(settings.username), [334], "the AUTH LOGIN username");
    return session.command("auth", utf8Base64(settings.password), [235], "the AUTH LOGIN password");
  }
  throw new SmtpError({
    kind: "auth_failed",
    code: null,
    text: `the server offers no AUTH PLAIN or LOGIN${offered.length ? ` (it offers ${offered.join(" ")})` : ""}`,
  });
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
  const given = mailbox(message.to).email;
  const to = smtpAddress(given);
  if (to === null) return { ok: false, failure: { kind: "recipient_rejected", code: null, text: `invalid recipient address ${JSON.stringify(given)}` } };
  // Not the recipient's fault: a permanent failure of this send, not a bounce.
  if (needsSmtpUtf8(to)) return { ok: false, failure: { kind: "permanent", code: null, text: `the recipient ${JSON.stringify(to)} needs SMTPUTF8, which Salvo does not send yet` } };
  let built: { raw: string; messageId: string };
  try {
    built = buildMime(message);
  } catch (error) {
    return { ok: false, failure: { kind: "permanent", code: null, text: (error as Error).message } };
  }
  const from = smtpAddress(mailbox(message.from).email)!;
  return session(settings, options, async (open) => {
    await login(open, settings, options);
    await open.command("mail", `MAIL FROM:<${from}>`, [250]);
    await open.command("rcpt", `RCPT TO:<${to}>`, [250, 251]);
    // A refused copy (the mailbox's own bcc) must not cost the lead's email: it is left out.
    for (const copy of (options.bcc ?? []).map(smtpAddress).filter((a): a is string => a !== null && !needsSmtpUtf8(a))) {
      await open.command("rcpt", `RCPT TO:<${copy}>`, [250, 251]).catch((error: unknown) => {
        if (!(error instanceof SmtpError) || error.failure.kind === "connection") throw error;
      });
    }
    await open.command("data", "DATA", [354]);
    const reply = await open.message(dataBlock(built.raw));
    await quit(open);
    return { ok: true as const, messageId: built.messageId, reply };
  });
}
