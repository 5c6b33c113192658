// `npm run bench:warmup` (issue 26): one day's planning for a pool of 1,000 mailboxes, with the very
// rules the mailboxes' objects run (src/warmup/rules.ts, bundled here by esbuild): each mailbox's
// target, its send times over 08:00-20:00 and its partners across the pool (2:1 other provider and
// domain). Prints the figures for bench/RESULTS.md. The reader's extra cost per pass with warmup on
// is measured against the mail lab by test/mail/warmup.test.ts's run (see bench/RESULTS.md).
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "bench-warmup-"));
const out = join(dir, "rules.mjs");
await build({ entryPoints: [join(root, "src/warmup/rules.ts")], bundle: true, format: "esm", platform: "neutral", outfile: out, logLevel: "error" });
const rules = await import(pathToFileURL(out).href);
rmSync(dir, { recursive: true, force: true });

const POOL = Number(process.env.BENCH_WARMUP_POOL ?? 1000);
const providers = ["GMAIL", "OUTLOOK", "mail.example.net", "smtp.example.org"];
const members = Array.from({ length: POOL }, (_, i) => ({ id: i + 1, provider: providers[i % providers.length], domain: `d${i % 37}.example` }));
const day = Date.UTC(2026, 10, 23);
const zone = process.env.WARMUP_TIME_ZONE ?? "Europe/Paris";

function planDay() {
  let sends = 0;
  for (const m of members) {
    const target = rules.dailyTarget({
      mailboxId: m.id, day, minCount: 20, maxCount: 40, rampupEnabled: true, dailyRampup: 5, sendingDays: 6,
      weekend: false, weekdaysOnly: true, autoAdjust: true, maxEmailPerDay: 100, campaignToday: 50,
    });
    const times = rules.sendTimes(m.id, day, target, zone);
    const partners = rules.choosePartners(m, members, times.length, day);
    sends += partners.length;
  }
  return sends;
}

planDay(); // warm the JIT and the zone formatter
const runs = [];
let sends = 0;
for (let i = 0; i < 5; i++) {
  const start = performance.now();
  sends = planDay();
  runs.push(performance.now() - start);
}
runs.sort((a, b) => a - b);
const perMailbox = runs[2] / POOL;
console.log(`pool ${POOL} mailboxes, ${sends} warmup sends planned for the day`);
console.log(`whole pool: median ${runs[2].toFixed(1)} ms (min ${runs[0].toFixed(1)}, max ${runs[4].toFixed(1)}) over 5 runs`);
console.log(`one mailbox's pass (its plan against the pool): ${(perMailbox * 1000).toFixed(0)} µs`);
