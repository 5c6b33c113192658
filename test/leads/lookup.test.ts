import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { post, setUp } from "./fixtures";

const ANN = "ann@leads.example";
const BOB = "bob@leads.example";

interface LeadBody {
  id: number;
  email: string;
  is_unsubscribed: boolean;
  lead_campaign_data: { campaign_lead_map_id: number; campaign_id: number; campaign_name: string; status: string; lead_category_id: number | null }[];
  [key: string]: unknown;
}

describe("lead lookup", () => {
  it("finds a lead by email (any case) with its campaigns; a missing or foreign one is {}", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const second = await createCampaign(apiKey, { name: "Second" });
    const secondRecords = await addLeads(apiKey, second, [ANN]);
    const { status, body } = await callJson<LeadBody>(`/api/v1/leads/?email=${encodeURIComponent("Ann@Leads.example")}`, { apiKey });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: leads[ANN], email: ANN, is_unsubscribed: false, unsubscribed_client_id_map: {}, created_at: expect.any(String) });
    expect(body.lead_campaign_data).toEqual([
      expect.objectContaining({ campaign_lead_map_id: records[ANN], campaign_id: campaign, campaign_name: "Leads", status: "DRAFTED", client_id: null }),
      expect.objectContaining({ campaign_lead_map_id: secondRecords[ANN], campaign_id: second, campaign_name: "Second" }),
    ]);
    expect((await callJson(`/api/v1/leads?email=nobody@leads.example`, { apiKey })).body).toEqual({});
    const other = await provisionAccount();
    expect((await callJson(`/api/v1/leads?email=${ANN}`, { apiKey: other.apiKey })).body).toEqual({});
  });

  it("lists every lead by cursor, with filters; without email /leads/ answers the same page", async () => {
    const { apiKey, campaign, leads } = await setUp(["a@all.example", "b@all.example", "c@all.example"]);
    const first = await callJson<{ ok: boolean; data: { leads: LeadBody[]; lastSeenLeadId: number; hasMore: boolean } }>("/api/v1/leads/all?limit=2", { apiKey });
    expect(first.body.ok).toBe(true);
    expect(first.body.data.leads.map((l) => l.email)).toEqual(["a@all.example", "b@all.example"]);
    expect(first.body.data).toMatchObject({ lastSeenLeadId: leads["b@all.example"], hasMore: true });
    const rest = await callJson<{ data: { leads: LeadBody[]; hasMore: boolean; lastSeenLeadId: number | null } }>(
      `/api/v1/leads/?limit=2&lastSeenLeadId=${first.body.data.lastSeenLeadId}`,
      { apiKey },
    );
    expect(rest.body.data.leads.map((l) => l.email)).toEqual(["c@all.example"]);
    expect(rest.body.data.hasMore).toBe(false);
    expect(rest.body.data.leads[0]!.lead_campaign_data[0]!.campaign_id).toBe(campaign);

    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads["b@all.example"]}/pause`);
    const paused = await callJson<{ data: { leads: LeadBody[] } }>(`/api/v1/leads/all?status=PAUSED&campaign_id=${campaign}`, { apiKey });
    expect(paused.body.data.leads.map((l) => l.email)).toEqual(["b@all.example"]);
    const search = await callJson<{ data: { leads: LeadBody[] } }>("/api/v1/leads/all?search=C@ALL", { apiKey });
    expect(search.body.data.leads.map((l) => l.email)).toEqual(["c@all.example"]);

    const list = await callJson<{ data: { id: number } }>("/api/v1/lead-list", { method: "POST", apiKey, body: { listName: "Shortlist" } });
    await callJson(`/api/v1/lead-list/${list.body.data.id}/import`, { method: "POST", apiKey, body: { leadList: [{ email: "a@all.example" }, { email: "c@all.example" }] } });
    const members = await callJson<{ data: { leads: LeadBody[] } }>(`/api/v1/leads/all?list_id=${list.body.data.id}`, { apiKey });
    expect(members.body.data.leads.map((l) => l.email)).toEqual(["a@all.example", "c@all.example"]);
    const stranger = await provisionAccount();
    const theirs = await callJson<{ data: { leads: LeadBody[] } }>(`/api/v1/leads/all?list_id=${list.body.data.id}`, { apiKey: stranger.apiKey });
    expect(theirs.body.data.leads).toEqual([]);
  });

  it("filters by a list only the caller may see: a client key naming its owner's list learns nothing of which of its leads it holds", async () => {
    const owner = await provisionAccount();
    const client = await createClient(owner.apiKey);
    const clientKey = (await createClientKey(owner.apiKey, client)).api_key;
    const theirs = await callJson<{ data: { id: number } }>("/api/v1/lead-list", { method: "POST", apiKey: clientKey, body: { listName: "Client's" } });
    await callJson(`/api/v1/lead-list/${theirs.body.data.id}/import`, { method: "POST", apiKey: clientKey, body: { leadList: [{ email: "x@cl.example" }, { email: "y@cl.example" }] } });
    const [lead] = await testDb().select({ id: schema.leads.id }).from(schema.leads).where(eq(schema.leads.email, "x@cl.example"));
    const owners = await callJson<{ data: { id: number } }>("/api/v1/lead-list", { method: "POST", apiKey: owner.apiKey, body: { listName: "Owner's shortlist" } });
    expect((await callJson("/api/v1/leads/push-to-list", { method: "POST", apiKey: owner.apiKey, body: { listId: owners.body.data.id, leadIds: [lead!.id] } })).status).toBe(200);

    const byOwner = await callJson<{ data: { leads: LeadBody[] } }>(`/api/v1/leads/all?list_id=${owners.body.data.id}`, { apiKey: owner.apiKey });
    expect(byOwner.body.data.leads.map((l) => l.email)).toEqual(["x@cl.example"]);
    const byClient = await callJson<{ data: { leads: LeadBody[] } }>(`/api/v1/leads/all?list_id=${owners.body.data.id}`, { apiKey: clientKey });
    expect(byClient.body.data.leads).toEqual([]);
    const own = await callJson<{ data: { leads: LeadBody[] } }>(`/api/v1/leads/all?list_id=${theirs.body.data.id}`, { apiKey: clientKey });
    expect(own.body.data.leads.map((l) => l.email)).toEqual(["x@cl.example", "y@cl.example"]);
  });

  it("reads a lead by id with its newest state and category; a campaign's record of it; its campaigns and overview", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const now = new Date().toISOString();
    await ingestOk(apiKey, campaign, [
      { type: "SENT", email_lead_map_id: records[ANN], occurred_at: now, sequence_number: 1 },
      { type: "OPEN", email_lead_map_id: records[ANN], occurred_at: now },
      { type: "REPLY", email_lead_map_id: records[ANN], occurred_at: now, from_email: ANN, category_id: 1 },
    ]);
    const lead = await callJson<LeadBody>(`/api/v1/leads/${leads[ANN]}`, { apiKey });
    expect(lead.body).toMatchObject({ id: leads[ANN], status: "COMPLETED", category_id: 1, category_name: "Interested" });
    expect((await callJson("/api/v1/leads/999999999", { apiKey })).body).toEqual({});

    const record = await callJson(`/api/v1/campaigns/${campaign}/leads/${leads[ANN]}`, { apiKey });
    expect(record.body).toMatchObject({
      campaign_lead_map_id: records[ANN],
      status: "COMPLETED",
      lead_category_id: 1,
      lead: { id: leads[ANN], email: ANN },
      current_sequence_number: 1,
      last_sent_time: now,
      last_reply_time: now,
      email_account_id: null,
    });
    const other = await createCampaign(apiKey);
    expect(await callJson(`/api/v1/campaigns/${other}/leads/${leads[ANN]}`, { apiKey })).toMatchObject({
      status: 404,
      body: { error: "Lead not found in campaign" },
    });

    const campaigns = await callJson<Record<string, unknown>[]>(`/api/v1/leads/${leads[ANN]}/campaigns`, { apiKey });
    expect(campaigns.body).toEqual([expect.objectContaining({ id: campaign, name: "Leads", campaign_lead_map_id: records[ANN], lead_status: "COMPLETED", lead_category_id: 1 })]);
    const overview = await callJson<{ ok: boolean; data: Record<string, unknown>[] }>(`/api/v1/leads/${leads[ANN]}/campaign-overview`, { apiKey });
    expect(overview.body).toEqual({
      ok: true,
      data: [
        expect.objectContaining({ campaign_id: campaign, sent_count: 1, open_count: 1, click_count: 0, reply_count: 1, current_sequence_number: 1 }),
      ],
    });
    expect((await callJson(`/api/v1/leads/${leads[BOB]}/campaign-overview`, { apiKey: (await provisionAccount()).apiKey })).status).toBe(404);
  });

  it("shows a record's sequence step by step, by record id or lead id", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const steps = [
      { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "First", email_body: "One" },
      { seq_number: 2, seq_delay_details: { delay_in_days: 2 }, subject: "Second", email_body: "Two" },
      { seq_number: 3, seq_delay_details: { delay_in_days: 2 }, subject: "Third", email_body: "Three" },
    ];
    await post(apiKey, `/api/v1/campaigns/${campaign}/sequences`, { sequences: steps });
    const sentAt = new Date().toISOString();
    await ingestOk(apiKey, campaign, [{ type: "SENT", email_lead_map_id: records[ANN], occurred_at: sentAt, sequence_number: 1, subject: "First" }]);
    await testDb()
      .update(schema.campaignLeads)
      .set({ nextStep: 2, dueAt: new Date(Date.parse(sentAt) + 2 * 86_400_000) })
      .where(eq(schema.campaignLeads.id, records[ANN]!));
    for (const id of [records[ANN], leads[ANN]]) {
      const details = await callJson<{ ok: boolean; data: Record<string, unknown>[] }>(`/api/v1/leads/${id}/sequence-details?campaignId=${campaign}`, { apiKey });
      expect(details.status).toBe(200);
      expect(details.body.data.map((s) => [s.seq_number, s.status])).toEqual([
        [1, "SENT"],
        [2, "SCHEDULED"],
        [3, "PENDING"],
      ]);
      expect(details.body.data[0]).toMatchObject({ sent_time: sentAt, subject: "First" });
    }
    expect((await callJson(`/api/v1/leads/999999/sequence-details?campaignId=${campaign}`, { apiKey })).status).toBe(404);
  });

  it("answers /campaigns/all-leads-activities from its own route with each send's opens, clicks and replies", async () => {
    const { apiKey, campaign, records } = await setUp();
    const at = "2026-03-02T10:00:00.000Z";
    await ingestOk(apiKey, campaign, [
      { type: "SENT", email_lead_map_id: records[ANN], occurred_at: at, subject: "Hello", body: "Hi", message_id: "<m1@x>" },
      { type: "OPEN", email_lead_map_id: records[ANN], occurred_at: "2026-03-02T11:00:00.000Z" },
      { type: "CLICK", email_lead_map_id: records[ANN], occurred_at: "2026-03-02T11:00:00.000Z", link_url: "https://example.com/a" },
      { type: "REPLY", email_lead_map_id: records[ANN], occurred_at: "2026-03-02T12:00:00.000Z", from_email: ANN, body: "Thanks", message_id: "<r1@x>" },
    ]);
    const { status, body } = await callJson<{ data: Record<string, unknown>[]; hasMore: boolean }>(
      "/api/v1/campaigns/all-leads-activities?event_time_from=2026-03-01&event_time_to=2026-03-02",
      { apiKey },
    );
    expect(status).toBe(200);
    expect(body.hasMore).toBe(false);
    expect(body.data).toEqual([
      expect.objectContaining({
        email_lead_map_id: records[ANN],
        campaign_id: campaign,
        current_seq_num: 1,
        activities: [
          expect.objectContaining({
            subject: "Hello",
            sent_time: at,
            email_seq_number: "1",
            open_count: 1,
            click_count: 1,
            click_details: { "https://example.com/a": true },
            reply_details: { time: "2026-03-02T12:00:00.000Z", reply_email_body: "Thanks", message_id: "<r1@x>" },
            thread_replies: [],
          }),
        ],
      }),
    ]);
    const outside = await callJson<{ data: unknown[] }>("/api/v1/campaigns/all-leads-activities?event_time_from=2026-03-03", { apiKey });
    expect(outside.body.data).toEqual([]);
    // CONTRACT 0, in: any ISO 8601; without a zone, UTC. The send at 10:00Z is inside a window up to 10:00, not one up to a millisecond before.
    const sends = async (from: string, to: string) =>
      (await callJson<{ data: unknown[] }>(`/api/v1/campaigns/all-leads-activities?${new URLSearchParams({ event_time_from: from, event_time_to: to })}`, { apiKey })).body.data.length;
    expect(await sends("2026-03-02T09:00", "2026-03-02T10:00")).toBe(1);
    expect(await sends("2026-03-02T09:00", "2026-03-02T09:59:59.999")).toBe(0);
    expect(await sends("2026-03-02T10:00:00.001", "2026-03-02 11:00")).toBe(0);
    expect(await sends("2026-03-02T10:00+01", "2026-03-02T11:00+01")).toBe(1);
    expect(await sends("2026-03-02T10:00+01", "20260302T105959,999+0100")).toBe(0);
    expect(await callJson("/api/v1/campaigns/all-leads-activities?event_time_from=March", { apiKey })).toMatchObject({
      status: 400,
      body: { error: "Invalid event_time_from format. Use YYYY-MM-DD or ISO 8601 format." },
    });
  });

  it("shows a client key only its client's leads", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const key = await createClientKey(account.apiKey, clientId);
    const own = await createCampaign(account.apiKey, { client_id: clientId });
    const accountWide = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, own, ["client@leads.example"]);
    await addLeads(account.apiKey, accountWide, ["owner@leads.example"]);
    const page = await callJson<{ data: { leads: LeadBody[] } }>("/api/v1/leads/all", { apiKey: key.api_key });
    expect(page.body.data.leads.map((l) => l.email)).toEqual(["client@leads.example"]);
    expect((await callJson("/api/v1/leads?email=owner@leads.example", { apiKey: key.api_key })).body).toEqual({});
  });
});
