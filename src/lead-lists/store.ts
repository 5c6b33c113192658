import { and, asc, count, eq, gt, inArray, lte, max, sql, type SQL } from "drizzle-orm";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { visibleCampaigns, visibleRows, type CampaignRow, type LeadListRow } from "../platform/access";
import { inList, jsonList, rawBatch, type Statement } from "../platform/sql";
import { containsText, foldLeadSearch } from "../platform/text-search";
import { blockListed } from "../leads/block-list";
import { insertScopeLeads } from "../leads/store";
import { optedOut } from "../leads/opt-out";
import { leadRedating, type LeadZoneChange } from "../schedule/redating-store";
import { campaigns, leadListMembers, leadLists, leadListTags, leads, leadTagMappings, tags } from "../db/schema";

/** How many leads one statement group handles: whole lists travel as one JSON parameter each. */
const LEAD_CHUNK = 500;

type LeadRow = typeof leads.$inferSelect;

/** The lead fields an import or a push carries (section 2's add-lead object). */
export interface LeadFields {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  company_name?: string | null;
  phone_number?: string | null;
  website?: string | null;
  location?: string | null;
  linkedin_profile?: string | null;
  company_url?: string | null;
  custom_fields?: Record<string, unknown> | null;
  timezone?: string | null;
  [field: string]: unknown;
}

const TEXT_FIELDS = [
  ["first_name", "firstName"],
  ["last_name", "lastName"],
  ["company_name", "companyName"],
  ["phone_number", "phoneNumber"],
  ["website", "website"],
  ["location", "location"],
  ["linkedin_profile", "linkedinProfile"],
  ["company_url", "companyUrl"],
  ["timezone", "timezone"],
] as const;

/** A stored lead as the add-lead object storeUpload takes. */
export function leadFieldsOf(row: LeadRow): LeadFields {
  const fields: LeadFields = { email: row.email };
  for (const [wire, column] of TEXT_FIELDS) fields[wire] = row[column];
  if (row.customFields) fields.custom_fields = row.customFields;
  return fields;
}

// Lists.

export function insertLeadList(db: Database, values: { accountId: number; clientId: number | null; name: string }) {
  const now = new Date();
  return db
    .insert(leadLists)
    .values({ ...values, createdAt: now, updatedAt: now })
    .returning()
    .get();
}

export function renameLeadList(db: Database, id: number, name: string) {
  return db.update(leadLists).set({ name, updatedAt: new Date() }).where(eq(leadLists.id, id)).returning().get();
}

/** Keeps the custom field declaration an import sent. */
export async function saveListCustomFields(db: Database, id: number, customFields: unknown): Promise<void> {
  await db.update(leadLists).set({ customFields, updatedAt: new Date() }).where(eq(leadLists.id, id));
}

/** Deletes the list, its memberships, tags and imports; the leads stay. */
export async function deleteLeadList(db: Database, id: number): Promise<void> {
  await db.delete(leadLists).where(eq(leadLists.id, id));
}

interface ListFilters {
  listName?: string;
  tagIds?: number[];
  clientId?: number;
}

/**
 * One page of the caller's lists by id. `startingAfter` (a list id) is a cursor that stays right
 * while lists are added or deleted; `offset` then skips within what follows it.
 */
export function leadListPage(
  db: Database,
  principal: Principal,
  filters: ListFilters,
  page: { offset: number; limit: number; startingAfter?: number },
): Promise<LeadListRow[]> {
  const conditions: (SQL | undefined)[] = [
    visibleRows(principal, leadLists),
    filters.clientId === undefined ? undefined : eq(leadLists.clientId, filters.clientId),
    filters.listName ? containsText(leadLists.name, filters.listName) : undefined,
    // Through tags the caller may see only: a pair of another client's tag stored before lists kept
    // to their own scope's tags must not tell a client key which of its lists carry that tag.
    filters.tagIds?.length
      ? sql`${leadLists.id} IN (SELECT ${leadListTags.listId} FROM ${leadListTags} JOIN ${tags} ON ${tags.id} = ${leadListTags.tagId}
          WHERE ${leadListTags.tagId} ${inList(filters.tagIds)} AND ${visibleRows(principal, tags)})`
      : undefined,
    page.startingAfter === undefined ? undefined : gt(leadLists.id, page.startingAfter),
  ];
  return db
    .select()
    .from(leadLists)
    .where(and(...conditions))
    .orderBy(asc(leadLists.id))
    .limit(page.limit)
    .offset(page.offset);
}

type ListTag = { id: number; name: string; color: string };

/**
 * Each list's lead count and the tags on it the caller may see: a pair of another client's tag
 * stored before lists kept to their own scope's tags must not show to a client key.
 */
export async function listDetails(db: Database, principal: Principal, listIds: number[]) {
  if (listIds.length === 0) return { counts: new Map<number, number>(), tagsOf: new Map<number, ListTag[]>() };
  const [countRows, tagRows] = await Promise.all([
    db
      .select({ listId: leadListMembers.listId, n: count() })
      .from(leadListMembers)
      .where(inArray(leadListMembers.listId, sql`(SELECT value FROM json_each(${jsonList(listIds)}))`))
      .groupBy(leadListMembers.listId),
    db
      .select({ listId: leadListTags.listId, id: tags.id, name: tags.name, color: tags.color })
      .from(leadListTags)
      .innerJoin(tags, eq(tags.id, leadListTags.tagId))
      .where(and(inArray(leadListTags.listId, sql`(SELECT value FROM json_each(${jsonList(listIds)}))`), visibleRows(principal, tags)))
      .orderBy(asc(tags.name), asc(tags.id)),
  ]);
  const counts = new Map(countRows.map((row) => [row.listId, row.n]));
  const tagsOf = new Map<number, ListTag[]>();
  for (const { listId, ...tag } of tagRows) tagsOf.set(listId, [...(tagsOf.get(listId) ?? []), tag]);
  return { counts, tagsOf };
}

/** Which of these list ids the caller may see. */
export async function visibleListIds(db: Database, principal: Principal, ids: number[]): Promise<Set<number>> {
  const rows = await db
    .select({ id: leadLists.id })
    .from(leadLists)
    .where(and(visibleRows(principal, leadLists), sql`${leadLists.id} ${inList(ids)}`));
  return new Set(rows.map((row) => row.id));
}

/** Adds and removes tags on lists in one batch (adding a tag twice is a no-op). */
export async function changeListTags(d1: D1Database, listIds: number[], add: number[], remove: number[]): Promise<void> {
  const now = Date.now();
  await rawBatch(d1, [
    sql`INSERT INTO lead_list_tags (list_id, tag_id)
        SELECT l.value, t.value FROM json_each(${jsonList(listIds)}) l, json_each(${jsonList(add)}) t WHERE true
        ON CONFLICT DO NOTHING`,
    sql`DELETE FROM lead_list_tags WHERE list_id ${inList(listIds)} AND tag_id ${inList(remove)}`,
    sql`UPDATE lead_lists SET updated_at = ${now} WHERE id ${inList(listIds)}`,
  ]);
}

// Members.

/** One page of a list's leads by lead id, after `afterLeadId`. */
export function listMemberPage(db: Database, listId: number, page: { afterLeadId: number; offset: number; limit: number }) {
  return db
    .select({ lead: leads, addedAt: leadListMembers.createdAt })
    .from(leadListMembers)
    .innerJoin(leads, eq(leads.id, leadListMembers.leadId))
    .where(and(eq(leadListMembers.listId, listId), gt(leadListMembers.leadId, page.afterLeadId)))
    .orderBy(asc(leadListMembers.leadId))
    .limit(page.limit)
    .offset(page.offset);
}

/**
 * Where a push or copy takes its leads from: one list's members (optionally only some), leads by
 * id, or the leads of a campaign's records (all, or these record ids).
 */
export type LeadSource =
  | { kind: "list"; listId: number; leadIds?: number[] }
  | { kind: "leads"; principal: Principal; leadIds?: number[] }
  | { kind: "records"; campaignId: number; recordIds?: number[] };

/** The source's lead ids as a sub-select (only leads the caller may see). */
function sourceLeadIds(source: LeadSource): SQL {
  if (source.kind === "records") {
    return sql`SELECT lead_id AS id FROM campaign_leads WHERE campaign_id = ${source.campaignId}${
      source.recordIds ? sql` AND id ${inList(source.recordIds)}` : sql``
    }`;
  }
  if (source.kind === "list") {
    return sql`SELECT lead_id AS id FROM lead_list_members WHERE list_id = ${source.listId}${
      source.leadIds ? sql` AND lead_id ${inList(source.leadIds)}` : sql``
    }`;
  }
  return sql`SELECT ${leads.id} FROM ${leads} WHERE ${visibleRows(source.principal, leads)}${
    source.leadIds ? sql` AND ${leads.id} ${inList(source.leadIds)}` : sql``
  }`;
}

/**
 * The source's leads, a chunk at a time by id, among the leads there were when the push began: a
 * push copies a lead of another scope into its target's as a new lead, which the caller may see
 * too, and must not count again as a lead it pushed.
 */
export async function* sourceLeadChunks(db: Database, source: LeadSource): AsyncGenerator<LeadRow[]> {
  const newest = await db.select({ id: max(leads.id) }).from(leads).get();
  let after = 0;
  for (;;) {
    const chunk = await db
      .select()
      .from(leads)
      .where(and(sql`${leads.id} IN (${sourceLeadIds(source)})`, gt(leads.id, after), lte(leads.id, newest?.id ?? 0)))
      .orderBy(asc(leads.id))
      .limit(LEAD_CHUNK);
    if (chunk.length === 0) return;
    after = chunk.at(-1)!.id;
    yield chunk;
  }
}

/** What the leads a push puts in a list leave: one list, the caller's other lists, or their campaign (the records go). */
export type PushLeaves =
  | { kind: "list"; listId: number }
  | { kind: "other lists"; principal: Principal }
  | { kind: "campaign"; campaignId: number };

/**
 * Puts one chunk of a push's source leads in a list and takes them out of what `leaves` names, in
 * one batch. A list holds leads of its own client scope only, as a campaign does: a lead of another
 * scope joins as the list's scope's lead of its address, made as push-to-campaign makes it
 * (insertScopeLeads) when there is none, and its own row stays its scope's alone.
 */
export async function addChunkToList(d1: D1Database, list: LeadListRow, chunk: LeadRow[], leaves: PushLeaves | null, now: number): Promise<void> {
  const scope = list.clientId ?? 0;
  const foreign = chunk.filter((lead) => (lead.clientId ?? 0) !== scope);
  const ids = chunk.map((lead) => lead.id);
  const statements: Statement[] = [];
  if (foreign.length > 0) statements.push(insertScopeLeads(list, foreign.map(leadFieldsOf), now));
  statements.push(sql`INSERT INTO lead_list_members (list_id, lead_id, created_at)
      SELECT ${list.id}, id, ${now} FROM leads
      WHERE account_id = ${list.accountId} AND coalesce(client_id, 0) = ${scope} AND email ${inList(chunk.map((lead) => lead.email))}
      ON CONFLICT DO NOTHING`);
  if (leaves?.kind === "other lists") {
    statements.push(sql`DELETE FROM lead_list_members WHERE list_id <> ${list.id} AND lead_id ${inList(ids)}
      AND list_id IN (SELECT ${leadLists.id} FROM ${leadLists} WHERE ${visibleRows(leaves.principal, leadLists)})`);
  } else if (leaves?.kind === "list" && leaves.listId !== list.id) {
    statements.push(sql`DELETE FROM lead_list_members WHERE list_id = ${leaves.listId} AND lead_id ${inList(ids)}`);
  } else if (leaves?.kind === "campaign") {
    statements.push(sql`DELETE FROM campaign_leads WHERE campaign_id = ${leaves.campaignId} AND lead_id ${inList(ids)}`);
  }
  await rawBatch(d1, statements);
}

/** Removes these leads from one list. */
export async function removeFromList(db: Database, listId: number, leadIds: number[]): Promise<void> {
  if (leadIds.length === 0) return;
  await db
    .delete(leadListMembers)
    .where(and(eq(leadListMembers.listId, listId), sql`${leadListMembers.leadId} ${inList(leadIds)}`));
}

/** The caller's oldest campaign of this name (a push may name its campaign so). */
export function oldestCampaignNamed(db: Database, principal: Principal, name: string): Promise<CampaignRow | undefined> {
  return db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.name, name), visibleCampaigns(principal)))
    .orderBy(asc(campaigns.id))
    .get();
}

// What an add skips.

interface Screening {
  blocked: Set<string>;
  unsubscribed: Set<string>;
}

/**
 * Which of these (normalised) emails are on the block list of a client scope, and which belong to a
 * lead of that scope that opted out (the engine's rule, src/leads/opt-out.ts).
 */
export async function screenEmails(d1: D1Database, accountId: number, clientId: number | null, emails: string[]): Promise<Screening> {
  const screening: Screening = { blocked: new Set(), unsubscribed: new Set() };
  if (emails.length === 0) return screening;
  const [rows] = await rawBatch(d1, [
    sql`SELECT e.value AS email, ${blockListed(accountId, clientId, sql`e.value`)} AS blocked,
          EXISTS (SELECT 1 FROM leads l
                  WHERE l.account_id = ${accountId} AND coalesce(l.client_id, 0) = ${clientId ?? 0} AND l.email = e.value
                    AND ${optedOut(sql`l.id`)}) AS unsubscribed
        FROM json_each(${jsonList(emails)}) e`,
  ]);
  for (const row of rows ?? []) {
    if (row.blocked) screening.blocked.add(String(row.email));
    if (row.unsubscribed) screening.unsubscribed.add(String(row.email));
  }
  return screening;
}

// Importing into a list.

/** Empty means absent: null, undefined or a blank string. */
function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === "string" && value.trim() === "");
}

/**
 * The statements that put these (unique, valid, screened) leads into a list in its client scope:
 * new leads are created; known ones get their empty fields filled and custom fields merged, and a
 * known lead given a zone has its records dated by its new zone's hours (leadRedating). The
 * membership insert, last, answers the lead ids it added (the others were in the list already);
 * `guard`, when given, must hold for it to insert anything.
 */
export async function importStatements(db: Database, list: LeadListRow, upload: LeadFields[], now: number, guard: SQL = sql`true`): Promise<Statement[]> {
  if (upload.length === 0) return [];
  const emails = upload.map((lead) => lead.email);
  const existing = await db
    .select()
    .from(leads)
    .where(
      and(
        eq(leads.accountId, list.accountId),
        sql`coalesce(${leads.clientId}, 0) = ${list.clientId ?? 0}`,
        sql`${leads.email} ${inList(emails)}`,
      ),
    );
  const byEmail = new Map(existing.map((row) => [row.email, row]));
  const fresh: (LeadFields & { search_folded: string })[] = [];
  const filled: (LeadFields & { id: number; search_folded: string })[] = [];
  const zoneChanges: LeadZoneChange[] = [];
  for (const lead of upload) {
    const known = byEmail.get(lead.email);
    if (!known) {
      fresh.push({ ...lead, search_folded: foldLeadSearch(lead) });
      continue;
    }
    const merged = leadFieldsOf(known);
    let changed = false;
    for (const [wire] of TEXT_FIELDS) {
      if (isEmpty(merged[wire]) && !isEmpty(lead[wire])) {
        merged[wire] = lead[wire];
        changed = true;
      }
    }
    if (lead.custom_fields && Object.keys(lead.custom_fields).length > 0) {
      merged.custom_fields = { ...(known.customFields ?? {}), ...lead.custom_fields };
      changed = true;
    }
    if (!changed) continue;
    filled.push({ ...merged, id: known.id, search_folded: foldLeadSearch(merged) });
    zoneChanges.push({ leadId: known.id, before: known.timezone, after: merged.timezone ?? null });
  }
  const statements: Statement[] = [];
  if (fresh.length > 0) {
    statements.push(sql`
      INSERT INTO leads (account_id, client_id, email, first_name, last_name, company_name, phone_number, website,
                         location, linkedin_profile, company_url, custom_fields, timezone, search_folded, created_at)
      SELECT ${list.accountId}, ${list.clientId}, value ->> '$.email', value ->> '$.first_name',
             value ->> '$.last_name', value ->> '$.company_name', value ->> '$.phone_number', value ->> '$.website',
             value ->> '$.location', value ->> '$.linkedin_profile', value ->> '$.company_url',
             nullif(value -> '$.custom_fields', 'null'), value ->> '$.timezone', value ->> '$.search_folded', ${now}
      FROM json_each(${jsonList(fresh)}) WHERE true
      ON CONFLICT DO NOTHING`);
  }
  if (filled.length > 0) {
    statements.push(sql`
      UPDATE leads SET first_name = f.value ->> '$.first_name', last_name = f.value ->> '$.last_name',
        company_name = f.value ->> '$.company_name', phone_number = f.value ->> '$.phone_number',
        website = f.value ->> '$.website', location = f.value ->> '$.location',
        linkedin_profile = f.value ->> '$.linkedin_profile', company_url = f.value ->> '$.company_url',
        timezone = f.value ->> '$.timezone', custom_fields = nullif(f.value -> '$.custom_fields', 'null'), search_folded = f.value ->> '$.search_folded'
      FROM json_each(${jsonList(filled)}) f WHERE leads.id = f.value ->> '$.id'`);
    statements.push(...(await leadRedating(db, zoneChanges, now)));
  }
  statements.push(sql`
    INSERT INTO lead_list_members (list_id, lead_id, created_at)
    SELECT ${list.id}, id, ${now} FROM leads
    WHERE account_id = ${list.accountId} AND coalesce(client_id, 0) = ${list.clientId ?? 0} AND email ${inList(emails)} AND ${guard}
    ON CONFLICT DO NOTHING RETURNING lead_id`);
  return statements;
}

/** A list by id, for background work that acts for no caller. */
export function leadListById(db: Database, id: number) {
  return db.select().from(leadLists).where(eq(leadLists.id, id)).get();
}

/** Whether this lead id names a lead the caller may see. */
export function visibleLead(db: Database, principal: Principal, leadId: number) {
  return db
    .select({ id: leads.id, accountId: leads.accountId, clientId: leads.clientId })
    .from(leads)
    .where(and(eq(leads.id, leadId), visibleRows(principal, leads)))
    .get();
}

// CRM lead tags.

/**
 * A lead's tags the caller may see, with their mapping ids (the id DELETE /crm/leads/tags/{id} takes):
 * a pair of another client's tag stored before leads kept to their own scope's tags must not show to a
 * client key.
 */
export function tagsOfLead(db: Database, principal: Principal, leadId: number) {
  return db
    .select({ id: tags.id, tag_mapping_id: leadTagMappings.id, name: tags.name, color: tags.color })
    .from(leadTagMappings)
    .innerJoin(tags, eq(tags.id, leadTagMappings.tagId))
    .where(and(eq(leadTagMappings.leadId, leadId), visibleRows(principal, tags)))
    .orderBy(asc(tags.name), asc(tags.id));
}

/** Puts tags on a lead; a tag it already has stays as it is (same mapping id). */
export async function tagLead(db: Database, leadId: number, tagIds: number[]): Promise<void> {
  const now = new Date();
  await db
    .insert(leadTagMappings)
    .values(tagIds.map((tagId) => ({ leadId, tagId, createdAt: now })))
    .onConflictDoNothing();
}

/** Removes one mapping when its lead is one the caller may see; false when there is no such mapping. */
export async function untagLead(db: Database, principal: Principal, mappingId: number): Promise<boolean> {
  const deleted = await db
    .delete(leadTagMappings)
    .where(
      and(
        eq(leadTagMappings.id, mappingId),
        sql`${leadTagMappings.leadId} IN (SELECT ${leads.id} FROM ${leads} WHERE ${visibleRows(principal, leads)})`,
      ),
    )
    .returning({ id: leadTagMappings.id })
    .get();
  return deleted !== undefined;
}
