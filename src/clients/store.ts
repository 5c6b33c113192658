import { and, asc, eq, isNull } from "drizzle-orm";
import { clientCodeIntegrations, clients, oauthApps } from "../db/schema";
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

/** One of the account's clients, its UUID given now when a raw insert left none. */
export async function clientOfAccount(db: Database, accountId: number, clientId: number) {
  const row = await db
    .select()
    .from(clients)
    .where(and(eq(clients.id, clientId), eq(clients.accountId, accountId)))
    .get();
  if (!row || row.uuid !== null) return row;
  await db.update(clients).set({ uuid: crypto.randomUUID() }).where(and(eq(clients.id, row.id), isNull(clients.uuid)));
  return db.select().from(clients).where(eq(clients.id, row.id)).get();
}

/** The account-level OAuth apps' ids at their providers (CONTRACT 18.1), which a white-label login would use. */
export async function accountOAuthAppIds(db: Database, accountId: number) {
  const rows = await db
    .select({ provider: oauthApps.provider, oauthClientId: oauthApps.oauthClientId })
    .from(oauthApps)
    .where(and(eq(oauthApps.accountId, accountId), isNull(oauthApps.clientId)));
  return { google: rows.find((row) => row.provider === "google")?.oauthClientId ?? null, microsoft: rows.find((row) => row.provider === "microsoft")?.oauthClientId ?? null };
}

export type CodeIntegrationRow = typeof clientCodeIntegrations.$inferSelect;

export function codeIntegrationsOf(db: Database, clientId: number): Promise<CodeIntegrationRow[]> {
  return db.select().from(clientCodeIntegrations).where(eq(clientCodeIntegrations.clientId, clientId)).orderBy(asc(clientCodeIntegrations.id));
}

export function insertCodeIntegration(db: Database, accountId: number, clientId: number, fields: { snippetName: string; snippetCode: string }) {
  return db
    .insert(clientCodeIntegrations)
    .values({ accountId, clientId, ...fields })
    .returning({ id: clientCodeIntegrations.id })
    .get();
}

/** Changes one of the client's snippets; undefined when the client has no such snippet. */
export function updateCodeIntegration(db: Database, clientId: number, id: number, fields: { snippetName?: string; snippetCode?: string }) {
  return db
    .update(clientCodeIntegrations)
    .set({ ...fields, updatedAt: new Date() })
    .where(and(eq(clientCodeIntegrations.id, id), eq(clientCodeIntegrations.clientId, clientId)))
    .returning({ id: clientCodeIntegrations.id })
    .get();
}

export function deleteCodeIntegration(db: Database, clientId: number, id: number) {
  return db
    .delete(clientCodeIntegrations)
    .where(and(eq(clientCodeIntegrations.id, id), eq(clientCodeIntegrations.clientId, clientId)))
    .returning({ id: clientCodeIntegrations.id })
    .get();
}
