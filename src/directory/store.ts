import { isUniqueViolation } from "../platform/db-errors";

/**
 * The directory database (binding DIRECTORY, directory-migrations/): each account's shard and each
 * key's account. Small and rarely written (an account placed or moved, a key made or deleted); the
 * key gates cache what they read from it.
 */

export interface KeyListing {
  accountId: number;
  /** Null for an account the directory does not list yet (one from before shards: shard 0). */
  shard: number | null;
}

/** The account a key digest belongs to, and that account's shard. */
export function findKeyListing(dir: D1Database, keyHash: string): Promise<KeyListing | null> {
  return dir
    .prepare("SELECT k.account_id AS accountId, a.shard AS shard FROM directory_keys k LEFT JOIN directory_accounts a ON a.account_id = k.account_id WHERE k.key_hash = ?")
    .bind(keyHash)
    .first<KeyListing>();
}

/** Records a key's account (again: idempotent). */
export async function listKey(dir: D1Database, keyHash: string, accountId: number): Promise<void> {
  await dir.prepare("INSERT INTO directory_keys (key_hash, account_id) VALUES (?, ?) ON CONFLICT (key_hash) DO UPDATE SET account_id = excluded.account_id").bind(keyHash, accountId).run();
}

/** Forgets keys that no longer exist. */
export async function unlistKeys(dir: D1Database, keyHashes: string[]): Promise<void> {
  if (keyHashes.length === 0) return;
  await dir.prepare("DELETE FROM directory_keys WHERE key_hash IN (SELECT value FROM json_each(?))").bind(JSON.stringify(keyHashes)).run();
}

/** The shard an account lives on; undefined for an account the directory does not list. */
export async function findAccountShard(dir: D1Database, accountId: number): Promise<number | undefined> {
  const row = await dir.prepare("SELECT shard FROM directory_accounts WHERE account_id = ?").bind(accountId).first<{ shard: number }>();
  return row?.shard;
}

/**
 * Reserves an account's id and email for a shard. Ids continue above `floor` (the highest id of
 * the accounts from before shards, all on shard 0), so no account id is ever given twice; refused
 * when any account has the email (the unique index decides a race).
 */
export async function reserveAccount(dir: D1Database, account: { shard: number; email: string }, floor: number): Promise<{ id: number } | "email_taken"> {
  try {
    const [, , inserted] = await dir.batch<{ id: number }>([
      dir.prepare("UPDATE sqlite_sequence SET seq = CAST(?1 AS INTEGER) WHERE name = 'directory_accounts' AND seq < ?1").bind(floor),
      dir.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT 'directory_accounts', CAST(?1 AS INTEGER) WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'directory_accounts')").bind(floor),
      dir.prepare("INSERT INTO directory_accounts (shard, email, created_at) VALUES (?, ?, ?) RETURNING account_id AS id").bind(account.shard, account.email, Date.now()),
    ]);
    return { id: inserted!.results[0]!.id };
  } catch (error) {
    if (isUniqueViolation(error)) return "email_taken";
    throw error;
  }
}

/** Gives back a reservation whose account could not be made. */
export async function releaseAccount(dir: D1Database, accountId: number): Promise<void> {
  await dir.batch([
    dir.prepare("DELETE FROM directory_keys WHERE account_id = ?").bind(accountId),
    dir.prepare("DELETE FROM directory_accounts WHERE account_id = ?").bind(accountId),
  ]);
}

/** Accounts listed per shard. */
export async function accountsPerShard(dir: D1Database): Promise<Map<number, number>> {
  const { results } = await dir.prepare("SELECT shard, count(*) AS accounts FROM directory_accounts GROUP BY shard").all<{ shard: number; accounts: number }>();
  return new Map(results.map((row) => [row.shard, row.accounts]));
}
