import { is, sql, SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

const dialect = new SQLiteAsyncDialect();

/** A hand-written `sql` template, or a drizzle query builder (anything with toSQL()). */
export type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

/**
 * A list as ONE bound parameter, for `json_each(...)`: D1 caps bound parameters at 100 per
 * statement in production (not locally), so lists never travel as `IN (?, ?, ...)`.
 */
export function jsonList(values: readonly unknown[]): string {
  return JSON.stringify(values);
}

/** `IN (SELECT value FROM json_each(?))`: the one idiom for list membership in raw SQL. */
export function inList(values: readonly unknown[]): SQL {
  return sql`IN (SELECT value FROM json_each(${jsonList(values)}))`;
}

/** A D1 statement (parameters bound, never interpolated). */
export function statement(d1: D1Database, query: Statement): D1PreparedStatement {
  const compiled = is(query, SQL) ? dialect.sqlToQuery(query) : query.toSQL();
  return d1.prepare(compiled.sql).bind(...compiled.params);
}

/**
 * Runs statements as one D1 batch: all of them commit, or none does. Each entry of the answer
 * holds the raw rows (column names as in SQL) of the statement at the same position.
 */
export async function rawBatch(d1: D1Database, queries: Statement[]): Promise<Record<string, unknown>[][]> {
  const results = await d1.batch(queries.map((query) => statement(d1, query)));
  return results.map((result) => result.results as Record<string, unknown>[]);
}
