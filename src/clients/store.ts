import { and, asc, eq, sql } from "drizzle-orm";
import { clients } from "../db/schema";
import { afterCursor, pageWindow, type Page } from "../platform/paging";
import type { Database } from "../platform/db";
import { inList, rawBatch } from "../platform/sql";
import { BLOCKABLE_STATES, blockListed } from "../leads/block-list";

type ClientFields = { name: string; email: string };

/** Updates one of the account's clients; undefined when it has no such client. */
export function updateClient(db: Database, accountId: number, clientId: number, fields: ClientFields) {
  return db
    .update(clients)
    .set(fields)
    .where(and(eq(clients.id, clientId), eq(clients.accountId, accountId)))
    .returning()
    .get();
}

export function insertClient(db: Database, accountId: number, fields: ClientFields) {
  return db
    .insert(clients)
    .values({ accountId, ...fields, createdAt: new Date() })
    .returning()
    .get();
}

/** The account's clients by id, one page. */
export function clientsOf(db: Database, accountId: number, page: Page = {}) {
  const { limit, offset } = pageWindow(page);
  return db
    .select()
    .from(clients)
    .where(and(eq(clients.accountId, accountId), afterCursor(clients.id, page)))
    .orderBy(asc(clients.id))
    .limit(limit)
    .offset(offset);
}

/** One of the account's clients, or undefined. */
export function clientOfAccount(db: Database, accountId: number, clientId: number) {
  return db
    .select({ id: clients.id, email: clients.email })
    .from(clients)
    .where(and(eq(clients.id, clientId), eq(clients.accountId, accountId)))
    .get();
}

/**
 * Gives a campaign and its subsequences to a client (or to none), in one batch; with `blockNow`,
 * the live records of those campaigns whose address or domain the client's block list (account-wide
 * entries included) names are BLOCKED at once, as the engine would refuse them at their next send.
 */
export async function assignClient(d1: D1Database, campaign: { id: number; accountId: number }, clientId: number | null, blockNow: boolean, now: number) {
  const family = sql`(id = ${campaign.id} OR parent_campaign_id = ${campaign.id})`;
  await rawBatch(d1, [
    sql`UPDATE campaigns SET client_id = ${clientId}, updated_at = ${now} WHERE account_id = ${campaign.accountId} AND ${family}`,
    ...(blockNow
      ? [
          sql`UPDATE campaign_leads SET state = 'BLOCKED', due_at = NULL, resume_at = NULL, updated_at = ${now}
              WHERE account_id = ${campaign.accountId} AND state ${inList(BLOCKABLE_STATES)}
                AND campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${campaign.accountId} AND ${family})
                AND EXISTS (SELECT 1 FROM leads l WHERE l.id = campaign_leads.lead_id
                            AND ${blockListed(campaign.accountId, clientId, sql`l.email`)})`,
        ]
      : []),
  ]);
}
