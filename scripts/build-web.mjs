// Builds the web app (web/) into the Worker's static assets: public/index.html, public/app/*
// (hashed, code-split per screen), public/_headers and public/favicon.svg. Run by postinstall, by
// `npm run dev` when web/ changed since the last build, and by `npm run deploy`. The output is not
// committed (.gitignore): it is derived, and a fresh clone builds it on `npm install`.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const web = join(root, "web");
const out = join(root, "public");
const built = join(out, "index.html");

/** The newest modification time under a directory (the app's sources and what it imports from src/). */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const SOURCES = [web, join(root, "src", "client"), join(root, "src", "sequences")];

export function webIsStale() {
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  return SOURCES.some((dir) => newest(dir) > builtAt);
}

export async function buildWeb({ quiet = false } = {}) {
  const { build } = await import("vite");
  for (const stale of ["app", "index.html", "_headers", "favicon.svg"]) rmSync(join(out, stale), { recursive: true, force: true });
  await build({
    root: web,
    base: "/",
    publicDir: join(web, "public"),
    logLevel: quiet ? "warn" : "info",
    configFile: false,
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
    build: {
      outDir: out,
      emptyOutDir: false,
      assetsDir: "app",
      target: "es2022",
      sourcemap: false,
      reportCompressedSize: false,
      modulePreload: { polyfill: false },
    },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const onlyIfStale = process.argv.includes("--if-stale");
  if (!onlyIfStale || webIsStale()) await buildWeb({ quiet: process.argv.includes("--quiet") });
}
