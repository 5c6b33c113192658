import { leadByEmail, setLead, setRecord, tagByName } from "../db";
import { callJson, createClient, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";

export const at = (day: number, hour = 10) => new Date(Date.UTC(2026, 2, day, hour)).toISOString();


export type Listing =
  | "inbox-replies"
  | "archived"
  | "snoozed"
  | "unread-replies"
  | "important"
  | "scheduled"
  | "reminders"
  | "sent"
  | "assigned-me"
  | "views";

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

/**
 * Two campaigns (B tagged "vip" and owned by a client). Replies (and so conversations):
 * ann (A; sent 1st, opened, clicked, replied 5th, category 1, mailbox m1)
 * bob (A; sent 2nd, replied 4th "pricing please", uncategorised, mailbox m2)
 * cat (A; sent 1st, bounced, replied 3rd, category 6)
 * dan (B; sent 3rd, unsubscribed, replied 6th, category 3, mailbox m1)
 * eve (B; replied 2nd without any send)
 * and zed (A) who was only sent to: not a conversation.
 */
export async function world() {
  const account = await provisionAccount();
  const k = account.apiKey;
  const clientId = await createClient(k);
  const a = await createCampaign(k, { name: "Alpha" });
  const b = await createCampaign(k, { name: "Beta", client_id: clientId });
  await callJson(`/api/v1/campaigns/${b}/tags`, { method: "POST", apiKey: k, body: { tags: ["vip"] } });
  const tag = await tagByName(account.id, "vip");
  const ids = {
    ...(await addLeads(k, a, ["ann@in.example", "bob@in.example", "cat@in.example", "zed@in.example"])),
    ...(await addLeads(k, b, ["dan@in.example", "eve@in.example"])),
  };
  await callJson(`/api/v1/campaigns/${a}/leads`, {
    method: "POST",
    apiKey: k,
    body: { lead_list: [{ email: "ann@in.example", first_name: "Annabel", last_name: "Smythe" }] },
  });
  // The upload above keeps an existing lead as it is, so the names are set here, folded copy included.
  await setLead((await leadByEmail(account.id, "ann@in.example")).id, { firstName: "Annabel", lastName: "Smythe", searchFolded: "ann@in.example\nannabel\nsmythe" });
  const m1 = (await createMailbox(k)).id;
  const m2 = (await createMailbox(k)).id;
  const reply = (email: string, day: number, extra: Record<string, unknown> = {}) => ({
    type: "REPLY",
    lead_email: email,
    occurred_at: at(day),
    from_email: email,
    ...extra,
  });
  await ingestOk(k, a, [
    { type: "SENT", lead_email: "ann@in.example", occurred_at: at(1), email_account_id: m1 },
    { type: "OPEN", lead_email: "ann@in.example", occurred_at: at(1, 12) },
    { type: "CLICK", lead_email: "ann@in.example", occurred_at: at(1, 13) },
    reply("ann@in.example", 5, { category_id: 1, body: "Sounds good" }),
    { type: "SENT", lead_email: "bob@in.example", occurred_at: at(2), email_account_id: m2, message_id: "<step1-bob@in.example>" },
    reply("bob@in.example", 4, { body: "Pricing please, and the onboarding timeline for a team of forty people" }),
    { type: "SENT", lead_email: "cat@in.example", occurred_at: at(1) },
    { type: "BOUNCE", lead_email: "cat@in.example", occurred_at: at(1, 11) },
    reply("cat@in.example", 3, { category_id: 6, is_ooo: true }),
    { type: "SENT", lead_email: "zed@in.example", occurred_at: at(1) },
  ]);
  await ingestOk(k, b, [
    { type: "SENT", lead_email: "dan@in.example", occurred_at: at(3), email_account_id: m1 },
    { type: "UNSUBSCRIBE", lead_email: "dan@in.example", occurred_at: at(3, 12) },
    reply("dan@in.example", 6, { category_id: 3 }),
    reply("eve@in.example", 2),
  ]);
  await setRecord([ids["ann@in.example"]!, ids["dan@in.example"]!], { teamMemberId: 7 });
  return { account, k, a, b, clientId, tagId: tag.id, ids, m1, m2 };
}

