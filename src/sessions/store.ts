import { and, desc, eq, gt, lte } from "drizzle-orm";
import { database } from "../platform/db";
import { visibleRows } from "../platform/access";
import type { Principal } from "../platform/principal";
import { webSessions } from "../db/schema";

export type SessionRow = typeof webSessions.$inferSelect;

interface NewSession {
  accountId: number;
  clientId: number | null;
  tokenHash: string;
  keyKind: "account" | "client";
  keyHash: string;
  keyLast4: string;
  userAgent: string | null;
  now: number;
  expiresAt: number;
}

/** Stores a session, and drops the account's sessions that have expired (so the table stays small). */
export async function insertSession(d1: D1Database, session: NewSession): Promise<SessionRow> {
  const db = database(d1);
  const now = new Date(session.now);
  const [, rows] = await db.batch([
    db.delete(webSessions).where(and(eq(webSessions.accountId, session.accountId), lte(webSessions.expiresAt, now))),
    db
      .insert(webSessions)
      .values({
        accountId: session.accountId,
        clientId: session.clientId,
        tokenHash: session.tokenHash,
        keyKind: session.keyKind,
        keyHash: session.keyHash,
        keyLast4: session.keyLast4,
        userAgent: session.userAgent,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(session.expiresAt),
      })
      .returning(),
  ]);
  return rows[0]!;
}

/** The live session a token digest names; undefined when there is none or it has expired. */
export function findLiveSession(d1: D1Database, tokenHash: string, now: number): Promise<SessionRow | undefined> {
  return database(d1)
    .select()
    .from(webSessions)
    .where(and(eq(webSessions.tokenHash, tokenHash), gt(webSessions.expiresAt, new Date(now))))
    .get();
}

/** Records a use: last seen now, expiry slid forward. */
export async function touchSession(d1: D1Database, id: number, now: number, expiresAt: number): Promise<void> {
  await database(d1)
    .update(webSessions)
    .set({ lastSeenAt: new Date(now), expiresAt: new Date(expiresAt) })
    .where(eq(webSessions.id, id));
}

/** The live sessions the principal may see (its account's; a client key's, its client's), most recently used first. */
export function listSessions(d1: D1Database, principal: Principal, now: number): Promise<SessionRow[]> {
  return database(d1)
    .select()
    .from(webSessions)
    .where(and(visibleRows(principal, webSessions), gt(webSessions.expiresAt, new Date(now))))
    .orderBy(desc(webSessions.lastSeenAt), desc(webSessions.id));
}

/** One live session the principal may see, by id. */
export function findVisibleSession(d1: D1Database, principal: Principal, id: number, now: number): Promise<SessionRow | undefined> {
  return database(d1)
    .select()
    .from(webSessions)
    .where(and(eq(webSessions.id, id), visibleRows(principal, webSessions), gt(webSessions.expiresAt, new Date(now))))
    .get();
}

/** Ends one of the principal's sessions; false when it has none by that id. */
export async function deleteVisibleSession(d1: D1Database, principal: Principal, id: number): Promise<boolean> {
  const row = await database(d1)
    .delete(webSessions)
    .where(and(eq(webSessions.id, id), visibleRows(principal, webSessions)))
    .returning({ id: webSessions.id })
    .get();
  return row !== undefined;
}

/** Ends a session whatever its owner (its key no longer admits it). */
export async function deleteSession(d1: D1Database, id: number): Promise<void> {
  await database(d1).delete(webSessions).where(eq(webSessions.id, id));
}
