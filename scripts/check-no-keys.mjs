// Fails when an API key value is stored anywhere under the local state and log directories:
// wrangler dev's observability store (traces and logs, <state>/v3/observability), D1 and Durable
// Object files, and wrangler's own log files. Keys are stored as digests only, so any full value
// found there leaked from a URL or a log line.
//   node scripts/check-no-keys.mjs [dir ...]   (default: .wrangler/state and wrangler's log directory)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** A full key: prefix and 40 base62 characters (src/domain/api-keys.ts). */
const KEY = /slv_(?:acct|cli)_[0-9A-Za-z]{40}/g;
const root = join(import.meta.dirname, "..");

export function defaultDirs() {
  const config = process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config");
  return [
    join(root, ".wrangler", "state"),
    process.env.WRANGLER_LOG_PATH ?? join(config, ".wrangler", "logs"),
  ];
}

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

/** Every file under the directories that holds a key value, with the keys masked. */
export function findKeys(dirs) {
  const found = [];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
    for (const path of files(dir)) {
      // latin1 keeps every byte, so keys inside SQLite pages and WAL frames are seen too.
      const matches = readFileSync(path).toString("latin1").match(KEY);
      if (matches) found.push({ path, keys: [...new Set(matches)].map((key) => `${key.slice(0, 12)}…${key.slice(-4)}`) });
    }
  }
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : defaultDirs();
  const found = findKeys(dirs);
  for (const { path, keys } of found) console.error(`API key value in ${path}: ${keys.join(", ")}`);
  if (found.length > 0) process.exit(1);
  console.log(`No API key values under ${dirs.join(", ")}`);
}
