import { and, asc, eq, sql } from "drizzle-orm";
import { database } from "../platform/db";
import { accountKeys, accounts, clientKeys } from "../db/schema";

export type AccountKeyRow = typeof accountKeys.$inferSelect;
export type AccountRow = typeof accounts.$inferSelect;

export function findAccount(d1: D1Database, accountId: number): Promise<AccountRow | undefined> {
  return database(d1).select().from(accounts).where(eq(accounts.id, accountId)).get();
}

/** An account's own keys, oldest first. */
export function listAccountKeys(d1: D1Database, accountId: number): Promise<AccountKeyRow[]> {
  return database(d1).select().from(accountKeys).where(eq(accountKeys.accountId, accountId)).orderBy(asc(accountKeys.id));
}

export type KeyDeletion = { deleted: { keyHash: string } } | { refused: "not_found" | "last_key" };

/**
 * Deletes one of an account's keys and hands back its digest (for revocation). With keepOne the
 * account's last key is kept, checked in the same statement so two concurrent deletes cannot
 * leave the account with none.
 */
export async function deleteAccountKey(
  d1: D1Database,
  accountId: number,
  keyId: number,
  { keepOne }: { keepOne: boolean },
): Promise<KeyDeletion> {
  const db = database(d1);
  const own = and(eq(accountKeys.id, keyId), eq(accountKeys.accountId, accountId));
  const others = sql`(SELECT count(*) FROM ${accountKeys} WHERE ${accountKeys.accountId} = ${accountId}) > 1`;
  const row = await db
    .delete(accountKeys)
    .where(keepOne ? and(own, others) : own)
    .returning({ keyHash: accountKeys.keyHash })
    .get();
  if (row) return { deleted: row };
  if (!keepOne) return { refused: "not_found" };
  const exists = await db.select({ id: accountKeys.id }).from(accountKeys).where(own).get();
  return { refused: exists ? "last_key" : "not_found" };
}

/** Disables or re-enables an account; undefined when there is no such account. */
export function setAccountDisabled(d1: D1Database, accountId: number, disabled: boolean): Promise<AccountRow | undefined> {
  return database(d1)
    .update(accounts)
    .set({ disabledAt: disabled ? new Date() : null })
    .where(eq(accounts.id, accountId))
    .returning()
    .get();
}

/** The digests of every key that acts for an account: its own keys and its clients' keys. */
export async function accountKeyHashes(d1: D1Database, accountId: number): Promise<string[]> {
  const db = database(d1);
  const [own, clients] = await db.batch([
    db.select({ keyHash: accountKeys.keyHash }).from(accountKeys).where(eq(accountKeys.accountId, accountId)),
    db.select({ keyHash: clientKeys.keyHash }).from(clientKeys).where(eq(clientKeys.accountId, accountId)),
  ]);
  return [...own, ...clients].map((row) => row.keyHash);
}
