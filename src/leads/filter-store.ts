import { sql, type SQL } from "drizzle-orm";
import { STATUS_CONDITIONS } from "../inbox/query";
import { inList, statement } from "../platform/sql";
import { containsFolded } from "../platform/text-search";

/**
 * A campaign's records narrowed by the hosted lead filter (CONTRACT 21.1), and the counts of its
 * status summary. Hand-written SQL over campaign_leads aliased `cl` joined to its lead `l`.
 */

/** The summary's keys, which the filter's `statusFilter` also takes. */
export const SUMMARY_KEYS = ["all", "active", "replied", "failed", "scheduled", "manual_followups", "completed", "paused"] as const;
export type SummaryKey = (typeof SUMMARY_KEYS)[number];

/** The record's latest send refused at the SMTP stage (the mail server said no, for good). */
const LAST_SEND_REFUSED = sql`(SELECT status FROM messages WHERE campaign_lead_id = cl.id ORDER BY step DESC LIMIT 1) = 'failed'`;

/**
 * What each summary key counts. The hosted STARTED (a lead not contacted yet) is Salvo's DRAFTED or
 * STARTED; manual follow-ups do not exist here, so that key matches nothing.
 */
const SUMMARY_CONDITIONS: Record<SummaryKey, SQL> = {
  all: sql`1`,
  active: sql`cl.state IN ('DRAFTED', 'STARTED', 'INPROGRESS')`,
  replied: sql`cl.has_replied = 1`,
  failed: sql`(cl.state = 'BLOCKED' OR ${LAST_SEND_REFUSED})`,
  scheduled: sql`cl.due_at IS NOT NULL`,
  manual_followups: sql`0`,
  completed: sql`cl.state = 'COMPLETED'`,
  paused: sql`cl.state = 'PAUSED'`,
};

export const LEAD_STATUSES = ["STARTED", "INPROGRESS", "COMPLETED", "STOPPED", "PAUSED", "BLOCKED"] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

export const FILTER_EMAIL_STATUSES = [
  "is_opened",
  "is_clicked",
  "is_bounced",
  "is_replied",
  "got_reply",
  "is_unsubscribed",
  "is_accepted",
  "not_replied",
  "is_sender_bounced",
] as const;
export type FilterEmailStatus = (typeof FILTER_EMAIL_STATUSES)[number];

const EMAIL_STATUS_CONDITIONS: Record<FilterEmailStatus, SQL> = {
  is_opened: STATUS_CONDITIONS.Opened,
  is_clicked: STATUS_CONDITIONS.Clicked,
  is_bounced: STATUS_CONDITIONS.Bounced,
  is_replied: STATUS_CONDITIONS.Replied,
  got_reply: STATUS_CONDITIONS.Replied,
  is_unsubscribed: STATUS_CONDITIONS.Unsubscribed,
  is_accepted: STATUS_CONDITIONS.Accepted,
  not_replied: STATUS_CONDITIONS["Not Replied"],
  is_sender_bounced: sql`EXISTS (SELECT 1 FROM messages WHERE campaign_lead_id = cl.id AND status = 'failed')`,
};

/** The step a record was last sent (0 before its first send). */
const CURRENT_STEP = sql`coalesce((SELECT max(sequence_number) FROM events WHERE campaign_lead_id = cl.id AND type = 'SENT'), 0)`;

export interface LeadFilter {
  searchText?: string;
  leadStatuses?: LeadStatus[];
  emailStatuses?: FilterEmailStatus[];
  leadCategoryIds?: number[];
  leadCategoryIsNull?: boolean;
  emailAccountIds?: number[];
  /** `esp_domain_type` codes (CONTRACT 23.3): 1 google, 2 microsoft, 0 other or not known. */
  espDomainTypes?: (0 | 1 | 2)[];
  sequenceNumbers?: number[];
  sequenceIds?: number[];
  seqVariantIds?: number[];
  statusFilter?: SummaryKey;
}

function filterConditions(campaignId: number, filter: LeadFilter): SQL[] {
  const conditions: SQL[] = [sql`cl.campaign_id = ${campaignId}`];
  for (const word of (filter.searchText ?? "").split(" ").filter(Boolean)) conditions.push(containsFolded(sql`l.search_folded`, word));
  if (filter.leadStatuses?.length) {
    const states = filter.leadStatuses.flatMap((status) => (status === "STARTED" ? ["DRAFTED", "STARTED"] : [status]));
    conditions.push(sql`cl.state ${inList(states)}`);
  }
  if (filter.emailStatuses?.length) {
    conditions.push(sql`(${sql.join([...new Set(filter.emailStatuses)].map((status) => EMAIL_STATUS_CONDITIONS[status]), sql` OR `)})`);
  }
  if (filter.leadCategoryIds?.length) {
    const ids = filter.leadCategoryIds.filter((id) => id !== -1);
    const either = [...(ids.length ? [sql`cl.category_id ${inList(ids)}`] : []), ...(ids.length < filter.leadCategoryIds.length ? [sql`cl.category_id IS NULL`] : [])];
    conditions.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (filter.leadCategoryIsNull === true) conditions.push(sql`cl.category_id IS NULL`);
  if (filter.emailAccountIds?.length) conditions.push(sql`cl.email_account_id ${inList(filter.emailAccountIds)}`);
  if (filter.espDomainTypes?.length) {
    const either = filter.espDomainTypes.map((code) =>
      code === 1 ? sql`l.email_provider = 'google'` : code === 2 ? sql`l.email_provider = 'microsoft'` : sql`(l.email_provider IS NULL OR l.email_provider = 'other')`,
    );
    conditions.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (filter.sequenceNumbers?.length) conditions.push(sql`${CURRENT_STEP} ${inList(filter.sequenceNumbers)}`);
  if (filter.sequenceIds?.length) {
    conditions.push(sql`${CURRENT_STEP} IN (SELECT seq_number FROM sequence_steps WHERE campaign_id = ${campaignId} AND id ${inList(filter.sequenceIds)})`);
  }
  if (filter.seqVariantIds?.length) {
    conditions.push(sql`EXISTS (SELECT 1 FROM messages WHERE campaign_lead_id = cl.id AND variant_id ${inList(filter.seqVariantIds)})`);
  }
  if (filter.statusFilter) conditions.push(SUMMARY_CONDITIONS[filter.statusFilter]);
  return conditions;
}

export interface FilterPage {
  limit: number;
  /** Records after this one: by id ascending, or (by reply) before it in latest-reply-first order. */
  lastSeenId?: number;
  lastSeenReplyAt?: number;
  byReply: boolean;
}

export interface FilteredRecord {
  id: number;
  lead_id: number;
  state: string;
  email_account_id: number | null;
  spintax_modulo_index: number | null;
  current_seq_num: number;
  category_id: number | null;
  category_name: string | null;
  due_at: number | null;
  last_sent_at: number | null;
  last_reply_at: number | null;
  email_campaign_seq_id: number | null;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  phone_number: string | null;
  company_url: string | null;
  website: string | null;
  linkedin_profile: string | null;
  location: string | null;
  custom_fields: string | null;
  email_provider: "google" | "microsoft" | "other" | null;
  username: string | null;
  mapping_id: number | null;
}

/** One page of the filtered records (one more than `limit` when more follow) and how many match in all. */
export async function filterRecords(d1: D1Database, campaignId: number, filter: LeadFilter, page: FilterPage) {
  const where = filterConditions(campaignId, filter);
  const cursor: SQL[] = [];
  if (page.byReply) {
    cursor.push(sql`cl.last_reply_at IS NOT NULL`);
    if (page.lastSeenReplyAt !== undefined) {
      const id = page.lastSeenId ?? Number.MAX_SAFE_INTEGER;
      cursor.push(sql`(cl.last_reply_at < ${page.lastSeenReplyAt} OR (cl.last_reply_at = ${page.lastSeenReplyAt} AND cl.id < ${id}))`);
    }
  } else if (page.lastSeenId !== undefined) cursor.push(sql`cl.id > ${page.lastSeenId}`);
  const order = page.byReply ? sql`cl.last_reply_at DESC, cl.id DESC` : sql`cl.id`;
  const from = sql`FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id`;
  const [rows, total] = await d1.batch([
    statement(
      d1,
      sql`SELECT cl.id, cl.lead_id, cl.state, cl.email_account_id, cl.spintax_modulo_index, ${CURRENT_STEP} AS current_seq_num,
                 cl.category_id, c.name AS category_name, cl.due_at, cl.last_sent_at, cl.last_reply_at,
                 (SELECT s.id FROM sequence_steps s WHERE s.campaign_id = cl.campaign_id AND s.seq_number = ${CURRENT_STEP} AND s.deleted_at IS NULL) AS email_campaign_seq_id,
                 l.email, l.first_name, l.last_name, l.company_name, l.phone_number, l.company_url, l.website, l.linkedin_profile, l.location,
                 l.custom_fields, l.email_provider, ea.username,
                 (SELECT cea.rowid FROM campaign_email_accounts cea WHERE cea.campaign_id = cl.campaign_id AND cea.email_account_id = cl.email_account_id) AS mapping_id
          ${from}
          LEFT JOIN lead_categories c ON c.id = cl.category_id
          LEFT JOIN email_accounts ea ON ea.id = cl.email_account_id
          WHERE ${sql.join([...where, ...cursor], sql` AND `)}
          ORDER BY ${order} LIMIT ${page.limit + 1}`,
    ),
    statement(d1, sql`SELECT count(*) AS n ${from} WHERE ${sql.join(where, sql` AND `)}`),
  ]);
  return { rows: rows!.results as FilteredRecord[], total: Number((total!.results[0] as { n: number }).n) };
}

/** The campaign's records counted under every summary key, in one pass over them. */
export async function statusSummary(d1: D1Database, campaignId: number): Promise<Record<SummaryKey, number>> {
  const columns = sql.join(
    SUMMARY_KEYS.map((key) => sql`coalesce(sum(CASE WHEN ${SUMMARY_CONDITIONS[key]} THEN 1 ELSE 0 END), 0) AS ${sql.identifier(key)}`),
    sql`, `,
  );
  const row = await statement(d1, sql`SELECT ${columns} FROM campaign_leads cl WHERE cl.campaign_id = ${campaignId}`).first<Record<SummaryKey, number>>();
  return Object.fromEntries(SUMMARY_KEYS.map((key) => [key, Number(row?.[key] ?? 0)])) as Record<SummaryKey, number>;
}
