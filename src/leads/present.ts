import { z } from "@hono/zod-openapi";
import { RECORD_STATES } from "../db/schema";
import type { LeadRow } from "../platform/access";
import { iso } from "../platform/time";
import { leadOutput, providerOutputFields } from "./lead-input";
import type { CampaignDataRow } from "./lookup-store";

/** CONTRACT section 12's Lead (the vendor CLI's LeadSchema). */
const LeadOut = z
  .object({
    id: z.number().int(),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    phone_number: z.string().nullable(),
    company_name: z.string().nullable(),
    website: z.string().nullable(),
    location: z.string().nullable(),
    linkedin_profile: z.string().nullable(),
    company_url: z.string().nullable(),
    custom_fields: z.record(z.string(), z.unknown()).nullable(),
    timezone: z.string().nullable().openapi({ description: "The lead's IANA time zone, or null (CONTRACT 23.1)" }),
    ...providerOutputFields,
    is_unsubscribed: z.boolean(),
    unsubscribed_client_id_map: z.record(z.string(), z.boolean()),
    created_at: z.string(),
  })
  .openapi("LeadDetails");

const LeadCampaignData = z
  .object({
    campaign_lead_map_id: z.number().int(),
    campaign_id: z.number().int(),
    campaign_name: z.string(),
    campaign_status: z.string(),
    client_id: z.number().int().nullable(),
    client_email: z.string().nullable(),
    lead_category_id: z.number().int().nullable(),
    status: z.enum(RECORD_STATES),
  })
  .openapi("LeadCampaignData");

export const LeadWithCampaigns = LeadOut.extend({ lead_campaign_data: z.array(LeadCampaignData) }).openapi("LeadWithCampaigns");

function presentLead(lead: LeadRow) {
  return {
    ...leadOutput(lead),
    is_unsubscribed: lead.isUnsubscribed,
    // A lead belongs to one client scope, so its unsubscription is that client's.
    unsubscribed_client_id_map: lead.isUnsubscribed && lead.clientId !== null ? { [String(lead.clientId)]: true } : {},
    created_at: iso(lead.createdAt),
  };
}

function presentCampaignData(row: CampaignDataRow) {
  return {
    campaign_lead_map_id: row.recordId,
    campaign_id: row.campaignId,
    campaign_name: row.campaignName,
    campaign_status: row.campaignStatus,
    client_id: row.clientId,
    client_email: row.clientEmail,
    lead_category_id: row.categoryId,
    status: row.state,
  };
}

/** A lead with its records (LeadByEmailSchema). */
export function presentLeadWithCampaigns(lead: LeadRow, data: CampaignDataRow[]) {
  return { ...presentLead(lead), lead_campaign_data: data.filter((row) => row.leadId === lead.id).map(presentCampaignData) };
}
