import { gt, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { queryCount, queryId } from "./openapi";

const MAX_LIMIT = 1000;

/**
 * Paging for listings that answer a bare array (campaigns, clients, a campaign's webhooks): the
 * hosted `offset`/`limit`, and a `starting_after` cursor. Rows come by id, so a cursor page stays
 * right while rows are added (new ids come after it). Without any of them the whole list is answered.
 */
export const PageQuery = {
  offset: queryCount(0).optional().openapi({ description: "Rows to skip (after starting_after, when given)" }),
  limit: queryCount(1, MAX_LIMIT).optional().openapi({ description: "1-1000; absent: every row" }),
  starting_after: queryId().optional().openapi({ description: "Cursor: only rows with an id above it (the last id of the previous page)" }),
};

export interface Page {
  offset?: number;
  limit?: number;
  starting_after?: number;
}

/** The cursor condition on the id column, if any. */
export function afterCursor(id: AnySQLiteColumn, page: Page): SQL | undefined {
  return page.starting_after === undefined ? undefined : gt(id, page.starting_after);
}

/** LIMIT and OFFSET for drizzle: SQLite takes an OFFSET only after a LIMIT, so "no limit" is the largest one. */
export function pageWindow(page: Page): { limit: number; offset: number } {
  return { limit: page.limit ?? Number.MAX_SAFE_INTEGER, offset: page.offset ?? 0 };
}
