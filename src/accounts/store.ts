import { eq, max } from "drizzle-orm";
import { database } from "../platform/db";
import { isUniqueViolation } from "../platform/db-errors";
import { accountKeys, accounts } from "../db/schema";
import type { StoredKey } from "../keys/store";

export type AccountRow = typeof accounts.$inferSelect;

export function findAccount(d1: D1Database, accountId: number): Promise<AccountRow | undefined> {
  return database(d1).select().from(accounts).where(eq(accounts.id, accountId)).get();
}

/** Changes an account's own settings; undefined when there is no such account. */
export function updateAccountSettings(
  d1: D1Database,
  accountId: number,
  settings: { ignoreOooReplies: boolean },
): Promise<AccountRow | undefined> {
  return database(d1).update(accounts).set(settings).where(eq(accounts.id, accountId)).returning().get();
}

/** Disables or re-enables an account, or sets its warmup pool sharing; undefined when there is no such account. */
export function updateAccountStanding(d1: D1Database, accountId: number, changes: { disabled?: boolean; warmupSharedPool?: boolean }): Promise<AccountRow | undefined> {
  return database(d1)
    .update(accounts)
    .set({
      ...(changes.disabled !== undefined && { disabledAt: changes.disabled ? new Date() : null }),
      ...(changes.warmupSharedPool !== undefined && { warmupSharedPool: changes.warmupSharedPool }),
    })
    .where(eq(accounts.id, accountId))
    .returning()
    .get();
}

/** Whether an account already uses this (lower-cased) email. */
/** The highest account id this database holds (shard 0: the ids of accounts from before shards end here). */
export async function highestAccountId(d1: D1Database): Promise<number> {
  const row = await database(d1).select({ id: max(accounts.id) }).from(accounts).get();
  return row?.id ?? 0;
}

export async function emailTaken(d1: D1Database, email: string): Promise<boolean> {
  const row = await database(d1).select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).get();
  return row !== undefined;
}

interface NewAccount {
  /** The directory's id for it (src/directory/store.ts). */
  id: number;
  email: string;
  name: string;
  deliverabilityEnabled: boolean;
  ignoreOooReplies: boolean;
  rateLimitPerMinute: number | null;
  rateLimitBurst: number | null;
}

type Provisioning = { id: number } | { refused: "email_taken" };

/**
 * Creates an account and its first key in one batch: an account never exists without a key. A
 * concurrent provisioning of the same email loses on the unique index and is refused.
 */
export async function provisionAccount(d1: D1Database, account: NewAccount, key: StoredKey): Promise<Provisioning> {
  const db = database(d1);
  const now = new Date();
  try {
    const [inserted] = await db.batch([
      db
        .insert(accounts)
        .values({ ...account, createdAt: now })
        .returning({ id: accounts.id }),
      db.insert(accountKeys).values({
        accountId: account.id,
        keyHash: key.keyHash,
        last4: key.last4,
        createdAt: now,
      }),
    ]);
    return { id: inserted[0]!.id };
  } catch (error) {
    if (isUniqueViolation(error)) return { refused: "email_taken" };
    throw error;
  }
}
