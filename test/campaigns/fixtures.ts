import { expect, vi } from "vitest";
import { mailboxConnected, mailboxRow, setMailbox } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";

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

/**
 * An ACTIVE campaign of one step and one lead whose only mailbox has run its START pass and sleeps: it
 * starts years from now, and the wake that pass armed is forgotten. `woken` waits until something
 * wakes the mailbox's sender again.
 */
export async function sleepingActiveCampaign(leadEmail: string) {
  const account = await provisionAccount();
  const apiKey = account.apiKey;
  const mailbox = await createMailbox(apiKey);
  await mailboxConnected(mailbox.id);
  const campaign = await createCampaign(apiKey);
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey, body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] } });
  await callJson(`/api/v1/campaigns/${campaign}/schedule`, {
    method: "POST",
    apiKey,
    body: { timezone: "UTC", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", schedule_start_time: "2031-03-03T10:00:00Z" },
  });
  await addLeads(apiKey, campaign, [leadEmail]);
  await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } });
  const started = await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey, body: { status: "START" } });
  if (started.status !== 200) throw new Error(`START failed with ${started.status}`);
  // A loaded machine may take a while to run the object's pass: wait for it rather than for a fixed time.
  const woken = () => vi.waitFor(async () => expect((await mailboxRow(mailbox.id)).engineWakeAt).not.toBeNull(), { timeout: 15_000, interval: 20 });
  await woken();
  await setMailbox(mailbox.id, { engineWakeAt: null });
  return { apiKey, campaign, woken };
}

/** A route's answer with its body as a loose object, for the campaign tests that read many shapes. */
export type Body = Record<string, unknown> & { error?: string };

/** Calls a route as `apiKey` and answers its status and body. */
export async function send(apiKey: string, path: string, method: string, body?: unknown) {
  const { status, body: answer } = await callJson<Body>(path, { method, apiKey, body });
  return { status, body: answer };
}
export const post = (apiKey: string, path: string, body?: unknown) => send(apiKey, path, "POST", body);
export const del = (apiKey: string, path: string, body?: unknown) => send(apiKey, path, "DELETE", body);
export const get = (apiKey: string, path: string) => send(apiKey, path, "GET");
