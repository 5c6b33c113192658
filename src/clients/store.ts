import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { campaigns, clientCodeIntegrations, clients, oauthApps } from "../db/schema";
import { folderHolds, foreignTagsDropped } from "../platform/access";
import { afterCursor, pageWindow, type Page } from "../platform/paging";
import type { Database } from "../platform/db";
import { inList, rawBatch, type Statement } from "../platform/sql";
import { ApiError } from "../platform/errors";
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

/** A subsequence has its parent's client: only the parent moves, and its family with it. */
export function refuseSubsequenceMove(campaign: { parentCampaignId: number | null }): void {
  if (campaign.parentCampaignId !== null) throw ApiError.badRequest("Cannot assign client to a sub sequence!");
}

/**
 * What giving a campaign and its subsequences to a client (or to none) changes, for the batch of the
 * request that moves it: assign-client, and a settings post's `client_id`, make the same move. With
 * `blockNow`, the live records of those campaigns whose address or domain the client's block list
 * (account-wide entries included) names are BLOCKED at once, as the engine would refuse them at their
 * next send. They leave a campaign folder of another client than the new one, and their old scope's
 * tags. Their spam tests go along (a test keeps its campaign's client, so the old client would go on
 * seeing it), leaving a folder of another client than the new one (`folderHolds`: a client's folder
 * holds only its own).
 */
export function campaignMoved(db: Database, campaign: { id: number; accountId: number }, clientId: number | null, blockNow: boolean, now: number): Statement[] {
  const family = sql`(id = ${campaign.id} OR parent_campaign_id = ${campaign.id})`;
  return [
    sql`UPDATE campaigns SET client_id = ${clientId}, updated_at = ${now},
          folder_id = (SELECT f.id FROM campaign_folders f WHERE f.id = campaigns.folder_id AND ${folderHolds(sql`f.client_id`, sql`${clientId}`)})
        WHERE account_id = ${campaign.accountId} AND ${family}`,
    foreignTagsDropped(db, campaigns, sql`IN (SELECT id FROM campaigns WHERE account_id = ${campaign.accountId} AND ${family})`),
    sql`UPDATE spam_tests SET client_id = ${clientId}, updated_at = ${now},
          folder_id = (SELECT f.id FROM spam_test_folders f WHERE f.id = spam_tests.folder_id AND ${folderHolds(sql`f.client_id`, sql`${clientId}`)})
        WHERE account_id = ${campaign.accountId} AND campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${campaign.accountId} AND ${family})`,
    ...(blockNow
      ? [
          sql`UPDATE campaign_leads SET state = 'BLOCKED', due_at = NULL, resume_at = NULL, updated_at = ${now}
              WHERE account_id = ${campaign.accountId} AND state ${inList(BLOCKABLE_STATES)}
                AND campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${campaign.accountId} AND ${family})
                AND EXISTS (SELECT 1 FROM leads l WHERE l.id = campaign_leads.lead_id
                            AND ${blockListed(campaign.accountId, clientId, sql`l.email`)})`,
        ]
      : []),
  ];
}

/** assign-client's move (`campaignMoved`), in one batch. */
export async function assignClient(db: Database, campaign: { id: number; accountId: number }, clientId: number | null, blockNow: boolean, now: number) {
  await rawBatch(db.$client, campaignMoved(db, campaign, clientId, blockNow, now));
}

/** One of the account's clients, its UUID given now when a raw insert left none. */
export async function clientOfAccount(db: Database, accountId: number, clientId: number) {
  const row = await db
    .select()
    .from(clients)
    .where(and(eq(clients.id, clientId), eq(clients.accountId, accountId)))
    .get();
  if (!row || row.uuid !== null) return row;
  await db.update(clients).set({ uuid: crypto.randomUUID() }).where(and(eq(clients.id, row.id), isNull(clients.uuid)));
  return db.select().from(clients).where(eq(clients.id, row.id)).get();
}

/** The account-level OAuth apps' ids at their providers (CONTRACT 18.1), which a white-label login would use. */
export async function accountOAuthAppIds(db: Database, accountId: number) {
  const rows = await db
    .select({ provider: oauthApps.provider, oauthClientId: oauthApps.oauthClientId })
    .from(oauthApps)
    .where(and(eq(oauthApps.accountId, accountId), isNull(oauthApps.clientId)));
  return { google: rows.find((row) => row.provider === "google")?.oauthClientId ?? null, microsoft: rows.find((row) => row.provider === "microsoft")?.oauthClientId ?? null };
}

export type CodeIntegrationRow = typeof clientCodeIntegrations.$inferSelect;

export function codeIntegrationsOf(db: Database, clientId: number): Promise<CodeIntegrationRow[]> {
  return db.select().from(clientCodeIntegrations).where(eq(clientCodeIntegrations.clientId, clientId)).orderBy(asc(clientCodeIntegrations.id));
}

export function insertCodeIntegration(db: Database, accountId: number, clientId: number, fields: { snippetName: string; snippetCode: string }) {
  return db
    .insert(clientCodeIntegrations)
    .values({ accountId, clientId, ...fields })
    .returning({ id: clientCodeIntegrations.id })
    .get();
}

/** Changes one of the client's snippets; undefined when the client has no such snippet. */
export function updateCodeIntegration(db: Database, clientId: number, id: number, fields: { snippetName?: string; snippetCode?: string }) {
  return db
    .update(clientCodeIntegrations)
    .set({ ...fields, updatedAt: new Date() })
    .where(and(eq(clientCodeIntegrations.id, id), eq(clientCodeIntegrations.clientId, clientId)))
    .returning({ id: clientCodeIntegrations.id })
    .get();
}

export function deleteCodeIntegration(db: Database, clientId: number, id: number) {
  return db
    .delete(clientCodeIntegrations)
    .where(and(eq(clientCodeIntegrations.id, id), eq(clientCodeIntegrations.clientId, clientId)))
    .returning({ id: clientCodeIntegrations.id })
    .get();
}
