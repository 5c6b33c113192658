import { sql, type SQL } from "drizzle-orm";
import { inList } from "../platform/sql";
import { visibleRecordsAliased } from "../platform/access";
import { containsFolded } from "../platform/text-search";
import type { RecordFlags } from "../events/rules";

/**
 * The master inbox's listings as SQL over `campaign_leads cl` alone (other tables only through
 * uncorrelated subqueries, evaluated once), so a listing's total is counted from the inbox
 * indexes without joins: which conversations each listing holds, the filter object, and the
 * sort orders. Pure (builds SQL, runs none).
 */

export const EMAIL_STATUSES = ["Opened", "Clicked", "Replied", "Unsubscribed", "Bounced", "Accepted", "Not Replied"] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const SORTS = ["REPLY_TIME_DESC", "SENT_TIME_DESC"] as const;
export type Sort = (typeof SORTS)[number];

export type Listing = "inbox" | "archived" | "snoozed";

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

function listingCondition(listing: Listing, now: number): SQL {
  const snoozed = sql`(cl.snoozed_until IS NOT NULL AND cl.snoozed_until > ${now})`;
  if (listing === "archived") return sql`cl.is_archived = 1`;
  if (listing === "snoozed") return sql`cl.is_archived = 0 AND ${snoozed}`;
  return sql`cl.is_archived = 0 AND NOT ${snoozed}`;
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
  const conditions: SQL[] = [visibleRecordsAliased(scope), sql`cl.has_replied = 1`, listingCondition(listing, now)];
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
  if (filters.campaignTeamMemberId?.length) conditions.push(within(sql`cl.team_member_id`, filters.campaignTeamMemberId));
  if (filters.campaignTagId?.length) {
    conditions.push(sql`cl.campaign_id IN (SELECT campaign_id FROM campaign_tags WHERE ${within(sql`tag_id`, filters.campaignTagId)})`);
  }
  if (filters.campaignClientId?.length) conditions.push(campaignsWhere(within(sql`client_id`, filters.campaignClientId)));
  if (filters.replyTimeBetween) {
    const [from, to] = filters.replyTimeBetween;
    conditions.push(sql`cl.last_reply_at >= ${from} AND cl.last_reply_at < ${to}`);
  }
  return sql.join(conditions, sql` AND `);
}

/** Newest first; ties broken by id so pages never overlap or skip. */
export function inboxOrder(sort: Sort): SQL {
  return sort === "SENT_TIME_DESC"
    ? sql`cl.last_sent_at DESC, cl.id DESC` // SQLite sorts NULL lowest, so never-sent ones come last
    : sql`cl.last_reply_at DESC, cl.id DESC`;
}
