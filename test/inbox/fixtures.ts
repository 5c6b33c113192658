import { callJson } from "../helpers";

export type Listing = "inbox-replies" | "archived" | "snoozed";

export interface InboxMessage {
  campaign_lead_map_id: string;
  email_lead_map_id: number;
  lead: { id: number; email: string; first_name: string | null; last_name: string | null };
  campaign: { id: number; name: string };
  email_status: string | null;
  is_snoozed: boolean;
  snoozed_until: string | null;
  email_history?: { stats_id: string; type: string; ignored: boolean; email_body: string | null }[];
  [field: string]: unknown;
}

export interface InboxPage {
  messages: InboxMessage[];
  total_count: number;
  offset: number;
  limit: number;
}

export function list(apiKey: string, listing: Listing, body: Record<string, unknown> = {}, history = false) {
  const query = history ? "?fetch_message_history=true" : "";
  return callJson<InboxPage>(`/api/v1/master-inbox/${listing}${query}`, { method: "POST", apiKey, body });
}

/** Emails of a listing's messages, in order. */
export async function emails(apiKey: string, listing: Listing, body: Record<string, unknown> = {}) {
  const { status, body: page } = await list(apiKey, listing, body);
  if (status !== 200) throw new Error(`listing failed with ${status}: ${JSON.stringify(page)}`);
  return page.messages.map((m) => m.lead.email);
}

export function act(apiKey: string, path: string, body: Record<string, unknown>, method = "POST") {
  return callJson(`/api/v1/master-inbox/${path}`, { method, apiKey, body });
}
