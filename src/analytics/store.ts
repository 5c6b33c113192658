import { sql, type SQL } from "drizzle-orm";
import { inList, rawBatch } from "../platform/sql";
import {
  distinctQuery,
  OUT_OF_OFFICE,
  readCategoryReplies,
  readDistinct,
  readTotals,
  repliesFromCategoriesQuery,
  totalsQuery,
} from "./counters";

interface CampaignCounts {
  sent_count: number;
  unique_sent_count: number;
  open_count: number;
  unique_open_count: number;
  human_open_count: number;
  unique_human_open_count: number;
  click_count: number;
  unique_click_count: number;
  human_click_count: number;
  unique_human_click_count: number;
  reply_count: number;
  total_reply_count: number;
  non_ooo_reply_count: number;
  block_count: number;
  bounce_count: number;
  unsubscribed_count: number;
  total_count: number;
  drafted_count: number;
}

/**
 * The open and click counts are raw (every hit, as the interface defines them); the human_ ones
 * leave out hits flagged is_machine (proxy prefetches, link scanners).
 *
 * Totals come from the hour counters (plus the events of a window's partial hours), distinct
 * counts from the records' spans (src/analytics/counters.ts), out-of-office replies from the
 * records currently in that category: nothing here reads every event of the window.
 */
export async function campaignCounts(d1: D1Database, campaignId: number, start: number, end: number): Promise<CampaignCounts> {
  const window = { start, end };
  const ids = [campaignId];
  const [totalRows, distinctRows, oooRows, records] = await rawBatch(d1, [
    totalsQuery(ids, window),
    distinctQuery(ids, window, ["SENT1", "OPEN", "OPEN_HUMAN", "CLICK", "CLICK_HUMAN"]),
    repliesFromCategoriesQuery(ids, window, OUT_OF_OFFICE),
    recordCountsQuery(ids),
  ]);
  const totals = readTotals(totalRows!, ids).get(campaignId)!;
  const distinct = readDistinct(distinctRows!, ids).get(campaignId)!;
  const ooo = readCategoryReplies(oooRows!).get(campaignId)?.n ?? 0;
  return {
    sent_count: totals.SENT.total,
    unique_sent_count: distinct.SENT1,
    open_count: totals.OPEN.total,
    unique_open_count: distinct.OPEN,
    human_open_count: totals.OPEN.human,
    unique_human_open_count: distinct.OPEN_HUMAN,
    click_count: totals.CLICK.total,
    unique_click_count: distinct.CLICK,
    human_click_count: totals.CLICK.human,
    unique_human_click_count: distinct.CLICK_HUMAN,
    reply_count: totals.REPLY.counted,
    total_reply_count: totals.REPLY.total,
    non_ooo_reply_count: totals.REPLY.total - ooo,
    block_count: totals.BLOCK.total,
    bounce_count: totals.BOUNCE.total,
    unsubscribed_count: totals.UNSUBSCRIBE.total,
    total_count: Number(records![0]?.total_count ?? 0),
    drafted_count: Number(records![0]?.drafted_count ?? 0),
  };
}

/** Lifetime figures of campaign records: not STOPPED (`total_count`) and DRAFTED (`drafted_count`). */
function recordCountsQuery(campaignIds: number[]): SQL {
  return sql`SELECT campaign_id, coalesce(sum(state <> 'STOPPED'), 0) AS total_count, coalesce(sum(state = 'DRAFTED'), 0) AS drafted_count
    FROM campaign_leads INDEXED BY campaign_leads_campaign_state_idx WHERE campaign_id ${inList(campaignIds)} GROUP BY campaign_id`;
}
