import { and, asc, count, eq, gt, inArray, sql, type SQL } from "drizzle-orm";
import { blockListed } from "./block-list";
import type { Database } from "../platform/db";
import { jsonList, rawBatch } from "../platform/sql";
import { foldLeadSearch } from "../platform/text-search";
import { campaignLeads, leadCategories, leads, type RecordState, type VerificationStatus } from "../db/schema";
import { visibleCategories } from "../platform/access";

/** The campaign an upload goes into: its leads take the campaign's client scope. */
interface UploadTarget {
  accountId: number;
  campaignId: number;
  clientId: number | null;
}

/** How many of these (normalised) emails already have a record in the campaign. */
export async function countAlreadyInCampaign(db: Database, target: UploadTarget, emails: string[]): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(campaignLeads)
    .innerJoin(leads, eq(leads.id, campaignLeads.leadId))
    .where(
      and(
        eq(campaignLeads.campaignId, target.campaignId),
        inArray(leads.email, sql`(SELECT value FROM json_each(${JSON.stringify(emails)}))`),
      ),
    )
    .get();
  return row?.n ?? 0;
}

/**
 * When new records are first due: `default` for a lead without a zone, `byZone` for the zones the
 * upload names (the first instant inside each zone's window when the campaign sends in each lead's
 * zone, CONTRACT 23.2). A stored lead of another zone is due now; the sender moves it into its window.
 */
export interface EnrolmentDue {
  default: number;
  byZone: Record<string, number>;
}

/**
 * The statement that creates, in one client scope, the leads of these (normalised) addresses not yet
 * known there, an address given twice once; a lead already of that scope keeps its fields. A lead of
 * another scope comes in as a new row of this one, so clients of one account never share a lead row.
 */
export function insertScopeLeads(
  scope: { accountId: number; clientId: number | null },
  unique: { email: string; first_name?: string | null; last_name?: string | null }[],
  now: number,
): SQL {
  return sql`
    INSERT INTO leads (account_id, client_id, email, first_name, last_name, company_name, phone_number, website,
                       location, linkedin_profile, company_url, custom_fields, timezone, search_folded, created_at)
    SELECT ${scope.accountId}, ${scope.clientId}, value ->> '$.email', value ->> '$.first_name',
           value ->> '$.last_name', value ->> '$.company_name', value ->> '$.phone_number', value ->> '$.website',
           value ->> '$.location', value ->> '$.linkedin_profile', value ->> '$.company_url',
           value -> '$.custom_fields', value ->> '$.timezone', value ->> '$.search_folded', ${now}
    FROM json_each(${jsonList(unique.map((lead) => ({ ...lead, search_folded: foldLeadSearch(lead) })))}) WHERE true
    ON CONFLICT DO NOTHING`;
}

/**
 * Creates the leads not yet known in the campaign's scope (an existing lead of that scope keeps
 * its fields), gives each a record in the campaign, and answers every email's record id.
 * Whole lists travel as one JSON parameter, so no statement nears D1's 100-parameter cap.
 */
export async function storeUpload(
  d1: D1Database,
  target: UploadTarget,
  unique: { email: string; timezone?: string | null }[],
  now: number,
  due: EnrolmentDue = { default: now, byZone: {} },
): Promise<{ email: string; id: number }[]> {
  const emailsJson = JSON.stringify(unique.map((lead) => lead.email));
  const scope = target.clientId ?? 0;
  const [, , mapped] = await rawBatch(d1, [
    insertScopeLeads(target, unique, now),
    sql`
      INSERT INTO campaign_leads (account_id, campaign_id, lead_id, next_step, due_at, created_at, updated_at)
      SELECT ${target.accountId}, ${target.campaignId}, id, 1,
             CASE WHEN timezone IS NULL THEN ${due.default} ELSE coalesce(${JSON.stringify(due.byZone)} ->> ('$."' || timezone || '"'), ${now}) END,
             ${now}, ${now} FROM leads
      WHERE account_id = ${target.accountId} AND coalesce(client_id, 0) = ${scope}
        AND email IN (SELECT value FROM json_each(${emailsJson}))
      ON CONFLICT (campaign_id, lead_id) DO NOTHING`,
    sql`
      SELECT l.email, cl.id FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id
      WHERE cl.campaign_id = ${target.campaignId} AND l.email IN (SELECT value FROM json_each(${emailsJson}))`,
  ]);
  return mapped as { email: string; id: number }[];
}

/**
 * Of these (normalised) addresses, those an upload skips: on the block list of the campaign's
 * scope (account-wide entries included), and leads of that scope unsubscribed from everything.
 */
export async function skippedAddresses(
  d1: D1Database,
  target: UploadTarget,
  emails: string[],
  check: { blockList: boolean; unsubscribed: boolean },
): Promise<{ blocked: Set<string>; unsubscribed: Set<string> }> {
  if (emails.length === 0 || (!check.blockList && !check.unsubscribed)) return { blocked: new Set(), unsubscribed: new Set() };
  const emailsJson = JSON.stringify(emails);
  const [blocked, unsubscribed] = await rawBatch(d1, [
    check.blockList
      ? sql`SELECT value AS email FROM json_each(${emailsJson}) WHERE ${blockListed(target.accountId, target.clientId, sql`value`)}`
      : sql`SELECT NULL AS email WHERE false`,
    check.unsubscribed
      ? sql`SELECT email FROM leads WHERE account_id = ${target.accountId} AND coalesce(client_id, 0) = ${target.clientId ?? 0}
              AND is_unsubscribed = 1 AND email IN (SELECT value FROM json_each(${emailsJson}))`
      : sql`SELECT NULL AS email WHERE false`,
  ]);
  const blockedSet = new Set(blocked!.map((row) => String(row.email)));
  // An address both blocked and unsubscribed counts once, as blocked.
  return { blocked: blockedSet, unsubscribed: new Set(unsubscribed!.map((row) => String(row.email)).filter((email) => !blockedSet.has(email))) };
}

/** One page of a campaign's records with their leads, oldest first, and the total. */
export async function recordPage(
  db: Database,
  campaignId: number,
  state: RecordState | undefined,
  page: { offset: number; limit: number; after: number },
  verification?: VerificationStatus,
) {
  const where = and(
    eq(campaignLeads.campaignId, campaignId),
    state ? eq(campaignLeads.state, state) : undefined,
    verification ? sql`EXISTS (SELECT 1 FROM leads v WHERE v.id = ${campaignLeads.leadId} AND v.verification_status = ${verification})` : undefined,
  );
  // The `starting_after` cursor narrows the page, not the total: rows added meanwhile never shift it.
  const pageWhere = and(where, page.after > 0 ? gt(campaignLeads.id, page.after) : undefined);
  // Not db.batch: drizzle maps batched rows by column name, and the join repeats id/account_id/created_at.
  const [total, rows] = await Promise.all([
    db.select({ n: count() }).from(campaignLeads).where(where),
    db
      .select({ record: campaignLeads, lead: leads })
      .from(campaignLeads)
      .innerJoin(leads, eq(leads.id, campaignLeads.leadId))
      .where(pageWhere)
      .orderBy(asc(campaignLeads.id))
      .limit(page.limit)
      .offset(page.offset),
  ]);
  return { total: total[0]?.n ?? 0, rows };
}

/** Sets a record's state when it belongs to the campaign; false when it does not. */
export async function setRecordStateIn(db: Database, campaignId: number, recordId: number, state: RecordState): Promise<boolean> {
  const updated = await db
    .update(campaignLeads)
    .set({ state, updatedAt: new Date() })
    .where(and(eq(campaignLeads.id, recordId), eq(campaignLeads.campaignId, campaignId)))
    .returning({ id: campaignLeads.id })
    .get();
  return updated !== undefined;
}

/** Every category the account can use: the built-in ones and its own. */
export function categoriesOf(db: Database, accountId: number) {
  return db.select().from(leadCategories).where(visibleCategories(accountId)).orderBy(asc(leadCategories.id));
}
