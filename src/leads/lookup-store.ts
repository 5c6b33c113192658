import { and, asc, eq, gt, gte, isNull, lt, sql, type SQL } from "drizzle-orm";
import { campaignLeads, campaigns, clients, leadCategories, leadListMembers, leadLists, leads, messages, sequenceSteps, sequenceVariants, type RecordState, type VerificationStatus } from "../db/schema";
import { visibleCampaigns, visibleLeads, visibleRecordsAliased, visibleRows, type LeadRow } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { inList, statement } from "../platform/sql";
import { PERSON_STEP } from "../events/rules";
import { containsFolded } from "../platform/text-search";
import { STATUS_CONDITIONS, type EmailStatus } from "../inbox/query";

/**
 * A lead by address. An account key may see one lead per client scope for the same address: the
 * account's own comes first, then the oldest.
 */
export async function leadByEmail(db: Database, principal: Principal, email: string): Promise<LeadRow | null> {
  const row = await db
    .select()
    .from(leads)
    .where(and(eq(leads.email, email), visibleLeads(principal)))
    .orderBy(sql`${leads.clientId} IS NOT NULL`, asc(leads.id))
    .get();
  return row ?? null;
}

export interface CampaignDataRow {
  leadId: number;
  recordId: number;
  campaignId: number;
  campaignName: string;
  campaignStatus: string;
  clientId: number | null;
  clientEmail: string | null;
  categoryId: number | null;
  categoryName: string | null;
  categorySetAt: Date | null;
  state: RecordState;
  createdAt: Date;
}

/** The records of these leads in campaigns the caller may see (LeadCampaignData), oldest first. */
export async function campaignDataOf(db: Database, principal: Principal, leadIds: number[]): Promise<CampaignDataRow[]> {
  if (leadIds.length === 0) return [];
  return db
    .select({
      leadId: campaignLeads.leadId,
      recordId: campaignLeads.id,
      campaignId: campaigns.id,
      campaignName: campaigns.name,
      campaignStatus: campaigns.status,
      clientId: campaigns.clientId,
      clientEmail: clients.email,
      categoryId: campaignLeads.categoryId,
      categoryName: leadCategories.name,
      categorySetAt: campaignLeads.categorySetAt,
      state: campaignLeads.state,
      createdAt: campaignLeads.createdAt,
    })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .leftJoin(clients, eq(clients.id, campaigns.clientId))
    .leftJoin(leadCategories, eq(leadCategories.id, campaignLeads.categoryId))
    .where(and(sql`${campaignLeads.leadId} ${inList(leadIds)}`, visibleCampaigns(principal)))
    .orderBy(asc(campaignLeads.id));
}

interface AllLeadsFilters {
  campaignId?: number;
  status?: RecordState;
  emailStatus?: EmailStatus;
  clientId?: number;
  /** Members of this lead list (another tenant's list has none the caller may see). */
  listId?: number;
  search?: string;
  createdFrom?: number;
  createdBefore?: number;
  /** CONTRACT 22: the lead's email verification status. */
  verificationStatus?: VerificationStatus;
}

/** One page of the caller's leads with ids above `after`, oldest first, and whether more follow. */
export async function leadPage(db: Database, principal: Principal, filters: AllLeadsFilters, after: number, limit: number) {
  const recordConditions: SQL[] = [];
  if (filters.campaignId !== undefined) recordConditions.push(sql`cl.campaign_id = ${filters.campaignId}`);
  if (filters.status !== undefined) recordConditions.push(sql`cl.state = ${filters.status}`);
  if (filters.emailStatus !== undefined) recordConditions.push(STATUS_CONDITIONS[filters.emailStatus]);
  const records =
    recordConditions.length === 0
      ? undefined
      : sql`EXISTS (SELECT 1 FROM campaign_leads cl WHERE cl.lead_id = ${leads.id} AND ${visibleRecordsAliased(principal)} AND ${sql.join(recordConditions, sql` AND `)})`;
  const rows = await db
    .select()
    .from(leads)
    .where(
      and(
        visibleLeads(principal),
        gt(leads.id, after),
        filters.clientId === undefined ? undefined : eq(leads.clientId, filters.clientId),
        filters.listId === undefined
          ? undefined
          : // Only a list the caller may see: another scope's list would tell which of its leads that list holds.
            sql`EXISTS (SELECT 1 FROM ${leadListMembers} m WHERE m.list_id = ${filters.listId} AND m.lead_id = ${leads.id}
              AND m.list_id IN (SELECT ${leadLists.id} FROM ${leadLists} WHERE ${visibleRows(principal, leadLists)}))`,
        filters.search === undefined ? undefined : containsFolded(leads.searchFolded, filters.search),
        filters.createdFrom === undefined ? undefined : gte(leads.createdAt, new Date(filters.createdFrom)),
        filters.createdBefore === undefined ? undefined : lt(leads.createdAt, new Date(filters.createdBefore)),
        filters.verificationStatus === undefined ? undefined : eq(leads.verificationStatus, filters.verificationStatus),
        records,
      ),
    )
    .orderBy(asc(leads.id))
    .limit(limit + 1);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** Per record: its sends, opens, clicks and replies, the furthest step sent and the last times. */
interface RecordActivity {
  record_id: number;
  sent_count: number;
  open_count: number;
  click_count: number;
  reply_count: number;
  current_sequence_number: number | null;
}

export async function activityOf(d1: D1Database, recordIds: number[]): Promise<Map<number, RecordActivity>> {
  if (recordIds.length === 0) return new Map();
  const result = await statement(
    d1,
    sql`SELECT campaign_lead_id AS record_id, sum(type = 'SENT' AND sequence_number <> ${PERSON_STEP}) AS sent_count, sum(type = 'OPEN') AS open_count,
               sum(type = 'CLICK') AS click_count, sum(type = 'REPLY') AS reply_count,
               max(CASE WHEN type = 'SENT' THEN sequence_number END) AS current_sequence_number
        FROM events WHERE campaign_lead_id ${inList(recordIds)} GROUP BY campaign_lead_id`,
  ).all<RecordActivity>();
  return new Map(result.results.map((row) => [row.record_id, row]));
}

/** The records of a lead in campaigns the caller may see, with their campaigns, oldest first. */
export function campaignsOfLead(db: Database, principal: Principal, leadId: number) {
  return db
    .select({ campaign: campaigns, record: campaignLeads })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(and(eq(campaignLeads.leadId, leadId), visibleCampaigns(principal)))
    .orderBy(asc(campaignLeads.id));
}

/** A campaign's live steps with their variants, and a record's message rows, for its sequence details. */
export async function sequenceOf(db: Database, campaignId: number, recordId: number) {
  const [steps, variants, sent] = await db.batch([
    db
      .select()
      .from(sequenceSteps)
      .where(and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt)))
      .orderBy(asc(sequenceSteps.seqNumber)),
    db
      .select({ id: sequenceVariants.id, stepId: sequenceVariants.stepId, label: sequenceVariants.label })
      .from(sequenceVariants)
      .innerJoin(sequenceSteps, eq(sequenceSteps.id, sequenceVariants.stepId))
      .where(eq(sequenceSteps.campaignId, campaignId)),
    db
      .select({
        step: messages.step,
        variantId: messages.variantId,
        status: messages.status,
        subject: messages.subject,
        sentAt: messages.sentAt,
      })
      .from(messages)
      .where(eq(messages.campaignLeadId, recordId)),
  ]);
  return { steps, variants, sent };
}

/** SENT steps of a record as events tell them (the ingestion API's sends have no message row). */
export async function sentStepsOf(d1: D1Database, recordId: number) {
  const result = await statement(
    d1,
    sql`SELECT sequence_number, min(occurred_at) AS sent_at, subject FROM events
        WHERE campaign_lead_id = ${recordId} AND type = 'SENT' GROUP BY sequence_number`,
  ).all<{ sequence_number: number; sent_at: number; subject: string | null }>();
  return result.results;
}

interface ActivityFilters {
  clientId?: number;
  from?: number;
  to?: number;
}

interface ActivityRecordRow {
  id: number;
  lead_id: number;
  campaign_id: number;
  campaign_name: string;
  campaign_status: string;
  state: RecordState;
  created_at: number;
}

/** Records (of campaigns the caller may see) with a send in the window, by record id; one more than asked tells `hasMore`. */
export async function activityRecords(d1: D1Database, principal: Principal, filters: ActivityFilters, offset: number, limit: number) {
  const window = sql`${filters.from === undefined ? sql`` : sql` AND e.occurred_at >= ${filters.from}`}${filters.to === undefined ? sql`` : sql` AND e.occurred_at < ${filters.to}`}`;
  const result = await statement(
    d1,
    sql`SELECT cl.id, cl.lead_id, cl.campaign_id, c.name AS campaign_name, c.status AS campaign_status, cl.state, cl.created_at
        FROM campaign_leads cl JOIN campaigns c ON c.id = cl.campaign_id
        WHERE ${visibleRecordsAliased(principal)}
          ${filters.clientId === undefined ? sql`` : sql`AND c.client_id = ${filters.clientId}`}
          AND EXISTS (SELECT 1 FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = 'SENT'${window})
        ORDER BY cl.id LIMIT ${limit + 1} OFFSET ${offset}`,
  ).all<ActivityRecordRow>();
  return { rows: result.results.slice(0, limit), hasMore: result.results.length > limit };
}

export interface ActivityEventRow {
  id: number;
  campaign_lead_id: number;
  type: "SENT" | "OPEN" | "CLICK" | "REPLY";
  occurred_at: number;
  sequence_number: number;
  from_email: string | null;
  to_email: string | null;
  subject: string | null;
  body: string | null;
  message_id: string | null;
  link_url: string | null;
}

/** The sends, opens, clicks and replies of these records, oldest first (sends only within the window). */
export async function activityEvents(d1: D1Database, recordIds: number[], filters: ActivityFilters): Promise<ActivityEventRow[]> {
  if (recordIds.length === 0) return [];
  const result = await statement(
    d1,
    sql`SELECT id, campaign_lead_id, type, occurred_at, sequence_number, from_email, to_email, subject, body, message_id, link_url
        FROM events WHERE campaign_lead_id ${inList(recordIds)} AND type IN ('SENT', 'OPEN', 'CLICK', 'REPLY')
          AND (type <> 'SENT' OR (occurred_at >= ${filters.from ?? 0} AND occurred_at < ${filters.to ?? Number.MAX_SAFE_INTEGER}))
        ORDER BY occurred_at, id`,
  ).all<ActivityEventRow>();
  return result.results;
}
