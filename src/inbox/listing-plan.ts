import { FLAG, type Range } from "./counts";
import type { InboxFilters, Listing, Sort } from "./query";

/**
 * How a listing reads its page (pure): which index range it walks in its own order, or which few
 * ordered ranges it merges, or the search's index; chosen from the counters' exact figures so a
 * page costs about the entries it reads, not the table (migration 0052 makes the indexes).
 */

/** An index walked in the listing's order (its account's range), and the records that range holds. */
interface Walk {
  index: string;
  range: Range;
  /** False: the index holds the listing's records but not in this order (a small view, sorted whole). */
  ordered: boolean;
}

const { replied, archived, snoozed, important, sent, reminder, scheduled } = FLAG;

const conversations = (archive: boolean): Range => ({ mask: replied | archived, value: replied | (archive ? archived : 0) });

/** The walk of each listing and sort. The sent view by reply time is two walks (see sentByReply). */
export function walkOf(listing: Listing, sort: Sort): Walk {
  const byReply = sort !== "SENT_TIME_DESC";
  switch (listing) {
    case "snoozed":
      return {
        index: byReply ? "campaign_leads_inbox_snoozed_idx" : "campaign_leads_inbox_snoozed_sent_idx",
        range: { mask: replied | archived | snoozed, value: replied | snoozed },
        ordered: true,
      };
    case "important":
      return { index: byReply ? "campaign_leads_important_idx" : "campaign_leads_important_sent_idx", range: { mask: important | archived, value: important }, ordered: true };
    case "scheduled":
      return { index: "campaign_leads_scheduled_idx", range: { mask: scheduled, value: scheduled }, ordered: sort.startsWith("SCHEDULED") };
    case "reminders":
      return { index: "campaign_leads_reminder_idx", range: { mask: reminder, value: reminder }, ordered: sort.startsWith("REMINDER") };
    case "sent":
      return { index: "campaign_leads_sent_view_idx", range: { mask: sent, value: sent }, ordered: true };
    default:
      return {
        index: byReply ? "campaign_leads_inbox_reply_idx" : "campaign_leads_inbox_sent_idx",
        range: conversations(listing === "archived"),
        ordered: true,
      };
  }
}

/** The sent view by reply time walks its replied records in reply order, then the others by send time. */
export const SENT_BY_REPLY = { replied: "campaign_leads_sent_replied_idx", unreplied: "campaign_leads_sent_view_idx" } as const;

/** A column whose values each have an ordered range of an index, so a few of them merge in order. */
type MergeColumn = "campaign_id" | "category_id" | "email_account_id";

interface Merge {
  column: MergeColumn;
  index: string;
  range: Range;
}

/** The merges a listing and sort can use: conversations by reply time, and the sent view by send time. */
export function mergesOf(listing: Listing, sort: Sort): Merge[] {
  if (listing === "sent") {
    return sort === "SENT_TIME_DESC" ? [{ column: "campaign_id", index: "campaign_leads_sent_campaign_idx", range: { mask: sent, value: sent } }] : [];
  }
  if (!isConversationListing(listing) || sort !== "REPLY_TIME_DESC") return [];
  const range = conversations(listing === "archived");
  return [
    { column: "campaign_id", index: "campaign_leads_inbox_campaign_idx", range },
    { column: "category_id", index: "campaign_leads_inbox_category_idx", range },
    { column: "email_account_id", index: "campaign_leads_inbox_mailbox_idx", range },
  ];
}

function isConversationListing(listing: Listing): boolean {
  return listing === "inbox" || listing === "archived" || listing === "snoozed" || listing === "unread" || listing === "assigned" || listing === "views";
}

/**
 * Per value of a merge column, the counters' figures: the records of its range, how many match,
 * and how many may (a snooze over before the cron cleared it puts a record back in the listing).
 */
export interface ValueTotals {
  value: number | null;
  range: number;
  matches: number;
  candidates: number;
}

/** What the counters (and the search's index) told before the page is read. */
export interface Figures {
  /** Records in the walk's range (the account's, whatever the caller's client). */
  walkRange: number;
  /** Matching records: exact when `exact`, else an upper bound (filters the counters do not hold left out). */
  matches: number;
  exact: boolean;
  /** What the counters alone say matches (before a search's hits bound it). */
  counted: number;
  /** Per campaign of the campaign set, when the filters name few campaigns. */
  campaigns?: ValueTotals[];
  /** Per admitted category, when the category filter admits few. */
  categories?: ValueTotals[];
  /** The account's leads and replies the search's index finds (up to SEARCH_HITS_CAP + 1). */
  searchHits?: number;
  /** A needle of one or two characters: how many of the walk's first SHORT_NEEDLE_PROBE records it matches. */
  probe?: { scanned: number; found: number };
}

/**
 * A needle of one or two characters is first tried on this many records of the walk: matching
 * often, it is tested record by record; rarely, it is read through the trigrams it begins.
 */
export const SHORT_NEEDLE_PROBE = 300;

/** Above this many index hits a search reads its page by walking, testing each record. */
export const SEARCH_HITS_CAP = 20_000;
/** Merges of more values than this cost more to write and plan than they save. */
const MERGE_MAX_VALUES = 20;

/** Relative cost of one step of each way to read: a covering index entry, a row fetched, a search hit. */
const COST = { entry: 1, row: 5, hit: 10, test: 100, streamed: 30, term: 1 };
/** The walks whose index holds every column the conditions test (others fetch each row). */
const COVERING = new Set(["campaign_leads_inbox_reply_idx", "campaign_leads_inbox_sent_idx"]);

export type Plan =
  | { kind: "empty" }
  | { kind: "walk"; walk: Walk }
  | { kind: "sentByReply" }
  | { kind: "merge"; merge: Merge; values: (number | null)[] }
  | { kind: "search" };

export interface PlanInput {
  listing: Listing;
  sort: Sort;
  filters: InboxFilters;
  offset: number;
  limit: number;
}

/** What the counters cannot see of a mailbox filter: assume it keeps a tenth of what they count. */
const MAILBOX_SHARE = 0.1;

/** Entries a walk reads for the page: the matches before it and in it, spread over the range. */
function walkCost(walk: Walk, figures: Figures, wanted: number, filters: InboxFilters): number {
  if (!walk.ordered) return figures.walkRange * COST.row;
  const probe = figures.probe;
  const needleShare = probe ? Math.max(probe.found, 0.5) / Math.max(probe.scanned, 1) : 1;
  const matches = figures.matches * (!figures.exact && filters.emailAccountId?.length ? MAILBOX_SHARE : 1) * needleShare;
  const perMatch = figures.walkRange / Math.max(matches, 1);
  return Math.min(figures.walkRange, wanted * perMatch) * (COVERING.has(walk.index) ? COST.entry : COST.row);
}

/** Entries a merge reads: in each value's ordered range, the page's worth of its matches. */
function mergeCost(values: ValueTotals[], wanted: number): number {
  return values.reduce((sum, v) => sum + Math.min(v.range, (wanted * v.range) / Math.max(v.matches, 1)), 0) * COST.entry;
}

/**
 * Every way this listing can read its page, with its estimated cost. `wanted` is how far the page
 * reaches (offset + limit, or the exact total when less); the mailbox merge has no counters, so its
 * ranges are taken to be as dense in matches as the account's.
 */
export function planOptions(input: PlanInput, figures: Figures): { plan: Plan; cost: number }[] {
  const { listing, sort, filters, offset, limit } = input;
  if (figures.exact && figures.matches <= offset) return [{ plan: { kind: "empty" }, cost: 0 }];
  const wanted = offset + (figures.exact ? Math.min(limit, figures.matches - offset) : limit);
  const walk = walkOf(listing, sort);
  // Outside the search's own plan, each record read is tested against the needle, and the index's
  // hits are read once more to count the matches.
  const tested = filters.search ? COST.test : 1;
  const counting = figures.searchHits !== undefined ? Math.min(figures.searchHits, SEARCH_HITS_CAP) * COST.hit : 0;
  const options: { plan: Plan; cost: number }[] = [];
  if (listing === "sent" && sort === "REPLY_TIME_DESC") {
    options.push({ plan: { kind: "sentByReply" }, cost: walkCost({ ...walk, ordered: true }, figures, wanted, filters) * 2 * tested + counting });
  } else {
    options.push({ plan: { kind: "walk", walk }, cost: walkCost(walk, figures, wanted, filters) * tested + counting });
  }
  if (figures.searchHits !== undefined && figures.searchHits <= SEARCH_HITS_CAP) {
    options.push({ plan: { kind: "search" }, cost: figures.searchHits * COST.hit });
  }
  const probe = figures.probe;
  if (probe && probe.scanned === SHORT_NEEDLE_PROBE && probe.found < wanted) {
    // Rare: the walk would test many records for the page; the index reads about the needle's hits.
    options.push({ plan: { kind: "search" }, cost: ((probe.found * figures.walkRange) / probe.scanned) * COST.hit });
  }
  for (const merge of mergesOf(listing, sort)) {
    const totals = merge.column === "campaign_id" ? figures.campaigns : merge.column === "category_id" ? figures.categories : undefined;
    if (totals) {
      const values = totals.filter((v) => v.candidates > 0);
      if (values.length <= MERGE_MAX_VALUES) {
        options.push({ plan: { kind: "merge", merge, values: values.map((v) => v.value) }, cost: mergeCost(values, wanted) * tested + counting });
      }
    } else if (merge.column === "email_account_id" && filters.emailAccountId?.length && filters.emailAccountId.length <= MERGE_MAX_VALUES) {
      const perMatch = Math.min(figures.walkRange / Math.max(figures.matches, 1), figures.walkRange);
      const cost = filters.emailAccountId.length * wanted * perMatch * COST.entry * tested + counting;
      options.push({ plan: { kind: "merge", merge, values: filters.emailAccountId }, cost });
    }
  }
  return options;
}

/** The cheapest way to read the page. */
export function choosePlan(input: PlanInput, figures: Figures): Plan {
  return planOptions(input, figures).reduce((best, option) => (option.cost < best.cost ? option : best)).plan;
}

/**
 * Whether a search the index can answer counts its matches over its hits (in index order, up to
 * `cap`) rather than by walking the listing and testing each record: the hits win unless the
 * other filters keep so few records that the hits would mostly be read for nothing, or (a needle of
 * one or two characters) the needle is so common that listing the trigrams it begins costs more.
 */
export function countOverHits(figures: Figures, cap: number, short: boolean): boolean {
  const range = Math.max(figures.walkRange, 1);
  const kept = Math.max(figures.counted, 1);
  // The share of records the needle finds: from the probe, else from the hits (a floor when too many to count).
  const share = figures.probe
    ? Math.max(figures.probe.found, 1) / Math.max(figures.probe.scanned, 1)
    : Math.min(1, Math.max(figures.searchHits ?? 0, 1) / range);
  // A lead and a reply per record, about.
  const hits = short ? share * range * 2 : figures.searchHits !== undefined && figures.searchHits <= SEARCH_HITS_CAP ? figures.searchHits : range * 2;
  const overHits = Math.min(hits, (cap * range) / kept) * COST.streamed + (short ? hits * COST.term : 0);
  const byWalk = Math.min(range, (cap * range) / (share * kept)) * COST.entry + Math.min(kept, cap / share) * COST.test;
  return overHits <= byWalk;
}
