// `npm run bench`: runs every `bench:*` script of package.json in turn and writes bench/RESULTS.md
// with this machine's figures (each benchmark's own printed output, verbatim). `npm run bench --
// engine webhooks` runs only those and replaces only their sections, keeping the others.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const only = process.argv.slice(2);
const names = Object.keys(scripts)
  .filter((name) => name.startsWith("bench:"))
  .filter((name) => only.length === 0 || only.includes(name.slice("bench:".length)));

const resultsPath = join(root, "bench", "RESULTS.md");
const heading = (name) => `## \`npm run ${name}\``;
/** The sections of the current file by script name, so a partial run keeps the rest. */
const sections = new Map();
if (existsSync(resultsPath)) {
  for (const part of readFileSync(resultsPath, "utf8").split(/^(?=## `npm run )/m).slice(1)) {
    const name = /^## `npm run ([^`]+)`/.exec(part)?.[1];
    if (name) sections.set(name, part.trimEnd() + "\n");
  }
}
let failed = 0;
for (const name of names) {
  console.log(`\n=== npm run ${name}`);
  const started = Date.now();
  const result = spawnSync("npm", ["run", "--silent", name], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  process.stdout.write(result.stdout);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const status = result.status === 0 ? "ok" : `failed (exit ${result.status})`;
  if (result.status !== 0) failed += 1;
  sections.set(name, `${heading(name)} (${status}, ${seconds} s, ${new Date().toISOString().slice(0, 10)})\n\n\`\`\`\n${result.stdout.trim()}\n\`\`\`\n`);
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}`;
const report = `# Benchmark results

Written by \`npm run bench\` (last run ${new Date().toISOString()}; each section says when it ran).
Machine: ${machine}. Every figure is local (\`wrangler dev\`, file-backed D1 on this machine), so
it shows the code's cost here, not Cloudflare's network.

${Object.keys(scripts)
  .filter((name) => sections.has(name))
  .map((name) => sections.get(name))
  .join("\n")}`;
writeFileSync(resultsPath, report);
console.log(`\nWrote bench/RESULTS.md (${names.length} benchmarks, ${failed} failed).`);
process.exit(failed === 0 ? 0 : 1);
