import { is, sql, SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { utf8Length } from "./bytes";

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

/**
 * What one `jsonList` parameter may take: D1 refuses a string (or row) over 2,000,000 bytes, and a
 * list of a stranger's messages can be any size; half of it leaves room for the row a value becomes.
 */
export const JSON_LIST_BYTES = 1_000_000;

/**
 * `values` in runs whose `jsonList` stays within `maxBytes` (UTF-8), in order; a value larger on its
 * own goes alone (the caller bounds each value). `size` gives a value's share when it is not the
 * value's own JSON (a row whose text is written again elsewhere).
 */
export function jsonListChunks<T>(values: readonly T[], maxBytes = JSON_LIST_BYTES, size: (value: T) => number = (value) => utf8Length(JSON.stringify(value))): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 2;
  for (const value of values) {
    const own = size(value) + 1;
    if (current.length > 0 && bytes + own > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 2;
    }
    current.push(value);
    bytes += own;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** `IN (SELECT value FROM json_each(?))`: the one idiom for list membership in raw SQL. */
export function inList(values: readonly unknown[]): SQL {
  return sql`IN (SELECT value FROM json_each(${jsonList(values)}))`;
}

/**
 * A JSON column (`empty` where it is NULL) with each `[path, value]` set, every value bound as JSON
 * text so it is stored as the value it is (a string stays a string, an array an array). Only these
 * paths change, over the value stored when the statement runs: two writers of different paths both
 * land, where writing back a value read earlier would put the other's old fields back.
 */
export function jsonSet(column: SQL, empty: string, paths: readonly (readonly [string, unknown])[]): SQL {
  return sql`json_set(coalesce(${column}, ${empty})${sql.join(paths.map(([path, value]) => sql`, ${path}, json(${JSON.stringify(value)})`))})`;
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
