import { sql } from "drizzle-orm";
import { integer } from "drizzle-orm/sqlite-core";

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
