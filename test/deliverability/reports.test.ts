import { describe, expect, it } from "vitest";
import { and, eq, ne } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { createManualTest } from "./fixtures";

describe("placement results and reports", () => {
  it("counts a run's results per provider exactly as worked out by hand, in both report forms and the history", async () => {
    const account = await provisionAccount();
    const { test } = await createManualTest(account.apiKey, {
      provider_ids: ["gmail", "outlook", "yahoo"],
      sender_accounts: ["a@sender.example", "b@sender.example", "c@sender.example"],
    });
    // 3 providers x 3 senders = 9 pending results from the start.
    const record = (results: Record<string, unknown>[]) =>
      callJson(`/api/v1/spam-test/${test.id}/results`, { method: "POST", apiKey: account.apiKey, body: { results } });
    expect(
      (
        await record([
          { provider_id: "gmail", sender_email: "a@sender.example", folder: "inbox" },
          { provider_id: "gmail", sender_email: "b@sender.example", folder: "tab" },
          { provider_id: "gmail", sender_email: "c@sender.example", folder: "spam", received_at: "2026-12-01T10:00:00Z" },
          { provider_id: "outlook", sender_email: "a@sender.example", folder: "spam" },
          { provider_id: "outlook", sender_email: "b@sender.example", folder: "not_received" },
          { provider_id: "yahoo", sender_email: "A@Sender.example", folder: "spam" },
        ])
      ).body,
    ).toEqual({ ok: true, recorded: 6 });
    // A later answer for the same cell replaces the earlier one: yahoo/a moves from spam to inbox.
    await record([{ provider_id: "yahoo", sender_email: "a@sender.example", folder: "inbox" }]);

    const report = await callJson("/api/v1/smart-delivery/provider-report", { method: "POST", apiKey: account.apiKey, body: { spam_test_id: test.id } });
    expect(report.body).toEqual({
      success: true,
      data: {
        spam_test_id: test.id,
        status: "active",
        run_no: 1,
        overall_total_count: 9,
        providers: [
          { provider_id: "gmail", provider_name: "Gmail", region: "Global", inbox_count: 1, tab_count: 1, spam_count: 1, not_received_count: 0, total_count: 3 },
          { provider_id: "outlook", provider_name: "Outlook.com", region: "Global", inbox_count: 0, tab_count: 0, spam_count: 1, not_received_count: 1, total_count: 3 },
          { provider_id: "yahoo", provider_name: "Yahoo Mail", region: "Global", inbox_count: 1, tab_count: 0, spam_count: 0, not_received_count: 0, total_count: 3 },
        ],
      },
    });
    for (const alias of [{ spamTestId: test.id }, { test_id: Number(test.id) }]) {
      const again = await callJson<{ data: { overall_total_count: number } }>("/api/v1/smart-delivery/provider-report", { method: "POST", apiKey: account.apiKey, body: alias });
      expect(again.body.data.overall_total_count).toBe(9);
    }

    const providerwise = await callJson(`/api/v1/spam-test/report/${test.id}/providerwise`, { method: "POST", apiKey: account.apiKey });
    expect(providerwise.body).toEqual({
      overallTotalCount: 9,
      status: "active",
      result: [
        { provider_id: "gmail", provider_name: "Gmail", group_id: "google", region_id: "global", inbox_count: 1, tab_count: 1, spam_count: 1, adjusted_total_email_count: 3 },
        { provider_id: "outlook", provider_name: "Outlook.com", group_id: "microsoft", region_id: "global", inbox_count: 0, tab_count: 0, spam_count: 1, adjusted_total_email_count: 2 },
        { provider_id: "yahoo", provider_name: "Yahoo Mail", group_id: "yahoo", region_id: "global", inbox_count: 1, tab_count: 0, spam_count: 0, adjusted_total_email_count: 1 },
      ],
    });

    const history = await callJson(`/api/v1/spam-test/report/${test.id}/schedule-history`, { apiKey: account.apiKey });
    expect(history.body).toEqual({
      success: true,
      data: [
        {
          run_no: 1,
          scheduled_at: expect.any(String),
          started_at: expect.any(String),
          inbox_count: 2,
          tab_count: 1,
          spam_count: 2,
          not_received_count: 1,
          pending_count: 3,
          total_count: 9,
        },
      ],
    });
  });

  it("refuses results for providers or senders outside the test, and runs that have not started", async () => {
    const account = await provisionAccount();
    const { test } = await createManualTest(account.apiKey);
    const cases: [Record<string, unknown>, number, string?][] = [
      [{ results: [{ provider_id: "yahoo", sender_email: "a@sender.example", folder: "inbox" }] }, 422, "results.0.provider_id"],
      [{ results: [{ provider_id: "gmail", sender_email: "z@sender.example", folder: "inbox" }] }, 422, "results.0.sender_email"],
      [{ results: [{ provider_id: "gmail", sender_email: "a@sender.example", folder: "junk" }] }, 422, "results.0.folder"],
      [{ results: [] }, 422, "results"],
      [{ run_no: 2, results: [{ provider_id: "gmail", sender_email: "a@sender.example", folder: "inbox" }] }, 400],
    ];
    for (const [body, status, path] of cases) {
      const answer = await callJson(`/api/v1/spam-test/${test.id}/results`, { method: "POST", apiKey: account.apiKey, body });
      expect(answer.status, JSON.stringify(body)).toBe(status);
      if (path) expect(answer.body).toMatchObject({ details: expect.arrayContaining([expect.objectContaining({ path })]) });
    }
    const t = schema.spamTestResults;
    expect(await testDb().$count(t, and(eq(t.spamTestId, Number(test.id)), ne(t.folder, "pending")))).toBe(0);
  });
});

describe("folders", () => {
  it("creates (any name alias), lists, reads both forms, and deletes only when empty", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const names = [{ name: "Launch" }, { folder_name: "Warmup" }, { folderName: "Audits" }];
    const created = [];
    for (const body of names) {
      const { status, body: folder } = await callJson<{ id: number; name: string }>("/api/v1/spam-test/folder", { method: "POST", apiKey: k, body });
      expect(status).toBe(200);
      expect(folder).toEqual({ id: expect.any(Number), name: Object.values(body)[0], created_at: expect.any(String), updated_at: expect.any(String) });
      created.push(folder);
    }
    expect((await callJson<{ name: string }[]>("/api/v1/spam-test/folder", { apiKey: k })).body.map((f) => f.name)).toEqual(["Launch", "Warmup", "Audits"]);
    expect((await callJson("/api/v1/spam-test/folder", { method: "POST", apiKey: k, body: {} })).status).toBe(422);

    const launch = created[0]!;
    const { test } = await createManualTest(k, { folder_id: launch.id, test_name: "In a folder" });
    const detail = await callJson(`/api/v1/smart-delivery/folders/${launch.id}`, { apiKey: k });
    expect(detail.body).toEqual({
      success: true,
      data: {
        id: launch.id,
        name: "Launch",
        test_count: 1,
        tests: [{ id: test.id, test_name: "In a folder", test_type: "manual", status: "active" }],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect((await callJson(`/api/v1/spam-test/folder/${launch.id}`, { apiKey: k })).body).toEqual({
      id: launch.id,
      name: "Launch",
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const refused = await callJson(`/api/v1/spam-test/folder/${launch.id}`, { method: "DELETE", apiKey: k });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: "Folder is not empty" });
    expect((await callJson(`/api/v1/spam-test/folder/${created[1]!.id}`, { method: "DELETE", apiKey: k })).body).toEqual({ ok: true });
    expect((await callJson(`/api/v1/spam-test/folder/${created[1]!.id}`, { apiKey: k })).status).toBe(404);
  });
});
