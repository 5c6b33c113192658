import { createScheduledController } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { claimDueSends, nextTestSendQuery } from "../../src/deliverability/test-send-store";
import { testDb } from "../db";
import { accountWithTwoClients, callJson, createClient, createClientKey, fileEnv, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createMailbox, storedMailbox, type EmailAccount } from "../mailboxes/fixtures";
import { manualBody } from "./fixtures";

interface FolderDetail {
  success: boolean;
  data: { id: number; test_count: number; tests: { id: string }[] };
}

async function twoClients() {
  const { account, xKey, yKey } = await accountWithTwoClients();
  const folder = await callJson<{ id: number }>("/api/v1/spam-test/folder", { method: "POST", apiKey: xKey, body: { name: "X only" } });
  expect(folder.status).toBe(200);
  return { account, xKey, yKey, xFolder: folder.body.id, yCampaign: await createCampaign(yKey) };
}

describe("spam-test folders between clients", () => {
  it("refuses the account key filing client Y's test in client X's folder, so X never sees it and can delete its folder", async () => {
    const { account, xKey, xFolder, yCampaign } = await twoClients();
    const refused = await callJson("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(yCampaign, { folder_id: xFolder }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: "Folder belongs to another client than the test's campaign" });

    const scheduled = await callJson("/api/v1/spam-test/schedule", {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        ...manualBody(yCampaign, { folder_id: String(xFolder) }),
        schedule_start_time: new Date(Date.now() + 3_600_000).toISOString(),
        test_end_date: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        scheduler_cron_value: "0 9 * * *",
      },
    });
    expect(scheduled).toMatchObject({ status: 400, body: { error: "Folder belongs to another client than the test's campaign" } });

    const reports = await callJson<{ id: string }[] | { data?: unknown }>("/api/v1/spam-test/report?testType=manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: { limit: 50, offset: 0 },
    });
    expect(reports.status).toBe(200);
    expect(JSON.stringify(reports.body)).not.toContain("Q1 placement");

    const detail = await callJson<FolderDetail>(`/api/v1/smart-delivery/folders/${xFolder}`, { apiKey: xKey });
    expect(detail.body.data).toMatchObject({ test_count: 0, tests: [] });
    const removed = await callJson(`/api/v1/spam-test/folder/${xFolder}`, { method: "DELETE", apiKey: xKey });
    expect(removed).toMatchObject({ status: 200, body: { ok: true } });
  });

  it("still lets the account key file a client's test in that client's folder or in an account-wide one", async () => {
    const { account, xKey, xFolder } = await twoClients();
    const xCampaign = await createCampaign(xKey);
    const inClientFolder = await callJson<{ id: string }>("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(xCampaign, { folder_id: xFolder }),
    });
    expect(inClientFolder.status).toBe(200);
    const detail = await callJson<FolderDetail>(`/api/v1/smart-delivery/folders/${xFolder}`, { apiKey: xKey });
    expect(detail.body.data.tests.map((t) => t.id)).toEqual([inClientFolder.body.id]);

    const accountFolder = await callJson<{ id: number }>("/api/v1/spam-test/folder", { method: "POST", apiKey: account.apiKey, body: { name: "All" } });
    const inAccountFolder = await callJson("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(xCampaign, { folder_id: accountFolder.body.id }),
    });
    expect(inAccountFolder.status).toBe(200);
  });

  it("refuses the account's own test in a client's folder", async () => {
    const { account, xFolder } = await twoClients();
    const own = await createCampaign(account.apiKey);
    const refused = await callJson("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: manualBody(own, { folder_id: xFolder }),
    });
    expect(refused.status).toBe(400);
  });

  it("never shows a client another client's folders", async () => {
    const { yKey, xFolder } = await twoClients();
    const list = await callJson<{ id: number }[]>("/api/v1/spam-test/folder", { apiKey: yKey });
    expect(list.body.map((f) => f.id)).not.toContain(xFolder);
    for (const path of [`/api/v1/smart-delivery/folders/${xFolder}`, `/api/v1/spam-test/folder/${xFolder}`]) {
      expect((await callJson(path, { apiKey: yKey })).status).toBe(404);
    }
  });
});

describe("a client's automated test and the account's mailboxes", () => {
  it("sends nothing from another client's mailbox or an account-wide one not on the campaign, only from the client's own or an attached one", async () => {
    const account = await provisionAccount();
    const x = await createClient(account.apiKey, "X", "x@x.example");
    const y = await createClient(account.apiKey, "Y", "y@y.example");
    const xKey = (await createClientKey(account.apiKey, x)).api_key;
    const own = await createMailbox(account.apiKey, { client_id: x });
    const others = await createMailbox(account.apiKey, { client_id: y });
    const owners = await createMailbox(account.apiKey);
    const campaign = await createCampaign(xKey);
    const start = Date.parse("2031-05-05T09:00:00Z");
    const created = await callJson<{ id: string }>("/api/v1/spam-test/schedule", {
      method: "POST",
      apiKey: xKey,
      body: manualBody(campaign, {
        provider_ids: ["gmail"],
        sender_accounts: [own.from_email, others.from_email, owners.from_email],
        schedule_start_time: new Date(start).toISOString(),
        test_end_date: "2031-05-10T00:00:00Z",
        scheduler_cron_value: "0 9 * * *",
      }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await worker.scheduled(createScheduledController({ scheduledTime: start, cron: "* * * * *" }), fileEnv());
    const claimed = async (mailbox: EmailAccount) => {
      const row = await storedMailbox(mailbox.id);
      const next = (await nextTestSendQuery(testDb(), mailbox.id))[0]?.at ?? null;
      const cells = await claimDueSends(fileEnv().DB, row, start + 60_000, 25);
      return { next: next === null ? null : Number(next), cells: cells.filter((cell) => cell.testId === Number(created.body.id)).length };
    };
    expect(await claimed(others)).toEqual({ next: null, cells: 0 });
    expect(await claimed(owners)).toEqual({ next: null, cells: 0 });
    expect(await claimed(own)).toEqual({ next: start, cells: 1 });
    // The owner may lend the campaign an account-wide mailbox: attached, it sends the test too.
    const attached = await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey: account.apiKey, body: { email_account_ids: [owners.id] } });
    expect(attached.status, JSON.stringify(attached.body)).toBe(200);
    expect(await claimed(owners)).toEqual({ next: start, cells: 1 });
  });
});

describe("a campaign given to another client", () => {
  it("takes its spam tests along: the old client no longer sees them, the new one does, out of the old client's folder", async () => {
    const { account, xKey, yKey, xFolder } = await twoClients();
    const campaign = await createCampaign(xKey);
    const created = await callJson<{ id: string }>("/api/v1/spam-test/manual", { method: "POST", apiKey: xKey, body: manualBody(campaign, { folder_id: xFolder }) });
    expect(created.status).toBe(200);
    const { body: y } = await callJson<{ id: number }[]>("/api/v1/client/", { apiKey: account.apiKey });
    const assigned = await callJson("/api/v1/campaigns/assign-client", { method: "POST", apiKey: account.apiKey, body: { campaignId: campaign, clientId: y[1]!.id } });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);

    const asX = await callJson(`/api/v1/spam-test/${created.body.id}`, { apiKey: xKey });
    expect(asX).toMatchObject({ status: 404, body: { error: "Spam test not found" } });
    const asY = await callJson(`/api/v1/spam-test/${created.body.id}`, { apiKey: yKey });
    expect(asY).toMatchObject({ status: 200, body: { client_id: String(y[1]!.id), folder_id: null } });
    const detail = await callJson<FolderDetail>(`/api/v1/smart-delivery/folders/${xFolder}`, { apiKey: xKey });
    expect(detail.body.data).toMatchObject({ test_count: 0, tests: [] });
    expect(await callJson(`/api/v1/spam-test/folder/${xFolder}`, { method: "DELETE", apiKey: xKey })).toMatchObject({ status: 200 });
  });
});
