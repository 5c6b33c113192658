/**
 * SMTP submission from the Worker over `cloudflare:sockets` (issue 13, item 3): implicit TLS or
 * STARTTLS (required: a server that does not offer it is refused, never used in clear), AUTH PLAIN or
 * LOGIN, one recipient per message, several messages per session (SmtpSender). Every command is bounded in time and in what the
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

/** `raw`: the RFC 5322 source handed to the server (a spam test keeps it for its email-content report). */
export type SendResult = { ok: true; messageId: string; reply: SmtpReply; raw: string } | { ok: false; failure: SmtpFailure };
export type CheckResult = { ok: true; reply: SmtpReply } | { ok: false; failure: SmtpFailure };

const DEFAULT_TIMEOUT_MS = 10_000;
/** The most an SMTP reply may take, continuation lines included (an EHLO answer is a few hundred bytes). */
const MAX_REPLY_BYTES = 64 * 1024;

/**
 * A command of a transaction's envelope. `reset`: the RSET that readies a reused session, whose
 * refusal means the session is no longer usable. `optional`: a blind copy's RCPT, whose refusal only
 * leaves that copy out.
 */
interface EnvelopeCommand {
  stage: SmtpStage;
  line: string;
  expected: number[];
  reset?: boolean;
  optional?: boolean;
}

/** A message's envelope: MAIL FROM, RCPT TO (the lead, then any blind copies), DATA. */
export type Envelope = readonly EnvelopeCommand[];

/** What the server made of an envelope written ahead of its message. */
interface Staged {
  key: string;
  failure: SmtpFailure | null;
  awaitsContent: boolean;
}

/** Whether the server, given an envelope ahead, may be waiting for content that must not come (QUIT would be read as content). */
function waitsForContent(staged: Staged | "lost" | null): boolean {
  return staged === "lost" || staged?.awaitsContent === true;
}

/** The commands as written; also what tells two envelopes apart. */
function commandLines(commands: Envelope): string {
  return commands.map((c) => `${c.line}\r\n`).join("");
}

/** What a refused envelope command means: null for a copy left out. */
function refusal(command: EnvelopeCommand, reply: SmtpReply): SmtpFailure | null {
  if (command.optional) return null;
  if (command.reset) return connectionFailure(`the server refused RSET on a reused session: ${reply.text}`);
  return classifyReply(command.stage, reply);
}

/**
 * Ends the transaction with the failure it carries; thrown inside, returned by the public functions.
 * `endsSession`: the session cannot carry another message whatever the failure says (the server
 * answered DATA with 354 after refusing the transaction and now waits for a message).
 */
class SmtpError extends Error {
  constructor(
    readonly failure: SmtpFailure,
    readonly endsSession = false,
  ) {
    super(failure.text);
  }
}

/**
 * One SMTP session over the shared line socket: each command and its reply is one exchange (one
 * deadline, one byte budget). An SmtpSender carries several transactions on it, RSET between them.
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

  /** The server offers PIPELINING (RFC 2920): the envelope's commands go in one write. */
  pipelining = false;

  /**
   * The next message's envelope, written behind the last message (RFC 2920 3.1), and what came of it:
   * its first refusal (null: all taken), and whether the server answered its DATA with 354 and so
   * waits for that message's content; "lost" when its answers never came whole.
   */
  staged: Staged | "lost" | null = null;

  /**
   * The envelope's commands in one write, their replies read in order (all of them, so the session
   * stays in step); the first refusal of a command that must pass ends the transaction, classified by
   * its stage. DATA closes the group (RFC 2920 3.1), so the message itself still follows only a 354.
   * A 354 after a refusal (the blind copy's RCPT taken, the lead's refused) leaves the server waiting
   * for a message that must not come: that session ends.
   */
  pipeline(commands: Envelope): Promise<void> {
    const what = `the answers to ${commands.map((c) => c.line.split(/[ :]/)[0]).join(", ")}`;
    return this.exchange(what, async () => {
      await this.socket.write(commandLines(commands));
      const { failure, awaitsContent } = await this.answers(commands, what);
      if (failure !== null) throw new SmtpError(failure, awaitsContent);
    });
  }

  /**
   * Reads the answer to each pipelined command: the first refusal of one that must pass, and whether
   * the last was a 354. A server closing the channel (421) may hang up without answering the rest of
   * the group: its 421 is then the answer.
   */
  private async answers(commands: Envelope, what: string): Promise<Omit<Staged, "key">> {
    let failure: SmtpFailure | null = null;
    let awaitsContent = false;
    for (const command of commands) {
      let reply: SmtpReply;
      try {
        reply = await this.reply(what);
      } catch (error) {
        if (failure?.code === 421) return { failure, awaitsContent: false };
        throw error;
      }
      awaitsContent = reply.code === 354;
      if (failure === null && !command.expected.includes(reply.code)) failure = refusal(command, reply);
    }
    return { failure, awaitsContent };
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
   * `handedOver` runs once the whole message is written, while the server's verdict is awaited.
   * `next`, the next message's envelope, goes in the same write behind the message; its answers,
   * read after the verdict, become `staged` (a failure to read them costs this message nothing).
   */
  async message(block: string, handedOver?: () => void, next?: Envelope): Promise<SmtpReply> {
    const what = "the answer to the message";
    try {
      return await this.exchange(what, async () => {
        await this.socket.write(next ? block + commandLines(next) : block);
        handedOver?.();
        const verdict = await this.reply(what);
        if (next) {
          const key = commandLines(next);
          this.staged = await this.answers(next, "the answers to the next envelope").then(
            (answers) => ({ key, ...answers }),
            () => "lost" as const,
          );
        }
        return this.expected("message", [250], verdict);
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
  session.pipelining = /^250[ -]PIPELINING\b/im.test(ehlo.text);
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

/** Messages one session carries before it ends and the next message opens a new one (nodemailer's pool default). */
const MAX_MESSAGES_PER_SESSION = 100;
/**
 * The next session opens when this few messages are left on the open one (`warm`): enough that its
 * setup (in the lab about 10 ms, 55 when the server's TLS session tickets wait on a delayed ACK; some
 * round trips more to a distant server) ends before them.
 */
export const SPARE_AHEAD = 25;

/**
 * After this failure the session may carry the next message (after RSET): the server refused a
 * recipient or the message with a well-formed answer. Any other failure (lost, timed out, in doubt,
 * the server closing or busy, a login refused) ends the session.
 */
function sessionSurvives(failure: SmtpFailure): boolean {
  return (failure.kind === "transient" || failure.kind === "recipient_rejected" || failure.kind === "permanent") && failure.code !== null;
}

/**
 * The session is over, not the message refused: lost (closed, timed out, broken, RSET refused) or
 * the server will not go on with it (`unavailable`: a 421, a 4xx to MAIL FROM, the mailbox's sending
 * limit). Met before any of the message was handed over on a reused session, a new session carries
 * the message (servers that cap messages per connection say so this way; a limit meets it again).
 */
function sessionOver(failure: SmtpFailure): boolean {
  return failure.kind === "connection" || failure.kind === "unavailable";
}

/** A message ready for a session: its recipient checked, its source built and dot-stuffed, its envelope made; or why it cannot go. */
export type Outgoing = { ok: true; envelope: Envelope; block: string; raw: string; messageId: string } | { ok: false; failure: SmtpFailure };

/** The envelope from `from` to `to` and the blind copies (`bcc`); or why the recipient cannot be sent to. */
export function envelopeOf(from: string, to: string, bcc: readonly string[] = []): { ok: true; envelope: Envelope } | { ok: false; failure: SmtpFailure } {
  const recipient = smtpAddress(to);
  if (recipient === null) return { ok: false, failure: { kind: "recipient_rejected", code: null, text: `invalid recipient address ${JSON.stringify(to)}` } };
  // Not the recipient's fault: a permanent failure of this send, not a bounce.
  if (needsSmtpUtf8(recipient)) return { ok: false, failure: { kind: "permanent", code: null, text: `the recipient ${JSON.stringify(recipient)} needs SMTPUTF8, which Salvo does not send yet` } };
  const envelope: EnvelopeCommand[] = [
    { stage: "mail", line: `MAIL FROM:<${smtpAddress(from)!}>`, expected: [250] },
    { stage: "rcpt", line: `RCPT TO:<${recipient}>`, expected: [250, 251] },
    // A refused copy (the mailbox's own bcc) must not cost the lead's email: it is left out.
    ...bcc
      .map(smtpAddress)
      .filter((a): a is string => a !== null && !needsSmtpUtf8(a))
      .map((copy): EnvelopeCommand => ({ stage: "rcpt", line: `RCPT TO:<${copy}>`, expected: [250, 251], optional: true })),
    { stage: "data", line: "DATA", expected: [354] },
  ];
  return { ok: true, envelope };
}

/** Readies one message to one recipient and its blind copies (`bcc`): pure work, done before or while a session is busy. */
export function outgoing(message: MimeMessage, bcc: readonly string[] = []): Outgoing {
  const addressed = envelopeOf(mailbox(message.from).email, mailbox(message.to).email, bcc);
  if (!addressed.ok) return addressed;
  let built: { raw: string; messageId: string };
  try {
    built = buildMime(message);
  } catch (error) {
    return { ok: false, failure: { kind: "permanent", code: null, text: (error as Error).message } };
  }
  return { ok: true, envelope: addressed.envelope, block: dataBlock(built.raw), raw: built.raw, messageId: built.messageId };
}

/** What `deliver` lets its caller do around one message. */
export interface DeliverHooks {
  /** Awaited right before the message's first byte is written: from then on the server may take it. */
  handingOver?: () => Promise<void>;
  /** Runs once the message is written, while the server's verdict is awaited. */
  handedOver?: () => void;
  /**
   * The envelope of the message the caller delivers next: written behind this message (RFC 2920 3.1
   * lets a message's content open a group), so that one starts with its DATA answered, a round trip
   * saved. Nothing of that message is handed over before its own `deliver`.
   */
  next?: Envelope;
}

/**
 * Sends messages of one mailbox over one logged-in session (issue 27): the first message logs in
 * (or takes the session `warm` opened ahead), each next one goes on the same session, up to
 * MAX_MESSAGES_PER_SESSION. When the server offers PIPELINING the envelope (RSET, MAIL, RCPT, DATA)
 * goes in one write, and a caller that names the next message's envelope (`deliver`'s `next`) has it
 * written behind the message, so a run of messages costs one round trip each. A session the
 * server ended meanwhile (RSET unanswered or refused) is replaced before anything of the message is
 * handed over, so that costs nothing; a failure that leaves the session in doubt ends it, and the
 * next message opens a new one. Each message keeps the one-message guarantees: its failure is
 * classified as before, and a session lost after the message was handed over is `unconfirmed`. A
 * login the server refused is not tried again: the messages after it fail the same way, since a
 * provider may lock a mailbox that keeps trying (a new credential is a new sender).
 */
export class SmtpSender {
  private open: Session | null = null;
  private carried = 0;
  /** The next session, opened ahead (`warm`), logging in or logged in; its failure is that of the message that takes it. */
  private spare: Promise<Session> | null = null;
  private closed = false;
  /** The server refused this sender's login (or the mailbox's permission to submit). */
  private refused: SmtpFailure | null = null;

  constructor(
    private readonly settings: SmtpSettings,
    private readonly options: SmtpOptions,
  ) {}

  /** Logs in (a new session) and answers the AUTH reply: what saving a mailbox records as `is_smtp_success`. */
  login(): Promise<CheckResult> {
    return this.attempt(async () => {
      this.drop();
      const { session, reply } = await this.connect();
      this.use(session);
      return { ok: true as const, reply };
    });
  }

  /**
   * Sends one message to one recipient (and blind copies, `bcc`, on the same transaction). `messageId`
   * is the Message-ID it went out with (the caller's own header, or one made here); `reply` is the
   * server's answer to the message (250 ... queued as ...).
   */
  send(message: MimeMessage, bcc: readonly string[] = []): Promise<SendResult> {
    return this.deliver(outgoing(message, bcc));
  }

  /**
   * Sends a message `outgoing` readied, as `hooks` ask. An envelope written ahead for it is used
   * when it is this message's (its refusal is this message's failure, unless the server would not go
   * on with that session: a new one carries the message); one written for another message leaves the
   * server waiting for content that must not come, so that session ends unused.
   */
  async deliver(ready: Outgoing, hooks: DeliverHooks = {}): Promise<SendResult> {
    if (!ready.ok) return ready;
    if (this.refused !== null) return { ok: false, failure: this.refused };
    return this.attempt(async () => {
      let open = this.open;
      const staged = open?.staged ?? null;
      if (open !== null) open.staged = null;
      const ahead = staged !== null && staged !== "lost" && staged.key === commandLines(ready.envelope) ? staged : null;
      if (ahead?.failure && !sessionOver(ahead.failure)) throw new SmtpError(ahead.failure, ahead.awaitsContent);
      if (ahead?.failure || (ahead === null && waitsForContent(staged))) {
        this.drop();
        open = null;
      }
      if (ahead === null && open !== null) {
        try {
          await this.envelope(open, [{ stage: "mail", line: "RSET", expected: [250], reset: true }, ...ready.envelope]);
        } catch (error) {
          // The server ended the reused session meanwhile (an idle timeout, a restart, its cap of
          // messages a connection): nothing of this message was handed over, so a new session carries it.
          if (error instanceof SmtpError && !sessionOver(error.failure)) throw error;
          this.drop();
          open = null;
        }
      }
      if (open === null) {
        const opened = this.spare !== null;
        open = this.use(await this.next());
        try {
          await this.envelope(open, ready.envelope);
        } catch (error) {
          // The server ended the session opened ahead while it waited (an idle timeout, a restart):
          // nothing of this message was handed over, so a new session carries it.
          if (!opened || !(error instanceof SmtpError) || !sessionOver(error.failure)) throw error;
          this.drop();
          open = this.use(await this.next());
          await this.envelope(open, ready.envelope);
        }
      }
      const next = open.pipelining && this.carried + 1 < MAX_MESSAGES_PER_SESSION ? hooks.next : undefined;
      await hooks.handingOver?.();
      const reply = await open.message(ready.block, hooks.handedOver, next);
      this.carried += 1;
      if (this.carried >= MAX_MESSAGES_PER_SESSION) await this.end();
      return { ok: true as const, messageId: ready.messageId, reply, raw: ready.raw };
    });
  }

  /**
   * The caller has `coming` more messages (Infinity: more than it can count) to deliver: the session
   * they will need next is opened now, so that its setup (connect, TLS, AUTH, and whatever the
   * server makes a new session wait for) runs while the messages before it go, not on the mailbox's
   * path. That is the first session when none is open, or the one after the open session's cap once
   * fewer than SPARE_AHEAD messages are left on it: a mailbox then holds two connections for those
   * messages (nodemailer's pool, what a user would write instead, holds five). Never more sessions
   * than the messages need; a failure to open it is the failure of the message that takes it.
   */
  warm(coming: number): void {
    if (this.closed || this.refused !== null || this.spare !== null || coming <= 0) return;
    const room = this.open === null ? 0 : MAX_MESSAGES_PER_SESSION - this.carried;
    if (room >= coming || room > SPARE_AHEAD) return;
    const spare = this.newSession();
    spare.catch(() => {});
    this.spare = spare;
  }

  /** The session opened ahead, or a new one. */
  private next(): Promise<Session> {
    const spare = this.spare;
    this.spare = null;
    return spare ?? this.newSession();
  }

  private newSession(): Promise<Session> {
    return this.connect().then(({ session }) => session);
  }

  private use(session: Session): Session {
    this.open = session;
    this.carried = 0;
    return session;
  }

  /** Ends the open session politely (QUIT); one waiting for content (an envelope written ahead) is only cut, which sends nothing. */
  private async end(): Promise<void> {
    if (this.open && !waitsForContent(this.open.staged)) await quit(this.open);
    this.drop();
  }

  /** Ends the open session and the one opened ahead, if any; none is opened ahead after. */
  async close(): Promise<void> {
    this.closed = true;
    await this.end();
    const spare = this.spare;
    this.spare = null;
    const unused = await spare?.catch(() => null);
    if (unused) await quit(unused);
    unused?.close();
  }

  /** The envelope and DATA in one write when the server pipelines, else command by command (a refusal stops before DATA). */
  private async envelope(open: Session, commands: Envelope): Promise<void> {
    if (open.pipelining) return open.pipeline(commands);
    for (const command of commands) {
      await open.command(command.stage, command.line, command.expected).catch((error: unknown) => {
        if (!(error instanceof SmtpError) || error.failure.code === null) throw error;
        const failure = refusal(command, { code: error.failure.code, text: error.failure.text });
        if (failure !== null) throw new SmtpError(failure);
      });
    }
  }

  /** A new session, logged in, with the AUTH reply; one whose login failed is closed. */
  private async connect(): Promise<{ session: Session; reply: SmtpReply }> {
    const { settings, options } = this;
    if (settings.security === "plain" && !options.allowPlain) {
      throw new SmtpError({ kind: "permanent", code: null, text: "unencrypted SMTP is refused: use implicit TLS or STARTTLS" });
    }
    const refused = await connectRefusal(settings.host, options.outbound);
    if (refused) throw new SmtpError(connectionFailure(refused.message));
    let session: Session;
    try {
      session = new Session(settings, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    } catch (error) {
      throw new SmtpError(connectionFailure(`cannot connect: ${(error as Error).message}`));
    }
    try {
      return { session, reply: await login(session, settings, options) };
    } catch (error) {
      session.close();
      throw error;
    }
  }

  /** Runs one use of the session; a failure comes back classified, and ends the session unless it survives it. */
  private async attempt<T>(run: () => Promise<T>): Promise<T | { ok: false; failure: SmtpFailure }> {
    try {
      return await run();
    } catch (error) {
      // The runtime reports TLS failures (such as an untrusted certificate) only as "internal error".
      const failure = error instanceof SmtpError ? error.failure : connectionFailure(`connection or TLS failure: ${(error as Error).message}`);
      if (failure.kind === "auth_failed") this.refused = failure;
      if (!sessionSurvives(failure) || (error instanceof SmtpError && error.endsSession)) this.drop();
      return { ok: false, failure };
    }
  }

  private drop(): void {
    this.open?.close();
    this.open = null;
  }
}

async function quit(session: Session): Promise<void> {
  await session.command("ehlo", "QUIT", [221]).catch(() => {});
}

/** EHLO and AUTH only (no mail): what saving a mailbox records as `is_smtp_success`. */
export async function checkSmtp(settings: SmtpSettings, options: SmtpOptions): Promise<CheckResult> {
  const sender = new SmtpSender(settings, options);
  try {
    return await sender.login();
  } finally {
    await sender.close();
  }
}

/** One message on a session of its own (a manual or test email); a pass of the engine keeps an SmtpSender instead. */
export async function sendMail(settings: SmtpSettings, message: MimeMessage, options: SmtpOptions & { bcc?: string[] }): Promise<SendResult> {
  const sender = new SmtpSender(settings, options);
  try {
    return await sender.send(message, options.bcc);
  } finally {
    await sender.close();
  }
}
