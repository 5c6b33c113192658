import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createCampaign } from "./fixtures";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("campaigns", () => {
  it("creates a DRAFTED campaign with a default name and reads it back field by field", async () => {
    const account = await provisionAccount();
    const created = await callJson("/api/v1/campaigns/create", { method: "POST", apiKey: account.apiKey, body: {} });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ ok: true, id: expect.any(Number), name: "Untitled Campaign", created_at: expect.stringMatching(ISO) });

    const read = await callJson(`/api/v1/campaigns/${created.body.id}`, { apiKey: account.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      id: created.body.id,
      user_id: account.id,
      client_id: null,
      name: "Untitled Campaign",
      status: "DRAFTED",
      created_at: created.body.created_at,
      updated_at: expect.stringMatching(ISO),
      tags: [],
      track_settings: [],
      scheduler_cron_value: null,
      min_time_btwn_emails: null,
      max_leads_per_day: null,
      schedule_start_time: null,
      stop_lead_settings: "REPLY_TO_AN_EMAIL",
      unsubscribe_text: "",
      send_as_plain_text: false,
      force_plain_text: false,
      follow_up_percentage: 100,
      enable_ai_esp_matching: false,
      add_unsubscribe_tag: false,
      auto_pause_domain_leads_on_reply: false,
      bounce_autopause_threshold: null,
      out_of_office_detection_settings: { ignoreOOOasReply: false, autoReactivateOOO: false, reactivateOOOwithDelay: 7, autoCategorizeOOO: false },
      ai_categorisation_options: null,
      auto_categorise_reply: true,
      spintax_distribution_mode: 2,
      parent_campaign_id: null,
      team_member_id: null,
      folder_id: null,
      send_in_lead_timezone: false,
      sending_status: {
        code: "drafted",
        message: "The campaign has not been started",
        next_send_at: null,
        details: {
          lead_timezone: { enabled: false, due_in_window: 0, due_outside_window: 0, leads_without_zone: 0, next_window_at: null },
          esp_matching: {
            enabled: false,
            mailboxes: { google: 0, microsoft: 0, other: 0 },
            due_by_provider: { google: 0, microsoft: 0, other: 0, unknown: 0 },
            unmatched_first_sends_today: 0,
          },
          skipped: { invalid_email: 0, blocked: 0, unsubscribed: 0 },
        },
      },
    });
  });

  it("lists campaigns as a bare array, filtered by client_id", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const own = await createCampaign(account.apiKey, { name: "Own" });
    const forClient = await createCampaign(account.apiKey, { name: "Client's", client_id: clientId });

    const all = await callJson<{ id: number; client_id: number | null }[]>("/api/v1/campaigns/", { apiKey: account.apiKey });
    expect(all.body.map((c) => c.id)).toEqual([own, forClient]);
    const filtered = await callJson<{ id: number }[]>(`/api/v1/campaigns?client_id=${clientId}`, { apiKey: account.apiKey });
    expect(filtered.body.map((c) => c.id)).toEqual([forClient]);
  });

  it("refuses a client_id that is not the caller's with 400", async () => {
    const owner = await provisionAccount();
    const other = await provisionAccount();
    const foreignClient = await createClient(other.apiKey);
    const { status, body } = await callJson("/api/v1/campaigns/create", {
      method: "POST",
      apiKey: owner.apiKey,
      body: { client_id: foreignClient },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "Client not found" });
  });

  it("moves status START -> ACTIVE -> PAUSED -> STOPPED, and STOPPED is final", async () => {
    const account = await provisionAccount();
    const id = await createCampaign(account.apiKey);
    const set = (status: string) =>
      callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey: account.apiKey, body: { status } });
    const statusNow = async () => (await callJson(`/api/v1/campaigns/${id}`, { apiKey: account.apiKey })).body.status;

    expect((await set("START")).body).toEqual({ ok: true });
    expect(await statusNow()).toBe("ACTIVE");
    await set("PAUSED");
    expect(await statusNow()).toBe("PAUSED");
    await set("STOPPED");
    expect(await statusNow()).toBe("STOPPED");
    const refused = await set("START");
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: "A stopped campaign cannot change status" });
    expect(await statusNow()).toBe("STOPPED");
    // ACTIVE is read as START (section 11), so it is refused like START; an unknown word is a 422.
    expect((await set("ACTIVE")).status).toBe(400);
    expect((await set("RUNNING")).status).toBe(422);
  });

  it("replaces tags, shared by name across the account's campaigns", async () => {
    const account = await provisionAccount();
    const first = await createCampaign(account.apiKey);
    const second = await createCampaign(account.apiKey);
    const tag = (id: number, tags: string[]) =>
      callJson<{ tags: { id: number; name: string }[] }>(`/api/v1/campaigns/${id}/tags`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { tags },
      });
    const one = await tag(first, ["q1", "vip", "q1"]);
    expect(one.body.tags.map((t) => t.name)).toEqual(["q1", "vip"]);
    const two = await tag(second, ["vip"]);
    expect(two.body.tags[0]!.id).toBe(one.body.tags[1]!.id);
    const replaced = await tag(first, ["q2"]);
    expect(replaced.body.tags.map((t) => t.name)).toEqual(["q2"]);
    const read = await callJson<{ tags: { name: string }[] }>(`/api/v1/campaigns/${first}`, { apiKey: account.apiKey });
    expect(read.body.tags.map((t) => t.name)).toEqual(["q2"]);
  });

  it("client keys create for their own client and see only their client's campaigns", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const otherClient = await createClient(account.apiKey, "Other", "other@example.com");
    const key = await createClientKey(account.apiKey, clientId);
    const ownersCampaign = await createCampaign(account.apiKey);

    const created = await createCampaign(key.api_key, { name: "Via client key" });
    const row = await testDb().select({ clientId: schema.campaigns.clientId }).from(schema.campaigns).where(eq(schema.campaigns.id, created)).get();
    expect(row?.clientId).toBe(clientId);

    const listed = await callJson<{ id: number }[]>("/api/v1/campaigns", { apiKey: key.api_key });
    expect(listed.body.map((c) => c.id)).toEqual([created]);
    const hidden = await callJson(`/api/v1/campaigns/${ownersCampaign}`, { apiKey: key.api_key });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ error: "Campaign not found" });
    const foreign = await callJson("/api/v1/campaigns/create", {
      method: "POST",
      apiKey: key.api_key,
      body: { client_id: otherClient },
    });
    expect(foreign.status).toBe(400);
  });

  it("answers another tenant's campaign exactly like a missing one, on every campaign route", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const id = await createCampaign(owner.apiKey);
    const attempts = [
      callJson(`/api/v1/campaigns/${id}`, { apiKey: stranger.apiKey }),
      callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey: stranger.apiKey, body: { status: "START" } }),
      callJson(`/api/v1/campaigns/${id}/tags`, { method: "POST", apiKey: stranger.apiKey, body: { tags: ["x"] } }),
      callJson(`/api/v1/campaigns/${id}/leads`, { apiKey: stranger.apiKey }),
      callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey: stranger.apiKey, body: { lead_list: [{ email: "a@b.co" }] } }),
      callJson(`/api/v1/campaigns/${id}/analytics-by-date?start_date=2026-01-01&end_date=2026-01-02`, { apiKey: stranger.apiKey }),
      callJson(`/api/v1/campaigns/999999999`, { apiKey: stranger.apiKey }),
    ];
    for (const { status, body } of await Promise.all(attempts)) {
      expect(status).toBe(404);
      expect(body).toEqual({ error: "Campaign not found" });
    }
    const untouched = await callJson(`/api/v1/campaigns/${id}`, { apiKey: owner.apiKey });
    expect(untouched.body).toMatchObject({ status: "DRAFTED", tags: [] });
  });
});
