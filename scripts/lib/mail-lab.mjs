// The running mail lab (scripts/mail-lab.mjs) as other scripts and the mail tests see it: whether it
// runs, its `.mail-lab.json`, and a small IMAP session over implicit TLS that trusts only the lab's CA.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";

const root = join(import.meta.dirname, "..", "..");
export const LAB_JSON = join(root, ".mail-lab.json");
export const LAB_PID = join(root, ".mail-lab", "lab.pid");
const TIMEOUT_MS = 10_000;

/** Whether a process runs (EPERM: it does, as another user's). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** The running lab's `.mail-lab.json`, or null when no lab runs (its pid file names a live process and the file exists). */
export function runningLab() {
  if (!existsSync(LAB_PID) || !existsSync(LAB_JSON)) return null;
  const pid = Number(readFileSync(LAB_PID, "utf8"));
  if (!(pid > 0 && alive(pid))) return null;
  return JSON.parse(readFileSync(LAB_JSON, "utf8"));
}

/** An IMAP quoted string. */
export const quote = (text) => `"${text.replace(/["\\]/g, "\\$&")}"`;

/** One IMAP session with line and literal reads: enough to log in, search and fetch. */
export class LabImap {
  #buffer = Buffer.alloc(0);
  #wake = null;
  #failure = null;
  #tag = 0;

  constructor(socket) {
    this.socket = socket;
    socket.on("data", (chunk) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake?.();
    });
    const fail = (error) => {
      this.#failure = error;
      this.#wake?.();
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("IMAP connection closed")));
  }

  /** Connects to the lab's implicit-TLS IMAP port and reads the greeting. */
  static async open(lab, ca = readFileSync(lab.ca_file)) {
    const imap = await new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: lab.imap_tls.host, port: lab.imap_tls.port, ca, servername: "localhost" }, () =>
        resolve(new LabImap(socket)),
      );
      socket.once("error", reject);
      socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error("IMAP timeout")));
    });
    await imap.line();
    return imap;
  }

  /** Opens a session logged in as one of the lab's mailboxes. */
  static async login(lab, email, ca) {
    const mailbox = lab.mailboxes.find((m) => m.email === email);
    if (!mailbox) throw new Error(`no lab mailbox ${email}`);
    const imap = await LabImap.open(lab, ca);
    try {
      await imap.command(`LOGIN ${quote(mailbox.email)} ${quote(mailbox.password)}`);
    } catch (error) {
      imap.close();
      throw error;
    }
    return imap;
  }

  async #need(predicate) {
    for (;;) {
      const end = predicate();
      if (end >= 0) {
        const taken = this.#buffer.subarray(0, end);
        this.#buffer = this.#buffer.subarray(end);
        return taken;
      }
      if (this.#failure) throw this.#failure;
      await new Promise((resolve) => (this.#wake = resolve));
    }
  }

  async line() {
    const raw = await this.#need(() => {
      const index = this.#buffer.indexOf("\r\n");
      return index < 0 ? -1 : index + 2;
    });
    return raw.subarray(0, raw.length - 2).toString("latin1");
  }

  async literal(size) {
    return (await this.#need(() => (this.#buffer.length >= size ? size : -1))).toString("utf8");
  }

  /**
   * Sends a command; returns its untagged lines and literals (`literalAfter[i]` is the index in
   * `lines` of the line that announced literal i); throws unless it ends OK.
   */
  async command(text) {
    const tag = `T${++this.#tag}`;
    this.socket.write(`${tag} ${text}\r\n`);
    const lines = [];
    const literals = [];
    const literalAfter = [];
    for (;;) {
      const line = await this.line();
      if (line.startsWith(`${tag} `)) {
        if (!line.startsWith(`${tag} OK`)) throw new Error(`IMAP ${text.split(" ")[0]} answered ${line}`);
        return { lines, literals, literalAfter };
      }
      lines.push(line);
      const size = /\{(\d+)\}$/.exec(line)?.[1];
      if (size !== undefined) {
        literalAfter.push(lines.length - 1);
        literals.push(await this.literal(Number(size)));
      }
    }
  }

  close() {
    this.socket.destroy();
  }
}
