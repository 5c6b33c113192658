import { and, asc, eq, isNull, like, or, sql, type SQL } from "drizzle-orm";
import { blockList } from "../db/schema";
import { readableBlockList, writableBlockList } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { inList, jsonList, rawBatch } from "../platform/sql";
import { BLOCKABLE_STATES } from "./block-list";

export type BlockListRow = typeof blockList.$inferSelect;

interface BlockListFilters {
  offset: number;
  limit: number;
  /** Substring of the stored value. */
  contains?: string;
  clientId?: number;
  /** An address: the entries for it or its domain. */
  coveringAddress?: string;
}

/** `%`, `_` and `\` match themselves in a LIKE with `ESCAPE '\'`. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** One page of the entries the caller reads, by id. */
export function blockListPage(db: Database, principal: Principal, filters: BlockListFilters) {
  const conditions: (SQL | undefined)[] = [readableBlockList(principal)];
  if (filters.contains) conditions.push(sql`${like(blockList.emailOrDomain, `%${likeLiteral(filters.contains.toLowerCase())}%`)} ESCAPE '\\'`);
  if (filters.clientId !== undefined) conditions.push(eq(blockList.clientId, filters.clientId));
  if (filters.coveringAddress !== undefined) {
    const address = filters.coveringAddress.trim().toLowerCase();
    const domain = address.slice(address.indexOf("@") + 1);
    conditions.push(or(eq(blockList.emailOrDomain, address), eq(blockList.emailOrDomain, domain)));
  }
  return db
    .select()
    .from(blockList)
    .where(and(...conditions))
    .orderBy(asc(blockList.id))
    .limit(filters.limit)
    .offset(filters.offset);
}

interface NewEntries {
  accountId: number;
  clientId: number | null;
  values: string[];
  source: string;
}

/**
 * Adds the entries the scope lacks and, in the same batch, BLOCKs the live records their values
 * match (the lead's address, or its domain) in the campaigns of that scope: an account-wide entry
 * reaches every campaign of the account, a client's only that client's. Only the entries this call
 * inserted block anything, so re-adding an entry does not reach records let in since. Answers the
 * values added.
 */
export async function addBlockListEntries(d1: D1Database, entries: NewEntries, now: number): Promise<string[]> {
  const { accountId, clientId, values, source } = entries;
  const scopeCampaigns =
    clientId === null
      ? sql`SELECT id FROM campaigns WHERE account_id = ${accountId}`
      : sql`SELECT id FROM campaigns WHERE account_id = ${accountId} AND client_id = ${clientId}`;
  const added = sql`SELECT email_or_domain FROM block_list
    WHERE account_id = ${accountId} AND coalesce(client_id, 0) = ${clientId ?? 0} AND created_at = ${now}
      AND email_or_domain ${inList(values)}`;
  const [inserted] = await rawBatch(d1, [
    sql`INSERT INTO block_list (account_id, client_id, email_or_domain, source, created_at)
        SELECT ${accountId}, ${clientId}, value, ${source}, ${now} FROM json_each(${jsonList(values)}) WHERE true
        ON CONFLICT DO NOTHING
        RETURNING email_or_domain`,
    sql`UPDATE campaign_leads SET state = 'BLOCKED', due_at = NULL, resume_at = NULL, updated_at = ${now}
        WHERE account_id = ${accountId} AND state ${inList(BLOCKABLE_STATES)} AND campaign_id IN (${scopeCampaigns})
          AND lead_id IN (SELECT id FROM leads WHERE account_id = ${accountId}
                          AND (email IN (${added}) OR substr(email, instr(email, '@') + 1) IN (${added})))`,
  ]);
  return (inserted ?? []).map((row) => String(row.email_or_domain));
}

/** Deletes an entry the caller may write; false when there is none. */
export async function deleteBlockListEntry(db: Database, principal: Principal, id: number): Promise<boolean> {
  const deleted = await db
    .delete(blockList)
    .where(and(eq(blockList.id, id), writableBlockList(principal)))
    .returning({ id: blockList.id })
    .get();
  return deleted !== undefined;
}

/** Deletes the entry for a value in one scope (null = account-wide); false when there is none. */
export async function deleteBlockListValue(db: Database, principal: Principal, value: string, clientId: number | null): Promise<boolean> {
  const deleted = await db
    .delete(blockList)
    .where(
      and(
        eq(blockList.emailOrDomain, value),
        writableBlockList(principal),
        clientId === null ? isNull(blockList.clientId) : eq(blockList.clientId, clientId),
      ),
    )
    .returning({ id: blockList.id })
    .get();
  return deleted !== undefined;
}
