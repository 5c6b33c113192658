import { describe, expect, it } from "vitest";
import { eq, getTableName, type SQL } from "drizzle-orm";
import { schema, subsequencesOf, testDb } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "./fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { createWebhook } from "../webhooks/fixtures";

const SEQUENCE = [
  { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hello", email_body: "<p>Hi</p>" },
  {
    seq_number: 2,
    seq_delay_details: { delay_in_days: 3 },
    subject: "",
    seq_variants: [
      { subject: "A", email_body: "Variant A", variant_label: "A", variant_distribution_percentage: 70 },
      { subject: "B", email_body: "Variant B", variant_label: "B", variant_distribution_percentage: 30 },
    ],
  },
];

const count = (table: Parameters<ReturnType<typeof testDb>["$count"]>[0], where: SQL) => testDb().$count(table, where);
const { campaignLeads, events, sequenceSteps, webhooks, webhookDeliveries, campaignEmailAccounts, campaignTags, campaigns, leads, emailAccounts } = schema;

async function setStatus(apiKey: string, campaign: number, status: string, method = "POST") {
  return callJson(`/api/v1/campaigns/${campaign}/status`, { method, apiKey, body: { status } });
}

/** A campaign with a sequence, a mailbox, a tag, a webhook, two leads and a reply. */
async function fullCampaign(apiKey: string) {
  const campaign = await createCampaign(apiKey, { name: "Launch" });
  expect((await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey, body: { sequences: SEQUENCE } })).status).toBe(200);
  const mailbox = await createMailbox(apiKey);
  expect((await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } })).status).toBe(200);
  expect((await callJson(`/api/v1/campaigns/${campaign}/tags`, { method: "POST", apiKey, body: { tags: ["q1"] } })).status).toBe(200);
  expect(
    (await callJson(`/api/v1/campaigns/${campaign}/schedule`, { method: "POST", apiKey, body: { timezone: "Europe/Paris", days_of_the_week: [1, 2] } })).status,
  ).toBe(200);
  const webhook = await createWebhook(apiKey, campaign);
  const records = await addLeads(apiKey, campaign, ["ann@lead.example", "bob@lead.example"]);
  await ingestOk(apiKey, campaign, [
    { type: "SENT", email_lead_map_id: records["ann@lead.example"], occurred_at: "2026-01-05T09:00:00Z" },
    { type: "REPLY", email_lead_map_id: records["ann@lead.example"], occurred_at: "2026-01-05T10:00:00Z", from_email: "ann@lead.example", body: "Yes" },
  ]);
  return { campaign, mailbox, webhook, records };
}

describe("DELETE /campaigns/{id}", () => {
  it("removes the campaign with its records, events, sequence, webhooks and mailbox links; the leads stay", async () => {
    const account = await provisionAccount();
    const { campaign, mailbox, webhook } = await fullCampaign(account.apiKey);
    expect(await count(webhookDeliveries, eq(webhookDeliveries.webhookId, webhook.id))).toBeGreaterThan(0);
    expect(await count(events, eq(events.campaignId, campaign))).toBe(2);
    const { status, body } = await callJson(`/api/v1/campaigns/${campaign}`, { method: "DELETE", apiKey: account.apiKey });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, success: true, message: "Campaign deleted successfully" });

    expect(await callJson(`/api/v1/campaigns/${campaign}`, { apiKey: account.apiKey })).toMatchObject({ status: 404, body: { error: "Campaign not found" } });
    for (const table of [campaignLeads, events, sequenceSteps, webhooks, campaignEmailAccounts, campaignTags]) {
      expect(await count(table, eq(table.campaignId, campaign)), getTableName(table)).toBe(0);
    }
    expect(await count(webhookDeliveries, eq(webhookDeliveries.webhookId, webhook.id))).toBe(0);
    expect(await count(leads, eq(leads.accountId, account.id))).toBe(2);
    expect(await count(emailAccounts, eq(emailAccounts.id, mailbox.id))).toBe(1);
    expect((await callJson(`/api/v1/campaigns/${campaign}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(404);
  });

  it("refuses an ACTIVE campaign, and another tenant's campaign looks missing", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    expect((await setStatus(account.apiKey, campaign, "START")).status).toBe(200);
    expect(await callJson(`/api/v1/campaigns/${campaign}`, { method: "DELETE", apiKey: account.apiKey })).toMatchObject({
      status: 400,
      body: { error: "Cannot delete an active campaign. Pause or stop it first." },
    });
    expect(await callJson(`/api/v1/campaigns/${campaign}`, { method: "DELETE", apiKey: stranger.apiKey })).toMatchObject({
      status: 404,
      body: { error: "Campaign not found" },
    });
    expect((await setStatus(account.apiKey, campaign, "PAUSE")).status).toBe(200);
    expect((await callJson(`/api/v1/campaigns/${campaign}/`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
  });

  it("leaves a deleted parent's subsequences standalone", async () => {
    const account = await provisionAccount();
    const parent = await createCampaign(account.apiKey);
    const child = await callJson<{ id: number }>(`/api/v1/campaigns/${parent}/create-subsequence`, { method: "POST", apiKey: account.apiKey, body: {} });
    expect((await callJson(`/api/v1/campaigns/${parent}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    expect(await callJson(`/api/v1/campaigns/${child.body.id}`, { apiKey: account.apiKey })).toMatchObject({ status: 200, body: { parent_campaign_id: null } });
  });
});

describe("POST /campaigns/{id}/duplicate", () => {
  it("copies settings, schedule, sequence (new ids), mailboxes and tags, without leads or webhooks", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const { campaign } = await fullCampaign(account.apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { follow_up_percentage: 40, client_id: clientId } });
    // The move took off the account's tag (a campaign carries its client's): the client's own, by the same name.
    expect((await callJson(`/api/v1/campaigns/${campaign}/tags`, { method: "POST", apiKey: account.apiKey, body: { tags: ["q1"] } })).status).toBe(200);

    const { status, body } = await callJson<{ ok: boolean; id: number; newCampaignId: number }>(`/api/v1/campaigns/${campaign}/duplicate`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {},
    });
    expect(status).toBe(200);
    expect(body.newCampaignId).toBe(body.id);
    expect(body.id).not.toBe(campaign);

    const copy = (await callJson<Record<string, unknown>>(`/api/v1/campaigns/${body.id}`, { apiKey: account.apiKey })).body;
    expect(copy).toMatchObject({
      name: "Launch (copy)",
      status: "DRAFTED",
      client_id: null,
      follow_up_percentage: 40,
      scheduler_cron_value: { tz: "Europe/Paris", days: [1, 2] },
      tags: [{ id: expect.any(Number), name: "q1", tag_id: expect.any(Number), tag_name: "q1", tag_color: "#9E9E9E" }],
    });
    const original = (await callJson<Record<string, unknown>[]>(`/api/v1/campaigns/${campaign}/sequences`, { apiKey: account.apiKey })).body;
    const copied = (await callJson<Record<string, unknown>[]>(`/api/v1/campaigns/${body.id}/sequences`, { apiKey: account.apiKey })).body;
    expect(copied).toHaveLength(2);
    expect(copied.map((step) => step.id)).not.toEqual(original.map((step) => step.id));
    const strip = (steps: Record<string, unknown>[]) =>
      steps.map((step) => ({
        seq_number: step.seq_number,
        subject: step.subject,
        email_body: step.email_body,
        seq_delay_details: step.seq_delay_details,
        variants: ((step.sequence_variants as Record<string, unknown>[] | null) ?? []).map((v) => [v.variant_label, v.subject, v.email_body, v.variant_distribution_percentage]),
      }));
    expect(strip(copied)).toEqual(strip(original));
    expect(await count(campaignEmailAccounts, eq(campaignEmailAccounts.campaignId, body.id))).toBe(1);
    expect(await count(campaignLeads, eq(campaignLeads.campaignId, body.id))).toBe(0);
    expect(await count(webhooks, eq(webhooks.campaignId, body.id))).toBe(0);
  });

  it("keeps the client with duplicate_client_label, and copies subsequences with duplicate_sub_sequence", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const campaign = await createCampaign(account.apiKey, { name: "Parent", client_id: clientId });
    for (const name of ["Follow A", "Follow B"]) {
      expect((await callJson(`/api/v1/campaigns/create-subsequence`, { method: "POST", apiKey: account.apiKey, body: { parent_campaign_id: campaign, name } })).status).toBe(200);
    }
    const { body } = await callJson<{ id: number }>(`/api/v1/campaigns/${campaign}/duplicate`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { duplicate_client_label: true, duplicate_sub_sequence: true },
    });
    expect((await callJson(`/api/v1/campaigns/${body.id}`, { apiKey: account.apiKey })).body).toMatchObject({ client_id: clientId });
    const children = await subsequencesOf(body.id);
    expect(children.map((c) => ({ name: c.name, client_id: c.clientId }))).toEqual([
      { name: "Follow A", client_id: clientId },
      { name: "Follow B", client_id: clientId },
    ]);
    const plain = await callJson<{ id: number }>(`/api/v1/campaigns/${campaign}/duplicate`, { method: "POST", apiKey: account.apiKey });
    expect(plain.status).toBe(200);
    expect(await count(campaigns, eq(campaigns.parentCampaignId, plain.body.id))).toBe(0);
  });

  it("gives a client key's copy to its client", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const key = await createClientKey(account.apiKey, clientId);
    const campaign = await createCampaign(key.api_key);
    const { status, body } = await callJson<{ id: number }>(`/api/v1/campaigns/${campaign}/duplicate`, { method: "POST", apiKey: key.api_key, body: {} });
    expect(status).toBe(200);
    expect((await callJson(`/api/v1/campaigns/${body.id}`, { apiKey: key.api_key })).body).toMatchObject({ client_id: clientId });
  });
});

describe("campaign status words and PATCH", () => {
  it("answers PATCH like POST and reads PAUSE, STOP, ACTIVE, RESUME", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const read = async () => (await callJson<{ status: string }>(`/api/v1/campaigns/${campaign}`, { apiKey: account.apiKey })).body.status;
    expect((await setStatus(account.apiKey, campaign, "START", "PATCH")).status).toBe(200);
    expect(await read()).toBe("ACTIVE");
    expect((await setStatus(account.apiKey, campaign, "PAUSE", "PATCH")).status).toBe(200);
    expect(await read()).toBe("PAUSED");
    expect((await setStatus(account.apiKey, campaign, "RESUME")).status).toBe(200);
    expect(await read()).toBe("ACTIVE");
    expect((await setStatus(account.apiKey, campaign, "PAUSED")).status).toBe(200);
    expect((await setStatus(account.apiKey, campaign, "ACTIVE")).status).toBe(200);
    expect(await read()).toBe("ACTIVE");
    expect((await setStatus(account.apiKey, campaign, "STOP")).status).toBe(200);
    expect(await read()).toBe("STOPPED");
    expect((await setStatus(account.apiKey, campaign, "GO")).status).toBe(422);
  });
});

describe("POST /campaigns/{id}/team-member", () => {
  it("sets and clears team_member_id (either spelling, number or string)", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const set = (body: unknown) => callJson(`/api/v1/campaigns/${campaign}/team-member`, { method: "POST", apiKey: account.apiKey, body });
    expect(await set({ teamMemberId: 42 })).toMatchObject({ status: 200, body: { ok: true, success: true, message: "Team member updated" } });
    expect((await callJson(`/api/v1/campaigns/${campaign}`, { apiKey: account.apiKey })).body).toMatchObject({ team_member_id: 42 });
    expect((await set({ team_member_id: "7" })).status).toBe(200);
    expect((await callJson(`/api/v1/campaigns/`, { apiKey: account.apiKey })).body).toEqual([expect.objectContaining({ id: campaign, team_member_id: 7 })]);
    expect((await set({ teamMemberId: null, team_member_id: 9 })).status).toBe(200);
    expect((await callJson(`/api/v1/campaigns/${campaign}`, { apiKey: account.apiKey })).body).toMatchObject({ team_member_id: null });
    expect(await set({})).toMatchObject({ status: 422, body: { details: [{ path: "teamMemberId", message: "Required" }] } });
  });
});

describe("subsequences", () => {
  it("creates a DRAFTED campaign with parent_campaign_id, by body or by path", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const parent = await createCampaign(account.apiKey, { name: "Main", client_id: clientId });
    const byBody = await callJson<Record<string, unknown>>("/api/v1/campaigns/create-subsequence", {
      method: "POST",
      apiKey: account.apiKey,
      body: { parent_campaign_id: String(parent), subsequence_name: "Openers", condition_events: ["OPENED"] },
    });
    expect(byBody.status).toBe(200);
    expect(byBody.body).toMatchObject({ ok: true, success: true, name: "Openers", id: expect.any(Number), created_at: expect.any(String) });
    expect(byBody.body.subsequence_id).toBe(byBody.body.id);
    expect((await callJson(`/api/v1/campaigns/${byBody.body.id as number}`, { apiKey: account.apiKey })).body).toMatchObject({
      status: "DRAFTED",
      parent_campaign_id: parent,
      client_id: clientId,
    });
    const byPath = await callJson<{ id: number; name: string }>(`/api/v1/campaigns/${parent}/create-subsequence/`, { method: "POST", apiKey: account.apiKey });
    expect(byPath.status).toBe(200);
    expect(byPath.body.name).toBe("Main - Subsequence");
  });

  it("answers 404 for another tenant's parent and 422 without one", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const parent = await createCampaign(account.apiKey);
    const post = (apiKey: string, body: unknown) => callJson("/api/v1/campaigns/create-subsequence", { method: "POST", apiKey, body });
    expect(await post(stranger.apiKey, { parent_campaign_id: parent })).toMatchObject({ status: 404, body: { error: "Campaign not found" } });
    expect((await callJson(`/api/v1/campaigns/${parent}/create-subsequence`, { method: "POST", apiKey: stranger.apiKey, body: {} })).status).toBe(404);
    expect(await post(account.apiKey, {})).toMatchObject({ status: 422, body: { details: [{ path: "parent_campaign_id", message: "Required" }] } });
  });
});
