// Seeds the local database with a demo account. Idempotent: the key value lives in .demo-key
// (git-ignored) so every run prints the same working key, while D1 keeps only its digest.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { digestKey, generateKey, lastFour } from "../src/keys/rules.ts";

const root = join(import.meta.dirname, "..");
export const DEMO_EMAIL = "demo@salvo.local";

function demoKey() {
  const path = join(root, ".demo-key");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const key = generateKey("account");
  writeFileSync(path, `${key}\n`);
  return key;
}

/** `runWrangler(args)` runs wrangler and exits on failure. */
export async function seedDemoAccount(runWrangler) {
  const key = demoKey();
  const hash = await digestKey(key);
  const now = Date.now();
  const sql = `
INSERT INTO accounts (email, name, deliverability_enabled, ignore_ooo_replies, created_at)
VALUES ('${DEMO_EMAIL}', 'Salvo Demo', 1, 0, ${now})
ON CONFLICT(email) DO UPDATE SET deliverability_enabled = 1;
INSERT OR IGNORE INTO account_keys (account_id, key_hash, last4, created_at)
SELECT id, '${hash}', '${lastFour(key)}', ${now} FROM accounts WHERE email = '${DEMO_EMAIL}';
`;
  const file = join(mkdtempSync(join(tmpdir(), "salvo-seed-")), "seed.sql");
  writeFileSync(file, sql);
  try {
    runWrangler(["d1", "execute", "DB", "--local", "--file", file]);
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
  return key;
}
