import { eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson } from "../helpers";

export interface ListBody {
  ok: boolean;
  data: { id: number; name: string; lead_count: number; client_id: number | null; tags: { id: number; name: string; color: string }[] };
}

export async function createList(apiKey: string, body: Record<string, unknown> = { listName: "Prospects" }): Promise<number> {
  const { status, body: created } = await callJson<{ data: { id: number } }>("/api/v1/lead-list/", { method: "POST", apiKey, body });
  if (status !== 200) throw new Error(`list creation failed with ${status}: ${JSON.stringify(created)}`);
  return created.data.id;
}

export async function importInto(apiKey: string, listId: number, leads: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return callJson<{ ok: boolean; data: { total_leads: number; imported: number; duplicates: number; blocked: number; invalid: number } }>(
    `/api/v1/lead-list/${listId}/import`,
    { method: "POST", apiKey, body: { leadList: leads, ...extra } },
  );
}

export async function listEmails(apiKey: string, listId: number): Promise<string[]> {
  const { status, body } = await callJson<{ data: { email: string }[] }>(`/api/v1/lead-list/${listId}/leads?limit=1000`, { apiKey });
  if (status !== 200) throw new Error(`list members failed with ${status}`);
  return body.data.map((lead) => lead.email).sort();
}

/** A list's members by address: email → lead id. */
export async function leadIdsOf(listId: number): Promise<Record<string, number>> {
  const { leadListMembers, leads } = schema;
  const rows = await testDb()
    .select({ email: leads.email, id: leads.id })
    .from(leadListMembers)
    .innerJoin(leads, eq(leads.id, leadListMembers.leadId))
    .where(eq(leadListMembers.listId, listId))
    .all();
  return Object.fromEntries(rows.map((row) => [row.email, row.id]));
}

/** A block-list entry, written as the block-list routes (section 12) store one. */
export async function blockListEntry(accountId: number, value: string, clientId: number | null = null) {
  await testDb().insert(schema.blockList).values({ accountId, clientId, emailOrDomain: value });
}

export async function campaignEmails(apiKey: string, campaignId: number): Promise<string[]> {
  const { body } = await callJson<{ data: { lead: { email: string } }[] }>(`/api/v1/campaigns/${campaignId}/leads?limit=100`, { apiKey });
  return body.data.map((row) => row.lead.email).sort();
}
