import { and, eq, isNull } from "drizzle-orm";
import type { KeyKind } from "./rules";
import { database } from "../platform/db";
import { accountKeys, accounts, clientKeys } from "../db/schema";

export interface KeyOwner {
  keyId: number;
  accountId: number;
  clientId: number | null;
  /** The account's own limits, when provisioning set them. */
  rateLimitPerMinute: number | null;
  rateLimitBurst: number | null;
}

/** Who holds a key, found by its digest; null for unknown, deleted or inactive keys and disabled accounts. */
export async function findKeyOwner(d1: D1Database, kind: KeyKind, keyHash: string): Promise<KeyOwner | null> {
  const db = database(d1);
  const limits = { rateLimitPerMinute: accounts.rateLimitPerMinute, rateLimitBurst: accounts.rateLimitBurst };
  if (kind === "account") {
    const row = await db
      .select({ keyId: accountKeys.id, accountId: accountKeys.accountId, ...limits })
      .from(accountKeys)
      .innerJoin(accounts, eq(accounts.id, accountKeys.accountId))
      .where(and(eq(accountKeys.keyHash, keyHash), isNull(accounts.disabledAt)))
      .get();
    return row ? { ...row, clientId: null } : null;
  }
  const row = await db
    .select({ keyId: clientKeys.id, accountId: clientKeys.accountId, clientId: clientKeys.clientId, ...limits })
    .from(clientKeys)
    .innerJoin(accounts, eq(accounts.id, clientKeys.accountId))
    .where(and(eq(clientKeys.keyHash, keyHash), eq(clientKeys.status, "active"), isNull(accounts.disabledAt)))
    .get();
  return row ?? null;
}
