// The inbox listings as they were before the counters and the search index (issue 27): every
// condition tested on every record, the search by LIKE over the folded columns, totals by count(*).
// Kept here, in the tests only, as the oracle the new listings must agree with.
import { sql, type SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { containsFolded } from "../../src/platform/text-search";
import type { InboxFilters, Listing, Scope, Sort } from "../../src/inbox/query";
import { fileEnv } from "../helpers";

const within = (column: SQL, ids: number[]) => sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;

const STATUS: Record<string, SQL> = {
  Opened: sql`cl.has_opened = 1`,
  Clicked: sql`cl.has_clicked = 1`,
  Replied: sql`cl.has_replied = 1`,
  Unsubscribed: sql`cl.has_unsubscribed = 1`,
  Bounced: sql`cl.has_bounced = 1`,
  Accepted: sql`(cl.has_sent = 1 AND cl.has_bounced = 0)`,
  "Not Replied": sql`(cl.has_sent = 1 AND cl.has_replied = 0)`,
};

const SCHEDULED_AT = sql`(SELECT min(o.scheduled_at) FROM outbound_replies o WHERE o.campaign_lead_id = cl.id AND o.status = 'SCHEDULED')`;
const REMINDER_AT = sql`(SELECT r.remind_at FROM reminders r WHERE r.campaign_lead_id = cl.id)`;

function listingCondition(listing: Listing, now: number): SQL {
  const snoozed = sql`(cl.snoozed_until IS NOT NULL AND cl.snoozed_until > ${now})`;
  const active = sql`cl.has_replied = 1 AND cl.is_archived = 0 AND NOT ${snoozed}`;
  switch (listing) {
    case "archived":
      return sql`cl.has_replied = 1 AND cl.is_archived = 1`;
    case "snoozed":
      return sql`cl.has_replied = 1 AND cl.is_archived = 0 AND ${snoozed}`;
    case "unread":
      return sql`${active} AND cl.is_read = 0`;
    case "important":
      return sql`cl.is_important = 1 AND cl.is_archived = 0`;
    case "scheduled":
      return sql`cl.id IN (SELECT campaign_lead_id FROM outbound_replies WHERE account_id = cl.account_id AND status = 'SCHEDULED')`;
    case "reminders":
      return sql`cl.id IN (SELECT campaign_lead_id FROM reminders WHERE account_id = cl.account_id)`;
    case "sent":
      return sql`cl.has_sent = 1`;
    case "assigned":
      return sql`cl.has_replied = 1 AND cl.is_archived = 0
        AND (cl.team_member_id IS NOT NULL OR cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = cl.account_id AND team_member_id IS NOT NULL))`;
    default:
      return active;
  }
}

/** The old search: the lead's folded names or a reply's folded body LIKE the folded needle. */
export function oldSearch(accountId: number, needle: string): SQL {
  return sql`(cl.lead_id IN (SELECT id FROM leads WHERE account_id = ${accountId} AND ${containsFolded(sql`search_folded`, needle)})
    OR cl.id IN (SELECT r.campaign_lead_id FROM events r
      WHERE r.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${accountId})
        AND r.type = 'REPLY' AND ${containsFolded(sql`r.body_folded`, needle)}))`;
}

export function oldConditions(scope: Scope, listing: Listing, filters: InboxFilters, now: number): SQL {
  const account = scope.accountId;
  const campaignsWhere = (condition: SQL) => sql`cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${account} AND ${condition})`;
  const conditions: SQL[] = [sql`cl.account_id = ${account}`];
  if (scope.clientId !== null) conditions.push(campaignsWhere(sql`client_id = ${scope.clientId}`));
  conditions.push(listingCondition(listing, now));
  if (filters.search) conditions.push(oldSearch(account, filters.search));
  if (filters.campaignId?.length) conditions.push(within(sql`cl.campaign_id`, filters.campaignId));
  if (filters.emailAccountId?.length) conditions.push(within(sql`cl.email_account_id`, filters.emailAccountId));
  if (filters.emailStatus?.length) conditions.push(sql`(${sql.join([...new Set(filters.emailStatus)].map((s) => STATUS[s]!), sql` OR `)})`);
  const categories = filters.leadCategories;
  if (categories) {
    const admit: SQL[] = [];
    if (categories.categoryIdsIn?.length) admit.push(within(sql`cl.category_id`, categories.categoryIdsIn));
    if (categories.unassigned) admit.push(sql`cl.category_id IS NULL`);
    if (categories.isAssigned) admit.push(sql`cl.category_id IS NOT NULL`);
    if (admit.length) conditions.push(sql`(${sql.join(admit, sql` OR `)})`);
    if (categories.categoryIdsNotIn?.length) conditions.push(sql`(cl.category_id IS NULL OR NOT ${within(sql`cl.category_id`, categories.categoryIdsNotIn)})`);
  }
  if (filters.campaignTeamMemberId?.length) {
    conditions.push(sql`(${within(sql`cl.team_member_id`, filters.campaignTeamMemberId)} OR ${campaignsWhere(within(sql`team_member_id`, filters.campaignTeamMemberId))})`);
  }
  if (filters.campaignTagId?.length) conditions.push(sql`cl.campaign_id IN (SELECT campaign_id FROM campaign_tags WHERE ${within(sql`tag_id`, filters.campaignTagId)})`);
  if (filters.campaignClientId?.length) conditions.push(campaignsWhere(within(sql`client_id`, filters.campaignClientId)));
  if (filters.replyTimeBetween) conditions.push(sql`cl.last_reply_at >= ${filters.replyTimeBetween[0]} AND cl.last_reply_at < ${filters.replyTimeBetween[1]}`);
  if (filters.subSequenceId?.length) conditions.push(within(sql`cl.campaign_id`, filters.subSequenceId));
  return sql.join(conditions, sql` AND `);
}

export function oldOrder(sort: Sort, listing: Listing): SQL {
  switch (sort) {
    case "SENT_TIME_DESC":
      return sql`cl.last_sent_at DESC, cl.id DESC`;
    case "SCHEDULED_TIME_ASC":
      return sql`${SCHEDULED_AT} ASC, cl.id ASC`;
    case "SCHEDULED_TIME_DESC":
      return sql`${SCHEDULED_AT} DESC, cl.id DESC`;
    case "REMINDER_TIME_ASC":
      return sql`${REMINDER_AT} ASC, cl.id ASC`;
    case "REMINDER_TIME_DESC":
      return sql`${REMINDER_AT} DESC, cl.id DESC`;
    default:
      return listing === "sent" ? sql`cl.last_reply_at DESC, cl.last_sent_at DESC, cl.id DESC` : sql`cl.last_reply_at DESC, cl.id DESC`;
  }
}

const dialect = new SQLiteAsyncDialect();
/** A query as a D1 statement, so a caller can send many in one batch. */
export function statement(query: SQL): D1PreparedStatement {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return fileEnv().DB.prepare(text).bind(...params);
}

export interface OracleQuery {
  scope: Scope;
  listing: Listing;
  filters: InboxFilters;
  sort: Sort;
  offset: number;
  limit: number;
  now: number;
}

/** The old scan's two statements for a listing: the page's record ids in order, and the total. */
function oracleStatements(query: OracleQuery): [D1PreparedStatement, D1PreparedStatement] {
  const where = oldConditions(query.scope, query.listing, query.filters, query.now);
  return [
    statement(sql`SELECT cl.id FROM campaign_leads cl WHERE ${where} ORDER BY ${oldOrder(query.sort, query.listing)} LIMIT ${query.limit} OFFSET ${query.offset}`),
    statement(sql`SELECT count(*) AS n FROM campaign_leads cl WHERE ${where}`),
  ];
}

/** The page's record ids in order, and the total, by the old scan. */
export async function oracle(query: OracleQuery): Promise<{ ids: number[]; total: number }> {
  return (await oracles([query]))[0]!;
}

/** Several listings by the old scan, in one round trip to the database. */
export async function oracles(queries: OracleQuery[]): Promise<{ ids: number[]; total: number }[]> {
  const results = await fileEnv().DB.batch<{ id: number; n: number }>(queries.flatMap(oracleStatements));
  return queries.map((_, i) => ({ ids: results[2 * i]!.results.map((row) => row.id), total: results[2 * i + 1]!.results[0]!.n }));
}

/** The records the old search finds in an account (any state), by the old scan, as a statement answering `id`s in order. */
export function oldSearchStatement(accountId: number, needle: string): D1PreparedStatement {
  return statement(sql`SELECT cl.id FROM campaign_leads cl WHERE cl.account_id = ${accountId} AND ${oldSearch(accountId, needle)} ORDER BY cl.id`);
}

const FLAGS = `(x.has_replied + x.is_archived * 2 + (x.snoozed_until IS NOT NULL) * 4 + x.is_read * 8 + x.is_important * 16 + x.has_sent * 32
  + x.has_opened * 64 + x.has_clicked * 128 + x.has_bounced * 256 + x.has_unsubscribed * 512
  + ((SELECT count(*) FROM reminders r WHERE r.campaign_lead_id = x.id) > 0) * 1024
  + ((SELECT count(*) FROM outbound_replies o WHERE o.campaign_lead_id = x.id AND o.status = 'SCHEDULED') > 0) * 2048
  + (x.last_reply_at IS NOT NULL) * 4096)`;
const COUNTED = `(x.has_replied = 1 OR x.has_sent = 1 OR x.is_important = 1 OR x.id IN (SELECT campaign_lead_id FROM reminders)
  OR x.id IN (SELECT campaign_lead_id FROM outbound_replies WHERE status = 'SCHEDULED'))`;

/**
 * The counters' rows (non-zero) that differ from a recount of the records, for one level: what
 * the counter says against what the records say, per key. Empty when the counters are exact.
 */
export async function counterDrift(accountId: number): Promise<Record<string, unknown>[]> {
  const levels = [
    { table: "inbox_counts", key: "x.account_id", scope: `x.account_id = ${accountId}`, mine: `k.account_id = ${accountId}` },
    {
      table: "inbox_client_counts",
      key: "(SELECT client_id FROM campaigns c WHERE c.id = x.campaign_id)",
      scope: `x.account_id = ${accountId} AND x.campaign_id IN (SELECT id FROM campaigns WHERE client_id IS NOT NULL)`,
      mine: `k.client_id IN (SELECT id FROM clients WHERE account_id = ${accountId})`,
    },
    { table: "inbox_campaign_counts", key: "x.campaign_id", scope: `x.account_id = ${accountId}`, mine: `k.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${accountId})` },
  ];
  const statements = levels.map((level) => {
    const keyColumn = level.table === "inbox_counts" ? "account_id" : level.table === "inbox_client_counts" ? "client_id" : "campaign_id";
    return fileEnv().DB.prepare(
      `WITH truth AS (SELECT ${level.key} AS key, ${FLAGS} AS flags, coalesce(x.category_id, 0) AS category_id, coalesce(x.team_member_id, 0) AS team_member_id,
           count(*) AS n FROM campaign_leads x WHERE ${level.scope} AND ${COUNTED} GROUP BY 1, 2, 3, 4),
         kept AS (SELECT k.${keyColumn} AS key, k.flags, k.category_id, k.team_member_id, k.n FROM ${level.table} k WHERE ${level.mine} AND k.n <> 0)
       SELECT '${level.table}' AS level, t.key, t.flags, t.category_id, t.team_member_id, t.n AS records, k.n AS counter FROM truth t
         LEFT JOIN kept k ON k.key = t.key AND k.flags = t.flags AND k.category_id = t.category_id AND k.team_member_id = t.team_member_id WHERE k.n IS NOT t.n
       UNION ALL
       SELECT '${level.table}', k.key, k.flags, k.category_id, k.team_member_id, t.n, k.n FROM kept k
         LEFT JOIN truth t ON k.key = t.key AND k.flags = t.flags AND k.category_id = t.category_id AND k.team_member_id = t.team_member_id WHERE t.n IS NULL`,
    );
  });
  // One round trip for the three levels.
  const answers = await fileEnv().DB.batch<Record<string, unknown>>(statements);
  return answers.flatMap((answer) => answer.results);
}
