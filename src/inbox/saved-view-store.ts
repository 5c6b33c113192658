import { and, asc, eq } from "drizzle-orm";
import { inboxSavedViews } from "../db/schema";
import { visibleRows } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";

export type SavedViewRow = typeof inboxSavedViews.$inferSelect;

export function insertSavedView(db: Database, values: Omit<typeof inboxSavedViews.$inferInsert, "id" | "createdAt" | "updatedAt">): Promise<SavedViewRow> {
  return db.insert(inboxSavedViews).values(values).returning().get();
}

/** The caller's saved views (a client key: its client's), by id. */
export function savedViewsOf(db: Database, principal: Principal): Promise<SavedViewRow[]> {
  return db.select().from(inboxSavedViews).where(visibleRows(principal, inboxSavedViews)).orderBy(asc(inboxSavedViews.id));
}

export function findSavedView(db: Database, principal: Principal, id: number): Promise<SavedViewRow | undefined> {
  return db
    .select()
    .from(inboxSavedViews)
    .where(and(eq(inboxSavedViews.id, id), visibleRows(principal, inboxSavedViews)))
    .get();
}

export async function deleteSavedView(db: Database, principal: Principal, id: number): Promise<boolean> {
  const row = await db
    .delete(inboxSavedViews)
    .where(and(eq(inboxSavedViews.id, id), visibleRows(principal, inboxSavedViews)))
    .returning({ id: inboxSavedViews.id })
    .get();
  return row !== undefined;
}
