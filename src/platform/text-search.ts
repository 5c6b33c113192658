import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

/** D1 refuses LIKE patterns longer than this many bytes. */
const MAX_LIKE_PATTERN_BYTES = 50;

/**
 * Case folding for search, done in code because SQLite's lower() and LIKE fold ASCII only.
 * NFKC first so composed and decomposed forms (É, E + U+0301) meet, and again after lower-casing,
 * which can itself produce decomposed sequences (İ -> i + U+0307).
 */
export function foldText(value: string): string {
  return value.normalize("NFKC").toLowerCase().normalize("NFKC");
}

/** A lead's searchable names, as its search_folded column holds them. */
export function foldLeadSearch(lead: { email: string; first_name?: string | null; last_name?: string | null }): string {
  return foldText([lead.email, lead.first_name ?? "", lead.last_name ?? ""].join("\n"));
}

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

/** Case-insensitive for all of Unicode: the column holds foldText of the value, the needle is folded the same way. */
export function containsFolded(foldedColumn: SQLWrapper, needle: string): SQL {
  return containsText(foldedColumn, foldText(needle));
}
