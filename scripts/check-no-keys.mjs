// Fails when an API key value or an OAuth token is stored anywhere under the local state and log
// directories: wrangler dev's observability store (traces and logs, <state>/v3/observability), D1 and
// Durable Object files, and wrangler's own log files. Keys are stored as digests only and tokens
// encrypted (refresh tokens in D1, access tokens in the mailbox's object), so any full value found
// there leaked from a URL, a log line or a trace. Tokens: Google's and Microsoft's shapes (`ya29.`,
// `1//`, JWTs), and every token the running mail lab's provider issued (its `issued_tokens` file).
//   node scripts/check-no-keys.mjs [dir ...]   (default: .wrangler/state and wrangler's log directory)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** A full key: prefix and 40 base62 characters (src/keys/rules.ts). */
const KEY = /slv_(?:acct|cli)_[0-9A-Za-z]{40}/g;
/** Provider tokens by shape: Google access and refresh tokens, and a JWT (Microsoft's access tokens, any id token). */
const TOKEN_SHAPES = /ya29\.[0-9A-Za-z_-]{20,}|1\/\/0[0-9A-Za-z_-]{20,}|eyJ[0-9A-Za-z_-]{10,}\.eyJ[0-9A-Za-z_-]{10,}\.[0-9A-Za-z_-]{10,}/g;
const root = join(import.meta.dirname, "..");

/** The tokens the running mail lab's provider issued (none without a lab). */
export function labTokenValues(labJson = process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json")) {
  try {
    const file = JSON.parse(readFileSync(labJson, "utf8")).oauth?.issued_tokens;
    return file && existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line.length >= 16) : [];
  } catch {
    return [];
  }
}

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

/** A running runtime's SQLite removes its -wal and -shm files as it checkpoints: one gone since the listing holds nothing more. */
function ifThere(read) {
  try {
    return read();
  } catch (error) {
    if (error.code === "ENOENT") return undefined;
    throw error;
  }
}

/** A file's time comes from the kernel's coarse clock, a few milliseconds behind `Date.now()`: a file a run wrote at once may read older than its start. */
const COARSE_CLOCK_MS = 1_000;

/**
 * Every file under the directories that holds a key or token value, with the values masked. A run
 * that checks what it wrote gives its start as `since` (epoch ms): files last written before it are
 * other runs' (wrangler's log directory keeps every run's), and reading each of those for every
 * token the lab issued took minutes once a machine held gigabytes of them.
 */
export function findKeys(dirs, tokens = labTokenValues(), since = 0) {
  const found = [];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
    for (const path of files(dir)) {
      if (since > 0 && (ifThere(() => statSync(path))?.mtimeMs ?? 0) < since - COARSE_CLOCK_MS) continue;
      // latin1 keeps every byte, so values inside SQLite pages and WAL frames are seen too.
      const text = ifThere(() => readFileSync(path))?.toString("latin1");
      if (text === undefined) continue;
      const matches = [...(text.match(KEY) ?? []), ...(text.match(TOKEN_SHAPES) ?? []), ...tokens.filter((token) => text.includes(token))];
      if (matches.length > 0) found.push({ path, keys: [...new Set(matches)].map((key) => `${key.slice(0, 8)}…${key.slice(-4)}`) });
    }
  }
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : defaultDirs();
  const found = findKeys(dirs);
  for (const { path, keys } of found) console.error(`API key or token value in ${path}: ${keys.join(", ")}`);
  if (found.length > 0) process.exit(1);
  console.log(`No API key or token values under ${dirs.join(", ")}`);
}
