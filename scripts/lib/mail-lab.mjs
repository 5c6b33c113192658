// The running mail lab (scripts/mail-lab.mjs) as other scripts and the mail tests see it: where its
// files are, whether it runs, its `.mail-lab.json`, a lab of one's own on free ports (startLab), and a
// small IMAP session over implicit TLS that trusts only the lab's CA.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { freePort } from "./dev-server.mjs";

const root = join(import.meta.dirname, "..", "..");
/**
 * The lab's own lasting files (its CA and keys, the mailbox passwords, the OAuth provider's keys and
 * grants, the pid file): `.mail-lab/` in the checkout, readable by root alone is fine. MAIL_LAB_DIR
 * names another (a test's lab of its own).
 */
export const LAB_DIR = labPaths().dir;
/** Where the running lab publishes itself; MAIL_LAB_JSON names another. */
export const LAB_JSON = labPaths().json;
export const LAB_PID = labPaths().pid;
/**
 * What the daemons read and write (configuration, sockets, mail, logs) lives outside the checkout,
 * which may sit under a folder only root can enter (/root, any `mktemp -d`) where Dovecot's and
 * Postfix's own users cannot reach: a root-owned directory here, one per lab directory.
 */
export const RUNTIME_BASE = "/var/tmp";
export const RUNTIME_PREFIX = "salvo-mail-lab-";
const TIMEOUT_MS = 10_000;

/** The lab's paths as an environment names them. */
export function labPaths(env = process.env) {
  const dir = resolve(env.MAIL_LAB_DIR ?? join(root, ".mail-lab"));
  return { dir, json: resolve(env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json")), pid: join(dir, "lab.pid") };
}

/** The runtime directory of the lab whose lasting files are in labDir (which must exist): named from a hash of its real path. */
export function runtimeDirFor(labDir) {
  const digest = createHash("sha256").update(realpathSync(labDir)).digest("hex").slice(0, 16);
  return join(RUNTIME_BASE, `${RUNTIME_PREFIX}${digest}`);
}

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

/** Where the kernel's ports for outgoing connections begin. */
function outgoingPortsStart() {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    // Not Linux: the common default.
    return 32768;
  }
}

/** Whether a server may listen on `port` of the loopback now. */
function listenable(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port below the kernel's range for outgoing connections: the lab's daemons start
 * one by one and open connections meanwhile (Rspamd's workers do), and one of those can take a port the
 * kernel handed out as free (`freePort`) before the daemon meant to listen there does, as CI met once.
 */
async function labPort(taken, low) {
  const floor = 10_000;
  for (let tries = 0; tries < 200 && low > floor; tries += 1) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (!taken.has(port) && (await listenable(port))) return port;
  }
  return freePort();
}

export const PORT_VARS = ["MAIL_LAB_SMTP_PORT", "MAIL_LAB_SMTPS_PORT", "MAIL_LAB_SMTP_PLAIN_PORT", "MAIL_LAB_IMAP_PORT", "MAIL_LAB_IMAPS_PORT",
  "MAIL_LAB_RSPAMD_PORT", "MAIL_LAB_OAUTH_PORT"];
// The project's Node 22 (the lab's OAuth provider wants it), whatever Node runs the caller.
const NODE = existsSync(join(root, "node_modules", ".bin", "node")) ? join(root, "node_modules", ".bin", "node") : process.execPath;

/**
 * Starts scripts/mail-lab.mjs on free ports (any MAIL_LAB_*_PORT the environment names is kept) and
 * waits until it has written its `.mail-lab.json`. `env` is added to this process's environment
 * (MAIL_LAB_DIR and MAIL_LAB_JSON give a lab of one's own); `quiet` keeps the lab's output for
 * `output()` instead of printing it. `stop()` ends it by its process id and waits for it.
 */
export async function startLab({ env = {}, quiet = false, timeoutMs = 180_000 } = {}) {
  const environment = { ...process.env, ...env };
  const { json } = labPaths(environment);
  // A file left by a lab killed hard would be read as the new lab's before it is written.
  rmSync(json, { force: true });
  const taken = new Set(PORT_VARS.map((name) => Number(environment[name])).filter(Boolean));
  const low = outgoingPortsStart();
  for (const name of PORT_VARS) {
    if (environment[name] !== undefined) continue;
    const port = await labPort(taken, low);
    taken.add(port);
    environment[name] = String(port);
  }
  const child = spawn(NODE, [join(root, "scripts", "mail-lab.mjs")], { env: environment, stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"] });
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    // The lab stops its own daemons on SIGTERM; a lab that hangs is killed after its own 10 s grace.
    const hard = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(hard);
  };
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(json)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the mail lab exited before it was ready\n${log}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the mail lab did not write ${json} within ${timeoutMs / 1000} s\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { config: JSON.parse(readFileSync(json, "utf8")), jsonPath: json, pid: child.pid, exited, stop, output: () => log };
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
