import { and, asc, eq } from "drizzle-orm";
import { clients } from "../db/schema";
import { afterCursor, pageWindow, type Page } from "../platform/paging";
import type { Database } from "../platform/db";

type ClientFields = { name: string; email: string };

/** Updates one of the account's clients; undefined when it has no such client. */
export function updateClient(db: Database, accountId: number, clientId: number, fields: ClientFields) {
  return db
    .update(clients)
    .set(fields)
    .where(and(eq(clients.id, clientId), eq(clients.accountId, accountId)))
    .returning()
    .get();
}

export function insertClient(db: Database, accountId: number, fields: ClientFields) {
  return db
    .insert(clients)
    .values({ accountId, ...fields, createdAt: new Date() })
    .returning()
    .get();
}

/** The account's clients by id, one page. */
export function clientsOf(db: Database, accountId: number, page: Page = {}) {
  const { limit, offset } = pageWindow(page);
  return db
    .select()
    .from(clients)
    .where(and(eq(clients.accountId, accountId), afterCursor(clients.id, page)))
    .orderBy(asc(clients.id))
    .limit(limit)
    .offset(offset);
}
