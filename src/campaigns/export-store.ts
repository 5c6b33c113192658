import { sql } from "drizzle-orm";
import { statement } from "../platform/sql";

/** One export row, in the column order of the CSV (contract section 12). */
export interface ExportRow {
  id: number;
  campaign_lead_map_id: number;
  status: string;
  category: string | null;
  is_interested: number;
  created_at: number;
  first_name: string | null;
  last_name: string | null;
  email: string;
  phone_number: string | null;
  company_name: string | null;
  website: string | null;
  location: string | null;
  custom_fields: string | null;
  linkedin_profile: string | null;
  company_url: string | null;
  is_unsubscribed: number;
  unsubscribed_client_id_map: string | null;
  last_email_sequence_sent: number | null;
  open_count: number;
  click_count: number;
  reply_count: number;
}

/** The built-in categories of positive sentiment (contract section 13): Interested, Meeting Request, Information Request. */
const INTERESTED_CATEGORIES = [1, 2, 5];

/**
 * The campaign's records after `afterId`, by id, at most `limit`, with their leads and counters.
 * Keyset paging on the primary key: each page is one range read, however deep the export is. The
 * counters read the record's own events (`events_record_time_idx`); machine opens and clicks and
 * ignored replies are left out, as in analytics.
 */
export async function exportPage(d1: D1Database, campaignId: number, afterId: number, limit: number): Promise<ExportRow[]> {
  const counted = (type: string, extra = sql``) =>
    sql`(SELECT count(*) FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = ${type} ${extra})`;
  const rows = await statement(
    d1,
    sql`SELECT l.id, cl.id AS campaign_lead_map_id, cl.state AS status, c.name AS category,
               coalesce(cl.category_id IN (SELECT value FROM json_each(${JSON.stringify(INTERESTED_CATEGORIES)})), 0) AS is_interested,
               cl.created_at, l.first_name, l.last_name, l.email, l.phone_number, l.company_name, l.website, l.location,
               l.custom_fields, l.linkedin_profile, l.company_url,
               l.is_unsubscribed,
               -- As the lead routes show it: a lead belongs to one client scope, so its unsubscription is that client's.
               CASE WHEN l.is_unsubscribed = 1 AND l.client_id IS NOT NULL THEN json_object(CAST(l.client_id AS TEXT), json('true')) END
                 AS unsubscribed_client_id_map,
               (SELECT max(e.sequence_number) FROM events e WHERE e.campaign_lead_id = cl.id AND e.type = 'SENT') AS last_email_sequence_sent,
               ${counted("OPEN", sql`AND e.is_machine = 0`)} AS open_count,
               ${counted("CLICK", sql`AND e.is_machine = 0`)} AS click_count,
               ${counted("REPLY", sql`AND e.ignored = 0`)} AS reply_count
        FROM campaign_leads cl
        JOIN leads l ON l.id = cl.lead_id
        LEFT JOIN lead_categories c ON c.id = cl.category_id
        WHERE cl.campaign_id = ${campaignId} AND cl.id > ${afterId}
        ORDER BY cl.id
        LIMIT ${limit}`,
  ).all<ExportRow>();
  return rows.results;
}
