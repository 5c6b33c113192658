// `npm run bench:triage` (issue 25): the rules stage of the reply categoriser measured on the labelled
// corpus in test/fixtures/triage/ (public replies with their licences, and our own written examples;
// see SOURCES.md there): per-category precision and recall, the confusions, and the figures the rules
// must hold (no wrong Do Not Contact, no Interested at all). Then its cost: microseconds per reply on
// the corpus, and on adversarial inputs from 4 KB to 4 MB, which must not grow with the input (the
// rules read a bounded start of the reply's own words, with no regular expression over the text).
//
// The sources are TypeScript for the Workers runtime: esbuild (wrangler's bundler) bundles the rules,
// the message parser and the out-of-office detector for Node first. `npm run bench -- triage` writes
// this output into bench/RESULTS.md.
import { build } from "esbuild";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..");
const fixtures = join(root, "test", "fixtures");
const work = mkdtempSync(join(tmpdir(), "bench-triage-"));

async function load() {
  const entry = `export { applyRules, RULES_VERSION, TEXT_LIMIT, INPUT_LIMIT } from "./src/triage/rules.ts";
    export { parseMessage } from "./src/mail/parsed.ts";
    export { replyText } from "./src/replies/reply-text.ts";
    export { classifyAutoReply } from "./src/replies/auto-reply.ts";`;
  const out = join(work, "triage.mjs");
  await build({ stdin: { contents: entry, resolveDir: root, loader: "ts" }, bundle: true, format: "esm", platform: "node", outfile: out, logLevel: "warning" });
  return import(pathToFileURL(out).href);
}

const LABELS = ["dnc", "wrong_person", "ooo", "automated", "none"];

function corpus() {
  const dir = join(fixtures, "triage");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .flatMap((name) =>
      readFileSync(join(dir, name), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => ({ ...JSON.parse(line), set: name })),
    );
}

/** A corpus item as the categoriser reads it: a stored reply, or a message read from a mailbox (its headers give is_ooo). */
async function asReply(item, lib) {
  if (!item.file) return { subject: item.subject ?? null, body: item.body, isOoo: false };
  const message = await lib.parseMessage(readFileSync(join(fixtures, item.file)));
  return { subject: message.subject, body: lib.replyText(message), isOoo: lib.classifyAutoReply(message, Date.now()).outOfOffice };
}

function pad(value, width) {
  return String(value).padStart(width);
}

async function main() {
  const lib = await load();
  const items = corpus();
  const replies = await Promise.all(items.map((item) => asReply(item, lib)));
  const results = items.map((item, i) => ({ item, predicted: lib.applyRules(replies[i]).kind ?? "none" }));

  const languages = new Map();
  for (const { item } of results) languages.set(item.language ?? "?", (languages.get(item.language ?? "?") ?? 0) + 1);
  const sets = new Map();
  for (const { item } of results) sets.set(item.set, (sets.get(item.set) ?? 0) + 1);
  console.log(`rules ${lib.RULES_VERSION} on ${results.length} labelled replies (${[...sets].map(([s, n]) => `${s} ${n}`).join(", ")})`);
  console.log(`languages: ${[...languages].sort((a, b) => b[1] - a[1]).map(([l, n]) => `${l} ${n}`).join(", ")}`);
  console.log("");
  console.log("category        support  predicted  correct  precision  recall");
  for (const label of LABELS) {
    const support = results.filter((r) => r.item.label === label).length;
    const predicted = results.filter((r) => r.predicted === label).length;
    const correct = results.filter((r) => r.item.label === label && r.predicted === label).length;
    const precision = predicted === 0 ? "-" : (correct / predicted).toFixed(3);
    const recall = support === 0 ? "-" : (correct / support).toFixed(3);
    console.log(`${label.padEnd(14)} ${pad(support, 8)} ${pad(predicted, 10)} ${pad(correct, 8)} ${pad(precision, 10)} ${pad(recall, 7)}`);
  }
  const interested = results.filter((r) => r.item.intent === "interested");
  console.log(`interested      the rules never assign it (${interested.length} interested replies in the corpus, ${interested.filter((r) => r.predicted !== "none").length} given any rule category)`);
  const wrongDnc = results.filter((r) => r.predicted === "dnc" && r.item.label !== "dnc");
  console.log(`wrong do-not-contact: ${wrongDnc.length}${wrongDnc.length ? ` (${wrongDnc.map((r) => r.item.id).join(", ")})` : ""}`);
  console.log("");
  console.log("misses and confusions (label -> rules):");
  const confusions = results.filter((r) => r.predicted !== r.item.label);
  for (const { item, predicted } of confusions) console.log(`  ${item.label} -> ${predicted}: ${item.id}`);
  if (confusions.length === 0) console.log("  none");

  console.log("");
  const start = performance.now();
  const rounds = 20;
  for (let i = 0; i < rounds; i++) for (const reply of replies) lib.applyRules(reply);
  const perReply = ((performance.now() - start) * 1000) / (rounds * replies.length);
  console.log(`cost on the corpus: ${perReply.toFixed(1)} µs per reply (${rounds} rounds of ${replies.length})`);
  console.log(`adversarial inputs, median of 9 (at most ${lib.INPUT_LIMIT / 1024} KB go into quote stripping, ${lib.TEXT_LIMIT / 1024} KB of own words into matching):`);
  const shapes = {
    "repeated phrase prefix": (n) => "please remove me from your ".repeat(Math.ceil(n / 27)).slice(0, n),
    "one long word": (n) => "a".repeat(n),
    apostrophes: (n) => `${"'".repeat(n - 1)}x`,
    "quoted lines": (n) => "> quoted line\n".repeat(Math.ceil(n / 14)).slice(0, n),
    "html tags": (n) => "<div>".repeat(Math.ceil(n / 5)).slice(0, n),
  };
  for (const [name, make] of Object.entries(shapes)) {
    const timings = [4 * 1024, 64 * 1024, 1024 * 1024, 4 * 1024 * 1024].map((size) => {
      const body = make(size);
      lib.applyRules({ subject: "Re: hi", body, isOoo: false });
      const runs = Array.from({ length: 9 }, () => {
        const t0 = performance.now();
        lib.applyRules({ subject: "Re: hi", body, isOoo: false });
        return performance.now() - t0;
      }).sort((a, b) => a - b);
      return [size, runs[4]];
    });
    console.log(`  ${name.padEnd(24)} ${timings.map(([size, ms]) => `${size >= 1048576 ? `${size / 1048576} MB` : `${size / 1024} KB`} ${ms.toFixed(2)} ms`).join("   ")}`);
  }
  rmSync(work, { recursive: true, force: true });
  if (wrongDnc.length > 0 || interested.some((r) => r.predicted === "interested")) process.exitCode = 1;
}

await main();
