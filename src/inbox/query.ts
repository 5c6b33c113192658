import { sql, type SQL } from "drizzle-orm";
import { inList } from "../platform/sql";
import { visibleRecordsAliased } from "../platform/access";
import { containsFolded, foldText } from "../platform/text-search";
import type { RecordFlags } from "../events/rules";
import { latestNeedsReview } from "../categories/provenance-sql";

/**
 * The master inbox's listings as SQL over `campaign_leads cl`: which conversations each listing
 * holds, the filter object, the sort orders, and the search's index. Pure (builds SQL, runs none).
 */

export const EMAIL_STATUSES = ["Opened", "Clicked", "Replied", "Unsubscribed", "Bounced", "Accepted", "Not Replied"] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const SORTS = [
  "REPLY_TIME_DESC",
  "SENT_TIME_DESC",
  "SCHEDULED_TIME_ASC",
  "SCHEDULED_TIME_DESC",
  "REMINDER_TIME_ASC",
  "REMINDER_TIME_DESC",
] as const;
export type Sort = (typeof SORTS)[number];

/** Section 4's three listings and section 15's views. */
export type Listing = "inbox" | "archived" | "snoozed" | "unread" | "important" | "scheduled" | "reminders" | "sent" | "assigned" | "views";

/** The sorts each listing takes and the one it uses when none is given. */
export const LISTING_SORTS: Record<Listing, { sorts: readonly Sort[]; default: Sort }> = {
  inbox: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
  archived: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
  snoozed: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
  unread: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
  important: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
  scheduled: { sorts: ["SCHEDULED_TIME_ASC", "SCHEDULED_TIME_DESC", "REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "SCHEDULED_TIME_ASC" },
  reminders: { sorts: ["REMINDER_TIME_ASC", "REMINDER_TIME_DESC", "REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REMINDER_TIME_ASC" },
  sent: { sorts: ["SENT_TIME_DESC", "REPLY_TIME_DESC"], default: "SENT_TIME_DESC" },
  assigned: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
  views: { sorts: ["REPLY_TIME_DESC", "SENT_TIME_DESC"], default: "REPLY_TIME_DESC" },
};

export interface InboxFilters {
  search?: string;
  campaignId?: number[];
  emailAccountId?: number[];
  emailStatus?: EmailStatus[];
  leadCategories?: { categoryIdsIn?: number[]; categoryIdsNotIn?: number[]; unassigned?: boolean; isAssigned?: boolean };
  campaignTeamMemberId?: number[];
  campaignTagId?: number[];
  campaignClientId?: number[];
  /** [from, to) in ms */
  replyTimeBetween?: [number, number];
  /** The views listing: records of these subsequence campaigns. */
  subSequenceId?: number[];
  /** Records whose latest reply is (true) or is not (false) in the needs-review lane. */
  needsReview?: boolean;
}

export interface Scope {
  accountId: number;
  clientId: number | null;
}

const within = (column: SQL, ids: number[]) => sql`${column} ${inList(ids)}`;

export const STATUS_CONDITIONS: Record<EmailStatus, SQL> = {
  Opened: sql`cl.has_opened = 1`,
  Clicked: sql`cl.has_clicked = 1`,
  Replied: sql`cl.has_replied = 1`,
  Unsubscribed: sql`cl.has_unsubscribed = 1`,
  Bounced: sql`cl.has_bounced = 1`,
  Accepted: sql`(cl.has_sent = 1 AND cl.has_bounced = 0)`,
  "Not Replied": sql`(cl.has_sent = 1 AND cl.has_replied = 0)`,
};

/** The furthest a record got, in the order Bounced, Unsubscribed, Replied, Clicked, Opened, Accepted. */
export function emailStatusOf(record: RecordFlags): EmailStatus | null {
  if (record.hasBounced) return "Bounced";
  if (record.hasUnsubscribed) return "Unsubscribed";
  if (record.hasReplied) return "Replied";
  if (record.hasClicked) return "Clicked";
  if (record.hasOpened) return "Opened";
  return record.hasSent ? "Accepted" : null;
}

/**
 * Whether a listing holds conversations snoozed at `now`, and how: the active listings leave them
 * out, the snoozed one keeps only them (a snooze whose time has come counts as over even before
 * the cron clears it).
 */
export function snoozeRule(listing: Listing): "exclude" | "only" | null {
  if (listing === "inbox" || listing === "unread" || listing === "views") return "exclude";
  return listing === "snoozed" ? "only" : null;
}

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
    // Marked by hand, so a record without a reply may be important too.
    case "important":
      return sql`cl.is_important = 1 AND cl.is_archived = 0`;
    // The record's first scheduled reply and its reminder, copied onto it by triggers (migration 0050).
    case "scheduled":
      return sql`cl.scheduled_reply_at IS NOT NULL`;
    case "reminders":
      return sql`cl.reminder_at IS NOT NULL`;
    case "sent":
      return sql`cl.has_sent = 1`;
    case "assigned":
      return sql`cl.has_replied = 1 AND cl.is_archived = 0
        AND (cl.team_member_id IS NOT NULL OR cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = cl.account_id AND team_member_id IS NOT NULL))`;
    default:
      return active;
  }
}

function categoryCondition(categories: NonNullable<InboxFilters["leadCategories"]>): SQL[] {
  // Selectors that admit records (in these categories, unassigned, assigned) widen each other;
  // categoryIdsNotIn narrows what they admit.
  const admit: SQL[] = [];
  if (categories.categoryIdsIn?.length) admit.push(within(sql`cl.category_id`, categories.categoryIdsIn));
  if (categories.unassigned) admit.push(sql`cl.category_id IS NULL`);
  if (categories.isAssigned) admit.push(sql`cl.category_id IS NOT NULL`);
  const conditions = admit.length ? [sql`(${sql.join(admit, sql` OR `)})`] : [];
  if (categories.categoryIdsNotIn?.length) {
    conditions.push(sql`(cl.category_id IS NULL OR NOT ${within(sql`cl.category_id`, categories.categoryIdsNotIn)})`);
  }
  return conditions;
}

/**
 * The search, record by record: its lead's folded names, or one of its replies' folded text,
 * contains the folded needle. Walks use it; the index (searchHits) gives the same records.
 */
export function searchCondition(needle: string): SQL {
  return sql`(EXISTS (SELECT 1 FROM leads sl WHERE sl.id = cl.lead_id AND ${containsFolded(sql`sl.search_folded`, needle)})
    OR EXISTS (SELECT 1 FROM events sr INDEXED BY events_record_reply_idx
      WHERE sr.campaign_lead_id = cl.id AND sr.type = 'REPLY' AND ${containsFolded(sql`sr.body_folded`, needle)}))`;
}

/**
 * Every condition of a listing: the caller's scope, the listing's state, then the filters (AND).
 * `search: "index"` leaves the search out, for records that come from searchHits already.
 */
export function inboxConditions(scope: Scope, listing: Listing, filters: InboxFilters, now: number, search: "row" | "index" = "row"): SQL {
  const account = scope.accountId;
  const campaignsWhere = (condition: SQL) =>
    sql`cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${account} AND ${condition})`;
  const conditions: SQL[] = [visibleRecordsAliased(scope), listingCondition(listing, now)];
  if (filters.campaignId?.length) conditions.push(within(sql`cl.campaign_id`, filters.campaignId));
  if (filters.emailAccountId?.length) conditions.push(within(sql`cl.email_account_id`, filters.emailAccountId));
  if (filters.emailStatus?.length) {
    conditions.push(sql`(${sql.join([...new Set(filters.emailStatus)].map((s) => STATUS_CONDITIONS[s]), sql` OR `)})`);
  }
  if (filters.leadCategories) conditions.push(...categoryCondition(filters.leadCategories));
  // A conversation's own team member, or its campaign's (POST /campaigns/{id}/team-member).
  if (filters.campaignTeamMemberId?.length) {
    conditions.push(sql`(${within(sql`cl.team_member_id`, filters.campaignTeamMemberId)} OR ${campaignsWhere(within(sql`team_member_id`, filters.campaignTeamMemberId))})`);
  }
  if (filters.campaignTagId?.length) {
    conditions.push(sql`cl.campaign_id IN (SELECT campaign_id FROM campaign_tags WHERE ${within(sql`tag_id`, filters.campaignTagId)})`);
  }
  if (filters.campaignClientId?.length) conditions.push(campaignsWhere(within(sql`client_id`, filters.campaignClientId)));
  if (filters.replyTimeBetween) {
    const [from, to] = filters.replyTimeBetween;
    conditions.push(sql`cl.last_reply_at >= ${from} AND cl.last_reply_at < ${to}`);
  }
  if (filters.subSequenceId?.length) conditions.push(within(sql`cl.campaign_id`, filters.subSequenceId));
  // Correlated, unlike the rest: one seek per candidate on the record's replies (events_record_time_idx).
  if (filters.needsReview !== undefined) conditions.push(sql`${latestNeedsReview("cl")} = ${filters.needsReview ? 1 : 0}`);
  // Last: the costliest test, so SQLite runs it only on records every other condition kept.
  if (filters.search && search === "row") conditions.push(searchCondition(filters.search));
  return sql.join(conditions, sql` AND `);
}

/** Ties broken by id so pages never overlap or skip; SQLite sorts NULL lowest, so DESC puts them last. */
export function inboxOrder(sort: Sort, listing: Listing, alias = "cl"): SQL {
  const column = (name: string) => sql.raw(`${alias}.${name}`);
  switch (sort) {
    case "SENT_TIME_DESC":
      return sql`${column("last_sent_at")} DESC, ${column("id")} DESC`;
    case "SCHEDULED_TIME_ASC":
      return sql`${column("scheduled_reply_at")} ASC, ${column("id")} ASC`;
    case "SCHEDULED_TIME_DESC":
      return sql`${column("scheduled_reply_at")} DESC, ${column("id")} DESC`;
    case "REMINDER_TIME_ASC":
      return sql`${column("reminder_at")} ASC, ${column("id")} ASC`;
    case "REMINDER_TIME_DESC":
      return sql`${column("reminder_at")} DESC, ${column("id")} DESC`;
    default:
      // The sent view holds unreplied records too: they come last, newest send first.
      return listing === "sent"
        ? sql`${column("last_reply_at")} DESC, ${column("last_sent_at")} DESC, ${column("id")} DESC`
        : sql`${column("last_reply_at")} DESC, ${column("id")} DESC`;
  }
}

/**
 * Characters the index cannot tell apart from others: U+0001 ends every document (migration 0051),
 * and SQLite reads U+FFFE and U+FFFF as U+FFFD. A needle holding one is tested record by record.
 */
const UNINDEXED = ["\u0001", "\uFFFD", "\uFFFE", "\uFFFF"];

/**
 * How the search's index (migration 0051) finds a needle: as a phrase of trigrams (three characters
 * or more once folded), through the trigrams it begins (one or two), or not at all.
 */
export function needleKind(needle: string): "phrase" | "short" | "none" {
  const folded = foldText(needle);
  if (folded.length === 0 || UNINDEXED.some((char) => folded.includes(char))) return "none";
  return [...folded].length >= 3 ? "phrase" : "short";
}

/** Whether the search's index can answer this needle as a phrase (three characters or more once folded). */
export function indexedNeedle(needle: string): boolean {
  return needleKind(needle) === "phrase";
}

/** An FTS5 query matching the folded needle as one phrase: with the trigram tokenizer, a substring. */
export function ftsPhrase(needle: string): string {
  return `"${foldText(needle).replaceAll('"', '""')}"`;
}

/**
 * The first string past every one the folded needle begins, in UTF-8 byte order (code point order),
 * so the trigrams it begins sort in [needle, end); null when nothing is past them.
 */
export function prefixEnd(folded: string): string | null {
  const chars = [...folded];
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!;
    // Past U+D7FF come the surrogates, which UTF-8 does not hold.
    if (last < 0x10ffff) return chars.join("") + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return null;
}

/**
 * Rows of lead_search and reply_search are keyed account_id * 2^40 + row id (migration 0051). The
 * bounds are written as integer literals: FTS5 seeks a rowid range only when its bounds are
 * INTEGER values, and a bound JavaScript number may arrive as REAL (then it reads every match).
 */
function base(accountId: number): SQL {
  if (!Number.isSafeInteger(accountId)) throw new Error(`not an account id: ${accountId}`);
  return sql.raw(`${accountId} * 1099511627776`);
}
const rangeOf = (table: string, accountId: number) =>
  sql`${sql.raw(table)}.rowid >= ${base(accountId)} AND ${sql.raw(table)}.rowid < ${base(accountId + 1)}`;

/**
 * The FTS5 query of a needle the index answers: its phrase, or (one or two characters) every
 * trigram it begins, as the table's vocabulary lists them.
 */
function matchOf(table: "lead_search" | "reply_search", needle: string): SQL {
  if (needleKind(needle) === "phrase") return sql`${ftsPhrase(needle)}`;
  const folded = foldText(needle);
  const end = prefixEnd(folded);
  return sql`coalesce((SELECT group_concat('"' || replace(term, '"', '""') || '"', ' OR ') FROM ${sql.raw(`${table}_terms`)}
    WHERE term >= ${folded}${end === null ? sql`` : sql` AND term < ${end}`}), '""')`;
}

/** How many of the account's leads and replies contain a phrase needle, counted up to `cap` each. */
export function searchHitCount(accountId: number, needle: string, cap: number): SQL {
  const phrase = ftsPhrase(needle);
  return sql`SELECT
    (SELECT count(*) FROM (SELECT 1 FROM lead_search WHERE lead_search MATCH ${phrase} AND ${rangeOf("lead_search", accountId)} LIMIT ${cap}))
    + (SELECT count(*) FROM (SELECT 1 FROM reply_search WHERE reply_search MATCH ${phrase} AND ${rangeOf("reply_search", accountId)} LIMIT ${cap})) AS n`;
}

/** The account's records the search finds through its index (the same as searchCondition's). */
export function searchHits(accountId: number, needle: string): SQL {
  return sql`SELECT hl.id FROM lead_search CROSS JOIN campaign_leads hl INDEXED BY campaign_leads_lead_idx
      WHERE lead_search MATCH ${matchOf("lead_search", needle)} AND ${rangeOf("lead_search", accountId)} AND hl.lead_id = lead_search.rowid - ${base(accountId)}
    UNION
    SELECT he.campaign_lead_id FROM reply_search CROSS JOIN events he
      WHERE reply_search MATCH ${matchOf("reply_search", needle)} AND ${rangeOf("reply_search", accountId)} AND he.id = reply_search.rowid - ${base(accountId)}`;
}

/**
 * The same records as searchHits, streamed in index order without collecting them first (a count
 * can stop at its cap); a record found more than once comes more than once (count DISTINCT).
 */
export function searchHitStream(accountId: number, needle: string): SQL {
  return sql`SELECT hl.id FROM lead_search CROSS JOIN campaign_leads hl INDEXED BY campaign_leads_lead_idx
      WHERE lead_search MATCH ${matchOf("lead_search", needle)} AND ${rangeOf("lead_search", accountId)} AND hl.lead_id = lead_search.rowid - ${base(accountId)}
    UNION ALL
    SELECT he.campaign_lead_id FROM reply_search CROSS JOIN events he
      WHERE reply_search MATCH ${matchOf("reply_search", needle)} AND ${rangeOf("reply_search", accountId)} AND he.id = reply_search.rowid - ${base(accountId)}`;
}
