import { sql, type SQL } from "drizzle-orm";

/**
 * Whether a lead gets nothing more from the account: it unsubscribed (the link, a reply, a sender's
 * report, or `POST /leads/{id}/unsubscribe`: `leads.is_unsubscribed`) or one of its emails hard-bounced.
 * An operator's per-campaign unsubscribe only stops that campaign's record. The one rule the engine's
 * claims and the lead-list screens share.
 */
export function optedOut(leadId: SQL): SQL {
  return sql`(EXISTS (SELECT 1 FROM leads WHERE id = ${leadId} AND is_unsubscribed = 1)
    OR EXISTS (SELECT 1 FROM campaign_leads o WHERE o.lead_id = ${leadId} AND o.has_bounced = 1))`;
}
