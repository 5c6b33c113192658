import { and, eq, isNull, or, sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "./db";
import { blockList, campaignLeads, campaigns, campaignTags, clients, emailAccounts, emailAccountTags, leadCategories, leadLists, leadListTags, leads, leadTagMappings, webhooks } from "../db/schema";
import type { Principal } from "../platform/principal";
import { ApiError } from "./errors";
import { inList } from "./sql";

/** Whose rows: an account, and for a client key (or a client's mailbox reading its mail) one client of it. */
export type Scope = Pick<Principal, "accountId" | "clientId">;

export const CAMPAIGN_NOT_FOUND = "Campaign not found";
export const RECORD_NOT_FOUND = "Lead not found";
export const LEAD_LIST_NOT_FOUND = "Lead list not found";

/**
 * The rows of a tenant-scoped table a principal may see: its account's, and for a client key
 * only its client's.
 */
export function visibleRows(principal: Scope, table: { accountId: AnySQLiteColumn; clientId: AnySQLiteColumn }): SQL {
  const account = eq(table.accountId, principal.accountId);
  return principal.clientId === null ? account : and(account, eq(table.clientId, principal.clientId))!;
}

/** The campaigns a principal may see. */
export function visibleCampaigns(principal: Scope): SQL {
  return visibleRows(principal, campaigns);
}

/**
 * The mailboxes a principal may name in what concerns these campaigns (events it reports, the
 * mailbox reports it reads): its own (`visibleRows`), and for a client key also those attached to one
 * of the campaigns (an owner may send a client's campaign through an account-wide mailbox). Never
 * another account's. The campaigns must be ones the principal may see.
 */
export function campaignMailboxes(principal: Principal, campaignIds: number[]): SQL {
  const own = visibleRows(principal, emailAccounts);
  if (principal.clientId === null) return own;
  return or(own, and(eq(emailAccounts.accountId, principal.accountId), attachedTo(sql`${inList(campaignIds)}`, sql`${emailAccounts.id}`)))!;
}

/**
 * The same rule over columns, where the scope is a row's own (a spam test's client and campaign): a
 * mailbox of that client (any of the account's for the account's own scope), or one attached to the
 * campaign. The account is matched apart.
 */
export function scopeMailbox(scope: { clientId: SQL; campaignId: SQL }, mailbox: { id: SQL; clientId: SQL }): SQL {
  return sql`(${scope.clientId} IS NULL OR ${scope.clientId} = ${mailbox.clientId} OR ${attachedTo(sql`= ${scope.campaignId}`, mailbox.id)})`;
}

/** The mailbox is attached to a campaign the condition names (`IN (...)`, `= x`). */
function attachedTo(campaign: SQL, mailboxId: SQL): SQL {
  return sql`${mailboxId} IN (SELECT email_account_id FROM campaign_email_accounts WHERE campaign_id ${campaign})`;
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

/** What carries tags (only its own scope's): its table of pairs, and what its refusal calls it. */
const TAGGED = [
  { table: campaigns, pairs: campaignTags, owner: campaignTags.campaignId, tag: campaignTags.tagId, name: "campaign", kind: "campaign" },
  { table: emailAccounts, pairs: emailAccountTags, owner: emailAccountTags.emailAccountId, tag: emailAccountTags.tagId, name: "email account", kind: "mailbox" },
  { table: leadLists, pairs: leadListTags, owner: leadListTags.listId, tag: leadListTags.tagId, name: "lead list", kind: "lead list" },
  { table: leads, pairs: leadTagMappings, owner: leadTagMappings.leadId, tag: leadTagMappings.tagId, name: "lead", kind: "lead" },
] as const;

type Tagged = (typeof TAGGED)[number]["table"];

function taggedOf(table: Tagged) {
  return TAGGED.find((one) => one.table === table)!;
}

/** A tag row `t` of another scope than the tagged row `o`, or than `scope` where the same change gives `o` one. */
function foreignScope(scope: SQL = sql`o.client_id`): SQL {
  return sql`coalesce(t.client_id, 0) <> coalesce(${scope}, 0)`;
}

/**
 * The first (object, tag) pair whose tag is not of that object's scope, if any: a campaign, mailbox,
 * lead list or lead (CRM lead tags) carries its own client's tags, or the account's for one of no client, so a client key never reads
 * another client's tag names on what it sees (an owner's key may name any scope's tag). `movedTo`: the
 * client (null: the account) the same change gives the objects, whose tags they must then be.
 */
async function foreignTagPair(db: Database, tagged: Tagged, ids: number[], tagIds: number[], movedTo?: number | null): Promise<{ id: number; tagId: number } | undefined> {
  const row = await db.get<{ id: number; tag_id: number } | undefined>(
    sql`SELECT o.id AS id, t.id AS tag_id FROM ${tagged} o JOIN tags t ON t.id ${inList(tagIds)}
        WHERE o.id ${inList(ids)} AND ${foreignScope(movedTo === undefined ? undefined : sql`${movedTo}`)}
        ORDER BY o.id, t.id LIMIT 1`,
  );
  return row ? { id: Number(row.id), tagId: Number(row.tag_id) } : undefined;
}

/** `foreignTagPair`'s pair refused: 400 naming it, before anything is stored. */
export async function refuseForeignTags(db: Database, tagged: Tagged, ids: number[], tagIds: number[], movedTo?: number | null): Promise<void> {
  const foreign = await foreignTagPair(db, tagged, ids, tagIds, movedTo);
  if (!foreign) return;
  const { name, kind } = taggedOf(tagged);
  throw ApiError.badRequest(`Tag ${foreign.tagId} is not one of ${name} ${foreign.id}'s tags: a ${kind} carries its client's tags (the account's for a ${kind} of no client)`);
}

/**
 * Takes off the objects `within` names (`IN (...)`, `= x`) their tags of another scope than theirs: in
 * the batch that gives them to another client, after that change, so the new client never reads the
 * old scope's tag names on them (nor the old client on what it no longer sees).
 */
export function foreignTagsDropped(db: Database, tagged: Tagged, within: SQL) {
  const { pairs, owner, tag } = taggedOf(tagged);
  return db.delete(pairs).where(sql`${owner} ${within} AND EXISTS (SELECT 1 FROM tags t JOIN ${tagged} o ON o.id = ${owner} WHERE t.id = ${tag} AND ${foreignScope()})`);
}

/**
 * A folder (a campaign's, a spam test's) holds only what is of its own client scope, or, account-wide,
 * anything of the account: a client's folder holding another client's campaign or test would count it
 * for that client, let it unfile what it cannot see, and show the other client a folder not its own.
 * `ownerClientId`: the client of what is filed (null: the account's own).
 */
export function folderMayHold(folder: { clientId: number | null }, ownerClientId: number | null): boolean {
  return folder.clientId === null || folder.clientId === ownerClientId;
}

/** `folderMayHold` over columns: a folder's client, and the client of what it holds or is to hold. */
export function folderHolds(folderClientId: SQL, ownerClientId: SQL): SQL {
  return sql`(${folderClientId} IS NULL OR ${folderClientId} IS ${ownerClientId})`;
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

/** A lead's record in a campaign the caller may see (at most one exists), or 404 with `notFound`. */
export async function findRecordOfLead(
  db: Database,
  principal: Principal,
  campaignId: number,
  leadId: number,
  notFound = RECORD_NOT_FOUND,
): Promise<CampaignRecordRow> {
  const row = await db
    .select({ record: campaignLeads })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(and(eq(campaignLeads.campaignId, campaignId), eq(campaignLeads.leadId, leadId), visibleCampaigns(principal)))
    .get();
  if (!row) throw ApiError.notFound(notFound);
  return row.record;
}

/** A campaign record (`email_lead_map_id`) in a campaign the caller may see, or 404. */
export async function findCampaignRecord(db: Database, principal: Principal, id: number, notFound = RECORD_NOT_FOUND): Promise<CampaignRecordRow> {
  const row = await db
    .select({ record: campaignLeads })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(and(eq(campaignLeads.id, id), visibleCampaigns(principal)))
    .get();
  if (!row) throw ApiError.notFound(notFound);
  return row.record;
}

const LEAD_NOT_IN_CAMPAIGN = "Lead not found in campaign";

export type LeadRow = typeof leads.$inferSelect;

/** The leads a principal may see: its account's, and for a client key only its client's. */
export function visibleLeads(principal: Principal): SQL {
  return visibleRows(principal, leads);
}

/** A lead the caller may see, or null (lookups answer `{}` for a missing lead, changes 404). */
export async function findLead(db: Database, principal: Principal, id: number): Promise<LeadRow | null> {
  const row = await db
    .select()
    .from(leads)
    .where(and(eq(leads.id, id), visibleLeads(principal)))
    .get();
  return row ?? null;
}

/** A lead the caller may see, or the contract's 404. */
export async function requireLead(db: Database, principal: Principal, id: number): Promise<LeadRow> {
  const row = await findLead(db, principal, id);
  if (!row) throw ApiError.notFound(RECORD_NOT_FOUND);
  return row;
}

/**
 * A lead's record in a campaign the caller may see (`/campaigns/{id}/leads/{lead_id}/...`): the
 * campaign's 404 when the campaign is not the caller's, else "Lead not found in campaign".
 */
export async function findLeadRecord(
  db: Database,
  principal: Principal,
  campaignId: number,
  leadId: number,
): Promise<{ campaign: CampaignRow; record: CampaignRecordRow }> {
  const campaign = await findCampaign(db, principal, campaignId);
  const record = await db
    .select()
    .from(campaignLeads)
    .where(and(eq(campaignLeads.campaignId, campaign.id), eq(campaignLeads.leadId, leadId)))
    .get();
  if (!record) throw ApiError.notFound(LEAD_NOT_IN_CAMPAIGN);
  return { campaign, record };
}

/**
 * A campaign's record named by record id, or (shared rules, "Lead or record") by lead id when the
 * campaign has no record with that id.
 */
export async function findRecordOrLeadRecord(
  db: Database,
  principal: Principal,
  campaignId: number,
  id: number,
): Promise<{ campaign: CampaignRow; record: CampaignRecordRow }> {
  const campaign = await findCampaign(db, principal, campaignId);
  const rows = await db
    .select()
    .from(campaignLeads)
    .where(and(eq(campaignLeads.campaignId, campaign.id), or(eq(campaignLeads.id, id), eq(campaignLeads.leadId, id))));
  const record = rows.find((row) => row.id === id) ?? rows.find((row) => row.leadId === id);
  if (!record) throw ApiError.notFound(LEAD_NOT_IN_CAMPAIGN);
  return { campaign, record };
}

export const BLOCK_LIST_ENTRY_NOT_FOUND = "Block list entry not found";

/**
 * The block-list entries a principal reads: a client key also reads the account-wide ones (they
 * apply to its campaigns too), though it writes only its client's (`visibleRows`).
 */
export function readableBlockList(principal: Principal): SQL {
  const account = eq(blockList.accountId, principal.accountId);
  return principal.clientId === null ? account : and(account, or(isNull(blockList.clientId), eq(blockList.clientId, principal.clientId)))!;
}

/** The block-list entries a principal may change or delete. */
export function writableBlockList(principal: Principal): SQL {
  return visibleRows(principal, blockList);
}

export type LeadListRow = typeof leadLists.$inferSelect;

/** A lead list the caller may see (the account's, for a client key only its client's), or 404. */
export async function findLeadList(db: Database, principal: Principal, id: number): Promise<LeadListRow> {
  const row = await db
    .select()
    .from(leadLists)
    .where(and(eq(leadLists.id, id), visibleRows(principal, leadLists)))
    .get();
  if (!row) throw ApiError.notFound(LEAD_LIST_NOT_FOUND);
  return row;
}

/**
 * The webhooks a principal may see: all of its account's for an account key; for a client key its
 * client's `client`-scope webhooks and the `campaign`-scope ones of its client's campaigns (never
 * the account-level `user` scope).
 */
export function visibleWebhooks(principal: Principal): SQL {
  const account = and(eq(webhooks.accountId, principal.accountId), isNull(webhooks.deletedAt))!;
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

/** Whether `clientId` is one of the account's clients. */
export async function accountHasClient(db: Database, accountId: number, clientId: number): Promise<boolean> {
  const client = await db
    .select({ id: clients.id })
    .from(clients)
    .where(and(eq(clients.id, clientId), eq(clients.accountId, accountId)))
    .get();
  return client !== undefined;
}

/**
 * The client a new object belongs to: a client key's own (another one named → 400), else the
 * account's client named (not the account's → 400), else the account itself (null).
 */
export async function owningClient(db: Database, principal: Principal, requested: number | null | undefined): Promise<number | null> {
  if (principal.clientId !== null) {
    if (requested != null && requested !== principal.clientId) throw ApiError.badRequest("Client not found");
    return principal.clientId;
  }
  if (requested == null) return null;
  if (!(await accountHasClient(db, principal.accountId, requested))) throw ApiError.badRequest("Client not found");
  return requested;
}
