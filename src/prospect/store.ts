import { and, count, desc, eq } from "drizzle-orm";
import { savedSearches } from "../db/schema";
import { visibleRows } from "../platform/access";
import type { Principal } from "../platform/principal";
import type { Database } from "../platform/db";

export type SearchRow = typeof savedSearches.$inferSelect;
type NewSearch = typeof savedSearches.$inferInsert;

function visibleSearch(principal: Principal, id: number) {
  return and(eq(savedSearches.id, id), visibleRows(principal, savedSearches));
}

export function insertSavedSearch(db: Database, search: NewSearch): Promise<SearchRow> {
  return db.insert(savedSearches).values(search).returning().get();
}

/** One page of the caller's saved searches, newest first, with how many there are in all. */
export async function listSavedSearches(db: Database, principal: Principal, page: { limit: number; offset: number }): Promise<{ rows: SearchRow[]; total: number }> {
  const where = visibleRows(principal, savedSearches);
  const [rows, total] = await Promise.all([
    db.select().from(savedSearches).where(where).orderBy(desc(savedSearches.id)).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(savedSearches).where(where),
  ]);
  return { rows, total: total[0]?.n ?? 0 };
}

/** Renames a saved search the caller may see; false when there is none. */
export async function renameSavedSearch(db: Database, principal: Principal, id: number, searchString: string, now: Date): Promise<boolean> {
  const changed = await db.update(savedSearches).set({ searchString, updatedAt: now }).where(visibleSearch(principal, id)).returning({ id: savedSearches.id });
  return changed.length > 0;
}

/** Deletes a saved search the caller may see; false when there is none. */
export async function deleteSavedSearch(db: Database, principal: Principal, id: number): Promise<boolean> {
  const deleted = await db.delete(savedSearches).where(visibleSearch(principal, id)).returning({ id: savedSearches.id });
  return deleted.length > 0;
}
