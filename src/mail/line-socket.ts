/**
 * The one line reader under SMTP and IMAP (issue 23): a `cloudflare:sockets` connection read as
 * CRLF-terminated lines and counted byte blocks (IMAP literals), written as text or bytes, upgraded
 * by STARTTLS, and bounded so that no server can hold a mailbox's object or its memory:
 *
 * - one line-length cap (MAX_LINE_BYTES) for every protocol: a longer line ends the session;
 * - an exchange (a command and everything read for its answer) has ONE deadline and ONE byte
 *   budget, given by the protocol: a server that drips a byte a second, or streams an endless
 *   multi-line reply or untagged responses, is cut off when either runs out. Not a timer per
 *   exchange, nor per read: one watchdog per socket checks the running exchange's deadline when it
 *   fires and sets itself again for what is left (a reused SMTP session runs two exchanges a
 *   message, and a timer costs more in the runtime than the rest of an exchange's bookkeeping);
 * - the buffer holds at most one line (or the unread rest of a chunk), compacted in place.
 *
 * Failures are LineSocketErrors with a kind and a plain message; SMTP and IMAP map them to their own
 * failure kinds (smtp-replies.ts `connection`, imap.ts `connection`).
 *
 * Later protocol work fits on top without touching this file: SASL exchanges with continuations
 * (XOAUTH2's `334`/`+` challenge answered by an empty line) are one exchange each; a reused SMTP
 * session (RSET between messages) is more exchanges on the same socket.
 */
import { connect } from "cloudflare:sockets";

/** The longest line any server may send (an IMAP SEARCH answer lists every UID on one line). */
const MAX_LINE_BYTES = 1024 * 1024;

type LineSocketFailure = "timeout" | "closed" | "too_large" | "broken";

export class LineSocketError extends Error {
  constructor(
    readonly kind: LineSocketFailure,
    message: string,
  ) {
    super(message);
  }
}

interface LineTarget {
  host: string;
  port: number;
  security: "tls" | "starttls" | "plain";
}

interface ExchangeLimits {
  /** The whole exchange's time: writing the command and reading all of its answer. */
  timeoutMs: number;
  /** The most bytes the answer may take (lines with their CRLF, and literals). */
  maxBytes: number;
}

interface Exchange {
  what: string;
  left: number;
  /** Date.now() past which the exchange has failed. */
  deadline: number;
  timeoutMs: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const INITIAL_BUFFER = 16 * 1024;

/**
 * A socket's `opened` and `closed` promises reject when it fails (a host name that does not resolve, a reset).
 * Reads and writes already report those failures, so the promises are observed here rather than
 * left as unhandled rejections.
 */
function quiet(socket: { opened: Promise<unknown>; closed: Promise<void> }, reader: ReadableStreamDefaultReader<Uint8Array>, writer: WritableStreamDefaultWriter<Uint8Array>): void {
  const ignore = () => {};
  socket.opened.catch(ignore);
  socket.closed.catch(ignore);
  reader.closed.catch(ignore);
  writer.closed.catch(ignore);
}

export class LineSocket {
  private socket: Socket;
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private buffer = new Uint8Array(INITIAL_BUFFER);
  private start = 0;
  private end = 0;
  private exchange: Exchange | null = null;
  private closed = false;
  /** The watchdog's timer and when it fires; null when none is set. */
  private watchdog: { timer: ReturnType<typeof setTimeout>; at: number } | null = null;
  /** Set once an exchange ran out of time (the socket is closed then): every later wait fails with it. */
  private expired: LineSocketError | null = null;
  /**
   * Fails the wait in progress (a read, a write, the opening) when its exchange runs out of time.
   * One per wait, not a promise that lives as long as the socket and is raced by every wait: each
   * race would leave a reaction on it holding what that wait read, so a long session would keep
   * every chunk it ever read.
   */
  private interrupt: ((error: LineSocketError) => void) | null = null;

  constructor(target: LineTarget) {
    this.socket = connect(
      { hostname: target.host, port: target.port },
      { secureTransport: { tls: "on", starttls: "starttls", plain: "off" }[target.security], allowHalfOpen: false },
    );
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
    quiet(this.socket, this.reader, this.writer);
  }

  /**
   * Runs one exchange: `run` writes and reads under one deadline and one byte budget. Nested calls
   * are not allowed: every read belongs to exactly one exchange.
   */
  async within<T>(what: string, limits: ExchangeLimits, run: () => Promise<T>): Promise<T> {
    if (this.exchange) throw new Error(`an exchange (${this.exchange.what}) is already running`);
    const deadline = Date.now() + limits.timeoutMs;
    this.exchange = { what, left: limits.maxBytes, deadline, timeoutMs: limits.timeoutMs };
    this.watch(deadline);
    try {
      return await run();
    } finally {
      this.exchange = null;
    }
  }

  /** Makes the watchdog fire no later than `deadline`. */
  private watch(deadline: number): void {
    if (this.closed || (this.watchdog !== null && this.watchdog.at <= deadline)) return;
    if (this.watchdog !== null) clearTimeout(this.watchdog.timer);
    this.watchdog = { timer: setTimeout(() => this.check(), Math.max(0, deadline - Date.now())), at: deadline };
  }

  /** The watchdog fired: the running exchange fails if its time is up, else the watchdog waits for what is left. */
  private check(): void {
    this.watchdog = null;
    const exchange = this.exchange;
    if (exchange === null) return;
    if (Date.now() < exchange.deadline) return this.watch(exchange.deadline);
    this.close();
    this.expired = new LineSocketError("timeout", `timed out after ${exchange.timeoutMs} ms waiting for ${exchange.what}`);
    this.interrupt?.(this.expired);
  }

  private current(): Exchange {
    if (!this.exchange) throw new Error("socket read or written outside an exchange");
    return this.exchange;
  }

  /** Waits for `promise` within the exchange's deadline; a runtime failure (TLS, reset) becomes `broken`. */
  private async raced<T>(promise: Promise<T>): Promise<T> {
    this.current();
    try {
      if (this.expired) throw this.expired;
      return await new Promise<T>((resolve, reject) => {
        this.interrupt = reject;
        promise.then(resolve, reject);
      });
    } catch (error) {
      if (error instanceof LineSocketError) throw error;
      // The runtime reports TLS failures (such as an untrusted certificate) only as "internal error".
      throw new LineSocketError("broken", `connection or TLS failure: ${(error as Error).message}`);
    } finally {
      this.interrupt = null;
    }
  }

  /** The connection is open (TLS handshake done for implicit TLS). */
  async opened(): Promise<void> {
    await this.raced(this.socket.opened);
  }

  /** Reads one more chunk into the buffer, compacting (or growing it) when it does not fit. */
  private async fill(): Promise<void> {
    const { value, done } = await this.raced(this.reader.read());
    if (done || this.closed) throw new LineSocketError("closed", `the server closed the connection while we waited for ${this.current().what}`);
    if (this.end + value.length > this.buffer.length && this.start > 0) {
      this.buffer.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    if (this.end + value.length > this.buffer.length) {
      const grown = new Uint8Array(Math.max(this.end + value.length, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.end));
      this.buffer = grown;
    }
    this.buffer.set(value, this.end);
    this.end += value.length;
  }

  private tooLarge(): LineSocketError {
    return new LineSocketError("too_large", `the server sent more than this exchange allows while we waited for ${this.current().what}`);
  }

  /** The next line, without its CRLF. */
  async line(): Promise<string> {
    // Bytes after `start` already searched for a line end: each byte is searched once.
    let scanned = 0;
    for (;;) {
      const lf = this.buffer.subarray(0, this.end).indexOf(10, this.start + scanned);
      if (lf > this.start && this.buffer[lf - 1] === 13) {
        const length = lf + 1 - this.start;
        if (length > this.current().left) throw this.tooLarge();
        this.current().left -= length;
        const line = decoder.decode(this.buffer.subarray(this.start, lf - 1));
        this.start = lf + 1;
        return line;
      }
      scanned = (lf >= 0 ? lf + 1 : this.end) - this.start;
      const pending = this.end - this.start;
      if (pending > MAX_LINE_BYTES) throw new LineSocketError("too_large", `the server sent a line over ${MAX_LINE_BYTES} bytes while we waited for ${this.current().what}`);
      if (pending > this.current().left) throw this.tooLarge();
      await this.fill();
    }
  }

  /** The next `size` bytes (an IMAP literal); the caller has checked `size` against its own limit. */
  async bytes(size: number): Promise<Uint8Array> {
    if (size > this.current().left) throw this.tooLarge();
    this.current().left -= size;
    const out = new Uint8Array(size);
    let got = 0;
    for (;;) {
      const take = Math.min(size - got, this.end - this.start);
      out.set(this.buffer.subarray(this.start, this.start + take), got);
      this.start += take;
      got += take;
      if (got === size) return out;
      this.start = this.end = 0;
      await this.fill();
    }
  }

  async write(data: string | Uint8Array): Promise<void> {
    await this.raced(this.writer.write(typeof data === "string" ? encoder.encode(data) : data));
  }

  /** Bytes received and not read yet (STARTTLS requires none: RFC 3207 section 5, RFC 3501 6.2.1). */
  get unread(): number {
    return this.end - this.start;
  }

  /** Upgrades to TLS in place; anything the server sent beyond its go-ahead is refused. */
  startTls(): void {
    if (this.unread > 0) throw new LineSocketError("broken", "the server sent data after its STARTTLS answer");
    this.reader.releaseLock();
    this.writer.releaseLock();
    this.socket = this.socket.startTls();
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
    quiet(this.socket, this.reader, this.writer);
  }

  close(): void {
    this.closed = true;
    if (this.watchdog !== null) clearTimeout(this.watchdog.timer);
    this.watchdog = null;
    this.socket.close().catch(() => {});
  }
}
