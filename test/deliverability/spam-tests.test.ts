import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createManualTest, manualBody } from "./fixtures";

const GATED = "Deliverability testing is not enabled for this account";
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe("spam tests", () => {
  it("creates a manual test with every creation field, typed as the interface says, and its seed inboxes", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body } = await callJson("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(campaign, { spam_filters: ["spamassassin"], min_time_btwn_emails: 5, min_time_unit: "hours", is_warmup: true }),
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      test_name: "Q1 placement",
      description: "Before launch",
      test_type: "manual",
      spam_filters: true,
      link_checker: true,
      campaign_id: String(campaign),
      sequence_mapping_id: "77",
      all_email_sent_without_time_gap: false,
      min_time_btwn_emails: 5,
      min_time_unit: "hours",
      is_warmup: true,
      test_with_sl_account: false,
      has_seed_mapping: true,
      status: "active",
      user_id: String(account.id),
      email_track_id: expect.any(String),
      provider_id: "gmail,outlook",
      created_at: ISO,
      updated_at: ISO,
      seed_emails: [
        { provider_id: "gmail", email: "seed+gmail@placement.salvo.email" },
        { provider_id: "outlook", email: "seed+outlook@placement.salvo.email" },
      ],
    });
    const defaults = await callJson("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(campaign, { spam_filters: [], provider_ids: undefined, provider_id: "yahoo, gmx" }),
    });
    expect(defaults.body).toMatchObject({ spam_filters: false, min_time_btwn_emails: 10, min_time_unit: "minutes", is_warmup: false, provider_id: "yahoo,gmx" });
  });

  it("reads a test with exactly the single-read fields", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const campaign = await createCampaign(account.apiKey, { client_id: clientId });
    const folder = await callJson<{ id: number }>("/api/v1/spam-test/folder", { method: "POST", apiKey: account.apiKey, body: { folderName: "Launch" } });
    const created = await callJson<{ id: string }>("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(campaign, { folder_id: String(folder.body.id) }),
    });
    const { status, body } = await callJson(`/api/v1/spam-test/${created.body.id}`, { apiKey: account.apiKey });
    expect(status).toBe(200);
    expect(body).toEqual({
      id: created.body.id,
      test_name: "Q1 placement",
      test_type: "manual",
      description: "Before launch",
      folder_id: String(folder.body.id),
      link_checker: true,
      test_with_sl_account: false,
      campaign_id: String(campaign),
      sequence_mapping_id: "77",
      provider_id: "gmail,outlook",
      client_id: String(clientId),
      user_id: String(account.id),
      created_at: ISO,
      updated_at: ISO,
    });
  });

  it("lists the sender accounts of a test", async () => {
    const account = await provisionAccount();
    const { test } = await createManualTest(account.apiKey, { sender_accounts: ["One@Sender.example", "two@sender.example", "one@sender.example"] });
    const { body } = await callJson<Record<string, unknown>[]>(`/api/v1/spam-test/report/${test.id}/sender-accounts`, { apiKey: account.apiKey });
    expect(body).toEqual(
      ["one@sender.example", "two@sender.example"].map((from_email) => ({
        id: expect.stringMatching(/^\d+$/),
        spam_test_id: test.id,
        from_email,
        created_at: ISO,
        updated_at: ISO,
        client_id: null,
        user_id: String(account.id),
      })),
    );
  });

  it("validates every creation field with 422", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const cases: [Record<string, unknown>, string][] = [
      [{ test_name: "" }, "test_name"],
      [{ test_name: "x".repeat(256) }, "test_name"],
      [{ spam_filters: "yes" }, "spam_filters"],
      [{ campaign_id: undefined }, "campaign_id"],
      [{ sequence_mapping_id: undefined }, "sequence_mapping_id"],
      [{ provider_ids: undefined }, "provider_ids"],
      [{ provider_ids: [] }, "provider_ids"],
      [{ provider_ids: ["gmail", "hotmail-mars"] }, "provider_ids.1"],
      [{ sender_accounts: [] }, "sender_accounts"],
      [{ sender_accounts: Array.from({ length: 51 }, (_, i) => `s${i}@x.example`) }, "sender_accounts"],
      [{ sender_accounts: ["not-an-email"] }, "sender_accounts.0"],
      [{ min_time_unit: "weeks" }, "min_time_unit"],
      [{ min_time_btwn_emails: 0 }, "min_time_btwn_emails"],
    ];
    for (const [override, path] of cases) {
      const { status, body } = await callJson("/api/v1/spam-test/manual", { method: "POST", apiKey: account.apiKey, body: manualBody(campaign, override) });
      expect(status, JSON.stringify(override)).toBe(422);
      expect(body).toMatchObject({ details: expect.arrayContaining([expect.objectContaining({ path })]) });
    }
    const fifty = await callJson("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(campaign, { sender_accounts: Array.from({ length: 50 }, (_, i) => `s${i}@x.example`) }),
    });
    expect(fifty.status).toBe(200);
    expect(await testDb().$count(schema.spamTests, eq(schema.spamTests.accountId, account.id))).toBe(1);
  });

  it("lists tests by type with paging, stops and deletes them", async () => {
    const account = await provisionAccount();
    const { test: first } = await createManualTest(account.apiKey, { test_name: "first" });
    const { test: second } = await createManualTest(account.apiKey, { test_name: "second" });
    const page = await callJson<{ data: { id: string }[]; total_count: number }>("/api/v1/spam-test/report?testType=manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: { limit: 1, offset: 0 },
    });
    expect(page.body).toMatchObject({ success: true, total_count: 2, limit: 1, offset: 0 });
    expect(page.body.data.map((t) => t.id)).toEqual([second.id]);
    const automated = await callJson<{ total_count: number }>("/api/v1/spam-test/report?testType=automated", { method: "POST", apiKey: account.apiKey, body: {} });
    expect(automated.body.total_count).toBe(0);

    const stopped = await callJson(`/api/v1/spam-test/${first.id}/stop`, { method: "PUT", apiKey: account.apiKey });
    expect(stopped.body).toEqual({ success: true, data: { id: first.id, status: "stopped" } });
    const deleted = await callJson("/api/v1/spam-test/delete", { method: "POST", apiKey: account.apiKey, body: { spamTestIds: [first.id, second.id, "999999"] } });
    expect(deleted.body).toEqual({ success: true, deleted: 2 });
    expect((await callJson(`/api/v1/spam-test/${first.id}`, { apiKey: account.apiKey })).status).toBe(404);
  });

  it("answers 404 with the contract's body on every route when the account has no deliverability", async () => {
    const account = await provisionAccount({ deliverability_enabled: false });
    const campaign = await createCampaign(account.apiKey);
    const attempts = [
      callJson("/api/v1/spam-test/seed/providers", { apiKey: account.apiKey }),
      callJson("/api/v1/spam-test/manual", { method: "POST", apiKey: account.apiKey, body: manualBody(campaign) }),
      callJson("/api/v1/spam-test/1", { apiKey: account.apiKey }),
      callJson("/api/v1/spam-test/folder", { apiKey: account.apiKey }),
      callJson("/api/v1/smart-delivery/provider-report", { method: "POST", apiKey: account.apiKey, body: { spam_test_id: "1" } }),
      callJson("/api/v1/smart-delivery/folders/1", { apiKey: account.apiKey }),
    ];
    for (const { status, body } of await Promise.all(attempts)) {
      expect(status).toBe(404);
      expect(body).toEqual({ error: GATED });
    }
    expect(await testDb().$count(schema.spamTests, eq(schema.spamTests.accountId, account.id))).toBe(0);
  });

  it("answers another tenant's tests, folders and campaigns like missing ones", async () => {
    const owner = await provisionAccount();
    const { test } = await createManualTest(owner.apiKey);
    const folder = await callJson<{ id: number }>("/api/v1/spam-test/folder", { method: "POST", apiKey: owner.apiKey, body: { name: "Mine" } });
    const ownerCampaign = await createCampaign(owner.apiKey);
    const stranger = await provisionAccount();
    const clientKey = await createClientKey(owner.apiKey, await createClient(owner.apiKey));
    for (const apiKey of [stranger.apiKey, clientKey.api_key]) {
      const attempts = [
        callJson(`/api/v1/spam-test/${test.id}`, { apiKey }),
        callJson(`/api/v1/spam-test/report/${test.id}/sender-accounts`, { apiKey }),
        callJson(`/api/v1/spam-test/report/${test.id}/providerwise`, { method: "POST", apiKey }),
        callJson(`/api/v1/spam-test/report/${test.id}/schedule-history`, { apiKey }),
        callJson(`/api/v1/spam-test/${test.id}/stop`, { method: "PUT", apiKey }),
        callJson(`/api/v1/spam-test/${test.id}/results`, { method: "POST", apiKey, body: { results: [{ provider_id: "gmail", sender_email: "a@sender.example", folder: "inbox" }] } }),
        callJson("/api/v1/smart-delivery/provider-report", { method: "POST", apiKey, body: { spamTestId: test.id } }),
        callJson(`/api/v1/smart-delivery/folders/${folder.body.id}`, { apiKey }),
        callJson(`/api/v1/spam-test/folder/${folder.body.id}`, { method: "DELETE", apiKey }),
        callJson("/api/v1/spam-test/manual", { method: "POST", apiKey, body: manualBody(ownerCampaign) }),
      ];
      for (const { status } of await Promise.all(attempts)) expect(status).toBe(404);
      const deleted = await callJson<{ deleted: number }>("/api/v1/spam-test/delete", { method: "POST", apiKey, body: { spamTestIds: [test.id] } });
      expect(deleted.body.deleted).toBe(0);
    }
    expect((await callJson(`/api/v1/spam-test/${test.id}`, { apiKey: owner.apiKey })).body).toMatchObject({ id: test.id });
    expect((await callJson("/api/v1/spam-test/not-a-number", { apiKey: owner.apiKey })).status).toBe(404);
  });

  it("serves the provider catalogue as regions, groups and providers", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<{ region_id: string; groups: { group_id: string; providers: { provider_id: string }[] }[] }[]>(
      "/api/v1/spam-test/seed/providers",
      { apiKey: account.apiKey },
    );
    expect(status).toBe(200);
    const providers = body.flatMap((r) => r.groups.flatMap((g) => g.providers.map((p) => p.provider_id)));
    expect(providers.length).toBeGreaterThanOrEqual(25);
    expect(providers).toEqual(expect.arrayContaining(["gmail", "outlook", "yahoo", "office365", "google-workspace", "zoho", "gmx"]));
    const global = body.find((r) => r.region_id === "global")!;
    expect(global.groups.find((g) => g.group_id === "microsoft")!.providers.map((p) => p.provider_id).sort()).toEqual(["office365", "outlook"]);
  });
});
