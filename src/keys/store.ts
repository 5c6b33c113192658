import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { MAX_KEYS_PER_CLIENT, type KeyKind } from "./rules";
import { database } from "../platform/db";
import { visibleRows } from "../platform/access";
import type { Principal } from "../platform/principal";
import { containsText } from "../platform/text-search";
import { accountKeys, accounts, clientKeys, clients } from "../db/schema";

/** What a freshly minted key stores: its digest and last four characters, never the value. */
export interface StoredKey {
  keyHash: string;
  last4: string;
}

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

// Account keys

export type AccountKeyRow = typeof accountKeys.$inferSelect;

/** An account's own keys, oldest first. */
export function listAccountKeys(d1: D1Database, accountId: number): Promise<AccountKeyRow[]> {
  return database(d1).select().from(accountKeys).where(eq(accountKeys.accountId, accountId)).orderBy(asc(accountKeys.id));
}

/** Stores another key for an account; returns its id. */
export async function insertAccountKey(d1: D1Database, accountId: number, key: StoredKey): Promise<number> {
  const row = await database(d1)
    .insert(accountKeys)
    .values({ accountId, keyHash: key.keyHash, last4: key.last4, createdAt: new Date() })
    .returning({ id: accountKeys.id })
    .get();
  return row.id;
}

type KeyDeletion = { deleted: { keyHash: string } } | { refused: "not_found" | "last_key" };

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

/** The digests of every key that acts for an account: its own keys and its clients' keys. */
export async function accountKeyHashes(d1: D1Database, accountId: number): Promise<string[]> {
  const db = database(d1);
  const [own, clientsKeys] = await db.batch([
    db.select({ keyHash: accountKeys.keyHash }).from(accountKeys).where(eq(accountKeys.accountId, accountId)),
    db.select({ keyHash: clientKeys.keyHash }).from(clientKeys).where(eq(clientKeys.accountId, accountId)),
  ]);
  return [...own, ...clientsKeys].map((row) => row.keyHash);
}

// Client keys

export type ClientKeyRow = typeof clientKeys.$inferSelect;
type ClientKeyStatus = ClientKeyRow["status"];

/** One client key the principal may see, by id. */
function visibleKey(principal: Principal, id: number) {
  return and(eq(clientKeys.id, id), visibleRows(principal, clientKeys));
}

type ClientKeyCreation = { created: ClientKeyRow } | { refused: "client_not_found" | "too_many_keys" };

/**
 * Stores a new key for one of the principal's clients. Ownership and the per-client cap are
 * checked in the insert itself (a conditional INSERT ... SELECT the builder cannot express), so
 * concurrent creates cannot overshoot the cap.
 */
export async function createClientKey(
  d1: D1Database,
  principal: Principal,
  clientId: number,
  keyName: string,
  key: StoredKey,
): Promise<ClientKeyCreation> {
  const db = database(d1);
  // A client row is "its own client" for the tenancy rule: its id plays the client column.
  const ownClient = and(eq(clients.id, clientId), visibleRows(principal, { accountId: clients.accountId, clientId: clients.id }));
  const inserted = await db.get<{ id: number } | undefined>(sql`
    INSERT INTO client_keys (account_id, client_id, key_name, key_hash, last4, status, created_at)
    SELECT ${clients.accountId}, ${clients.id}, ${keyName}, ${key.keyHash}, ${key.last4}, 'active', ${Date.now()}
    FROM ${clients}
    WHERE ${ownClient}
      AND (SELECT count(*) FROM client_keys k WHERE k.client_id = ${clients.id}) < ${MAX_KEYS_PER_CLIENT}
    RETURNING id`);
  if (!inserted) {
    const client = await db.select({ id: clients.id }).from(clients).where(ownClient).get();
    return { refused: client ? "too_many_keys" : "client_not_found" };
  }
  const row = await db.select().from(clientKeys).where(eq(clientKeys.id, inserted.id)).get();
  return { created: row! };
}

interface ClientKeyFilters {
  clientId?: number;
  status?: ClientKeyStatus;
  /** Part of the key's name, matched case-insensitively (Unicode folded). */
  keyName?: string;
}

/** The client keys the principal may see that match the filters, oldest first. */
export function listClientKeys(d1: D1Database, principal: Principal, filters: ClientKeyFilters): Promise<ClientKeyRow[]> {
  return database(d1)
    .select()
    .from(clientKeys)
    .where(
      and(
        visibleRows(principal, clientKeys),
        filters.clientId ? eq(clientKeys.clientId, filters.clientId) : undefined,
        filters.status ? eq(clientKeys.status, filters.status) : undefined,
        filters.keyName ? containsText(clientKeys.keyName, filters.keyName) : undefined,
      ),
    )
    .orderBy(asc(clientKeys.id));
}

/** Deletes a client key and hands back its digest (for revocation); undefined when there is none. */
export async function deleteClientKey(d1: D1Database, principal: Principal, id: number): Promise<string | undefined> {
  const row = await database(d1)
    .delete(clientKeys)
    .where(visibleKey(principal, id))
    .returning({ keyHash: clientKeys.keyHash })
    .get();
  return row?.keyHash;
}

/** The digest a client key holds now; undefined when there is no such key. */
export async function clientKeyHash(d1: D1Database, principal: Principal, id: number): Promise<string | undefined> {
  const row = await database(d1).select({ keyHash: clientKeys.keyHash }).from(clientKeys).where(visibleKey(principal, id)).get();
  return row?.keyHash;
}

/**
 * Gives a client key a new value, only while it still holds `currentHash`, so the value the
 * caller revokes is exactly the one retired; undefined when the key is gone or changed meanwhile.
 */
export function replaceClientKey(
  d1: D1Database,
  principal: Principal,
  id: number,
  currentHash: string,
  key: StoredKey,
): Promise<ClientKeyRow | undefined> {
  return database(d1)
    .update(clientKeys)
    .set({ keyHash: key.keyHash, last4: key.last4 })
    .where(and(visibleKey(principal, id), eq(clientKeys.keyHash, currentHash)))
    .returning()
    .get();
}

/** Activates or deactivates a client key; undefined when there is no such key. */
export function setClientKeyStatus(
  d1: D1Database,
  principal: Principal,
  id: number,
  status: ClientKeyStatus,
): Promise<ClientKeyRow | undefined> {
  return database(d1).update(clientKeys).set({ status }).where(visibleKey(principal, id)).returning().get();
}
