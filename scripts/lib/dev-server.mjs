// Starts a throwaway `npm run dev` instance (own port, own state directory) for end-to-end tests,
// benchmarks and client generation, and hands back its address, demo key and admin token.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

const root = join(import.meta.dirname, "..", "..");
const STARTUP_TIMEOUT_MS = 120_000;

/** A port nothing listens on now (the OS picks it), for a server started next. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url, child, output) {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`dev server exited early:\n${output()}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`dev server did not answer /health within ${STARTUP_TIMEOUT_MS / 1000} s:\n${output()}`);
}

/** The operator token `npm run dev` uses (from .dev.vars). */
export function adminToken() {
  const vars = readFileSync(join(root, ".dev.vars"), "utf8");
  return vars.match(/^ADMIN_TOKEN=(.*)$/m)?.[1].trim();
}

/** The processes of the process group `groupId`, read from /proc: pid, name, state letter and CPU ticks used (user + system). */
export function groupProcesses(groupId) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== groupId) continue;
      found.push({ pid: Number(pid), comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), state: fields[0], ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // it ended meanwhile
    }
  }
  return found;
}

/** The workerd processes of the dev server's process group. */
export function workerdProcesses(groupId) {
  return groupProcesses(groupId).filter((p) => p.comm === "workerd");
}

/** CPU ticks used so far by the workerd processes of the dev server's process group. */
export function workerdTicks(groupId) {
  return workerdProcesses(groupId).reduce((sum, p) => sum + p.ticks, 0);
}

/** The same in milliseconds (the kernel counts 100 ticks a second). */
export function workerdCpuMs(groupId) {
  return workerdTicks(groupId) * 10;
}

/**
 * Fires the dev server's minute cron as if it ran `aheadMs` from now (miniflare's trigger takes a
 * scheduled time; wrangler's /__scheduled does not): work a lost wake or queue message left behind is overdue then.
 */
export async function fireMinuteCron(server, aheadMs = 2 * 60_000) {
  await fetch(`${server.url}/cdn-cgi/mf/scheduled?cron=*+*+*+*+*&time=${Date.now() + aheadMs}`).catch(() => undefined);
}

/**
 * @param {{ stateDir?: string, keepState?: boolean, quiet?: boolean, mailLab?: boolean, env?: Record<string, string> }} [options]
 *   stateDir: reuse a state directory (benchmarks keep their datasets); default: a fresh temp dir.
 *   mailLab: false serves without the mail lab even while one runs (SALVO_MAIL_LAB=off).
 *   env: added to the server's environment (MAIL_LAB_DIR and MAIL_LAB_JSON: which lab it looks for).
 */
export async function startDevServer(options = {}) {
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), "salvo-state-"));
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(root, "scripts", "dev.mjs")], {
    cwd: root,
    // wrangler's launcher runs `node` from PATH: put the project's Node 22 first, as npm scripts do.
    env: {
      ...process.env,
      PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH}`,
      PORT: String(port), INSPECTOR_PORT: String(inspectorPort), SALVO_STATE_DIR: stateDir,
      ...(options.mailLab === false ? { SALVO_MAIL_LAB: "off" } : {}),
      ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  const collect = (chunk) => {
    log += chunk;
    if (!options.quiet) process.stderr.write(chunk);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);

  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  /** Stops the whole process group (npm script, wrangler, workerd) and waits until it is gone. */
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, "SIGTERM");
      const killer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    }
    if (!options.stateDir && !options.keepState) rmSync(stateDir, { recursive: true, force: true });
  };
  /** Pulls the plug: SIGKILL to the whole group, no chance to finish anything (chaos checks). */
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, "SIGKILL");
      await exited;
    }
    // The npm process exits first; workerd may still finish a write it was in: wait until no live process of the group is left.
    while (groupProcesses(child.pid).some((p) => p.state !== "Z" && p.state !== "X")) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  try {
    await waitForHealth(url, child, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  const apiKey = log.match(/Demo account API key: (\S+)/)?.[1];
  if (!apiKey) throw new Error(`no demo key in the dev server's output:\n${log}`);
  // pid: also the id of the server's process group (it is started detached).
  return { url, apiKey, adminToken: adminToken(), stateDir, pid: child.pid, output: () => log, stop, kill };
}
