import { and, eq, isNull, or, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "./db";
import { campaignLeads, campaigns, leadCategories, webhooks } from "../db/schema";
import type { Principal } from "../platform/principal";
import { ApiError } from "./errors";

export const CAMPAIGN_NOT_FOUND = "Campaign not found";
export const RECORD_NOT_FOUND = "Lead not found";

/**
 * The rows of a tenant-scoped table a principal may see: its account's, and for a client key
 * only its client's.
 */
export function visibleRows(principal: Principal, table: { accountId: AnySQLiteColumn; clientId: AnySQLiteColumn }): SQL {
  const account = eq(table.accountId, principal.accountId);
  return principal.clientId === null ? account : and(account, eq(table.clientId, principal.clientId))!;
}

/** The campaigns a principal may see. */
export function visibleCampaigns(principal: Principal): SQL {
  return visibleRows(principal, campaigns);
}

/**
 * The same rule for hand-written SQL over campaign_leads aliased `cl` (the inbox's index-only
 * listings): the account's records, and for a client key only those of its client's campaigns.
 */
export function visibleRecordsAliased(principal: Pick<Principal, "accountId" | "clientId">): SQL {
  const account = sql`cl.account_id = ${principal.accountId}`;
  if (principal.clientId === null) return account;
  return sql`${account} AND cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${principal.accountId} AND client_id = ${principal.clientId})`;
}

/** The lead categories an account may use: the built-in ones (no account) and its own. */
export function visibleCategories(accountId: number): SQL {
  return or(isNull(leadCategories.accountId), eq(leadCategories.accountId, accountId))!;
}

export type CampaignRow = typeof campaigns.$inferSelect;

/** A campaign the caller may see, or the contract's 404 (another tenant's looks the same as none). */
export async function findCampaign(db: Database, principal: Principal, id: number): Promise<CampaignRow> {
  const row = await db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.id, id), visibleCampaigns(principal)))
    .get();
  if (!row) throw ApiError.notFound(CAMPAIGN_NOT_FOUND);
  return row;
}

export type CampaignRecordRow = typeof campaignLeads.$inferSelect;

/** A campaign record (`email_lead_map_id`) in a campaign the caller may see, or 404. */
export async function findCampaignRecord(db: Database, principal: Principal, id: number): Promise<CampaignRecordRow> {
  const row = await db
    .select({ record: campaignLeads })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(and(eq(campaignLeads.id, id), visibleCampaigns(principal)))
    .get();
  if (!row) throw ApiError.notFound(RECORD_NOT_FOUND);
  return row.record;
}

/**
 * The webhooks a principal may see: all of its account's for an account key; for a client key its
 * client's `client`-scope webhooks and the `campaign`-scope ones of its client's campaigns (never
 * the account-level `user` scope).
 */
export function visibleWebhooks(principal: Principal): SQL {
  const account = eq(webhooks.accountId, principal.accountId);
  if (principal.clientId === null) return account;
  return and(
    account,
    or(
      and(eq(webhooks.associationType, "client"), eq(webhooks.clientId, principal.clientId)),
      and(
        eq(webhooks.associationType, "campaign"),
        sql`${webhooks.campaignId} IN (SELECT id FROM campaigns WHERE account_id = ${principal.accountId} AND client_id = ${principal.clientId})`,
      ),
    ),
  )!;
}
