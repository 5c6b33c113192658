import { sql, type SQL } from "drizzle-orm";
import { visibleRecordsAliased } from "../platform/access";
import { jsonList, statement } from "../platform/sql";
import type { RecordFlagColumns } from "../events/record-flags";
import { latestCategorySource, latestNeedsReview } from "../categories/provenance-sql";
import { accountTotals, campaignSet, campaignTotals, categoryTotals, clientTotals, countable, explicitCampaigns, rangeTest, teamRule } from "./counts";
import { choosePlan, countOverHits, mergesOf, SEARCH_HITS_CAP, SENT_BY_REPLY, SHORT_NEEDLE_PROBE, walkOf, type Figures, type Plan, type ValueTotals } from "./listing-plan";
import { inboxConditions, inboxOrder, indexedNeedle, needleKind, searchCondition, searchHitCount, searchHits, searchHitStream, snoozeRule, type InboxFilters, type Listing, type Scope, type Sort } from "./query";

export interface ConversationRow extends RecordFlagColumns {
  id: number;
  campaign_id: number;
  campaign_name: string;
  lead_id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  email_account_id: number | null;
  category_id: number | null;
  team_member_id: number | null;
  is_read: number;
  is_important: number;
  is_archived: number;
  snoozed_until: number | null;
  last_sent_at: number | null;
  last_reply_at: number | null;
  revenue_cents: number;
  sub_sequence_id: number | null;
  current_sequence_number: number | null;
  category_source: "rule" | "model" | "human" | "event" | null;
  needs_review: number;
}

export interface ListingQuery {
  scope: Scope;
  listing: Listing;
  filters: InboxFilters;
  sort: Sort;
  offset: number;
  limit: number;
  now: number;
}

const CONVERSATION_COLUMNS = sql`cl.id, cl.campaign_id, c.name AS campaign_name, cl.lead_id, l.email, l.first_name, l.last_name,
  cl.email_account_id, cl.category_id, cl.team_member_id, cl.is_read, cl.is_important, cl.is_archived,
  cl.snoozed_until, cl.last_sent_at, cl.last_reply_at, cl.has_sent, cl.has_opened, cl.has_clicked,
  cl.has_replied, cl.has_bounced, cl.has_unsubscribed, cl.revenue_cents, cl.sub_sequence_id,
  (SELECT max(sequence_number) FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = 'SENT') AS current_sequence_number,
  ${latestCategorySource("cl")} AS category_source, ${latestNeedsReview("cl")} AS needs_review`;

/**
 * Where the counters cannot give a total (a search tested record by record, a mailbox or reply-time
 * filter), the matches are counted up to this many; past it total_count says "at least".
 */
const COUNT_CAP = 10_000;
/** The same for a needle of one or two characters that matches often, tested record by record (each test reads a lead and its replies). */
const SEARCH_COUNT_CAP = 200;

/** One record as a conversation, if the caller may see it (any state: replied or not). */
export async function conversationOf(d1: D1Database, scope: Scope, recordId: number) {
  return statement(
    d1,
    sql`SELECT ${CONVERSATION_COLUMNS}
        FROM campaign_leads cl JOIN campaigns c ON c.id = cl.campaign_id JOIN leads l ON l.id = cl.lead_id
        WHERE cl.id = ${recordId} AND ${visibleRecordsAliased(scope)}`,
  ).first<ConversationRow>();
}

const indexed = (name: string) => sql.raw(`INDEXED BY ${name}`);

/** The statements read before the page: the counters' figures, the snoozes they miss, the search's hits. */
function figureStatements(query: ListingQuery) {
  const { scope, listing, filters, sort, now } = query;
  const walk = walkOf(listing, sort);
  const merges = mergesOf(listing, sort);
  const campaigns = explicitCampaigns(filters) ? campaignSet(scope, filters) : null;
  const clientsOnly = !campaigns && (scope.clientId !== null || Boolean(filters.campaignClientId?.length));
  const categoryMerge = merges.find((merge) => merge.column === "category_id");
  const wantsCategories = !campaigns && !clientsOnly && categoryMerge && !teamRule(listing, filters) && admitsFewCategories(filters);
  const rule = snoozeRule(listing);
  // The probe reads the walk's records from where a page starts (in the index's order when the sort is not it).
  const probeOrder = walk.ordered && !(listing === "sent" && sort === "REPLY_TIME_DESC") ? sql` ORDER BY ${inboxOrder(sort, listing)}` : sql``;
  return {
    account: accountTotals(scope, listing, filters, rangeTest(walk.range), !campaigns && !clientsOnly),
    clients: clientsOnly ? clientTotals(scope, listing, filters) : null,
    campaigns: campaigns
      ? campaignTotals(scope, listing, filters, campaigns, rangeTest((merges.find((merge) => merge.column === "campaign_id") ?? walk).range))
      : null,
    categories: wantsCategories ? categoryTotals(scope, listing, filters, rangeTest(categoryMerge.range)) : null,
    // The counters count a snooze while it is set; the listings, until its time (the cron may lag).
    expired:
      rule && countable(filters)
        ? sql`SELECT count(*) AS n FROM campaign_leads cl ${indexed("campaign_leads_snoozed_idx")}
            WHERE cl.snoozed_until <= ${now} AND ${inboxConditions(scope, rule === "only" ? "inbox" : listing, filters, now)}`
        : null,
    hits: filters.search && indexedNeedle(filters.search) ? searchHitCount(scope.accountId, filters.search, SEARCH_HITS_CAP + 1) : null,
    // A needle of one or two characters: how often it matches the first records of the walk.
    probe:
      filters.search && needleKind(filters.search) === "short"
        ? sql`WITH prefix AS (SELECT cl.id, cl.lead_id FROM campaign_leads cl ${indexed(walk.index)}
              WHERE ${inboxConditions(scope, listing, filters, now, "index")}${probeOrder} LIMIT ${SHORT_NEEDLE_PROBE})
            SELECT count(*) AS scanned, coalesce(sum(${searchCondition(filters.search)}), 0) AS found FROM prefix cl`
        : null,
  };
}

function admitsFewCategories(filters: InboxFilters): boolean {
  const categories = filters.leadCategories;
  return Boolean(categories && (categories.categoryIdsIn?.length || categories.unassigned || categories.isAssigned));
}

type Row = Record<string, unknown>;
const num = (value: unknown) => Number(value ?? 0);
const valueTotals = (rows: Row[], nullValue?: number): ValueTotals[] =>
  rows.map((row) => ({
    value: num(row.value) === nullValue ? null : num(row.value),
    range: num(row.range),
    matches: num(row.matches),
    candidates: num(row.candidates),
  }));

/** What the counters and the search's index say of a listing, read in one round trip. */
export async function readFigures(d1: D1Database, query: ListingQuery): Promise<Figures> {
  const parts = figureStatements(query);
  const named = Object.entries(parts).filter((entry): entry is [string, SQL] => entry[1] !== null);
  const results = await d1.batch(named.map(([, query]) => statement(d1, query)));
  const rows = Object.fromEntries(named.map(([name], i) => [name, results[i]!.results as Row[]]));
  const account = rows.account![0]!;
  const campaigns = rows.campaigns ? valueTotals(rows.campaigns) : undefined;
  // Only campaigns the filters name by id come one per row (see campaignTotals): those may merge.
  const { campaignId, subSequenceId } = query.filters;
  const byId = campaignId?.length || subSequenceId?.length;
  let matches = campaigns
    ? campaigns.reduce((sum, v) => sum + v.matches, 0)
    : rows.clients
      ? num(rows.clients[0]?.matches)
      : num(account.matches);
  const expired = rows.expired ? num(rows.expired[0]?.n) : 0;
  matches += snoozeRule(query.listing) === "only" ? -expired : expired;
  const searchHitsFound = rows.hits ? num(rows.hits[0]?.n) : undefined;
  return {
    walkRange: num(account.range),
    matches: searchHitsFound === undefined ? matches : Math.min(matches, searchHitsFound),
    exact: countable(query.filters),
    counted: matches,
    campaigns: byId ? campaigns : undefined,
    categories: rows.categories ? valueTotals(rows.categories, 0) : undefined,
    searchHits: searchHitsFound,
    probe: rows.probe ? { scanned: num(rows.probe[0]?.scanned), found: num(rows.probe[0]?.found) } : undefined,
  };
}

/** The ids of the page, in order (and, for the search's index, the total), as one statement. */
function pageStatement(plan: Exclude<Plan, { kind: "empty" }>, query: ListingQuery): SQL {
  const { scope, listing, filters, sort, offset, limit, now } = query;
  const order = inboxOrder(sort, listing);
  const where = inboxConditions(scope, listing, filters, now, plan.kind === "search" ? "index" : "row");
  switch (plan.kind) {
    case "walk":
      return sql`SELECT cl.id FROM campaign_leads cl ${indexed(plan.walk.index)} WHERE ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
    case "merge":
      // Each value's ordered range gives its first offset + limit matches; their merge gives the page.
      return sql`SELECT p.id FROM json_each(${jsonList(plan.values)}) v CROSS JOIN campaign_leads p
        WHERE p.id IN (SELECT cl.id FROM campaign_leads cl ${indexed(plan.merge.index)}
          WHERE cl.${sql.raw(plan.merge.column)} IS v.value AND ${where} ORDER BY ${order} LIMIT ${offset + limit})
        ORDER BY ${inboxOrder(sort, listing, "p")} LIMIT ${limit} OFFSET ${offset}`;
    case "search":
      return sql`WITH hits(id) AS (${searchHits(scope.accountId, filters.search!)})
        SELECT cl.id, count(*) OVER () AS total FROM hits CROSS JOIN campaign_leads cl
        WHERE cl.id = hits.id AND ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
    case "sentByReply": {
      // Replied records come first (a NULL reply time sorts last), so each part gives its first offset + limit.
      const { replied, unreplied } = SENT_BY_REPLY;
      return sql`SELECT id FROM (
          SELECT * FROM (SELECT cl.id, cl.last_reply_at, cl.last_sent_at FROM campaign_leads cl ${indexed(replied)}
            WHERE ${where} AND cl.last_reply_at IS NOT NULL ORDER BY ${order} LIMIT ${offset + limit})
          UNION ALL
          SELECT * FROM (SELECT cl.id, cl.last_reply_at, cl.last_sent_at FROM campaign_leads cl ${indexed(unreplied)}
            WHERE ${where} AND cl.last_reply_at IS NULL ORDER BY cl.last_sent_at DESC, cl.id DESC LIMIT ${offset + limit}))
        ORDER BY last_reply_at DESC, last_sent_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
    }
  }
}

/**
 * Counts the matches up to `cap` (where the counters cannot): a search the index can answer over
 * its hits, others over the plan's own index ranges.
 */
function cappedCount(plan: Exclude<Plan, { kind: "empty" }>, query: ListingQuery, figures: Figures, cap: number): SQL {
  const { scope, listing, filters, now } = query;
  const kind = filters.search ? needleKind(filters.search) : "none";
  const byIndex = plan.kind === "search" || (kind !== "none" && countOverHits(figures, cap, kind === "short"));
  const where = inboxConditions(scope, listing, filters, now, byIndex ? "index" : "row");
  const matches = byIndex
    ? sql`SELECT DISTINCT cl.id FROM (${searchHitStream(scope.accountId, filters.search!)}) hits CROSS JOIN campaign_leads cl
        WHERE cl.id = hits.id AND ${where} LIMIT ${cap}`
    : plan.kind === "merge"
      ? sql`SELECT 1 FROM json_each(${jsonList(plan.values)}) v CROSS JOIN campaign_leads cl ${indexed(plan.merge.index)}
          WHERE cl.${sql.raw(plan.merge.column)} IS v.value AND ${where} LIMIT ${cap}`
      : sql`SELECT 1 FROM campaign_leads cl ${indexed(plan.kind === "walk" ? plan.walk.index : SENT_BY_REPLY.unreplied)}
            WHERE ${where} LIMIT ${cap}`;
  return sql`SELECT count(*) AS n FROM (${matches})`;
}

/**
 * One page of a listing and its total. The counters (migration 0050) give the total of every
 * listing whose filters they hold, exactly; the page is read from the index range the figures
 * make cheapest (listing-plan.ts). Otherwise the matches are counted over the same ranges up to
 * COUNT_CAP (SEARCH_COUNT_CAP for a search tested record by record).
 */
export async function listConversations(d1: D1Database, query: ListingQuery): Promise<{ rows: ConversationRow[]; total: number }> {
  const figures = await readFigures(d1, query);
  return readPage(d1, query, figures, choosePlan(query, figures));
}

/** The page and total of a listing read one way (any of planOptions' gives the same answer). */
export async function readPage(d1: D1Database, query: ListingQuery, figures: Figures, plan: Plan): Promise<{ rows: ConversationRow[]; total: number }> {
  const { offset, limit } = query;
  if (plan.kind === "empty") return { rows: [], total: Math.max(figures.matches, 0) };
  const page = sql`SELECT ${CONVERSATION_COLUMNS}${plan.kind === "search" ? sql`, pg.total` : sql``}
    FROM (${pageStatement(plan, query)}) pg JOIN campaign_leads cl ON cl.id = pg.id
    JOIN campaigns c ON c.id = cl.campaign_id JOIN leads l ON l.id = cl.lead_id
    ORDER BY ${inboxOrder(query.sort, query.listing)}`;
  const search = query.filters.search;
  const cap = search && plan.kind !== "search" && needleKind(search) !== "phrase" ? SEARCH_COUNT_CAP : COUNT_CAP;
  const needsCount = !figures.exact && plan.kind !== "search";
  const [pageResult, countResult] = await d1.batch([statement(d1, page), ...(needsCount ? [statement(d1, cappedCount(plan, query, figures, cap))] : [])]);
  const rows = pageResult!.results as (ConversationRow & { total?: number })[];
  // A short page that is not empty tells the total by itself.
  if (rows.length > 0 && rows.length < limit) return { rows, total: offset + rows.length };
  if (figures.exact) return { rows, total: figures.matches };
  if (plan.kind === "search") {
    if (rows.length > 0) return { rows, total: num(rows[0]!.total) };
    if (offset === 0) return { rows, total: 0 };
    const count = await statement(d1, cappedCount(plan, query, figures, cap)).first<{ n: number }>();
    return { rows, total: num(count?.n) };
  }
  const counted = num((countResult!.results[0] as Row | undefined)?.n);
  // Past the cap, the total is at least what this page shows, and one more while pages are full.
  return { rows, total: counted < cap ? counted : Math.max(counted, offset + rows.length + (rows.length === limit ? 1 : 0)) };
}
