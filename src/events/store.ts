import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { accounts, campaignLeads, campaigns, emailAccounts, leadCategories, leads, type EventType, type RecordState } from "../db/schema";
import { visibleCategories } from "../platform/access";
import type { Database } from "../platform/db";
import { inList, jsonList, JSON_LIST_BYTES, rawBatch } from "../platform/sql";
import { utf8Length } from "../platform/bytes";
import { deliveryIds, guardValue, insertDeliveries, type NewDelivery } from "../webhooks/outbox";
import type { WebhookTarget } from "../webhooks/fanout";
import { activeWebhooks, activeWebhooksOfCampaigns } from "../webhooks/store";
import { PERSON_STEP, type RecordSnapshot } from "./rules";
import { settingsOf } from "../schedule/settings";

/** A campaign record as ingestion sees it: its state and flags, and its lead's address. */
export interface RecordRow extends RecordSnapshot {
  id: number;
  /** The lead's id (payloads' `sl_email_lead_id`), where the loader read it. */
  leadId?: number;
  /** The lead's first and last name (payloads' `to_name`, `lead_name`), where the loader read it. */
  leadName?: string | null;
}

export interface IngestContext {
  campaign: typeof campaigns.$inferSelect | undefined;
  ignoreOooReplies: boolean;
  records: RecordRow[];
  categories: Map<number, string>;
  webhooks: WebhookTarget[];
}

/**
 * The ids of the records an ingestion names, by id or by their lead's address: each a seek (the
 * primary key, or the leads' (account, scope, email) index over each scope of the account, then
 * the record's (campaign, lead) index). An OR of the two over a join would walk every record of the campaign instead.
 */
function namedRecords(accountId: number, campaignId: number, want: { recordIds: number[]; emails: string[] }): SQL {
  return sql`SELECT value FROM json_each(${jsonList(want.recordIds)})
    UNION ALL
    SELECT cl.id FROM leads l JOIN campaign_leads cl ON cl.lead_id = l.id AND cl.campaign_id = ${campaignId}
    WHERE l.account_id = ${accountId} AND coalesce(l.client_id, 0) IN (SELECT 0 UNION ALL SELECT id FROM clients WHERE account_id = ${accountId})
      AND l.email ${inList(want.emails)}`;
}

/** A record's columns as ingestion reads them (`RecordRow`, with `asRecordRow`), over campaign_leads joined to its lead. */
const recordColumns = {
  id: campaignLeads.id,
  leadId: campaignLeads.leadId,
  state: campaignLeads.state,
  leadEmail: leads.email,
  leadName: sql<string | null>`nullif(trim(coalesce(${leads.firstName}, '') || ' ' || coalesce(${leads.lastName}, '')), '')`,
  categoryId: campaignLeads.categoryId,
  emailAccountId: campaignLeads.emailAccountId,
  lastSentAt: campaignLeads.lastSentAt,
  lastReplyAt: campaignLeads.lastReplyAt,
  hasSent: campaignLeads.hasSent,
  hasOpened: campaignLeads.hasOpened,
  hasClicked: campaignLeads.hasClicked,
  hasReplied: campaignLeads.hasReplied,
  hasBounced: campaignLeads.hasBounced,
  hasUnsubscribed: campaignLeads.hasUnsubscribed,
};

function asRecordRow(row: { lastSentAt: Date | null; lastReplyAt: Date | null } & Omit<RecordRow, "lastSentAt" | "lastReplyAt">): RecordRow {
  return { ...row, lastSentAt: row.lastSentAt?.getTime() ?? null, lastReplyAt: row.lastReplyAt?.getTime() ?? null };
}

/**
 * Everything ingestion needs, in one D1 round trip: the campaign (the caller checks it is
 * visible), the account's out-of-office rule, the named records, the named categories and the
 * campaign's live webhooks.
 */
export async function loadIngestContext(
  db: Database,
  visible: SQL,
  accountId: number,
  campaignId: number,
  want: { recordIds: number[]; emails: string[]; categoryIds: number[] },
): Promise<IngestContext> {
  const [campaignRows, accountRows, recordRows, categoryRows, webhookRows] = await db.batch([
    db.select().from(campaigns).where(and(eq(campaigns.id, campaignId), visible)),
    db.select({ ignoreOoo: accounts.ignoreOooReplies }).from(accounts).where(eq(accounts.id, accountId)),
    db
      .select(recordColumns)
      .from(campaignLeads)
      .innerJoin(leads, eq(leads.id, campaignLeads.leadId))
      .where(and(eq(campaignLeads.campaignId, campaignId), sql`${campaignLeads.id} IN (${namedRecords(accountId, campaignId, want)})`)),
    db
      .select({ id: leadCategories.id, name: leadCategories.name })
      .from(leadCategories)
      .where(
        and(
          // The named categories and the named records' current ones (payloads name the old category).
          sql`(${leadCategories.id} ${inList(want.categoryIds)} OR ${leadCategories.id} IN (
            SELECT category_id FROM campaign_leads WHERE campaign_id = ${campaignId} AND id IN (${namedRecords(accountId, campaignId, want)})))`,
          visibleCategories(accountId),
        ),
      ),
    activeWebhooks(db, campaignId),
  ]);
  return {
    campaign: campaignRows[0],
    // Analytics rule 3 and CONTRACT section 11: the account's toggle or the campaign's own setting.
    ignoreOooReplies: (accountRows[0]?.ignoreOoo ?? false) || (campaignRows[0] ? settingsOf(campaignRows[0].settings).outOfOffice.ignoreOOOasReply : false),
    records: recordRows.map(asRecordRow),
    categories: new Map(categoryRows.map((row) => [row.id, row.name])),
    webhooks: webhookRows,
  };
}

/** Chosen records of one campaign, as ingestion sees them, with the live webhooks that hear the campaign. */
export interface CampaignRecords {
  campaign: typeof campaigns.$inferSelect;
  records: RecordRow[];
  webhooks: WebhookTarget[];
}

/**
 * The records `chosen` names (a condition over campaign_leads and campaigns, which must hold the
 * caller's visibility rule), grouped by campaign, with each campaign's live webhooks: ONE D1 round
 * trip however many campaigns they are in.
 */
export async function loadCampaignRecords(db: Database, chosen: SQL): Promise<CampaignRecords[]> {
  const campaignIds = db.select({ id: campaignLeads.campaignId }).from(campaignLeads).innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId)).where(chosen);
  // Three queries, not one join: D1's batch answers rows by column name, so a join's two `id`s would collide.
  const [recordRows, campaignRows, webhookRows] = await db.batch([
    db
      .select({ ...recordColumns, campaignId: campaignLeads.campaignId })
      .from(campaignLeads)
      .innerJoin(leads, eq(leads.id, campaignLeads.leadId))
      .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
      .where(chosen)
      .orderBy(campaignLeads.id),
    db.select().from(campaigns).where(inArray(campaigns.id, campaignIds)),
    activeWebhooksOfCampaigns(db, campaignIds),
  ]);
  const webhooksOf = new Map<number, WebhookTarget[]>();
  for (const { campaignId, ...target } of webhookRows) webhooksOf.set(campaignId, [...(webhooksOf.get(campaignId) ?? []), target]);
  const byCampaign = new Map(campaignRows.map((campaign) => [campaign.id, { campaign, records: [] as RecordRow[], webhooks: webhooksOf.get(campaign.id) ?? [] }]));
  for (const { campaignId, ...record } of recordRows) byCampaign.get(campaignId)!.records.push(asRecordRow(record));
  return [...byCampaign.values()];
}

/** Which of these mailbox ids the caller may name (`rule`, src/platform/access.ts). */
export async function namedMailboxes(db: Database, rule: SQL, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: emailAccounts.id })
    .from(emailAccounts)
    .where(and(sql`${emailAccounts.id} ${inList(ids)}`, rule));
  return new Set(rows.map((row) => row.id));
}

/** One event row as ingestion writes it. */
export interface EventRow {
  event_id: string | null;
  campaign_lead_id: number;
  type: EventType;
  occurred_at: number;
  sequence_number: number;
  email_account_id: number | null;
  from_email: string | null;
  to_email: string | null;
  subject: string | null;
  body: string | null;
  body_folded: string | null;
  message_id: string | null;
  link_url: string | null;
  cc_emails: string[] | null;
  is_ooo: 0 | 1;
  category_id: number | null;
  ignored: 0 | 1;
  is_machine: 0 | 1;
  resume_at: number | null;
  /** An UNSUBSCRIBE by the person (link, reply, a sender's report), not an operator's per-campaign one: the lead opts out of the account. */
  opts_out_lead: 0 | 1;
}

/**
 * The events this batch inserted: ids above the batch's mark. NOT INDEXED keeps it a rowid range:
 * otherwise the planner walks a whole index of `events` to serve the callers' GROUP BY.
 */
function freshEvents(nonce: string): SQL {
  return sql`SELECT * FROM events NOT INDEXED WHERE id > (SELECT events_before FROM ingest_marks WHERE nonce = ${nonce})`;
}

/**
 * The campaign's bounce auto-pause (CONTRACT section 11, `bounce_autopause_threshold`): when this
 * batch inserted a BOUNCE and the campaign's bounces reach the threshold, an ACTIVE campaign turns
 * PAUSED in the same commit (its `updated_at` set to this batch's instant, which the guard of its
 * CAMPAIGN_STATUS_CHANGED deliveries reads).
 */
function autoPause(campaign: { id: number; settings: Record<string, unknown> | null }, fresh: SQL, now: number): SQL {
  const threshold = settingsOf(campaign.settings).bounceAutopauseThreshold;
  return sql`UPDATE campaigns SET status = 'PAUSED', updated_at = ${now}
      WHERE id = ${campaign.id} AND status = 'ACTIVE' AND ${threshold} IS NOT NULL
        AND EXISTS (SELECT 1 FROM (${fresh}) WHERE type = 'BOUNCE')
        AND (SELECT count(*) FROM events WHERE campaign_id = ${campaign.id} AND type = 'BOUNCE') >= ${threshold}`;
}

/**
 * A delivery guard for ingestion: a delivery caused by an event that carries an event_id is
 * stored only if THIS batch inserted that event (a parallel or repeated copy inserts nothing, so
 * it delivers nothing); one caused by a category change only if the change is what the record
 * holds after the update (a later categorised reply that won leaves an older one undelivered).
 */
function ingestGuard(campaignId: number | SQL, nonce: string, now: number): SQL {
  const eventId = guardValue("event_id");
  return sql`(${eventId} IS NULL OR EXISTS (
      SELECT 1 FROM events e WHERE e.campaign_id = ${campaignId} AND e.event_id = ${eventId}
        AND e.id > (SELECT events_before FROM ingest_marks WHERE nonce = ${nonce})))
    AND (${guardValue("paused_campaign")} IS NULL OR EXISTS (
      SELECT 1 FROM campaigns c WHERE c.id = ${campaignId} AND c.status = 'PAUSED' AND c.updated_at = ${now}))
    AND (${guardValue("record_id")} IS NULL OR EXISTS (
      SELECT 1 FROM campaign_leads cl WHERE cl.id = ${guardValue("record_id")}
        AND cl.category_id IS ${guardValue("category_id")} AND cl.category_set_at = ${guardValue("category_at")}))`;
}

const FINAL_FOR_SENT: RecordState[] = ["DRAFTED", "STARTED"];

/** An event row that is a send of one of the campaign's steps (isStepSend, in SQL). */
const STEP_SEND = sql`(type = 'SENT' AND sequence_number <> ${PERSON_STEP})`;

/** The person asked to hear no more: the lead is unsubscribed everywhere (src/leads/opt-out.ts). */
function personOptOuts(rows: EventRow[], now: number, guard: SQL): SQL[] {
  const recordIds = [...new Set(rows.filter((row) => row.opts_out_lead === 1).map((row) => row.campaign_lead_id))];
  if (recordIds.length === 0) return [];
  return [
    sql`UPDATE leads SET is_unsubscribed = 1, unsubscribed_at = coalesce(unsubscribed_at, ${now})
        WHERE id IN (SELECT lead_id FROM campaign_leads WHERE id ${inList(recordIds)}) AND ${guard}`,
  ];
}

/**
 * CONTRACT 22: a bounce of Salvo's own mail (only hard ones become events) marks the lead's address
 * invalid, so the engine never sends to it again from any campaign.
 */
function hardBounceMarks(fresh: SQL, now: number): SQL {
  return sql`UPDATE leads SET verification_status = 'invalid', verification_reason = 'hard_bounce', verified_at = ${now}
      WHERE id IN (SELECT lead_id FROM campaign_leads WHERE id IN (SELECT campaign_lead_id FROM (${fresh}) WHERE type = 'BOUNCE'))`;
}

/**
 * CONTRACT section 15, push-to-subsequence: a counted reply on the parent thread stops the records
 * pushed from it with stop_lead_on_parent_campaign_reply, dated by that reply.
 */
function stopPushedRecords(fresh: SQL, now: number): SQL {
  return sql`UPDATE campaign_leads SET state = 'STOPPED', due_at = NULL, resume_at = NULL, updated_at = ${now},
        stopped_at = (SELECT min(occurred_at) FROM (${fresh}) WHERE campaign_lead_id = campaign_leads.parent_record_id AND type = 'REPLY' AND ignored = 0)
      WHERE parent_record_id IN (SELECT campaign_lead_id FROM (${fresh}) WHERE type = 'REPLY' AND ignored = 0)
        AND stop_on_parent_reply = 1 AND state IN ('DRAFTED', 'STARTED', 'INPROGRESS', 'PAUSED')`;
}

/**
 * The statements of one ingestion, for ONE D1 batch: mark, events (duplicates skipped by the
 * unique (campaign, event_id) index), the records' new state computed in SQL from the events
 * actually inserted and the row's current values (so concurrent batches cannot undo each other),
 * the campaign's bounce auto-pause, every webhook delivery under its guard, and the mark's removal.
 *
 * Record rules, in SQL: flags and last times only grow; UNSUBSCRIBE stops the record (`stopped_at`
 * is its first new UNSUBSCRIBE's time); BOUNCE and BLOCK block it unless it is stopped; a counted
 * reply (and a human click or open, when the stop setting says so) completes a live or paused
 * record; each of these leaves the engine nothing due. A SENT of a step moves DRAFTED/STARTED to
 * INPROGRESS and nothing else; a person's SENT (PERSON_STEP, an inbox reply) is only a message of the
 * thread: no state, flag, last send time or mailbox of the record moves for it. The categorised reply
 * with the latest occurred_at sets the category (and its time); any new reply marks the conversation unread.
 */
export function ingestionStatements(
  campaign: { id: number; accountId: number; settings: Record<string, unknown> | null },
  rows: EventRow[],
  deliveries: NewDelivery[],
  now: number,
  /** Held at commit, or the ingestion stores nothing (its events drive every statement after them, and the opt-outs hold to it too). */
  guard: SQL = sql`true`,
): SQL[] {
  const nonce = crypto.randomUUID();
  const fresh = freshEvents(nonce);
  return [
    markStatement(nonce),
    insertEvents(rows, { accountId: sql`${campaign.accountId}`, campaignId: sql`${campaign.id}` }, now, guard),
    recordUpdate(fresh, settingsOf(campaign.settings), now),
    autoPause(campaign, fresh, now),
    ...(deliveries.length > 0 ? [insertDeliveries(deliveries, ingestGuard(campaign.id, nonce, now), now)] : []),
    ...personOptOuts(rows, now, guard),
    ...(rows.some((row) => row.type === "REPLY") ? [stopPushedRecords(fresh, now)] : []),
    ...(rows.some((row) => row.type === "BOUNCE") ? [hardBounceMarks(fresh, now)] : []),
    unmarkStatement(nonce),
  ];
}

/** One campaign's UNSUBSCRIBE events (as `planIngestion` writes them) and the deliveries they cause. */
export interface CampaignUnsubscribes {
  campaign: { id: number; accountId: number };
  rows: EventRow[];
  deliveries: NewDelivery[];
}

/**
 * `ingestionStatements` for UNSUBSCRIBE events across many campaigns, for ONE D1 batch, in a number
 * of statements that does not grow with them: each event row carries its campaign, and each
 * delivery's guard reads the campaign of its own row. Only UNSUBSCRIBE events: what they do to a
 * record reads no campaign setting, and they neither pause a campaign (no bounce) nor end pushed
 * records (no reply), so one record update serves every campaign. The deliveries' ids: `unsubscribedDeliveryIds`.
 */
export function unsubscribeStatements(
  ingestions: CampaignUnsubscribes[],
  now: number,
  /** Held at commit, or nothing is stored (as `ingestionStatements`' guard). */
  guard: SQL = sql`true`,
): SQL[] {
  const rows = ingestions.flatMap(({ campaign, rows }) => rows.map((row) => ({ ...row, account_id: campaign.accountId, campaign_id: campaign.id })));
  const deliveries = ingestions.flatMap((ingestion) => ingestion.deliveries);
  const nonce = crypto.randomUUID();
  return [
    markStatement(nonce),
    insertEvents(rows, { accountId: sql`value ->> '$.account_id'`, campaignId: sql`value ->> '$.campaign_id'` }, now, guard),
    recordUpdate(freshEvents(nonce), settingsOf(null), now),
    // A delivery's campaign is its event's (NewDelivery.campaignId).
    ...(deliveries.length > 0 ? [insertDeliveries(deliveries, ingestGuard(sql.raw("d.value ->> '$.campaign_id'"), nonce, now), now)] : []),
    ...personOptOuts(rows, now, guard),
    unmarkStatement(nonce),
  ];
}

/** The delivery ids `unsubscribeStatements` created, from the results of the batch they led. */
export function unsubscribedDeliveryIds(results: Record<string, unknown>[][], deliveries: NewDelivery[]): number[] {
  return deliveries.length > 0 ? deliveryIds(results[3]) : [];
}

function markStatement(nonce: string): SQL {
  return sql`INSERT INTO ingest_marks (nonce, events_before) VALUES (${nonce}, (SELECT coalesce(max(id), 0) FROM events))`;
}

function unmarkStatement(nonce: string): SQL {
  return sql`DELETE FROM ingest_marks WHERE nonce = ${nonce}`;
}

/** Inserts the event rows (duplicates skipped by the unique (campaign, event_id) index), under `owner`'s account and campaign: constants, or each row's. */
function insertEvents(rows: EventRow[], owner: { accountId: SQL; campaignId: SQL }, now: number, guard: SQL = sql`true`): SQL {
  return sql`
      INSERT INTO events (account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number,
                          email_account_id, from_email, to_email, subject, body, body_folded, message_id, link_url,
                          cc_emails, is_ooo, category_id, ignored, is_machine, resume_at, created_at)
      SELECT ${owner.accountId}, ${owner.campaignId}, value ->> '$.campaign_lead_id', value ->> '$.event_id',
             value ->> '$.type', value ->> '$.occurred_at', value ->> '$.sequence_number',
             value ->> '$.email_account_id', value ->> '$.from_email', value ->> '$.to_email', value ->> '$.subject',
             value ->> '$.body', value ->> '$.body_folded', value ->> '$.message_id', value ->> '$.link_url', value ->> '$.cc_emails', value ->> '$.is_ooo',
             value ->> '$.category_id', value ->> '$.ignored', value ->> '$.is_machine', value ->> '$.resume_at', ${now}
      FROM json_each(${jsonList(rows)}) WHERE ${guard}
      ON CONFLICT (campaign_id, event_id) DO NOTHING
      RETURNING id`;
}

/** The records' new state from the events this batch inserted (`fresh`), by the campaign's `settings`: the rules of `ingestionStatements`. */
function recordUpdate(fresh: SQL, settings: ReturnType<typeof settingsOf>, now: number): SQL {
  const stopOn = settings.stopLeadSettings;
  const reactivate = settings.outOfOffice.autoReactivateOOO ? 1 : 0;
  // CONTRACT section 11: a reply (not an ignored out-of-office one) ends the sequence, and so does a
  // human click or open when the campaign's stop setting names it; with autoReactivateOOO a counted
  // out-of-office reply pauses the record instead, until its stated return date or the set delay.
  const ends = sql`((u.replied_counted AND NOT (${reactivate} AND u.ooo_only)) OR (${stopOn === "CLICK_ON_A_LINK" ? 1 : 0} AND u.human_click) OR (${stopOn === "OPEN_AN_EMAIL" ? 1 : 0} AND u.human_open))`;
  const pauses = sql`(${reactivate} AND u.replied_counted AND u.ooo_only AND NOT ${ends})`;
  // A paused record ends too: a lead who replied while paused must not get the rest on resume.
  const endsPaused = sql`(${ends} AND campaign_leads.state = 'PAUSED')`;
  const delayMs = settings.outOfOffice.reactivateOOOwithDelay * 86_400_000;
  return sql`
      WITH fresh AS (${fresh}),
      agg AS (
        SELECT campaign_lead_id AS id,
               max(${STEP_SEND}) AS sent, max(type = 'OPEN') AS opened, max(type = 'CLICK') AS clicked,
               max(type = 'REPLY') AS replied, max(type = 'BOUNCE') AS bounced,
               max(type IN ('BOUNCE', 'BLOCK')) AS blocked, max(type = 'UNSUBSCRIBE') AS unsubscribed,
               min(CASE WHEN type = 'UNSUBSCRIBE' THEN occurred_at END) AS unsubscribed_at,
               max(type = 'REPLY' AND ignored = 0) AS replied_counted,
               NOT max(type = 'REPLY' AND ignored = 0 AND is_ooo = 0) AS ooo_only,
               max(CASE WHEN type = 'REPLY' AND ignored = 0 AND is_ooo = 1 THEN coalesce(resume_at, occurred_at + ${delayMs}) END) AS ooo_resume,
               max(type = 'CLICK' AND is_machine = 0) AS human_click, max(type = 'OPEN' AND is_machine = 0) AS human_open,
               max(CASE WHEN ${STEP_SEND} THEN occurred_at END) AS sent_at,
               max(CASE WHEN type = 'REPLY' THEN occurred_at END) AS reply_at
        FROM fresh GROUP BY campaign_lead_id),
      cat AS (
        SELECT campaign_lead_id AS id, max(occurred_at) AS at, category_id FROM fresh
        WHERE type = 'REPLY' AND category_id IS NOT NULL GROUP BY campaign_lead_id),
      sender AS (
        SELECT campaign_lead_id AS id, max(occurred_at) AS at, email_account_id FROM fresh
        WHERE ${STEP_SEND} AND email_account_id IS NOT NULL GROUP BY campaign_lead_id)
      UPDATE campaign_leads SET
        state = CASE
          WHEN u.unsubscribed THEN 'STOPPED'
          WHEN u.blocked AND campaign_leads.state <> 'STOPPED' THEN 'BLOCKED'
          WHEN ${ends} AND campaign_leads.state IN ('DRAFTED', 'STARTED', 'INPROGRESS', 'PAUSED') THEN 'COMPLETED'
          WHEN ${pauses} AND campaign_leads.state IN ('DRAFTED', 'STARTED', 'INPROGRESS') THEN 'PAUSED'
          WHEN u.sent AND campaign_leads.state IN (${sql.join(FINAL_FOR_SENT.map((s) => sql`${s}`), sql`, `)}) THEN 'INPROGRESS'
          ELSE campaign_leads.state END,
        stopped_at = CASE WHEN u.unsubscribed AND campaign_leads.state <> 'STOPPED' THEN u.unsubscribed_at ELSE campaign_leads.stopped_at END,
        category_id = CASE WHEN u.cat_at > coalesce(campaign_leads.category_set_at, -1) THEN u.cat_id ELSE campaign_leads.category_id END,
        category_set_at = CASE WHEN u.cat_at > coalesce(campaign_leads.category_set_at, -1) THEN u.cat_at ELSE campaign_leads.category_set_at END,
        email_account_id = CASE WHEN u.sender_at >= coalesce(campaign_leads.last_sent_at, 0) THEN u.sender_id ELSE campaign_leads.email_account_id END,
        last_sent_at = nullif(max(coalesce(campaign_leads.last_sent_at, 0), coalesce(u.sent_at, 0)), 0),
        last_reply_at = nullif(max(coalesce(campaign_leads.last_reply_at, 0), coalesce(u.reply_at, 0)), 0),
        has_sent = max(campaign_leads.has_sent, u.sent),
        has_opened = max(campaign_leads.has_opened, u.opened),
        has_clicked = max(campaign_leads.has_clicked, u.clicked),
        has_replied = max(campaign_leads.has_replied, u.replied),
        has_bounced = max(campaign_leads.has_bounced, u.bounced),
        has_unsubscribed = max(campaign_leads.has_unsubscribed, u.unsubscribed),
        is_read = CASE WHEN u.replied THEN 0 ELSE campaign_leads.is_read END,
        due_at = CASE WHEN u.unsubscribed OR u.blocked OR ${ends} THEN NULL ELSE campaign_leads.due_at END,
        resume_at = CASE WHEN ${pauses} AND campaign_leads.state IN ('DRAFTED', 'STARTED', 'INPROGRESS') THEN u.ooo_resume
          WHEN ${endsPaused} THEN NULL ELSE campaign_leads.resume_at END,
        paused_from = CASE WHEN ${endsPaused} THEN NULL ELSE campaign_leads.paused_from END,
        paused_at = CASE WHEN ${endsPaused} THEN NULL ELSE campaign_leads.paused_at END,
        updated_at = ${now}
      FROM (SELECT agg.*, cat.at AS cat_at, cat.category_id AS cat_id, sender.at AS sender_at, sender.email_account_id AS sender_id
            FROM agg LEFT JOIN cat ON cat.id = agg.id LEFT JOIN sender ON sender.id = agg.id) AS u
      WHERE campaign_leads.id = u.id`;
}

/** Runs one ingestion as ONE D1 batch; answers how many events were new and the delivery ids to enqueue. */
export async function storeIngestion(
  d1: D1Database,
  campaign: { id: number; accountId: number; settings: Record<string, unknown> | null },
  rows: EventRow[],
  deliveries: NewDelivery[],
  now: number,
): Promise<{ accepted: number; deliveryIds: number[] }> {
  const results = await rawBatch(d1, ingestionStatements(campaign, rows, deliveries, now));
  return { accepted: results[1]!.length, deliveryIds: ingestedDeliveryIds(results, deliveries) };
}

/**
 * Whether an ingestion's list parameters stay within JSON_LIST_BYTES (D1 refuses a string over
 * 2,000,000 bytes): its events as one list, and its webhook deliveries, whose payloads are written
 * as JSON strings inside the list (escaped again) beside a row of their own.
 */
export function ingestionFits(rows: EventRow[], deliveries: NewDelivery[]): boolean {
  const deliveryBytes = deliveries.reduce((sum, d) => sum + utf8Length(JSON.stringify(JSON.stringify(d.payload))) + 200, 2);
  return Math.max(utf8Length(jsonList(rows)), deliveryBytes) <= JSON_LIST_BYTES;
}

/** The delivery ids an ingestion's statements created, from the results of the batch they led. */
export function ingestedDeliveryIds(results: Record<string, unknown>[][], deliveries: NewDelivery[]): number[] {
  return deliveries.length > 0 ? deliveryIds(results[4]) : [];
}
