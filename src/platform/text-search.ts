import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

/** D1 refuses LIKE patterns longer than this many bytes. */
const MAX_LIKE_PATTERN_BYTES = 50;

/**
 * Case-insensitive (ASCII, as SQLite's LIKE and lower() both are) substring match. LIKE is the
 * faster scan, so it serves every needle whose pattern D1 accepts; longer ones use instr().
 */
export function containsText(column: SQLWrapper, needle: string): SQL {
  const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  if (new TextEncoder().encode(pattern).length <= MAX_LIKE_PATTERN_BYTES) {
    return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
  }
  return sql`instr(lower(${column}), ${needle.toLowerCase()}) > 0`;
}
