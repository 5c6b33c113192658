import { describe, expect, it } from "vitest";
import { call, callJson, provisionAccount, fileEnv } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createList } from "../lead-lists/fixtures";

/** CONTRACT 23.1: a lead's IANA zone, written on add, update, import and CSV import, under its aliases. */

async function zonesOf(accountId: number): Promise<Record<string, string | null>> {
  const rows = await fileEnv().DB.prepare("SELECT email, timezone FROM leads WHERE account_id = ?").bind(accountId).all<{ email: string; timezone: string | null }>();
  return Object.fromEntries(rows.results.map((row) => [row.email, row.timezone]));
}

describe("a lead's time zone", () => {
  it("is taken on add-leads under every alias or a custom field of those names; unknown names are stored as null and counted", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body } = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        lead_list: [
          { email: "a@tz.example", timezone: "Asia/Tokyo" },
          { email: "b@tz.example", time_zone: "europe/paris" },
          { email: "c@tz.example", lead_timezone: "America/New_York" },
          { email: "d@tz.example", schedule_timezone: "UTC" },
          { email: "e@tz.example", tz: "Australia/Sydney" },
          { email: "f@tz.example", custom_fields: { Zone: "Asia/Tokyo", Lead_TimeZone: "Europe/Paris" } },
          { email: "g@tz.example", timezone: "Mars/Olympus_Mons" },
          { email: "h@tz.example", timezone: "+05:00" },
          { email: "i@tz.example", location: "Tokyo, Japan", phone_number: "+81 3 1234 5678" },
          { email: "j@tz.example", timezone: "Asia/Tokyo", tz: "Europe/Paris" },
        ],
      },
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ upload_count: 10, invalid_timezone_count: 2 });
    expect(await zonesOf(account.id)).toEqual({
      "a@tz.example": "Asia/Tokyo",
      "b@tz.example": "Europe/Paris",
      "c@tz.example": "America/New_York",
      "d@tz.example": "UTC",
      "e@tz.example": "Australia/Sydney",
      // "Zone" is no alias (the names are timezone, time_zone, lead_timezone, schedule_timezone, tz, in any case): "Lead_TimeZone" is.
      "f@tz.example": "Europe/Paris",
      "g@tz.example": null,
      "h@tz.example": null,
      // Never guessed from the location or the phone number.
      "i@tz.example": null,
      "j@tz.example": "Asia/Tokyo",
    });
    const listing = await callJson<{ data: { lead: { email: string; timezone: string | null } }[] }>(`/api/v1/campaigns/${campaign}/leads?limit=100`, { apiKey: account.apiKey });
    expect(listing.body.data.find((row) => row.lead.email === "a@tz.example")?.lead.timezone).toBe("Asia/Tokyo");
  });

  it("refuses a zone that is not text with 422 and stores nothing", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const answer = await callJson<{ details: { path: string }[] }>(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: "a@tz.example", timezone: 9 }] },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.details.map((d) => d.path)).toContain("lead_list.0.timezone");
    expect(await zonesOf(account.id)).toEqual({});
  });

  it("is set, cleared and refused-as-null by a lead update, within the caller's tenancy", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const added = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: "u@tz.example" }], settings: { return_lead_ids: true } },
    });
    const lead = await fileEnv().DB.prepare("SELECT id FROM leads WHERE account_id = ? AND email = 'u@tz.example'").bind(account.id).first<{ id: number }>();
    expect(added.status).toBe(200);
    const put = (apiKey: string, body: Record<string, unknown>) => callJson<Record<string, unknown>>(`/api/v1/leads/${lead!.id}`, { method: "PUT", apiKey, body });

    expect((await put(account.apiKey, { tz: "Asia/Tokyo" })).body).toMatchObject({ ok: true, invalid_timezone_count: 0 });
    expect((await zonesOf(account.id))["u@tz.example"]).toBe("Asia/Tokyo");
    const read = await callJson<{ timezone: string | null }>(`/api/v1/leads/${lead!.id}`, { apiKey: account.apiKey });
    expect(read.body.timezone).toBe("Asia/Tokyo");
    // An update that names no zone keeps it.
    await put(account.apiKey, { first_name: "U" });
    expect((await zonesOf(account.id))["u@tz.example"]).toBe("Asia/Tokyo");
    // Another account cannot see the lead, let alone change its zone.
    expect((await put(stranger.apiKey, { timezone: "Europe/Paris" })).status).toBe(404);
    expect((await zonesOf(account.id))["u@tz.example"]).toBe("Asia/Tokyo");
    // An unknown name clears it and is counted; null clears it.
    expect((await put(account.apiKey, { custom_fields: { TZ: "Nowhere/Land" } })).body).toMatchObject({ ok: true, invalid_timezone_count: 1 });
    expect((await zonesOf(account.id))["u@tz.example"]).toBeNull();
    await put(account.apiKey, { timezone: "Europe/Paris" });
    expect((await put(account.apiKey, { timezone: null })).body).toMatchObject({ invalid_timezone_count: 0 });
    expect((await zonesOf(account.id))["u@tz.example"]).toBeNull();
    expect((await put(account.apiKey, { timezone: ["Europe/Paris"] })).status).toBe(422);
  });

  it("is taken by a list's JSON and CSV imports (a Time Zone column), counted when unknown, and carried into a campaign by a push", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    const imported = await callJson<{ data: Record<string, number> }>(`/api/v1/lead-list/${list}/import`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { leadList: [{ email: "j1@tz.example", timezone: "Asia/Tokyo" }, { email: "j2@tz.example", tz: "Atlantis/Capital" }] },
    });
    expect(imported.body.data).toMatchObject({ imported: 2, invalid_timezone_count: 1 });
    const csv = ["email,Time Zone", "c1@tz.example,Europe/Paris", "c2@tz.example,Somewhere", "c3@tz.example,"].join("\n");
    const queued = await call(`/api/v1/lead-list/${list}/import-csv`, { method: "POST", apiKey: account.apiKey, rawBody: csv, headers: { "Content-Type": "text/csv" } });
    expect(queued.status).toBe(202);
    const { data } = (await queued.json()) as { data: { id: number } };
    let progress: Record<string, unknown> = {};
    for (let i = 0; i < 100 && progress.state !== "done"; i++) {
      progress = (await callJson<{ data: Record<string, unknown> }>(`/api/v1/lead-list/${list}/imports/${data.id}`, { apiKey: account.apiKey })).body.data;
      if (progress.state !== "done") await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(progress).toMatchObject({ state: "done", imported: 3, invalid_timezone_count: 1 });
    expect(await zonesOf(account.id)).toEqual({
      "j1@tz.example": "Asia/Tokyo",
      "j2@tz.example": null,
      "c1@tz.example": "Europe/Paris",
      "c2@tz.example": null,
      "c3@tz.example": null,
    });
    // A known lead's empty zone is filled by a later import, and a stored one is kept.
    await callJson(`/api/v1/lead-list/${list}/import`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { leadList: [{ email: "c3@tz.example", timezone: "America/Chicago" }, { email: "j1@tz.example", timezone: "Europe/Paris" }] },
    });
    const zones = await zonesOf(account.id);
    expect([zones["c3@tz.example"], zones["j1@tz.example"]]).toEqual(["America/Chicago", "Asia/Tokyo"]);
  });
});
