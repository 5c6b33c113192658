import { describe, expect, it } from "vitest";
import { leadsOf, recordCount, recordRow } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { addLeads, createCampaign } from "./fixtures";

describe("leads", () => {
  it("adds leads: dedupes by email per account, counts invalid and repeated addresses, maps emails to records", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body } = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        lead_list: [
          { email: "Ann@Example.com", first_name: "Ann", custom_fields: { plan: "pro" } },
          { email: "ann@example.com", first_name: "Ann again" },
          { email: "not-an-email" },
          { email: "bob@example.com", last_name: "Stone", company_name: "Stone Ltd" },
        ],
        settings: { return_lead_ids: true },
      },
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      ok: true,
      upload_count: 2,
      total_leads: 4,
      already_added_to_campaign: 0,
      duplicate_count: 1,
      invalid_email_count: 1,
      invalid_timezone_count: 0,
      block_count: 0,
      unsubscribed_leads: 0,
      emailToLeadIdMap: { "ann@example.com": expect.any(Number), "bob@example.com": expect.any(Number) },
    });

    const again = await callJson(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: "bob@example.com" }, { email: "cy@example.com" }] },
    });
    expect(again.body).toEqual({
      ok: true,
      upload_count: 1,
      total_leads: 2,
      already_added_to_campaign: 1,
      duplicate_count: 0,
      invalid_email_count: 0,
      invalid_timezone_count: 0,
      block_count: 0,
      unsubscribed_leads: 0,
    });

    // One person per account: a second campaign reuses the lead, with a new campaign record.
    const second = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, second, ["ANN@example.com"]);
    expect(await leadsOf(account.id)).toHaveLength(3);
    expect(map["ann@example.com"]).not.toBe(body.emailToLeadIdMap["ann@example.com"]);
  });

  it("takes 400 leads in one call and refuses 401 with 422, storing nothing", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `lead${i}@bulk.example` }));
    const over = await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: list(401) } });
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ error: "Validation failed", details: [{ path: "lead_list" }] });
    expect(await recordCount(campaign)).toBe(0);

    const full = await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: list(400) } });
    expect(full.status).toBe(200);
    expect(full.body.upload_count).toBe(400);
    expect(await recordCount(campaign)).toBe(400);
  });

  it("lists a campaign's records with paging, status filter and the lead's fields", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["a@list.example", "b@list.example", "c@list.example"]);
    await callJson(`/api/v1/campaigns/${campaign}/leads/${map["b@list.example"]}`, {
      method: "PATCH",
      apiKey: account.apiKey,
      body: { state: "PAUSED" },
    });

    const page = await callJson<{ total_leads: string; offset: number; limit: number; data: Record<string, unknown>[] }>(
      `/api/v1/campaigns/${campaign}/leads?offset=1&limit=1`,
      { apiKey: account.apiKey },
    );
    expect(page.status).toBe(200);
    expect(page.body.total_leads).toBe("3");
    expect(page.body.offset).toBe(1);
    expect(page.body.limit).toBe(1);
    expect(page.body.data).toEqual([
      {
        campaign_lead_map_id: map["b@list.example"],
        status: "PAUSED",
        lead_category_id: null,
        created_at: expect.any(String),
        lead: expect.objectContaining({ id: expect.any(Number), email: "b@list.example", first_name: null, last_name: null }),
      },
    ]);

    const drafted = await callJson<{ total_leads: string; data: { campaign_lead_map_id: number }[] }>(
      `/api/v1/campaigns/${campaign}/leads?status=DRAFTED`,
      { apiKey: account.apiKey },
    );
    expect(drafted.body.total_leads).toBe("2");
    expect(drafted.body.data.map((r) => r.campaign_lead_map_id)).toEqual([map["a@list.example"], map["c@list.example"]]);

    for (const query of ["limit=0", "limit=101", "offset=-1", "status=NOPE"]) {
      expect((await callJson(`/api/v1/campaigns/${campaign}/leads?${query}`, { apiKey: account.apiKey })).status).toBe(422);
    }
  });

  it("sets a record's state only within the campaign named in the path", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const other = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["x@state.example"]);
    const wrong = await callJson(`/api/v1/campaigns/${other}/leads/${map["x@state.example"]}`, {
      method: "PATCH",
      apiKey: account.apiKey,
      body: { state: "STOPPED" },
    });
    expect(wrong.status).toBe(404);
    expect(wrong.body).toEqual({ error: "Lead not found" });
    const bad = await callJson(`/api/v1/campaigns/${campaign}/leads/${map["x@state.example"]}`, {
      method: "PATCH",
      apiKey: account.apiKey,
      body: { state: "LOST" },
    });
    expect(bad.status).toBe(422);
    expect((await recordRow(map["x@state.example"]!)).state).toBe("DRAFTED");
  });

  it("lists the seven built-in lead categories, Out Of Office as 6", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<{ id: number; name: string }[]>("/api/v1/leads/fetch-categories", { apiKey: account.apiKey });
    expect(status).toBe(200);
    expect(body.map(({ id, name }) => ({ id, name }))).toEqual([
      { id: 1, name: "Interested" },
      { id: 2, name: "Meeting Request" },
      { id: 3, name: "Not Interested" },
      { id: 4, name: "Do Not Contact" },
      { id: 5, name: "Information Request" },
      { id: 6, name: "Out Of Office" },
      { id: 7, name: "Wrong Person" },
    ]);
  });
});
