import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { campaigns, clients, emailAccounts, EVENT_TYPES } from "../db/schema";
import { visibleCampaigns, visibleRows } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { inList, jsonList, rawBatch } from "../platform/sql";
import { PERSON_STEP } from "../events/rules";
import {
  campaignEvent,
  distinctLeadsQuery,
  distinctQuery,
  readCategoryReplies,
  readDistinct,
  readTotals,
  repliesFromCategoriesQuery,
  splitWindow,
  totalsQuery,
  type CampaignTotals,
  type Window,
} from "./counters";
import { POSITIVE_CATEGORY_IDS } from "../categories/rules";

interface CampaignSelection {
  clientIds: number[] | null;
  campaignIds: number[] | null;
}

/** The caller's campaigns, narrowed to the given clients and campaigns (ids not the caller's match nothing). */
export function selectedCampaigns(db: Database, principal: Principal, selection: CampaignSelection) {
  return db
    .select({ id: campaigns.id, name: campaigns.name, status: campaigns.status, clientId: campaigns.clientId })
    .from(campaigns)
    .where(
      and(
        visibleCampaigns(principal),
        selection.clientIds ? sql`${campaigns.clientId} ${inList(selection.clientIds)}` : undefined,
        selection.campaignIds ? sql`${campaigns.id} ${inList(selection.campaignIds)}` : undefined,
      ),
    )
    .orderBy(asc(campaigns.id));
}

/** The caller's clients (a client key sees its own), optionally by name substring. */
export function visibleClients(db: Database, principal: Principal, nameContains?: string) {
  return db
    .select({ id: clients.id, name: clients.name, createdAt: clients.createdAt })
    .from(clients)
    .where(
      and(
        eq(clients.accountId, principal.accountId),
        principal.clientId === null ? undefined : eq(clients.id, principal.clientId),
        nameContains ? sql`instr(lower(${clients.name}), lower(${nameContains})) > 0` : undefined,
      ),
    )
    .orderBy(asc(clients.id));
}

/** The caller's mailboxes with whether an ACTIVE campaign uses them. */
export function visibleMailboxes(db: Database, principal: Principal) {
  return db
    .select({
      id: emailAccounts.id,
      isSmtpSuccess: emailAccounts.isSmtpSuccess,
      isImapSuccess: emailAccounts.isImapSuccess,
      isSuspended: emailAccounts.isSuspended,
      warmupEnabled: emailAccounts.warmupEnabled,
      inUse: sql<number>`EXISTS (SELECT 1 FROM campaign_email_accounts cea JOIN campaigns c ON c.id = cea.campaign_id
        WHERE cea.email_account_id = ${emailAccounts.id} AND c.status = 'ACTIVE')`,
    })
    .from(emailAccounts)
    .where(visibleRows(principal, emailAccounts));
}

export interface Figures {
  sent: number;
  opened: number;
  replied: number;
  bounced: number;
  unique_lead_count: number;
  unique_open_count: number;
  positive_replied: number;
  new_leads: number;
}

/** The kinds of span whose distinct records or leads the figures count. */
const FIGURE_KINDS = ["SENT", "SENT1", "OPEN"] as const;

/** Per campaign, the window's figures of CONTRACT 13.7 (from the counters and spans). */
export async function campaignFigures(d1: D1Database, ids: number[], window: Window): Promise<Map<number, Figures>> {
  const [totalRows, distinctRows, positiveRows] = await rawBatch(d1, [
    totalsQuery(ids, window),
    distinctQuery(ids, window, FIGURE_KINDS),
    repliesFromCategoriesQuery(ids, window, POSITIVE_CATEGORY_IDS),
  ]);
  const totals = readTotals(totalRows!, ids);
  const positive = readCategoryReplies(positiveRows!);
  const distinct = readDistinct(distinctRows!, ids);
  return new Map(ids.map((id) => [id, figuresOf([totals.get(id)!], positive.get(id)?.counted ?? 0, distinct.get(id)!)]));
}

/**
 * The window's figures of each group of campaigns taken together: the counts add up over its
 * campaigns, the distinct ones are its leads (a lead two of its campaigns reached is one lead,
 * CONTRACT 13.7).
 */
export async function groupFigures(d1: D1Database, groups: number[][], window: Window): Promise<Figures[]> {
  const ids = [...new Set(groups.flat())];
  const [totalRows, leadRows, positiveRows] = await rawBatch(d1, [
    totalsQuery(ids, window),
    distinctLeadsQuery(groups, window, FIGURE_KINDS),
    repliesFromCategoriesQuery(ids, window, POSITIVE_CATEGORY_IDS),
  ]);
  const totals = readTotals(totalRows!, ids);
  const positive = readCategoryReplies(positiveRows!);
  const leadsOf = new Map(leadRows!.map((row) => [Number(row.grp), row]));
  return groups.map((group, index) => {
    const leads = leadsOf.get(index)!;
    return figuresOf(
      group.map((id) => totals.get(id)!),
      group.reduce((sum, id) => sum + (positive.get(id)?.counted ?? 0), 0),
      { SENT: Number(leads.SENT), SENT1: Number(leads.SENT1), OPEN: Number(leads.OPEN) },
    );
  });
}

/** The figures of campaigns' totals, their positive replies and their distinct records or leads. */
function figuresOf(totals: CampaignTotals[], positive: number, distinct: Record<(typeof FIGURE_KINDS)[number], number>): Figures {
  const sum = (read: (campaign: CampaignTotals) => number) => totals.reduce((n, campaign) => n + read(campaign), 0);
  return {
    sent: sum((t) => t.SENT.total),
    opened: sum((t) => t.OPEN.total),
    replied: sum((t) => t.REPLY.counted),
    bounced: sum((t) => t.BOUNCE.total),
    unique_lead_count: distinct.SENT,
    unique_open_count: distinct.OPEN,
    positive_replied: positive,
    new_leads: distinct.SENT1,
  };
}

/**
 * Totals per day (several windows at once): each day's whole hours from the counters and its
 * partial hours from events, joined to the days as one JSON parameter (CROSS JOIN keeps the days
 * outermost, so each day is one index range and no campaign's events are scanned whole).
 */
export async function dailyTotals(d1: D1Database, ids: number[], days: Window[]) {
  const hours: { key: number; start: number; end: number }[] = [];
  const edges: { key: number; start: number; end: number }[] = [];
  days.forEach((day, key) => {
    const split = splitWindow(day);
    if (split.hours) hours.push({ key, ...split.hours });
    for (const edge of split.edges) edges.push({ key, ...edge });
  });
  const types = inList([...EVENT_TYPES]);
  const [rows] = await rawBatch(d1, [
    sql`SELECT w.value ->> '$.key' AS day, c.type, sum(c.total) AS total, sum(c.counted) AS counted
        FROM json_each(${jsonList(hours)}) w
        CROSS JOIN event_hour_counts c ON c.campaign_id ${inList(ids)} AND c.type ${types}
          AND c.hour >= w.value ->> '$.start' AND c.hour < w.value ->> '$.end' AND ${campaignEvent("c")}
        GROUP BY 1, 2
        UNION ALL
        SELECT w.value ->> '$.key', e.type, count(*), coalesce(sum(e.ignored = 0), 0)
        FROM json_each(${jsonList(edges)}) w
        CROSS JOIN events e INDEXED BY events_campaign_type_time_idx ON e.campaign_id ${inList(ids)} AND e.type ${types}
          AND e.occurred_at >= w.value ->> '$.start' AND e.occurred_at < w.value ->> '$.end' AND ${campaignEvent("e")}
        GROUP BY 1, 2`,
  ]);
  return rows!;
}

const QUARTER_MS = 900_000;

const quarterOf = (column: SQL) => sql`(${column} - ((${column} % ${QUARTER_MS}) + ${QUARTER_MS}) % ${QUARTER_MS})`;

function readQuarters(rows: Record<string, unknown>[]) {
  return rows.map((row) => ({ quarter: Number(row.quarter), type: String(row.type), n: Number(row.n) }));
}

/**
 * Per UTC quarter-hour of the sends in the window (every zone's offset is whole quarter-hours, so
 * each lies in one local day): the sends, and the opens, counted replies and bounces that answer
 * them at any later time, from credit_send_quarters (migration 0027).
 */
export async function sendQuarterCounts(d1: D1Database, ids: number[], window: Window) {
  const [rows] = await rawBatch(d1, [
    sql`SELECT quarter, type, sum(CASE WHEN type = 'REPLY' THEN counted ELSE total END) AS n
        FROM credit_send_quarters
        WHERE campaign_id ${inList(ids)} AND type IN ('SENT', 'OPEN', 'REPLY', 'BOUNCE') AND quarter >= ${window.start} AND quarter < ${window.end}
        GROUP BY 1, 2`,
  ]);
  return readQuarters(rows!);
}

/**
 * Per UTC quarter-hour, the counted replies from records in a positive category: dated by the
 * reply, or with `bySend` by the send it answers (records found by their category, then their replies).
 */
export async function positiveReplyQuarters(d1: D1Database, ids: number[], window: Window, bySend: boolean) {
  const time = bySend ? sql`e.send_at` : sql`e.occurred_at`;
  const [rows] = await rawBatch(d1, [
    sql`SELECT ${quarterOf(time)} AS quarter, e.type, count(*) AS n
        FROM campaign_leads cl INDEXED BY campaign_leads_campaign_category_idx
        JOIN events e INDEXED BY events_record_time_idx ON e.campaign_lead_id = cl.id
        WHERE cl.campaign_id ${inList(ids)} AND cl.category_id ${inList(POSITIVE_CATEGORY_IDS)} AND e.type = 'REPLY' AND e.ignored = 0
          AND ${time} >= ${window.start} AND ${time} < ${window.end}
        GROUP BY 1, 2`,
  ]);
  return readQuarters(rows!);
}

/** Per campaign and current category of the replying record, the window's counted replies. */
export function repliesByCategoryQuery(ids: number[], window: Window): SQL {
  return sql`SELECT e.campaign_id, cl.category_id, count(*) AS replies, count(DISTINCT cl.id) AS records
    FROM events e INDEXED BY events_campaign_type_time_idx JOIN campaign_leads cl ON cl.id = e.campaign_lead_id
    WHERE e.campaign_id ${inList(ids)} AND e.type = 'REPLY' AND e.ignored = 0
      AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end}
    GROUP BY e.campaign_id, cl.category_id`;
}

/** Sends and counted replies of steps 2 and later in the window. */
export function followUpQuery(ids: number[], window: Window): SQL {
  return sql`SELECT coalesce(sum(type = 'SENT'), 0) AS sent, coalesce(sum(type = 'REPLY' AND ignored = 0), 0) AS replied
    FROM events INDEXED BY events_campaign_type_time_idx
    WHERE campaign_id ${inList(ids)} AND type IN ('SENT', 'REPLY') AND occurred_at >= ${window.start} AND occurred_at < ${window.end}
      AND sequence_number >= 2`;
}

/**
 * The leads sent to in the window and the leads with a counted reply (not ignored) in it, over the
 * campaigns together: a lead two of them reached, or who replied in two, is one lead (CONTRACT
 * 13.7). The REPLY spans hold every reply, a colleague's forward too, so the replying records are
 * read from the window's replies on the covering index, and each record's lead from its REPLY span
 * (a record deleted since names none and is a lead of its own, as in distinctLeadsQuery).
 */
export async function firstReplyLeadCounts(d1: D1Database, ids: number[], window: Window): Promise<{ sentTo: number; replied: number }> {
  const [sentRows, repliedRows] = await rawBatch(d1, [
    distinctLeadsQuery([ids], window, ["SENT"]),
    sql`SELECT count(DISTINCT coalesce(sp.lead_id, -sp.campaign_lead_id)) AS n
      FROM (SELECT DISTINCT campaign_lead_id FROM events INDEXED BY events_campaign_type_time_idx
            WHERE campaign_id ${inList(ids)} AND type = 'REPLY' AND occurred_at >= ${window.start} AND occurred_at < ${window.end} AND ignored = 0) r
      JOIN event_spans sp ON sp.campaign_lead_id = r.campaign_lead_id AND sp.kind = 'REPLY'`,
  ]);
  return { sentTo: Number(sentRows![0]!.SENT), replied: Number(repliedRows![0]!.n) };
}

/**
 * For records whose first counted reply is in the window: that reply minus the first send. The
 * REPLY spans start at any reply, a colleague's forward too, so the replies are the window's
 * counted ones, less the records with a counted reply before it.
 */
export function firstReplyDelaysQuery(ids: number[], window: Window): SQL {
  return sql`SELECT r.first_at - s.first_at AS delay
    FROM (SELECT campaign_lead_id, min(occurred_at) AS first_at FROM events INDEXED BY events_campaign_type_time_idx
          WHERE campaign_id ${inList(ids)} AND type = 'REPLY' AND occurred_at >= ${window.start} AND occurred_at < ${window.end} AND ignored = 0
          GROUP BY campaign_lead_id) r
    JOIN event_spans s ON s.campaign_lead_id = r.campaign_lead_id AND s.kind = 'SENT'
    WHERE s.first_at <= r.first_at
      AND NOT EXISTS (SELECT 1 FROM events e INDEXED BY events_record_reply_idx
        WHERE e.campaign_lead_id = r.campaign_lead_id AND e.type = 'REPLY' AND e.ignored = 0 AND e.occurred_at < ${window.start})`;
}

/** Each mailbox's tags, for the provider report's tag breakdown. */
export function mailboxTagsQuery(ids: number[]): SQL {
  return sql`SELECT eat.email_account_id, t.name FROM email_account_tags eat JOIN tags t ON t.id = eat.tag_id
    WHERE eat.email_account_id ${inList(ids)}`;
}

/**
 * Per campaign team member (`campaigns.team_member_id`, CONTRACT 13.7) of the campaigns: its
 * campaigns, their leads, and in the window sends, counted replies, positive replies, the leads that
 * opened and the mean first-send-to-first-reply time of the records that replied. A record's own
 * team member (the inbox's assignment) does not move it to another member's entry. A member's
 * campaign without records still counts; a lead in two of the member's campaigns is one lead
 * (section 2); the board reads only records that exist, so each names its lead.
 */
export function teamBoardQuery(ids: number[], window: Window): SQL {
  return sql`SELECT c.team_member_id AS id, count(DISTINCT cl.lead_id) AS lead_count, count(DISTINCT c.id) AS campaign_count,
      coalesce(sum((SELECT count(*) FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = 'SENT' AND e.sequence_number <> ${PERSON_STEP}
        AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end})), 0) AS sent,
      coalesce(sum((SELECT count(*) FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = 'REPLY' AND e.ignored = 0
        AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end})), 0) AS replied,
      coalesce(sum(CASE WHEN cl.category_id ${inList(POSITIVE_CATEGORY_IDS)} THEN (SELECT count(*) FROM events e
        WHERE e.campaign_lead_id = cl.id AND e.type = 'REPLY' AND e.ignored = 0
        AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end}) ELSE 0 END), 0) AS positive,
      count(DISTINCT CASE WHEN EXISTS (SELECT 1 FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = 'OPEN'
        AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end}) THEN cl.lead_id END) AS unique_open_count,
      avg((SELECT r.first_at - s.first_at FROM event_spans r JOIN event_spans s ON s.campaign_lead_id = r.campaign_lead_id AND s.kind = 'SENT'
        WHERE r.campaign_lead_id = cl.id AND r.kind = 'REPLY' AND r.first_at >= ${window.start} AND r.first_at < ${window.end})) AS reply_ms
    FROM campaigns c LEFT JOIN campaign_leads cl ON cl.campaign_id = c.id
    WHERE c.id ${inList(ids)} AND c.team_member_id IS NOT NULL
    GROUP BY c.team_member_id ORDER BY c.team_member_id`;
}
