import { sql } from "drizzle-orm";
import { integer, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";

/** Instants are stored as integer epoch milliseconds: compact, indexable and exact for range scans. */
export function instant(name: string) {
  return integer(name, { mode: "timestamp_ms" });
}

export function createdAt() {
  return instant("created_at").notNull().default(sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);
}

export function updatedAt() {
  return instant("updated_at").notNull().default(sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);
}

/**
 * The key of a client scope in unique indexes and the lookups that use them: a client's id, or 0
 * for the account itself (SQLite treats NULLs as distinct, so the bare column could not make
 * account-wide rows unique).
 */
export const scopeKey = (clientId: AnySQLiteColumn) => sql`coalesce(${clientId}, 0)`;
