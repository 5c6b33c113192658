import { and, asc, eq } from "drizzle-orm";
import { clients } from "../db/schema";
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

export function clientsOf(db: Database, accountId: number) {
  return db.select().from(clients).where(eq(clients.accountId, accountId)).orderBy(asc(clients.id));
}
