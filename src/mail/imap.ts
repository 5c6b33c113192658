/**
 * A minimal IMAP4rev1 client (RFC 3501) from the Worker over `cloudflare:sockets`: implicit TLS, or
 * STARTTLS (required: a server that does not offer it, or that pre-authenticates before it could be
 * used, is refused, never used in clear), plain only when the caller's config allows it. Tagged
 * commands with quoted-string and literal arguments, untagged responses and `{n}` literals read back
 * as bytes, each command bounded in time and bytes (line-socket.ts), and every failure reported with
 * the server's own text.
 * `checkImap` is the mailbox connection check (LOGIN, SELECT INBOX); `ImapSession` and
 * `withImapSession` are what reading replies (issue 14) builds on.
 *
 * Our own client, because no maintained one runs on Workers with STARTTLS: imapflow is built on
 * `node:net`/`node:tls`; its 2.x README says that under `nodejs_compat` only implicit TLS or cleartext
 * work (the runtime cannot upgrade a connected `node:tls` socket, so STARTTLS fails), earlier versions
 * do not load at all (postalsys/imapflow#193, closed wontfix), and it brings a Node logging and MIME
 * stack we do not need. `node-imap` and `emailjs-imap-client` are unmaintained Node/browser-shim
 * clients. `cf-imap` (the one `cloudflare:sockets` client) is a pre-release 0.0.x with no licence and
 * no release since early 2024. The protocol subset needed here is small; the pure parts are in
 * imap-protocol.ts and unit-tested.
 */
import { LineSocket, LineSocketError } from "./line-socket";
import { oauthChallengeStatus, oauthErrorAcknowledgement, oauthInitialResponse, oauthMechanism, type MailCredential, type OAuthMechanism } from "./sasl";
import { fromBase64, utf8Base64 } from "../platform/bytes";
import { connectRefusal, type OutboundPolicy } from "../platform/outbound";
import {
  capabilitiesOf,
  commandSegments,
  describeCommand,
  imapAstring,
  imapString,
  literalSize,
  mailboxStatus,
  parseStatus,
  splitTag,
  type CommandPart,
  type ImapResponse,
  type MailboxStatus,
  type StatusResponse,
} from "./imap-protocol";

export type ImapSettings = {
  host: string;
  port: number;
  security: "tls" | "starttls" | "plain";
  username: string;
} & MailCredential;

export interface ImapOptions {
  /** Plain (unencrypted) IMAP is refused unless the caller's config allows it (local development only). */
  allowPlain: boolean;
  /** The outbound rule the server's host must pass before any connection (src/platform/outbound.ts `mailPolicy`). */
  outbound: OutboundPolicy;
  /** Limit for connecting and greeting, and for each command with its whole answer; 10 s by default. */
  timeoutMs?: number;
  /** The largest literal accepted from the server (a message fetched whole); 50 MiB by default. */
  maxLiteralBytes?: number;
}

/**
 * `auth_failed`: LOGIN answered NO (wrong credentials, the account disabled). `rejected`: another
 * command answered NO or BAD, or the server refused the session. `connection`: no connection, TLS
 * failure, timeout, the connection closed, or an answer that is not IMAP. `insecure`: refused by us
 * rather than continue without encryption.
 */
type ImapFailureKind = "auth_failed" | "rejected" | "connection" | "insecure";

export interface ImapFailure {
  kind: ImapFailureKind;
  /** The server's text after NO/BAD/BYE (e.g. `[AUTHENTICATIONFAILED] Authentication failed.`), or what went wrong. */
  text: string;
}

type ImapCheckResult = { ok: true } | { ok: false; failure: ImapFailure };

interface CommandResult {
  /** The untagged responses the command brought, in order. */
  untagged: ImapResponse[];
  /** Its tagged OK. */
  done: StatusResponse;
}

/** Ends a session with the failure it carries: thrown by ImapSession, returned by the functions below. */
class ImapError extends Error {
  constructor(readonly failure: ImapFailure) {
    super(failure.text);
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_LITERAL = 50 * 1024 * 1024;
/** What a command's answer (its untagged responses and literals) may take unless the caller says more. */
const DEFAULT_RESPONSE_BYTES = 4 * 1024 * 1024;

/** A command's own bounds, for commands whose answer is larger or slower than the defaults (FETCH of bodies). */
interface CommandLimits {
  timeoutMs?: number;
  maxBytes?: number;
}

const encoder = new TextEncoder();
const connectionFailure = (text: string) => new ImapError({ kind: "connection", text });

/** One IMAP connection, logged in or not. Open with `ImapSession.open`; always `close()` it. */
export class ImapSession {
  /** What the server says it supports, upper-cased; null until it has said (or after STARTTLS). */
  capabilities: Set<string> | null = null;
  private readonly socket: LineSocket;
  private readonly timeoutMs: number;
  private readonly maxLiteral: number;
  private tags = 0;
  private authenticated = false;
  /** The text of the server's untagged BYE, reported if the connection then ends. */
  private bye: string | null = null;

  private constructor(
    private readonly settings: ImapSettings,
    options: ImapOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxLiteral = options.maxLiteralBytes ?? DEFAULT_MAX_LITERAL;
    this.socket = new LineSocket(settings);
  }

  /** Connects, reads the greeting and, for "starttls", upgrades; what is left is LOGIN (or PREAUTH). */
  static async open(settings: ImapSettings, options: ImapOptions): Promise<ImapSession> {
    if (settings.security === "plain" && !options.allowPlain) {
      throw new ImapError({ kind: "insecure", text: "unencrypted IMAP is refused: use implicit TLS or STARTTLS" });
    }
    const refused = await connectRefusal(settings.host, options.outbound);
    if (refused) throw connectionFailure(refused.message);
    let session: ImapSession;
    try {
      session = new ImapSession(settings, options);
    } catch (error) {
      throw connectionFailure(`cannot connect: ${(error as Error).message}`);
    }
    try {
      await session.greeting();
      if (settings.security === "starttls") await session.startTls();
      return session;
    } catch (error) {
      session.close();
      throw error;
    }
  }

  /** One exchange on the socket (one deadline, one byte budget); its failures become `connection` ImapErrors. */
  private async exchange<T>(what: string, limits: CommandLimits, run: () => Promise<T>): Promise<T> {
    try {
      return await this.socket.within(what, { timeoutMs: limits.timeoutMs ?? this.timeoutMs, maxBytes: limits.maxBytes ?? DEFAULT_RESPONSE_BYTES }, run);
    } catch (error) {
      if (!(error instanceof LineSocketError)) throw error;
      throw connectionFailure(error.kind === "closed" && this.bye !== null ? `the server ended the session: ${this.bye}` : error.message);
    }
  }

  /** One whole response: its line and, for each `{n}` it announces, the literal and the line that goes on after it. */
  private async response(what: string): Promise<ImapResponse> {
    let text = "";
    const literals: Uint8Array[] = [];
    for (;;) {
      const line = await this.socket.line();
      text += line;
      const size = literalSize(line);
      if (size === null) break;
      if (size > this.maxLiteral) throw connectionFailure(`the server announced a ${size}-byte literal, over our ${this.maxLiteral}-byte limit`);
      literals.push(await this.socket.bytes(size));
    }
    const response = splitTag(text, literals);
    if (!response) throw connectionFailure(`not an IMAP response to ${what}: ${text.slice(0, 200)}`);
    if (response.tag === "*") this.note(response.text);
    return response;
  }

  /** Keeps what untagged data and response codes tell about the session (capabilities, BYE). */
  private note(text: string): void {
    const status = parseStatus(text);
    if (status?.status === "BYE") this.bye = status.text || "BYE";
    const capabilities = capabilitiesOf(status?.code ?? text);
    if (capabilities) this.capabilities = capabilities;
  }

  /**
   * Sends a tagged command and reads up to its tagged answer, all within one deadline and one byte
   * budget (`limits`, else the session's timeout and 4 MiB). String arguments go through
   * `imapString`/`imapAstring` (a literal waits for the server's `+`). A NO answers `failAs`, a BAD
   * `rejected`, each with the server's text.
   */
  async command(parts: CommandPart[], failAs: ImapFailureKind = "rejected", limits: CommandLimits = {}): Promise<CommandResult> {
    const tag = `S${++this.tags}`;
    const what = `the answer to ${describeCommand(parts)}`;
    const untagged: ImapResponse[] = [];
    const finish = (response: ImapResponse): CommandResult => {
      const done = parseStatus(response.text);
      if (!done || done.status === "PREAUTH" || done.status === "BYE") throw connectionFailure(`not a tagged status for ${what}: ${response.text.slice(0, 200)}`);
      if (done.status !== "OK") throw new ImapError({ kind: done.status === "NO" ? failAs : "rejected", text: done.text || done.status });
      if (done.code) this.note(done.code);
      return { untagged, done };
    };
    return this.exchange(what, limits, async () => {
      for (const segment of commandSegments(tag, parts)) {
        await this.socket.write(encoder.encode(segment.text));
        if (!segment.literal) continue;
        for (;;) {
          const response = await this.response(what);
          if (response.tag === "+") break;
          if (response.tag === tag) return finish(response);
          if (response.tag === "*") untagged.push(response);
        }
        await this.socket.write(segment.literal);
      }
      for (;;) {
        const response = await this.response(what);
        if (response.tag === tag) return finish(response);
        if (response.tag !== "*") throw connectionFailure(`unexpected ${response.tag} while we waited for ${what}`);
        untagged.push(response);
      }
    });
  }

  private async greeting(): Promise<void> {
    const greeting = await this.exchange("the greeting", {}, async () => {
      await this.socket.opened();
      return this.response("the greeting");
    });
    const status = greeting.tag === "*" ? parseStatus(greeting.text) : null;
    if (status?.status === "BYE") throw new ImapError({ kind: "rejected", text: status.text || "BYE" });
    if (status?.status !== "OK" && status?.status !== "PREAUTH") throw connectionFailure(`not an IMAP greeting: ${`${greeting.tag} ${greeting.text}`.slice(0, 200)}`);
    this.authenticated = status.status === "PREAUTH";
  }

  private async knownCapabilities(): Promise<Set<string>> {
    if (!this.capabilities) await this.command(["CAPABILITY"]);
    return this.capabilities ?? new Set();
  }

  /** STARTTLS, refused unless offered; what the server said before the upgrade no longer counts (RFC 3501 6.2.1). */
  private async startTls(): Promise<void> {
    if (this.authenticated) {
      throw new ImapError({ kind: "insecure", text: "the server logged us in before STARTTLS (PREAUTH); refusing to continue in clear" });
    }
    const capabilities = await this.knownCapabilities();
    if (!capabilities.has("STARTTLS")) {
      throw new ImapError({ kind: "insecure", text: `the server does not offer STARTTLS; refusing to continue in clear (it offers ${[...capabilities].join(" ")})` });
    }
    await this.command(["STARTTLS"]);
    try {
      this.socket.startTls();
    } catch (error) {
      throw error instanceof LineSocketError ? connectionFailure(error.message) : error;
    }
    this.capabilities = null;
  }

  /** LOGIN with the password, or AUTHENTICATE with the access token (nothing to do after PREAUTH). */
  async login(): Promise<void> {
    if (this.authenticated) return;
    const capabilities = await this.knownCapabilities();
    if (this.settings.accessToken !== undefined) {
      const offered = [...capabilities].flatMap((name) => (name.startsWith("AUTH=") ? [name.slice(5)] : []));
      const mechanism = oauthMechanism(offered);
      if (!mechanism) throw new ImapError({ kind: "auth_failed", text: `the server offers no AUTHENTICATE XOAUTH2 or OAUTHBEARER (it offers ${offered.join(" ") || "none"})` });
      await this.authenticate(mechanism, this.settings.accessToken, capabilities.has("SASL-IR"));
    } else {
      if (capabilities.has("LOGINDISABLED")) throw new ImapError({ kind: "rejected", text: "the server does not accept LOGIN here (LOGINDISABLED)" });
      await this.command(["LOGIN", imapString(this.settings.username), imapString(this.settings.password)], "auth_failed");
    }
    this.authenticated = true;
  }

  /**
   * AUTHENTICATE with an OAuth token (RFC 3501 6.2.2; the response inline with SASL-IR, RFC 4959). A
   * refused token brings an error challenge first, which is acknowledged so the server answers NO.
   */
  private async authenticate(mechanism: OAuthMechanism, accessToken: string, inline: boolean): Promise<void> {
    const tag = `S${++this.tags}`;
    const what = `the answer to AUTHENTICATE ${mechanism}`;
    const initial = utf8Base64(oauthInitialResponse(mechanism, this.settings.username, accessToken, this.settings));
    let challenge: string | null = null;
    await this.exchange(what, {}, async () => {
      await this.socket.write(encoder.encode(inline ? `${tag} AUTHENTICATE ${mechanism} ${initial}\r\n` : `${tag} AUTHENTICATE ${mechanism}\r\n`));
      let sent = inline;
      for (;;) {
        const response = await this.response(what);
        if (response.tag === "*") continue;
        if (response.tag === "+") {
          if (!sent) {
            await this.socket.write(encoder.encode(`${initial}\r\n`));
            sent = true;
          } else {
            const decoded = fromBase64(response.text.trim());
            challenge = decoded ? oauthChallengeStatus(new TextDecoder().decode(decoded)) : null;
            await this.socket.write(encoder.encode(`${utf8Base64(oauthErrorAcknowledgement(mechanism))}\r\n`));
          }
          continue;
        }
        if (response.tag !== tag) throw connectionFailure(`unexpected ${response.tag} while we waited for ${what}`);
        const done = parseStatus(response.text);
        if (done?.status === "OK") {
          if (done.code) this.note(done.code);
          return;
        }
        const text = done?.text || done?.status || response.text.slice(0, 200);
        throw new ImapError({ kind: done?.status === "BAD" ? "rejected" : "auth_failed", text: challenge ? `${text} (token status ${challenge})` : text });
      }
    });
  }

  /** SELECT (or, read-only, EXAMINE) a mailbox; an ASCII name (modified UTF-7 is not done here). */
  async select(mailbox = "INBOX", { readOnly = false }: { readOnly?: boolean } = {}): Promise<MailboxStatus> {
    const { untagged, done } = await this.command([readOnly ? "EXAMINE" : "SELECT", imapAstring(mailbox)]);
    return mailboxStatus(untagged, done);
  }

  /** LOGOUT, politely: a server that has already gone changes nothing. */
  async logout(): Promise<void> {
    await this.command(["LOGOUT"]).catch(() => {});
  }

  close(): void {
    this.socket.close();
  }
}

/** Opens a session, runs `run` on it and closes it; an IMAP failure on the way comes back as `ok: false`. */
export async function withImapSession<T>(
  settings: ImapSettings,
  options: ImapOptions,
  run: (session: ImapSession) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; failure: ImapFailure }> {
  let session: ImapSession | undefined;
  try {
    session = await ImapSession.open(settings, options);
    return { ok: true, value: await run(session) };
  } catch (error) {
    if (error instanceof ImapError) return { ok: false, failure: error.failure };
    throw error;
  } finally {
    session?.close();
  }
}

/** Greeting, STARTTLS when asked, LOGIN, SELECT INBOX, LOGOUT: what saving a mailbox records as `is_imap_success`. */
export async function checkImap(settings: ImapSettings, options: ImapOptions): Promise<ImapCheckResult> {
  const result = await withImapSession(settings, options, async (session) => {
    await session.login();
    await session.select("INBOX");
    await session.logout();
  });
  return result.ok ? { ok: true } : { ok: false, failure: result.failure };
}
