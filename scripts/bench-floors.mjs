// `npm run bench:floors`: what one D1 round trip costs in local workerd, apart from any SQL of ours
// (and, beside it, one call to a Durable Object, as the key check makes).
// A probe Worker (bench/floors/) with one local D1 runs under `wrangler dev`; each kind of call is
// made 2,000 times in a row inside one request, three rounds, and workerd's CPU (utime + stime of the
// dev server's workerd processes, /proc) is divided by the calls. Locally D1 is simulated inside the
// same workerd process, on the one thread that also runs the Worker and its Durable Objects; so every
// local figure of a D1-bound path (bench:engine's CPU per email above all) carries this cost per round
// trip, which on Cloudflare is D1's own and not the Worker's.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort, workerdCpuMs } from "./lib/dev-server.mjs";

const root = join(import.meta.dirname, "..");
const CALLS = 2_000;
const ROUNDS = 3;
const KINDS = [
  ["none", "no call (the loop and the request)"],
  ["select", "SELECT 1"],
  ["insert", "one INSERT"],
  ["batch8", "a batch of 8 INSERTs"],
  ["object", "a Durable Object's method (RPC)"],
];

const state = mkdtempSync(join(tmpdir(), "salvo-floors-"));
const port = await freePort();
const child = spawn(join(root, "node_modules", ".bin", "wrangler"), ["dev", "--config", join(root, "bench", "floors", "wrangler.toml"), "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, "--inspector-port", String(await freePort())], {
  cwd: root,
  env: { ...process.env, PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH}`, WRANGLER_SEND_METRICS: "false" },
  stdio: "ignore",
  detached: true,
});
const url = (kind, calls) => `http://127.0.0.1:${port}/?kind=${kind}&calls=${calls}`;
try {
  for (let waited = 0; ; waited += 250) {
    if (waited > 60_000) throw new Error("the probe Worker did not answer within 60 s");
    if ((await fetch(url("none", 1)).catch(() => null))?.ok) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  for (const [kind] of KINDS) await (await fetch(url(kind, 200))).text();
  console.log(`One round trip in local workerd (${CALLS} calls in a row per round, ${ROUNDS} rounds, medians):`);
  for (const [kind, label] of KINDS) {
    const cpu = [];
    const wall = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const before = workerdCpuMs(child.pid);
      const started = performance.now();
      const answer = await fetch(url(kind, CALLS));
      if (!answer.ok) throw new Error(`${kind}: ${answer.status} ${await answer.text()}`);
      wall.push((performance.now() - started) / CALLS);
      cpu.push((workerdCpuMs(child.pid) - before) / CALLS);
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    console.log(`   ${label.padEnd(36)} workerd CPU ${median(cpu).toFixed(3)} ms a call   wall ${median(wall).toFixed(3)} ms a call`);
  }
} finally {
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
  rmSync(state, { recursive: true, force: true });
}
