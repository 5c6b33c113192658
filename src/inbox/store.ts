import { readBack, type BodyReader } from "../platform/bodies";
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { campaignLeads, campaigns, events, leadCategories, leads, tasks } from "../db/schema";
import { RECORD_NOT_FOUND, visibleCampaigns, visibleCategories } from "../platform/access";
import type { Principal } from "../platform/principal";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { deliveryIds, insertDeliveries, type NewDelivery } from "../webhooks/outbox";
import { activeWebhooks } from "../webhooks/store";
import { inList, rawBatch, statement } from "../platform/sql";
import { categorisationJson, humanCategorisation } from "../categories/provenance-sql";
import { notMoving } from "../platform/moving";

export interface MessageRow {
  id: number;
  campaign_lead_id: number;
  type: "SENT" | "REPLY";
  message_id: string | null;
  from_email: string | null;
  to_email: string | null;
  subject: string | null;
  body: string | null;
  occurred_at: number;
  sequence_number: number;
  ignored: number;
  /** categorisationJson: the REPLY's categorisation as JSON text. */
  categorisation: string | null;
}

export interface ScheduledReplyRow {
  campaign_lead_id: number;
  scheduled_at: number;
  answers_stats_id: number;
  subject: string;
  html: string;
}

/** The first reply queued for later of each record (the scheduled view's extra members). */
export async function scheduledRepliesOf(d1: D1Database, recordIds: number[], reader: BodyReader): Promise<Map<number, ScheduledReplyRow>> {
  if (recordIds.length === 0) return new Map();
  const result = await statement(
    d1,
    sql`SELECT campaign_lead_id, scheduled_at, answers_stats_id, subject, html FROM outbound_replies
        WHERE campaign_lead_id IN (SELECT value FROM json_each(${JSON.stringify(recordIds)})) AND status = 'SCHEDULED'
        ORDER BY scheduled_at DESC, id DESC`,
  ).all<ScheduledReplyRow>();
  return new Map((await readBack(reader, result.results, ["html"])).map((row) => [row.campaign_lead_id, row]));
}

export interface ReminderRow {
  id: number;
  campaign_lead_id: number;
  remind_at: number;
  message: string;
}

export async function remindersOf(d1: D1Database, recordIds: number[]): Promise<Map<number, ReminderRow>> {
  if (recordIds.length === 0) return new Map();
  const result = await statement(
    d1,
    sql`SELECT id, campaign_lead_id, remind_at, message FROM reminders
        WHERE campaign_lead_id IN (SELECT value FROM json_each(${JSON.stringify(recordIds)}))`,
  ).all<ReminderRow>();
  return new Map(result.results.map((row) => [row.campaign_lead_id, row]));
}

/** The SENT and REPLY messages of some conversations, oldest first. */
export async function messagesOf(d1: D1Database, recordIds: number[], reader: BodyReader): Promise<MessageRow[]> {
  if (recordIds.length === 0) return [];
  const result = await statement(
    d1,
    sql`SELECT e.id, e.campaign_lead_id, e.type, e.message_id, e.from_email, e.to_email, e.subject, e.body, e.occurred_at, e.sequence_number, e.ignored,
          ${categorisationJson("e")} AS categorisation
        FROM events e WHERE e.campaign_lead_id IN (SELECT value FROM json_each(${JSON.stringify(recordIds)}))
          AND e.type IN ('SENT', 'REPLY')
        ORDER BY e.occurred_at, e.id`,
  ).all<MessageRow>();
  return readBack(reader, result.results, ["body"]);
}

/** The cron's half of the snooze rule (listings apply the same rule by themselves). */
export async function releaseSnoozes(d1: D1Database, now: number): Promise<number> {
  const result = await statement(
    d1,
    sql`UPDATE campaign_leads SET snoozed_until = NULL, updated_at = ${now}
        WHERE snoozed_until IS NOT NULL AND snoozed_until <= ${now} AND ${notMoving(sql`account_id`)}`,
  ).run();
  return result.meta.changes;
}

/**
 * A record the caller may see (or the contract's 404) with its lead and campaign, the category
 * asked for (if known to the account), and the campaign's live webhooks: one round trip.
 */
export async function loadCategoryChange(db: Database, principal: Principal, recordId: number, categoryId: number | null) {
  const [records, categories, webhooks] = await db.batch([
    db
      .select({
        id: campaignLeads.id,
        categoryId: campaignLeads.categoryId,
        leadId: campaignLeads.leadId,
        leadEmail: leads.email,
        campaignId: campaignLeads.campaignId,
        campaignName: campaigns.name,
        campaignStatus: campaigns.status,
        campaignClientId: campaigns.clientId,
      })
      .from(campaignLeads)
      .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
      .innerJoin(leads, eq(leads.id, campaignLeads.leadId))
      .where(and(eq(campaignLeads.id, recordId), visibleCampaigns(principal))),
    db
      .select({ id: leadCategories.id, name: leadCategories.name })
      .from(leadCategories)
      .where(
        and(
          eq(leadCategories.id, categoryId ?? 0),
          visibleCategories(principal.accountId),
        ),
      ),
    activeWebhooks(db, sql`(SELECT campaign_id FROM campaign_leads WHERE id = ${recordId})`),
  ]);
  const row = records[0];
  if (!row) throw ApiError.notFound(RECORD_NOT_FOUND);
  // Flat columns above: drizzle's batch maps result rows by column name, so two "id"s would collide.
  const record = { ...row, campaign: { id: row.campaignId, name: row.campaignName, status: row.campaignStatus, clientId: row.campaignClientId } };
  return { record, category: categories[0] ?? null, webhooks };
}

/**
 * Sets a category by hand (it counts as set now, so an older categorised reply arriving later
 * does not undo it), with its webhook deliveries and `also` in the same batch. Returns the delivery ids.
 */
export async function setCategory(
  d1: D1Database,
  recordId: number,
  categoryId: number | null,
  deliveries: NewDelivery[],
  now: number,
  also: SQL[] = [],
): Promise<number[]> {
  const results = await rawBatch(d1, [
    sql`UPDATE campaign_leads SET category_id = ${categoryId}, category_set_at = ${now}, updated_at = ${now}
        WHERE id = ${recordId} AND category_id IS NOT ${categoryId}`,
    ...humanCategorisation(recordId, categoryId, now),
    ...(deliveries.length > 0
      ? [
          insertDeliveries(
            deliveries,
            sql`EXISTS (SELECT 1 FROM campaign_leads WHERE id = ${recordId} AND category_id IS ${categoryId} AND category_set_at = ${now})`,
            now,
          ),
        ]
      : []),
    ...also,
  ]);
  return deliveries.length > 0 ? deliveryIds(results[3]) : [];
}

/** A person chose the category the record already holds: the record and its webhooks stay as they are, and the latest reply's categorisation becomes theirs. */
export async function affirmCategory(d1: D1Database, recordId: number, categoryId: number | null, now: number, also: SQL[] = []): Promise<void> {
  await rawBatch(d1, [...humanCategorisation(recordId, categoryId, now, true), ...also]);
}

/**
 * A category as the caller gave it: an id (number or decimal string), a name of one of the
 * account's categories (any case; unknown → 400 "Invalid category - <value>"), or null / "" to clear.
 */
export async function resolveCategory(db: Database, accountId: number, given: number | string | null): Promise<number | null> {
  if (given === null || given === "") return null;
  if (typeof given === "number") return given;
  if (/^\d{1,15}$/.test(given)) return Number(given);
  const row = await db
    .select({ id: leadCategories.id })
    .from(leadCategories)
    .where(and(sql`lower(${leadCategories.name}) = ${given.trim().toLowerCase()}`, visibleCategories(accountId)))
    .get();
  if (!row) throw ApiError.badRequest(`Invalid category - ${given}`);
  return row.id;
}

/** The inbox fields a plain action may change on a record. */
export type RecordChange = Partial<
  Pick<typeof campaignLeads.$inferInsert, "isRead" | "teamMemberId" | "snoozedUntil" | "isArchived" | "isImportant">
>;

export async function changeRecord(db: Database, recordId: number, change: RecordChange): Promise<void> {
  await db
    .update(campaignLeads)
    .set({ ...change, updatedAt: new Date() })
    .where(eq(campaignLeads.id, recordId));
}

/** Flags one REPLY of the record ignored by hand; false when the record has no such reply. */
/**
 * Ignores a reply by hand, or counts it again (overriding the automatic flags): a REPLY of a campaign
 * the caller may see, and of `recordId` when given. False when there is no such reply.
 */
export async function setReplyIgnored(db: Database, principal: Principal, eventId: number, recordId: number | undefined, ignore: boolean): Promise<boolean> {
  const reply = await db
    .update(events)
    .set({ ignored: ignore, ignoredByHand: ignore })
    .where(
      and(
        eq(events.id, eventId),
        eq(events.type, "REPLY"),
        eq(events.accountId, principal.accountId),
        recordId === undefined ? undefined : eq(events.campaignLeadId, recordId),
        sql`${events.campaignId} IN (SELECT ${campaigns.id} FROM ${campaigns} WHERE ${visibleCampaigns(principal)})`,
      ),
    )
    .returning({ id: events.id })
    .get();
  return reply !== undefined;
}

export function insertTask(db: Database, task: Omit<typeof tasks.$inferInsert, "id" | "createdAt">) {
  return db
    .insert(tasks)
    .values({ ...task, createdAt: new Date() })
    .returning()
    .get();
}

export function tasksOf(db: Database, recordId: number) {
  return db.select().from(tasks).where(eq(tasks.campaignLeadId, recordId)).orderBy(asc(tasks.id));
}

/** A lead's record in a campaign (by lead id), with its address and the mailbox it is pinned to. */
export async function recordOfLead(d1: D1Database, campaignId: number, leadId: number) {
  return statement(
    d1,
    sql`SELECT cl.id, l.email AS lead_email, ea.from_email AS mailbox_email
        FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id LEFT JOIN email_accounts ea ON ea.id = cl.email_account_id
        WHERE cl.campaign_id = ${campaignId} AND cl.lead_id = ${leadId}`,
  ).first<{ id: number; lead_email: string; mailbox_email: string | null }>();
}

/** A message of a lead's thread, as the history shows it. */
export type HistoryRow = Omit<MessageRow, "campaign_lead_id"> & {
  /** A reply sent from the inbox: the files it carried (outbound_replies.attachments, JSON). */
  attachments: string | null;
  /** Cc addresses (JSON array): a received reply's own, or those a reply sent from the inbox was given. */
  cc: string | null;
  /** A reply sent from the inbox: its Bcc addresses (JSON array). */
  bcc: string | null;
};

/** A record's thread: its messages oldest first, and per step its opens and the links clicked. */
export interface Thread {
  messages: HistoryRow[];
  opens: Map<number, number>;
  clicks: Map<number, string[]>;
}

/** A record's thread after `after` (oldest first); `reader` null: the bodies are not needed (left as stored). */
export async function threadOf(d1: D1Database, recordId: number, after: number, reader: BodyReader | null): Promise<Thread> {
  return (await threadsOf(d1, [recordId], after, reader)).get(recordId)!;
}

/**
 * The threads of several records after `after`, each as `threadOf` gives it: one read of
 * `events_record_time_idx` for them all.
 */
export async function threadsOf(d1: D1Database, recordIds: number[], after: number, reader: BodyReader | null): Promise<Map<number, Thread>> {
  const rows = await statement(
    d1,
    sql`SELECT e.id, e.campaign_lead_id, e.type, e.message_id, e.from_email, e.to_email, e.subject, e.body, e.occurred_at, e.sequence_number,
               e.ignored, e.link_url, r.attachments, coalesce(e.cc_emails, r.cc) AS cc, r.bcc, ${categorisationJson("e")} AS categorisation
        FROM events e
        LEFT JOIN outbound_replies r INDEXED BY outbound_replies_record_idx
          ON e.type = 'SENT' AND r.campaign_lead_id = e.campaign_lead_id AND r.sent_event_id = e.id
        WHERE e.campaign_lead_id ${inList(recordIds)} AND e.occurred_at > ${after} ORDER BY e.campaign_lead_id, e.occurred_at, e.id`,
  ).all<HistoryRow & { campaign_lead_id: number; link_url: string | null }>();
  const threads = new Map<number, Thread>(recordIds.map((id) => [id, { messages: [], opens: new Map(), clicks: new Map() }]));
  for (const { campaign_lead_id, link_url, ...row } of rows.results) {
    const thread = threads.get(campaign_lead_id)!;
    if ((row.type as string) === "OPEN") thread.opens.set(row.sequence_number, (thread.opens.get(row.sequence_number) ?? 0) + 1);
    if ((row.type as string) === "CLICK") thread.clicks.set(row.sequence_number, [...(thread.clicks.get(row.sequence_number) ?? []), link_url ?? ""]);
    if (row.type === "SENT" || row.type === "REPLY") thread.messages.push(row);
  }
  if (reader) await readBack(reader, [...threads.values()].flatMap((thread) => thread.messages), ["body"]);
  return threads;
}

/** The records of these leads in a campaign (every record when `leadIds` is null), by id, at most `limit`. */
export async function recordsOfLeads(d1: D1Database, campaignId: number, leadIds: number[] | null, limit: number) {
  const rows = await statement(
    d1,
    sql`SELECT id, lead_id FROM campaign_leads
        WHERE campaign_id = ${campaignId} ${leadIds === null ? sql`` : sql`AND lead_id ${inList(leadIds)}`}
        ORDER BY id LIMIT ${limit}`,
  ).all<{ id: number; lead_id: number }>();
  return rows.results;
}
