import { sql, type SQL } from "drizzle-orm";
import { inList } from "../platform/sql";
import type { EmailStatus, InboxFilters, Listing, Scope } from "./query";

/**
 * SQL over the inbox counters (migration 0050): `inbox_counts` per account and
 * `inbox_campaign_counts` per campaign hold how many records have each combination of the facts a
 * listing and its filters test, packed into `flags`, with the category and the team member (0 for
 * none). Pure (builds SQL, runs none).
 */

/** The bits of `flags`, as the triggers of migration 0050 set them. */
export const FLAG = {
  replied: 1,
  archived: 2,
  snoozed: 4,
  read: 8,
  important: 16,
  sent: 32,
  opened: 64,
  clicked: 128,
  bounced: 256,
  unsubscribed: 512,
  reminder: 1024,
  scheduled: 2048,
  replyTime: 4096,
} as const;

const bits = (value: number) => sql.raw(String(value));
/** `flags` has every bit of `mask` set as in `value`. */
const flagsAre = (mask: number, value: number) => sql`(k.flags & ${bits(mask)}) = ${bits(value)}`;
const flagSet = (bit: number) => flagsAre(bit, bit);

/**
 * Which records a listing holds, as a test of one counter row (a snooze counts while set).
 * `withSnoozed`: the active listings also keep their snoozed records, whose snooze may be over
 * before the cron clears it (which records may be in the listing, not how many are).
 */
export function listingFlags(listing: Listing, withSnoozed = false): SQL {
  const { replied, archived, read, important, sent, reminder, scheduled } = FLAG;
  const snoozed = withSnoozed ? 0 : FLAG.snoozed;
  switch (listing) {
    case "archived":
      return flagsAre(replied | archived, replied | archived);
    case "snoozed":
      return flagsAre(replied | archived | FLAG.snoozed, replied | FLAG.snoozed);
    case "unread":
      return flagsAre(replied | archived | snoozed | read, replied);
    case "important":
      return flagsAre(important | archived, important);
    case "scheduled":
      return flagSet(scheduled);
    case "reminders":
      return flagSet(reminder);
    case "sent":
      return flagSet(sent);
    case "assigned":
      return flagsAre(replied | archived, replied);
    default:
      return flagsAre(replied | archived | snoozed, replied);
  }
}

const STATUS_FLAGS: Record<EmailStatus, SQL> = {
  Opened: flagSet(FLAG.opened),
  Clicked: flagSet(FLAG.clicked),
  Replied: flagSet(FLAG.replied),
  Unsubscribed: flagSet(FLAG.unsubscribed),
  Bounced: flagSet(FLAG.bounced),
  Accepted: flagsAre(FLAG.sent | FLAG.bounced, FLAG.sent),
  "Not Replied": flagsAre(FLAG.sent | FLAG.replied, FLAG.sent),
};

/** Real ids are positive, and 0 stands for "none" in the counters: other ids match nothing. */
const ids = (values: number[]) => values.filter((value) => value > 0);

/** The filters the counters answer, as a test of one counter row (team members apart: teamRule). */
export function filterFlags(filters: InboxFilters): SQL[] {
  const conditions: SQL[] = [];
  if (filters.emailStatus?.length) {
    conditions.push(sql`(${sql.join([...new Set(filters.emailStatus)].map((status) => STATUS_FLAGS[status]), sql` OR `)})`);
  }
  conditions.push(...categoryFlags(filters.leadCategories));
  return conditions;
}

function categoryFlags(categories: InboxFilters["leadCategories"]): SQL[] {
  if (!categories) return [];
  const conditions: SQL[] = [];
  const admit: SQL[] = [];
  if (categories.categoryIdsIn?.length) admit.push(sql`k.category_id ${inList(ids(categories.categoryIdsIn))}`);
  if (categories.unassigned) admit.push(sql`k.category_id = 0`);
  if (categories.isAssigned) admit.push(sql`k.category_id <> 0`);
  if (admit.length) conditions.push(sql`(${sql.join(admit, sql` OR `)})`);
  if (categories.categoryIdsNotIn?.length) conditions.push(sql`NOT k.category_id ${inList(ids(categories.categoryIdsNotIn))}`);
  return conditions;
}

/**
 * A listing's team-member rule, when it has one: a record matches through its own team member
 * (`record`, a test of a counter row) or through its campaign's (`campaigns`, a test of a
 * campaigns row), as the assigned view and the campaignTeamMemberId filter say.
 */
export function teamRule(listing: Listing, filters: InboxFilters): { record: SQL; campaigns: SQL } | null {
  const members = filters.campaignTeamMemberId;
  // The filter implies the assigned view's own rule: a record in its list has a team member.
  if (members?.length) return { record: sql`k.team_member_id ${inList(ids(members))}`, campaigns: sql`team_member_id ${inList(members)}` };
  if (listing === "assigned") return { record: sql`k.team_member_id <> 0`, campaigns: sql`team_member_id IS NOT NULL` };
  return null;
}

/** The campaigns a listing is confined to by the caller's client and the filters, or null (all). */
export function campaignSet(scope: Scope, filters: InboxFilters): SQL | null {
  const conditions: SQL[] = [];
  if (scope.clientId !== null) conditions.push(sql`client_id = ${scope.clientId}`);
  if (filters.campaignId?.length) conditions.push(sql`id ${inList(filters.campaignId)}`);
  if (filters.subSequenceId?.length) conditions.push(sql`id ${inList(filters.subSequenceId)}`);
  if (filters.campaignTagId?.length) conditions.push(sql`id IN (SELECT campaign_id FROM campaign_tags WHERE tag_id ${inList(filters.campaignTagId)})`);
  if (filters.campaignClientId?.length) conditions.push(sql`client_id ${inList(filters.campaignClientId)}`);
  if (conditions.length === 0) return null;
  return sql`SELECT id FROM campaigns WHERE account_id = ${scope.accountId} AND ${sql.join(conditions, sql` AND `)}`;
}

/** Whether the filters name campaigns (ids, subsequences, tags): then the campaign counters answer. */
export function explicitCampaigns(filters: InboxFilters): boolean {
  return Boolean(filters.campaignId?.length || filters.subSequenceId?.length || filters.campaignTagId?.length);
}

/** Whether the counters answer these filters exactly (the search, mailboxes and reply times they do not hold). */
export function countable(filters: InboxFilters): boolean {
  // needsReview is a test of each record's latest reply (triage), kept by no counter.
  return !filters.search && !filters.emailAccountId?.length && !filters.replyTimeBetween && filters.needsReview === undefined;
}

const and = (conditions: SQL[]) => (conditions.length ? sql.join(conditions, sql` AND `) : sql`1`);

/**
 * The listing's records among the account's counters: `range` of them in an index range (the
 * counter test `range`), and how many match the listing and the counted filters. Outside a
 * campaign set; a team rule's campaign half reads the campaign counters of those campaigns only.
 */
export function accountTotals(scope: Scope, listing: Listing, filters: InboxFilters, range: SQL, withMatches: boolean): SQL {
  if (!withMatches) return sql`SELECT sum(k.n) AS range FROM inbox_counts k WHERE k.account_id = ${scope.accountId} AND ${range}`;
  return levelTotals(sql`inbox_counts k WHERE k.account_id = ${scope.accountId}`, sql`account_id = ${scope.accountId}`, listing, filters, range);
}

/**
 * The same for the campaigns of some clients: the caller's client, and those the filter names
 * (the client counters hold the records of client-owned campaigns only).
 */
export function clientTotals(scope: Scope, listing: Listing, filters: InboxFilters): SQL {
  const clients: SQL[] = [sql`account_id = ${scope.accountId}`];
  if (scope.clientId !== null) clients.push(sql`id = ${scope.clientId}`);
  if (filters.campaignClientId?.length) clients.push(sql`id ${inList(filters.campaignClientId)}`);
  const chosen = sql`(SELECT id FROM clients WHERE ${sql.join(clients, sql` AND `)})`;
  return levelTotals(sql`inbox_client_counts k WHERE k.client_id IN ${chosen}`, sql`account_id = ${scope.accountId} AND client_id IN ${chosen}`, listing, filters, sql`0`);
}

/** Range and matches over one level's rows (`from`); a team rule's campaign half reads the campaign counters of those campaigns (`campaigns`). */
function levelTotals(from: SQL, campaigns: SQL, listing: Listing, filters: InboxFilters, range: SQL): SQL {
  const match = and([listingFlags(listing), ...filterFlags(filters)]);
  const team = teamRule(listing, filters);
  const own = sql`SELECT sum(k.n) FILTER (WHERE ${range}) AS range, sum(k.n) FILTER (WHERE ${match}${team ? sql` AND ${team.record}` : sql``}) AS matches FROM ${from}`;
  if (!team) return own;
  return sql`SELECT o.range, coalesce(o.matches, 0) + coalesce((SELECT sum(k.n) FROM inbox_campaign_counts k
      WHERE k.campaign_id IN (SELECT id FROM campaigns WHERE ${campaigns} AND ${team.campaigns})
        AND ${match} AND NOT ${team.record}), 0) AS matches
    FROM (${own}) o`;
}

/**
 * The same per campaign of a campaign set: each campaign's records in a (per-campaign) index range
 * and its matches (one row for the whole set when a tag names it). Their sum is the listing's total.
 */
export function campaignTotals(scope: Scope, listing: Listing, filters: InboxFilters, campaigns: SQL, range: SQL): SQL {
  const team = teamRule(listing, filters);
  const teamTest = team ? [sql`(${team.record} OR k.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${scope.accountId} AND ${team.campaigns}))`] : [];
  const match = and([listingFlags(listing), ...filterFlags(filters), ...teamTest]);
  const candidate = and([listingFlags(listing, true), ...filterFlags(filters), ...teamTest]);
  // Per campaign only where the filters name the campaigns (a merge takes few); a tag's may be many.
  const perCampaign = Boolean(filters.campaignId?.length || filters.subSequenceId?.length);
  return sql`SELECT ${perCampaign ? sql`k.campaign_id` : sql`NULL`} AS value, sum(k.n) FILTER (WHERE ${range}) AS range,
      sum(k.n) FILTER (WHERE ${match}) AS matches, sum(k.n) FILTER (WHERE ${candidate}) AS candidates
    FROM inbox_campaign_counts k WHERE k.campaign_id IN (${campaigns})${perCampaign ? sql` GROUP BY k.campaign_id` : sql``}`;
}

/** The same per category the filter admits, of the account (outside campaign sets and team rules), 0 for none. */
export function categoryTotals(scope: Scope, listing: Listing, filters: InboxFilters, range: SQL): SQL {
  const match = and([listingFlags(listing), ...filterFlags(filters)]);
  const candidate = and([listingFlags(listing, true), ...filterFlags(filters)]);
  return sql`SELECT k.category_id AS value, sum(k.n) FILTER (WHERE ${range}) AS range, sum(k.n) FILTER (WHERE ${match}) AS matches,
      sum(k.n) FILTER (WHERE ${candidate}) AS candidates
    FROM inbox_counts k WHERE k.account_id = ${scope.accountId} AND ${and(categoryFlags(filters.leadCategories))} GROUP BY k.category_id`;
}

/** A range of an index, as the counters see it: the records whose flags have `mask` set as in `value`. */
export interface Range {
  mask: number;
  value: number;
}

/** The counter test for the records of an index range. */
export function rangeTest(range: Range): SQL {
  return flagsAre(range.mask, range.value);
}
