import { and, desc, eq, inArray, isNull, ne, or, sql } from "drizzle-orm";
import { withBodies } from "../platform/bodies";
import { accounts, campaignLeads, campaigns, leadCategories, promptTemplates, type RecordState } from "../db/schema";
import { loadCampaignRecords, type CampaignRecords } from "../events/store";
import { visibleCampaigns } from "../platform/access";
import type { Database } from "../platform/db";
import { jsonList, statement } from "../platform/sql";
import type { WebhookTarget } from "../webhooks/fanout";
import { activeWebhooks } from "../webhooks/store";
import { settingsOf } from "../schedule/settings";
import { campaignTriage, type ActiveTemplate, type CampaignTriage, type VisibleCategory } from "./allowed";
import { notMoving } from "../platform/moving";

/** Reads of the categoriser: replies with what deciding about them needs, and their campaigns. */

/** A REPLY as the categoriser reads it, with its record, lead and the email it answers. */
export interface ReplyRow {
  id: number;
  event_id: string | null;
  account_id: number;
  campaign_id: number;
  campaign_lead_id: number;
  occurred_at: number;
  subject: string | null;
  body: string | null;
  is_ooo: number;
  category_id: number | null;
  ignored: number;
  from_email: string | null;
  to_email: string | null;
  message_id: string | null;
  sent_subject: string | null;
  sent_body: string | null;
  /** The source of the categorisation already stored for it, if any. */
  done_source: string | null;
  done_at: number | null;
  lead_id: number;
  lead_email: string;
  lead_name: string | null;
  record_category_id: number | null;
  record_category_set_at: number | null;
  /** What a late out-of-office answer may reopen (src/triage/effects.ts, oooReopenStatement). */
  record_state: string;
  record_last_sent_at: number | null;
  /** The delay of the record's next live step; null when it has none left. */
  next_delay_days: number | null;
  /** The body as stored (a large one as its R2 reference): what webhook payloads carry. */
  stored_body: string | null;
}

const REPLY_COLUMNS = sql.raw(`e.id, e.event_id, e.account_id, e.campaign_id, e.campaign_lead_id, e.occurred_at, e.subject, e.body, e.is_ooo,
  e.category_id, e.ignored, e.from_email, e.to_email, e.message_id, s.subject AS sent_subject, s.body AS sent_body,
  p.source AS done_source, p.categorised_at AS done_at, cl.lead_id, l.email AS lead_email,
  nullif(trim(coalesce(l.first_name, '') || ' ' || coalesce(l.last_name, '')), '') AS lead_name,
  cl.category_id AS record_category_id, cl.category_set_at AS record_category_set_at, cl.state AS record_state,
  cl.last_sent_at AS record_last_sent_at,
  CASE WHEN cl.next_step IS NOT NULL THEN (SELECT st.delay_in_days FROM sequence_steps st WHERE st.campaign_id = e.campaign_id AND st.deleted_at IS NULL
    AND st.seq_number >= cl.next_step ORDER BY st.seq_number LIMIT 1) END AS next_delay_days`);

const REPLY_JOINS = sql.raw(`FROM events e
  LEFT JOIN events s ON s.id = e.send_id
  LEFT JOIN reply_categorisations p ON p.event_id = e.id
  JOIN campaign_leads cl ON cl.id = e.campaign_lead_id
  JOIN leads l ON l.id = cl.lead_id`);

/** Replies (of any accounts) with their bodies and their sends' read back from R2 where they were offloaded. */
async function withReplyBodies(bucket: R2Bucket | undefined, rows: ReplyRow[]): Promise<ReplyRow[]> {
  for (const row of rows) row.stored_body = row.body;
  const accounts = new Set(rows.map((row) => row.account_id));
  await Promise.all([...accounts].map((accountId) => withBodies(bucket, accountId, rows.filter((row) => row.account_id === accountId), ["body", "sent_body"])));
  return rows;
}

/**
 * The replies named by (campaign, event id) pairs (each a seek on the events' unique index) or by
 * row id, in one statement. Rows of other types, and records deleted since, drop out. CROSS JOIN
 * keeps the pairs driving: with statistics saying event ids repeat (events pushed without one),
 * SQLite otherwise walks the whole (campaign_id, event_id) index once per pair (569 ms a pair at 2M
 * events, bench:shards). Replies of an account a move has fenced are left out (their categorisation
 * could not be written): the minute cron's sweep (sweepUntriaged) brings them back after the move.
 */
export async function namedReplies(d1: D1Database, bodies: R2Bucket | undefined, pairs: { campaignId: number; eventId: string }[], rowIds: number[]): Promise<ReplyRow[]> {
  if (pairs.length === 0 && rowIds.length === 0) return [];
  const result = await statement(
    d1,
    sql`SELECT ${REPLY_COLUMNS} ${REPLY_JOINS}
        WHERE e.type = 'REPLY' AND ${notMoving(sql`e.account_id`)} AND e.id IN (
          SELECT x.id FROM json_each(${jsonList(pairs.map((p) => [p.campaignId, p.eventId]))}) j
            CROSS JOIN events x ON x.campaign_id = j.value ->> '$[0]' AND x.event_id = j.value ->> '$[1]'
          UNION SELECT value FROM json_each(${jsonList(rowIds)}))
        ORDER BY e.occurred_at, e.id`,
  ).all<ReplyRow>();
  return withReplyBodies(bodies, result.results);
}

/** Replies of one campaign for a replay chunk: newest first, below the cursor, in the job's window. */
export async function replayReplies(
  d1: D1Database,
  bodies: R2Bucket | undefined,
  campaignId: number,
  options: { below: number | null; from: number | null; to: number | null; onlyUncategorised: boolean; limit: number },
): Promise<ReplyRow[]> {
  const result = await statement(
    d1,
    sql`SELECT ${REPLY_COLUMNS} ${REPLY_JOINS}
        WHERE e.campaign_id = ${campaignId} AND e.type = 'REPLY'
          AND (${options.below} IS NULL OR e.id < ${options.below})
          AND (${options.from} IS NULL OR e.occurred_at >= ${options.from})
          AND (${options.to} IS NULL OR e.occurred_at <= ${options.to})
          AND (${options.onlyUncategorised ? 1 : 0} = 0 OR e.category_id IS NULL)
        ORDER BY e.id DESC LIMIT ${options.limit}`,
  ).all<ReplyRow>();
  return withReplyBodies(bodies, result.results);
}

export interface CampaignContext {
  campaign: typeof campaigns.$inferSelect;
  /** Out-of-office replies are flagged ignored here (the account's toggle or the campaign's). */
  ignoreOooReplies: boolean;
  triage: CampaignTriage;
  categories: VisibleCategory[];
  webhooks: WebhookTarget[];
}

/** Every category an account can use, with what presenting and choosing them needs. */
export function visibleCategoryRows(db: Database, accountId: number) {
  return db
    .select({
      id: leadCategories.id,
      name: leadCategories.name,
      accountId: leadCategories.accountId,
      sentimentType: leadCategories.sentimentType,
      colourCode: leadCategories.colourCode,
      createdAt: leadCategories.createdAt,
    })
    .from(leadCategories)
    .where(or(isNull(leadCategories.accountId), eq(leadCategories.accountId, accountId)))
    .orderBy(leadCategories.id);
}

/** The campaign's newest active prompt template, if any. */
function activeTemplateQuery(db: Database, campaignId: number) {
  return db
    .select({ id: promptTemplates.id, promptContent: promptTemplates.promptContent, categories: promptTemplates.categories, version: promptTemplates.version })
    .from(promptTemplates)
    .where(and(eq(promptTemplates.campaignId, campaignId), eq(promptTemplates.isActive, true)))
    .orderBy(desc(promptTemplates.id))
    .limit(1);
}

/** One campaign's context for categorising its replies, in one round trip. */
export async function campaignContext(db: Database, campaignId: number): Promise<CampaignContext | null> {
  const [campaignRows, templates, webhookRows] = await db.batch([
    db.select().from(campaigns).where(eq(campaigns.id, campaignId)),
    activeTemplateQuery(db, campaignId),
    activeWebhooks(db, campaignId),
  ]);
  const campaign = campaignRows[0];
  if (!campaign) return null;
  const [accountRows, categories] = await db.batch([
    db.select({ ignoreOoo: accounts.ignoreOooReplies }).from(accounts).where(eq(accounts.id, campaign.accountId)),
    visibleCategoryRows(db, campaign.accountId),
  ]);
  const template: ActiveTemplate | null = templates[0] ?? null;
  return {
    campaign,
    // Analytics rule 3 and CONTRACT section 11: the account's toggle or the campaign's own setting.
    ignoreOooReplies: (accountRows[0]?.ignoreOoo ?? false) || settingsOf(campaign.settings).outOfOffice.ignoreOOOasReply,
    triage: campaignTriage(campaign.settings, template, categories),
    categories,
    webhooks: webhookRows,
  };
}

/** Several campaigns' contexts (a queue batch usually names one or two). */
export async function campaignContexts(db: Database, campaignIds: number[]): Promise<Map<number, CampaignContext>> {
  const contexts = await Promise.all(campaignIds.map((id) => campaignContext(db, id)));
  return new Map(contexts.flatMap((context) => (context ? [[context.campaign.id, context] as const] : [])));
}

/** Record states the Do Not Contact opt-out stops in every campaign. */
export const LIVE: RecordState[] = ["DRAFTED", "STARTED", "INPROGRESS", "PAUSED"];

/**
 * What the Do Not Contact opt-out of these replies unsubscribes (`optOutStatements`): each reply's
 * lead's live records in its account's campaigns, and the reply's own record unless it is stopped
 * already. ONE round trip however many campaigns (loadCampaignRecords).
 */
export function optOutRecords(db: Database, replies: Pick<ReplyRow, "account_id" | "lead_id" | "campaign_lead_id">[]): Promise<CampaignRecords[]> {
  const chosen = or(
    ...replies.map((reply) =>
      and(
        eq(campaignLeads.leadId, reply.lead_id),
        visibleCampaigns({ accountId: reply.account_id, clientId: null }),
        or(inArray(campaignLeads.state, LIVE), and(eq(campaignLeads.id, reply.campaign_lead_id), ne(campaignLeads.state, "STOPPED"))),
      ),
    ),
  )!;
  return loadCampaignRecords(db, chosen);
}
