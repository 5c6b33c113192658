import { sql, type SQL } from "drizzle-orm";
import { inList } from "../platform/sql";
import { visibleRecordsAliased } from "../platform/access";
import { containsFolded } from "../platform/text-search";
import type { RecordFlags } from "../events/rules";
import { latestNeedsReview } from "../categories/provenance-sql";

/**
 * The master inbox's listings as SQL over `campaign_leads cl` alone (other tables only through
 * uncorrelated subqueries, evaluated once), so a listing's total is counted from the inbox
 * indexes without joins: which conversations each listing holds, the filter object, and the
 * sort orders. Pure (builds SQL, runs none).
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

/** The first time a record's reply is queued for (the scheduled view's order and its rows). */
export const SCHEDULED_AT = sql`(SELECT min(o.scheduled_at) FROM outbound_replies o WHERE o.campaign_lead_id = cl.id AND o.status = 'SCHEDULED')`;
export const REMINDER_AT = sql`(SELECT r.remind_at FROM reminders r WHERE r.campaign_lead_id = cl.id)`;

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

/** Every condition of a listing: the caller's scope, the listing's state, then the filters (AND). */
export function inboxConditions(
  scope: { accountId: number; clientId: number | null },
  listing: Listing,
  filters: InboxFilters,
  now: number,
): SQL {
  const account = scope.accountId;
  const campaignsWhere = (condition: SQL) =>
    sql`cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${account} AND ${condition})`;
  const conditions: SQL[] = [visibleRecordsAliased(scope), listingCondition(listing, now)];
  if (filters.search) {
    const needle = filters.search;
    conditions.push(sql`(cl.lead_id IN (SELECT id FROM leads WHERE account_id = ${account} AND ${containsFolded(sql`search_folded`, needle)})
      OR cl.id IN (SELECT r.campaign_lead_id FROM events r
        WHERE r.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${account})
          AND r.type = 'REPLY' AND ${containsFolded(sql`r.body_folded`, needle)}))`);
  }
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
  return sql.join(conditions, sql` AND `);
}

/** Ties broken by id so pages never overlap or skip; SQLite sorts NULL lowest, so DESC puts them last. */
export function inboxOrder(sort: Sort, listing: Listing): SQL {
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
      // The sent view holds unreplied records too: they come last, newest send first.
      return listing === "sent"
        ? sql`cl.last_reply_at DESC, cl.last_sent_at DESC, cl.id DESC`
        : sql`cl.last_reply_at DESC, cl.id DESC`;
  }
}
