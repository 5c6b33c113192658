import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

/**
 * Case-insensitive (ASCII) substring match. instr() rather than LIKE: D1 refuses LIKE patterns
 * over 50 bytes, and nothing in the needle needs escaping.
 */
export function containsText(column: SQLWrapper, needle: string): SQL {
  return sql`instr(lower(${column}), ${needle.toLowerCase()}) > 0`;
}
