import { sql, type SQL } from "drizzle-orm";
import { OUT_OF_OFFICE_CATEGORY_ID, type EventType } from "../db/schema";
import { rawBatch } from "../platform/sql";

export interface CampaignCounts {
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
 * Every figure is a scan of one event type's window: a contiguous range of
 * events_campaign_type_time_idx, read from the index alone, so no event outside the campaign
 * and the window is ever read. Only replies look up their record's current category.
 */
export async function campaignCounts(d1: D1Database, campaignId: number, start: number, end: number): Promise<CampaignCounts> {
  const inWindow = (type: EventType): SQL =>
    sql`e.campaign_id = ${campaignId} AND e.type = ${type} AND e.occurred_at >= ${start} AND e.occurred_at < ${end}`;
  const events = sql`events e INDEXED BY events_campaign_type_time_idx`;
  const total = (type: EventType, extra: SQL = sql``) => sql`(SELECT count(*) FROM ${events} WHERE ${inWindow(type)} ${extra})`;
  const human = sql`AND e.is_machine = 0`;
  const distinctLeads = (type: EventType, extra: SQL = sql``) =>
    sql`(SELECT count(DISTINCT e.campaign_lead_id) FROM ${events} WHERE ${inWindow(type)} ${extra})`;

  const [window, replies, records] = await rawBatch(d1, [
    sql`SELECT
          ${total("SENT")} AS sent_count,
          ${distinctLeads("SENT", sql`AND e.sequence_number = 1`)} AS unique_sent_count,
          ${total("OPEN")} AS open_count,
          ${distinctLeads("OPEN")} AS unique_open_count,
          ${total("OPEN", human)} AS human_open_count,
          ${distinctLeads("OPEN", human)} AS unique_human_open_count,
          ${total("CLICK")} AS click_count,
          ${distinctLeads("CLICK")} AS unique_click_count,
          ${total("CLICK", human)} AS human_click_count,
          ${distinctLeads("CLICK", human)} AS unique_human_click_count,
          ${total("BLOCK")} AS block_count,
          ${total("BOUNCE")} AS bounce_count,
          ${total("UNSUBSCRIBE")} AS unsubscribed_count`,
    sql`SELECT
          count(*) AS total_reply_count,
          coalesce(sum(e.ignored = 0), 0) AS reply_count,
          coalesce(sum((SELECT coalesce(cl.category_id, 0) <> ${OUT_OF_OFFICE_CATEGORY_ID}
                        FROM campaign_leads cl WHERE cl.id = e.campaign_lead_id)), 0) AS non_ooo_reply_count
        FROM ${events} WHERE ${inWindow("REPLY")}`,
    sql`SELECT coalesce(sum(state <> 'STOPPED'), 0) AS total_count, coalesce(sum(state = 'DRAFTED'), 0) AS drafted_count
        FROM campaign_leads WHERE campaign_id = ${campaignId}`,
  ]);
  return { ...window![0], ...replies![0], ...records![0] } as unknown as CampaignCounts;
}
