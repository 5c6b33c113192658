import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

const dialect = new SQLiteAsyncDialect();

/** A D1 statement from a drizzle `sql` template (parameters bound, never interpolated). */
export function statement(d1: D1Database, query: SQL): D1PreparedStatement {
  const { sql, params } = dialect.sqlToQuery(query);
  return d1.prepare(sql).bind(...params);
}

/**
 * Runs hand-written statements as one D1 batch: all of them commit, or none does.
 * Each entry of the answer holds the rows of the statement at the same position.
 */
export async function rawBatch(d1: D1Database, queries: SQL[]): Promise<Record<string, unknown>[][]> {
  const results = await d1.batch(queries.map((query) => statement(d1, query)));
  return results.map((result) => result.results as Record<string, unknown>[]);
}
