import { and, asc, eq, gte, isNull, ne, notInArray, sql, type SQL } from "drizzle-orm";
import { campaignEmailAccounts, campaignLeads, campaigns, leadCategories, leads, sequenceSteps, type RecordState } from "../db/schema";
import { visibleCampaigns, visibleCategories, type CampaignRecordRow, type CampaignRow } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { jsonList, rawBatch } from "../platform/sql";
import { foldLeadSearch } from "../platform/text-search";
import { loadCampaignRecords, unsubscribeStatements, unsubscribedDeliveryIds } from "../events/store";
import { planIngestion } from "../events/plan";

/** Record states a pause may start from (PAUSED itself is a no-op). */
export const PAUSABLE_STATES: RecordState[] = ["DRAFTED", "STARTED", "INPROGRESS"];
/** Shared rules: an action that needs a live record refuses these. */
export const FINAL_STATES: RecordState[] = ["COMPLETED", "STOPPED", "BLOCKED"];

export type LeadFieldChange = Partial<{
  email: string;
  firstName: string | null;
  lastName: string | null;
  phoneNumber: string | null;
  companyName: string | null;
  website: string | null;
  location: string | null;
  linkedinProfile: string | null;
  companyUrl: string | null;
  customFields: Record<string, unknown> | null;
  timezone: string | null;
}>;

/** Another lead of the same scope that already has this address, if any. */
export async function leadWithEmail(db: Database, lead: { id: number; accountId: number; clientId: number | null }, email: string) {
  const row = await db
    .select({ id: leads.id })
    .from(leads)
    .where(
      and(
        eq(leads.accountId, lead.accountId),
        lead.clientId === null ? isNull(leads.clientId) : eq(leads.clientId, lead.clientId),
        eq(leads.email, email),
        ne(leads.id, lead.id),
      ),
    )
    .get();
  return row?.id ?? null;
}

/**
 * Writes a lead's new fields (and its search text, which folds email and names), with `redating`
 * (src/schedule/redating-store.ts: its records re-dated by a new zone's hours) after it in the same batch.
 */
export async function updateLeadFields(
  db: Database,
  lead: { id: number; email: string; firstName: string | null; lastName: string | null },
  change: LeadFieldChange,
  redating: SQL[] = [],
): Promise<void> {
  const merged = { ...lead, ...change };
  const write = db
    .update(leads)
    .set({ ...change, searchFolded: foldLeadSearch({ email: merged.email, first_name: merged.firstName, last_name: merged.lastName }) })
    .where(eq(leads.id, lead.id));
  await rawBatch(db.$client, [write, ...redating]);
}

/** Pauses these records where they are live, remembering the state each was paused from; answers the ids paused. */
export async function pauseRecords(d1: D1Database, recordIds: number[], now: number): Promise<number[]> {
  if (recordIds.length === 0) return [];
  const [rows] = await rawBatch(d1, [pauseStatement(recordIds, now)]);
  return rows!.map((row) => Number(row.id));
}

/** The pause of `pauseRecords`, for a change that commits it with its other statements. */
export function pauseStatement(recordIds: number[], now: number): SQL {
  return sql`UPDATE campaign_leads SET paused_from = state, paused_at = ${now}, state = 'PAUSED', resume_at = NULL, updated_at = ${now}
      WHERE id IN (SELECT value FROM json_each(${JSON.stringify(recordIds)}))
        AND state IN ('DRAFTED', 'STARTED', 'INPROGRESS')
      RETURNING id`;
}

/** The live step a record would send next (its `next_step`, or the first live one after it), and whether the campaign has any. */
export async function stepToResume(db: Database, campaignId: number, nextStep: number | null) {
  const [next, any] = await db.batch([
    db
      .select({ seqNumber: sequenceSteps.seqNumber, delayInDays: sequenceSteps.delayInDays })
      .from(sequenceSteps)
      .where(and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt), gte(sequenceSteps.seqNumber, nextStep ?? 1)))
      .orderBy(asc(sequenceSteps.seqNumber))
      .limit(1),
    db
      .select({ id: sequenceSteps.id })
      .from(sequenceSteps)
      .where(and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt)))
      .limit(1),
  ]);
  return { step: next[0] ?? null, hasSteps: any.length > 0 };
}

/** What deciding a record's resume needs: the record, its campaign, and its `stepToResume`. */
export interface ResumeFacts {
  record: CampaignRecordRow;
  campaign: Pick<CampaignRow, "id" | "status" | "schedule">;
  step: { delayInDays: number } | null;
  hasSteps: boolean;
}

/**
 * The resume facts of each PAUSED record of a lead in a campaign the caller may see, in ONE read
 * however many campaigns the lead is paused in (`campaign_leads_lead_idx`, then each campaign's
 * `sequence_steps_campaign_idx`): the step is `stepToResume`'s.
 */
export async function pausedRecordsOfLead(db: Database, principal: Principal, leadId: number): Promise<ResumeFacts[]> {
  const rows = await db
    .select({
      record: campaignLeads,
      campaign: { id: campaigns.id, status: campaigns.status, schedule: campaigns.schedule },
      delayInDays: sql<number | null>`(SELECT s.delay_in_days FROM sequence_steps s WHERE s.campaign_id = ${campaigns.id} AND s.deleted_at IS NULL
          AND s.seq_number >= coalesce(${campaignLeads.nextStep}, 1) ORDER BY s.seq_number LIMIT 1)`,
      hasSteps: sql<number>`EXISTS (SELECT 1 FROM sequence_steps s WHERE s.campaign_id = ${campaigns.id} AND s.deleted_at IS NULL)`,
    })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(and(eq(campaignLeads.leadId, leadId), eq(campaignLeads.state, "PAUSED"), visibleCampaigns(principal)))
    .orderBy(asc(campaignLeads.id));
  return rows.map(({ record, campaign, delayInDays, hasSteps }) => ({
    record,
    campaign,
    step: delayInDays === null ? null : { delayInDays: Number(delayInDays) },
    hasSteps: Boolean(hasSteps),
  }));
}

/** How one PAUSED record resumes: into `state`, due at `dueAt`. */
export type RecordResume = { recordId: number; state: RecordState; dueAt: number };

/**
 * Resumes PAUSED records, each into its own state and due time, in ONE statement however many: all
 * of them or none. The write is guarded on PAUSED, so a concurrent resume (or a change that ended
 * the record) wins; answers the ids this one resumed.
 */
export async function resumeRecords(d1: D1Database, resumes: RecordResume[], now: number): Promise<number[]> {
  if (resumes.length === 0) return [];
  const [rows] = await rawBatch(d1, [
    sql`UPDATE campaign_leads SET state = r.value ->> '$.state', due_at = r.value ->> '$.dueAt', paused_from = NULL, paused_at = NULL, resume_at = NULL, updated_at = ${now}
        FROM json_each(${jsonList(resumes)}) AS r
        WHERE campaign_leads.id = r.value ->> '$.recordId' AND campaign_leads.state = 'PAUSED'
        RETURNING campaign_leads.id AS id`,
  ]);
  return rows!.map((row) => Number(row.id));
}

/** Marks a record COMPLETED: the engine has nothing more to send it. */
export async function completeRecord(db: Database, recordId: number, now: number): Promise<void> {
  await db
    .update(campaignLeads)
    .set({ state: "COMPLETED", dueAt: null, pausedFrom: null, pausedAt: null, resumeAt: null, updatedAt: new Date(now) })
    .where(eq(campaignLeads.id, recordId));
}

/** Removes a record with its conversation (messages, tasks, notes); its events stay for the windowed counts. */
export async function deleteRecord(db: Database, recordId: number): Promise<void> {
  await db.delete(campaignLeads).where(eq(campaignLeads.id, recordId));
}

/** Removes a lead from every campaign and list, then the lead itself. */
export async function deleteLead(db: Database, leadId: number): Promise<void> {
  await db.delete(leads).where(eq(leads.id, leadId));
}

/** Whether a mailbox is attached to the campaign. */
export async function mailboxAttached(db: Database, campaignId: number, mailboxId: number): Promise<boolean> {
  const row = await db
    .select({ id: campaignEmailAccounts.emailAccountId })
    .from(campaignEmailAccounts)
    .where(and(eq(campaignEmailAccounts.campaignId, campaignId), eq(campaignEmailAccounts.emailAccountId, mailboxId)))
    .get();
  return row !== undefined;
}

/** Pins a record to a mailbox: its next sends go from there. */
export async function pinRecord(db: Database, recordId: number, mailboxId: number, now: number): Promise<void> {
  await db
    .update(campaignLeads)
    .set({ emailAccountId: mailboxId, updatedAt: new Date(now) })
    .where(eq(campaignLeads.id, recordId));
}

/** A category the account may use, by id or by name (case-insensitive). */
export async function findCategory(db: Database, accountId: number, value: number | string) {
  const match =
    typeof value === "number" ? eq(leadCategories.id, value) : sql`lower(${leadCategories.name}) = lower(${value})`;
  const row = await db
    .select({ id: leadCategories.id, name: leadCategories.name })
    .from(leadCategories)
    .where(and(match, visibleCategories(accountId)))
    .orderBy(asc(leadCategories.id))
    .get();
  return row ?? null;
}

/** The records of a lead the caller may see, with their campaigns. */
export function recordsOfLead(db: Database, principal: Principal, leadId: number) {
  return db
    .select({ id: campaignLeads.id, campaignId: campaignLeads.campaignId, state: campaignLeads.state })
    .from(campaignLeads)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(and(eq(campaignLeads.leadId, leadId), visibleCampaigns(principal)))
    .orderBy(asc(campaignLeads.id));
}

/**
 * Unsubscribes a lead through the ingestion path (one UNSUBSCRIBE event per record, so STOPPED, the
 * campaign's `unsubscribed_count` and LEAD_UNSUBSCRIBED deliveries follow): in the record `recordId`,
 * or, when null, in every campaign the caller may see where its record is live, flagging the lead
 * itself. One read and ONE write batch however many campaigns. Answers the delivery ids to enqueue.
 */
export async function unsubscribeRecords(
  d1: D1Database,
  db: Database,
  principal: Principal,
  leadId: number,
  recordId: number | null,
  now: number,
): Promise<number[]> {
  const chosen = and(
    eq(campaignLeads.leadId, leadId),
    visibleCampaigns(principal),
    recordId === null ? notInArray(campaignLeads.state, FINAL_STATES) : eq(campaignLeads.id, recordId),
  )!;
  const ingestions = (await loadCampaignRecords(db, chosen)).map(({ campaign, records, webhooks }) => {
    // The event id names the source, as the unsubscribe link's does.
    const planned = records.map((record) => ({
      eventId: `salvo-unsubscribe-api:${record.id}:${now}`,
      record,
      incoming: {
        type: "UNSUBSCRIBE" as const,
        occurredAt: now,
        sequenceNumber: 1,
        emailAccountId: record.emailAccountId,
        fromEmail: null,
        isOoo: false,
        categoryId: null,
      },
      toEmail: null,
      subject: null,
      body: null,
      messageId: null,
      linkUrl: null,
      unsubscribeSource: "api" as const,
    }));
    // No reply to ignore and no category to change: an UNSUBSCRIBE's planning reads neither.
    return { campaign, ...planIngestion({ ignoreOooReplies: false, categories: new Map(), webhooks }, campaign, planned) };
  });
  const statements = ingestions.length > 0 ? unsubscribeStatements(ingestions, now) : [];
  if (recordId === null) {
    statements.push(sql`UPDATE leads SET is_unsubscribed = 1, unsubscribed_at = coalesce(unsubscribed_at, ${now}) WHERE id = ${leadId}`);
  }
  if (statements.length === 0) return [];
  return unsubscribedDeliveryIds(await rawBatch(d1, statements), ingestions.flatMap(({ deliveries }) => deliveries));
}
