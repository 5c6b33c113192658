// A native CPU profile of the dev server's workerd processes with Linux perf (Debian: linux-perf):
// where the time goes below JavaScript, which the devtools profile does not see (the runtime's I/O,
// SQLite under D1 and Durable Object storage, TLS, the kernel, V8's collector).
import { spawn, spawnSync } from "node:child_process";
import { workerdProcesses } from "./dev-server.mjs";

const TOP_SYMBOLS = 25;

/** Each sampled symbol's share goes to the first group whose rule matches its object and name. */
const GROUPS = [
  ["kernel", ({ dso }) => dso.startsWith("[kernel")],
  ["JavaScript (JIT code)", ({ dso }) => dso.startsWith("[JIT")],
  ["SQLite: JSON functions", ({ sym }) => /^json[A-Z_]|^jsonb/.test(sym)],
  ["SQLite: the rest", ({ sym }) => /^sqlite3|^pcache|^pager|^wal[A-Z]|Btree|Vdbe/.test(sym)],
  ["V8: garbage collection", ({ sym }) => /Marking|Sweep|Scaveng|MarkCompact|Evacuat|Remembered|cppgc::|Heap::|HeapTracer/.test(sym)],
  ["V8: builtins and runtime", ({ sym }) => /^Builtins_|^Runtime_|^v8::|^v8_inspector|^unibrow|^icu_/.test(sym)],
  ["TLS and crypto", ({ sym }) => /^(aes|sha|gcm|x25519|ec_|bn_)|rustls|ring_core|aws_lc|SSL|EVP_|bssl::|CRYPTO_/i.test(sym)],
  ["allocator", ({ sym }) => /tcmalloc|^malloc|^free|^__libc_(malloc|free)|TCMalloc/.test(sym)],
  ["memory copies", ({ sym }) => /^__(mem|str)|^mem(cpy|move|set|cmp)|^str/.test(sym)],
  // Its Rust I/O included (tokio; demangled Rust names start with `<`).
  ["workerd and KJ", ({ sym }) => /^workerd|^kj|^capnp|^_ZN7workerd|^_ZN2kj|tokio|^<|^async_trace/.test(sym)],
];

/** `perf report --sort dso,sym` lines as {share, dso, sym}, grouped: [group, percent][] largest first. */
export function groupSamples(report) {
  const totals = new Map();
  for (const line of report.split("\n")) {
    // The object's name may hold spaces (`[JIT] tid 10777`); the symbol's kind ([k], [.]) ends it.
    const found = /^\s*([\d.]+)%\s+(.+?)\s+\[.\]\s+(.*)$/.exec(line);
    if (!found) continue;
    const sample = { dso: found[2], sym: found[3].trim() };
    const group = GROUPS.find(([, rule]) => rule(sample))?.[0] ?? "other";
    totals.set(group, (totals.get(group) ?? 0) + Number(found[1]));
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

/** Starts sampling every workerd process of the dev server's group; `stop()` ends it and answers its summary. */
export async function nativeProfile(server, file) {
  if (spawnSync("perf", ["--version"]).error) throw new Error("perf is not installed (Debian: apt-get install linux-perf)");
  const pids = workerdProcesses(server.pid).map((p) => p.pid);
  if (pids.length === 0) throw new Error("no workerd process in the dev server's process group");
  const perf = spawn("perf", ["record", "-F", "2000", "-o", file, "-p", pids.join(",")], { stdio: "ignore" });
  const exited = new Promise((resolve) => perf.once("exit", resolve));
  // perf attaches asynchronously; a second is plenty on this machine.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // It ends at once when the kernel refuses it (kernel.perf_event_paranoid, or no right to the processes).
  if (perf.exitCode !== null) throw new Error(`perf record ended at once (exit ${perf.exitCode}): the kernel refused it (see kernel.perf_event_paranoid)`);
  return {
    async stop() {
      perf.kill("SIGINT");
      await exited;
      const report = spawnSync("perf", ["report", "-i", file, "--no-children", "--sort", "dso,sym", "--stdio"], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }).stdout;
      const rows = (pairs) => pairs.map(([name, share]) => `${share.toFixed(1).padStart(6)}%  ${name}`).join("\n");
      const top = report.split("\n").filter((line) => /^\s*[\d.]+%/.test(line)).slice(0, TOP_SYMBOLS).map((line) => line.trim().slice(0, 160));
      return `workerd's samples (${file}), by part:\n${rows(groupSamples(report))}\n\nThe ${TOP_SYMBOLS} symbols with the most:\n${top.join("\n")}`;
    },
  };
}
