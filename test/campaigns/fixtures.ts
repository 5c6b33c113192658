import { callJson } from "../helpers";

export async function createCampaign(apiKey: string, body: Record<string, unknown> = {}): Promise<number> {
  const { status, body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", {
    method: "POST",
    apiKey,
    body,
  });
  if (status !== 200) throw new Error(`campaign creation failed with ${status}: ${JSON.stringify(created)}`);
  return created.id;
}

/** Adds leads by email and answers each (lower-cased) email's email_lead_map_id. */
export async function addLeads(apiKey: string, campaignId: number, emails: string[]): Promise<Record<string, number>> {
  const { status, body } = await callJson<{ emailToLeadIdMap: Record<string, number> }>(
    `/api/v1/campaigns/${campaignId}/leads`,
    { method: "POST", apiKey, body: { lead_list: emails.map((email) => ({ email })), settings: { return_lead_ids: true } } },
  );
  if (status !== 200) throw new Error(`adding leads failed with ${status}: ${JSON.stringify(body)}`);
  return body.emailToLeadIdMap;
}

export async function ingest(apiKey: string, campaignId: number, events: Record<string, unknown>[]) {
  return callJson<{ ok: boolean; accepted: number; duplicates: number }>(`/api/v1/campaigns/${campaignId}/events`, {
    method: "POST",
    apiKey,
    body: { events },
  });
}

export async function ingestOk(apiKey: string, campaignId: number, events: Record<string, unknown>[]) {
  const result = await ingest(apiKey, campaignId, events);
  if (result.status !== 200) throw new Error(`ingestion failed with ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}

export async function analytics(apiKey: string, campaignId: number, query: Record<string, string>) {
  const search = new URLSearchParams(query);
  return callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaignId}/analytics-by-date?${search}`, { apiKey });
}
