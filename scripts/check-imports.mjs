// `npm run check:imports`: the import graph of src/ must have no circles (type-only imports
// included) and must point one way: db/schema imports nothing of ours outside itself, platform/
// imports only platform/ and db/ (and the config types), the low kits (mail/, schedule/,
// categories/) import only themselves and platform/, no feature imports the entry files, and no
// two folders import each other both ways beyond the pairs listed (with their reason) below.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const root = resolve(import.meta.dirname, "..");
const src = join(root, "src");
const ENTRY_FILES = new Set(["index.ts", "app.ts", "scheduled.ts"]);

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (path !== join(src, "client")) walk(path, out);
    } else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

function resolveImport(from, specifier) {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${relative(root, from)}: cannot resolve ${specifier}`);
}

const files = walk(src);
const graph = new Map(
  files.map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles.map((f) => resolveImport(file, f.fileName)).filter(Boolean);
    return [file, [...new Set(targets)]];
  }),
);

const problems = [];
const area = (file) => relative(src, file).split("/")[0];
/** Kits below every feature: they may use platform/ and db/ and nothing above. */
const LOW_KITS = new Set(["mail", "schedule", "categories"]);
/**
 * Folder pairs allowed to import each other both ways, each with why. engine <-> mailboxes: the
 * engine sends with a mailbox's settings and credentials (mailboxes/rules, store), and a mailbox's
 * answer shows the engine's sending status for it.
 */
const TWO_WAY_ALLOWED = new Set(["engine <-> mailboxes"]);

for (const [file, targets] of graph) {
  const from = relative(src, file);
  for (const target of targets) {
    const to = relative(src, target);
    if (from.startsWith("db/schema/") && !to.startsWith("db/schema/")) problems.push(`${from} -> ${to}: the schema imports nothing of ours`);
    if (area(file) === "platform" && !["platform", "db", "config.ts", "env.ts"].includes(area(target))) {
      problems.push(`${from} -> ${to}: platform/ must not depend on a feature`);
    }
    if (ENTRY_FILES.has(to) && !ENTRY_FILES.has(from)) problems.push(`${from} -> ${to}: only entry files import entry files`);
    if (LOW_KITS.has(area(file)) && area(target) !== area(file) && !["platform", "db", "config.ts"].includes(area(target))) {
      problems.push(`${from} -> ${to}: ${area(file)}/ is a low kit and must not depend on a feature`);
    }
  }
}

const folderEdges = new Set();
for (const [file, targets] of graph) {
  for (const target of targets) if (area(file) !== area(target)) folderEdges.add(`${area(file)} -> ${area(target)}`);
}
for (const edge of folderEdges) {
  const [a, b] = edge.split(" -> ");
  if (a < b && folderEdges.has(`${b} -> ${a}`) && !TWO_WAY_ALLOWED.has(`${a} <-> ${b}`)) {
    problems.push(`${a} <-> ${b}: these folders import each other both ways (move the shared piece below both)`);
  }
}

// Tarjan's strongly connected components: any component with more than one file is a circle.
let index = 0;
const stack = [];
const meta = new Map();
function connect(file) {
  meta.set(file, { index, low: index, onStack: true });
  index += 1;
  stack.push(file);
  for (const target of graph.get(file) ?? []) {
    if (!meta.has(target)) {
      connect(target);
      meta.get(file).low = Math.min(meta.get(file).low, meta.get(target).low);
    } else if (meta.get(target).onStack) {
      meta.get(file).low = Math.min(meta.get(file).low, meta.get(target).index);
    }
  }
  if (meta.get(file).low === meta.get(file).index) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      meta.get(member).onStack = false;
      component.push(relative(src, member));
    } while (member !== file);
    if (component.length > 1) problems.push(`import circle: ${component.sort().join(" <-> ")}`);
  }
}
for (const file of graph.keys()) if (!meta.has(file)) connect(file);

if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`${files.length} modules: no import circles, dependencies point one way.`);
