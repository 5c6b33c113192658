import { describe, expect, it } from "vitest";
import { isTimeZone } from "../src/platform/zoned-time";
import { foldText } from "../src/platform/text-search";
import { call, callJson, createClient, provisionAccount } from "./helpers";
import { analytics, createCampaign, ingestOk } from "./campaigns/fixtures";
import { emails } from "./inbox/fixtures";

describe("path ids are decimal digits only", () => {
  const lenient = ["24.0", "%2024", "24%20", "1e3", "0x10", "+5", "-5", "024", "0", "1_000", "99999999999999999", "%EF%BC%92%EF%BC%94"];

  it.each(lenient)("answers 422 for %s", async (id) => {
    const account = await provisionAccount();
    const { status, body } = await callJson(`/api/v1/campaigns/${id}`, { apiKey: account.apiKey });
    expect(status).toBe(422);
    expect(body).toMatchObject({ error: "Validation failed", details: [expect.objectContaining({ path: "campaign_id" })] });
  });

  it("reads plain digits as the id", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    expect((await call(`/api/v1/campaigns/${campaign}`, { apiKey: account.apiKey })).status).toBe(200);
    expect((await call(`/api/v1/campaigns/${campaign}.0`, { apiKey: account.apiKey })).status).toBe(422);
    expect((await call("/api/v1/campaigns/999999999", { apiKey: account.apiKey })).status).toBe(404);
  });

  it("holds ids and counts in the query string to the same rule", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const campaign = await createCampaign(account.apiKey);
    expect((await call(`/api/v1/campaigns?client_id=${clientId}`, { apiKey: account.apiKey })).status).toBe(200);
    for (const path of [
      `/api/v1/campaigns?client_id=${clientId}.0`,
      "/api/v1/campaigns?client_id=1e3",
      `/api/v1/client/api-key?clientId=0x${clientId.toString(16)}`,
      "/api/v1/master-inbox/tasks?email_lead_map_id=%201",
      `/api/v1/campaigns/${campaign}/leads?limit=1e1`,
      `/api/v1/campaigns/${campaign}/leads?offset=-0`,
    ]) {
      expect((await call(path, { apiKey: account.apiKey })).status, path).toBe(422);
    }
    expect((await call(`/api/v1/campaigns/${campaign}/leads?limit=10&offset=0`, { apiKey: account.apiKey })).status).toBe(200);
  });

  it("documents path ids as integers", async () => {
    const { body } = await callJson<{ paths: Record<string, Record<string, { parameters?: { name: string; schema: Record<string, unknown> }[] }>> }>("/openapi.json");
    const param = body.paths["/api/v1/campaigns/{campaign_id}"]!.get!.parameters!.find((p) => p.name === "campaign_id")!;
    expect(param.schema).toMatchObject({ type: "integer", minimum: 1 });
  });
});

describe("time_zone is an IANA name", () => {
  it("accepts zone names and UTC, refuses offsets and offset spellings", () => {
    for (const name of ["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Asia/Kathmandu"]) {
      expect(isTimeZone(name), name).toBe(true);
    }
    for (const name of ["+05:00", "-0800", "+05", "UTC+5", "UTC+05:00", "GMT-3", "Mars/Olympus_Mons", "", " UTC", "Europe/../Paris"]) {
      expect(isTimeZone(name), name).toBe(false);
    }
  });

  it("answers 422 for time_zone=+05:00 on analytics by date", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const window = { start_date: "2026-01-01", end_date: "2026-01-02" };
    const offset = await analytics(account.apiKey, campaign, { ...window, time_zone: "+05:00" });
    expect(offset.status).toBe(422);
    expect(offset.body).toMatchObject({ details: [expect.objectContaining({ path: "time_zone" })] });
    expect((await analytics(account.apiKey, campaign, { ...window, time_zone: "UTC" })).status).toBe(200);
  });
});

describe("inbox search is case-insensitive for all of Unicode", () => {
  it("folds in code", () => {
    expect(foldText("ÉLODIE")).toBe("élodie");
    expect(foldText("E\u0301lodie")).toBe("élodie");
    expect(foldText("ＳＭＹＴＨＥ")).toBe("smythe");
  });

  it("finds ÉLODIE by élodie (name) and a reply body by its lower-case words", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    await callJson(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: k,
      body: {
        lead_list: [
          { email: "elodie@unicode.example", first_name: "ÉLODIE", last_name: "ÇAĞLAR" },
          { email: "other@unicode.example", first_name: "Other", last_name: "Person" },
        ],
      },
    });
    const at = new Date(Date.UTC(2026, 2, 1)).toISOString();
    await ingestOk(k, campaign, [
      { type: "REPLY", lead_email: "elodie@unicode.example", occurred_at: at, body: "Merci, ÇA M'INTÉRESSE" },
      { type: "REPLY", lead_email: "other@unicode.example", occurred_at: at, body: "No thanks" },
    ]);
    for (const search of ["élodie", "ÉLODIE", "E\u0301LODIE", "çağlar", "ça m'intéresse"]) {
      expect(await emails(k, "inbox-replies", { filters: { search } }), search).toEqual(["elodie@unicode.example"]);
    }
    expect(await emails(k, "inbox-replies", { filters: { search: "ÉLODIE".toLowerCase() + "x" } })).toEqual([]);
  });
});
