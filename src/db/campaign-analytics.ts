import { sql } from "drizzle-orm";
import { OUT_OF_OFFICE_CATEGORY_ID } from "./schema";
import { rawBatch } from "./raw-batch";

export interface CampaignCounts {
  sent_count: number;
  unique_sent_count: number;
  open_count: number;
  unique_open_count: number;
  click_count: number;
  unique_click_count: number;
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
 * One pass over the campaign's events in [start, end), read from the covering index
 * events_campaign_time_idx alone; only replies look up their record's current category.
 * Lifetime record counts come from campaign_leads_campaign_state_idx.
 */
export async function campaignCounts(d1: D1Database, campaignId: number, start: number, end: number): Promise<CampaignCounts> {
  const [window, records] = await rawBatch(d1, [
    sql`
      SELECT
        coalesce(sum(e.type = 'SENT'), 0) AS sent_count,
        count(DISTINCT CASE WHEN e.type = 'SENT' AND e.sequence_number = 1 THEN e.campaign_lead_id END) AS unique_sent_count,
        coalesce(sum(e.type = 'OPEN'), 0) AS open_count,
        count(DISTINCT CASE WHEN e.type = 'OPEN' THEN e.campaign_lead_id END) AS unique_open_count,
        coalesce(sum(e.type = 'CLICK'), 0) AS click_count,
        count(DISTINCT CASE WHEN e.type = 'CLICK' THEN e.campaign_lead_id END) AS unique_click_count,
        coalesce(sum(e.type = 'REPLY' AND e.ignored = 0), 0) AS reply_count,
        coalesce(sum(e.type = 'REPLY'), 0) AS total_reply_count,
        coalesce(sum(CASE WHEN e.type = 'REPLY' THEN
          (SELECT coalesce(cl.category_id, 0) <> ${OUT_OF_OFFICE_CATEGORY_ID} FROM campaign_leads cl WHERE cl.id = e.campaign_lead_id)
        END), 0) AS non_ooo_reply_count,
        coalesce(sum(e.type = 'BLOCK'), 0) AS block_count,
        coalesce(sum(e.type = 'BOUNCE'), 0) AS bounce_count,
        coalesce(sum(e.type = 'UNSUBSCRIBE'), 0) AS unsubscribed_count
      FROM events e INDEXED BY events_campaign_time_idx
      WHERE e.campaign_id = ${campaignId} AND e.occurred_at >= ${start} AND e.occurred_at < ${end}`,
    sql`
      SELECT coalesce(sum(state <> 'STOPPED'), 0) AS total_count, coalesce(sum(state = 'DRAFTED'), 0) AS drafted_count
      FROM campaign_leads WHERE campaign_id = ${campaignId}`,
  ]);
  return { ...window![0], ...records![0] } as unknown as CampaignCounts;
}
