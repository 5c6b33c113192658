import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { accountWithTwoClients, env, fileEnv, fileShard } from "../helpers";
import { createCampaign, get, post } from "./fixtures";

/**
 * Campaign folders between clients (CONTRACT 21.1, ARCHITECTURE "tags and folders"): a campaign is
 * filed only in a folder of its own client scope or an account-wide one, whoever files it and
 * whatever moves it later.
 */

async function folder(apiKey: string, name: string): Promise<number> {
  const { status, body } = await post(apiKey, "/api/v1/campaigns/folders", { name });
  expect(status).toBe(200);
  return (body.data as { id: number }).id;
}

const folderOf = async (apiKey: string, campaign: number) => (await get(apiKey, `/api/v1/campaigns/${campaign}`)).body.folder_id;

async function twoClients() {
  const clients = await accountWithTwoClients();
  return { ...clients, xFolder: await folder(clients.xKey, "X only") };
}

/**
 * Runs `request` on the file's shard with `between` run to its end right after the request's first
 * statement whose SQL matches `query` has answered: what another request does between this one's
 * read and its write.
 */
async function racing(request: Request, query: RegExp, between: () => Promise<unknown>): Promise<{ status: number; body: Body; ran: boolean }> {
  let ran = false;
  const binding = fileShard() === 0 ? "DB" : `DB_${fileShard()}`;
  const afterRead = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => afterRead(target.bind(...values));
        const value = Reflect.get(target, property) as unknown;
        if (typeof value !== "function") return value;
        if (!["all", "raw", "first", "run"].includes(String(property)) || ran) return value.bind(target);
        return async (...args: unknown[]) => {
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          ran = true;
          await between();
          return result;
        };
      },
    });
  const db = new Proxy(fileEnv().DB, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => (query.test(sql) && !ran ? afterRead(target.prepare(sql)) : target.prepare(sql));
      const value = Reflect.get(target, property) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const response = await worker.fetch(request, { ...env, [binding]: db }, createExecutionContext());
  return { status: response.status, body: (await response.json()) as Body, ran };
}

const updateFolder = (apiKey: string, body: unknown) =>
  new Request("http://salvo.test/api/v1/campaigns/update-folder", {
    method: "POST",
    headers: { "X-API-Key": apiKey, "Content-Type": "application/json", "CF-Connecting-IP": "10.9.8.7" },
    body: JSON.stringify(body),
  });

describe("update-folder's write", () => {
  it("changes only campaigns the caller still sees when it writes: one given to another client meanwhile is not found and stays filed", async () => {
    const { apiKey, y, xKey } = await twoClients();
    const campaign = await createCampaign(xKey);
    const accountFolder = await folder(apiKey, "Everyone's");
    expect((await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [campaign], folder_id: accountFolder })).status).toBe(200);
    // Client X unfiles it; the owner gives it to client Y right after X's request has checked the campaign is X's.
    const unfiled = await racing(updateFolder(xKey, { campaign_ids: [campaign], folder_id: null }), /from "campaigns"/i, async () => {
      expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: y })).status).toBe(200);
    });
    expect(unfiled.ran, "the move ran in between").toBe(true);
    expect(unfiled).toMatchObject({ status: 404, body: { ok: false, error: "Campaigns not found - one or more campaignIds are invalid.", not_found_campaign_ids: [campaign] } });
    expect(await folderOf(apiKey, campaign)).toBe(accountFolder);
  });
});

const foreignFolder = (...ids: number[]) => ({ status: 400, body: { ok: false, error: `Folder belongs to another client than these campaigns: ${ids.join(", ")}` } });

describe("update-folder between clients", () => {
  it("refuses the owner's key filing client Y's campaign in client X's folder, files nothing, and X never sees or counts it", async () => {
    const { apiKey, xKey, yKey, xFolder } = await twoClients();
    const [xCampaign, yCampaign] = [await createCampaign(xKey), await createCampaign(yKey)];
    expect(await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [yCampaign], folder_id: xFolder })).toEqual(foreignFolder(yCampaign));
    expect(await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [xCampaign, yCampaign], folder_id: xFolder })).toEqual(foreignFolder(yCampaign));
    const own = await createCampaign(apiKey);
    expect(await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [own], folder_id: xFolder })).toEqual(foreignFolder(own));
    for (const campaign of [xCampaign, yCampaign, own]) expect(await folderOf(apiKey, campaign)).toBeNull();
    expect((await get(xKey, "/api/v1/campaigns/folders")).body.data).toEqual([{ id: xFolder, name: "X only", campaign_count: 0, created_at: expect.any(String) }]);
    expect((await get(yKey, `/api/v1/campaigns/${yCampaign}`)).body.folder_id).toBeNull();
  });

  it("still files a client's campaign in that client's folder or an account-wide one", async () => {
    const { apiKey, xKey, yKey, xFolder } = await twoClients();
    const [xCampaign, yCampaign, own] = [await createCampaign(xKey), await createCampaign(yKey), await createCampaign(apiKey)];
    expect((await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [xCampaign], folder_id: xFolder })).body).toMatchObject({ ok: true, updated_campaign_ids: [xCampaign] });
    const everyone = await folder(apiKey, "Everyone's");
    const filed = await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [yCampaign, own], folder_id: everyone });
    expect(filed.body).toMatchObject({ ok: true, updated_campaign_ids: [yCampaign, own].sort((a, b) => a - b) });
    expect((await get(xKey, "/api/v1/campaigns/folders")).body.data).toEqual([{ id: xFolder, name: "X only", campaign_count: 1, created_at: expect.any(String) }]);
  });

  it("refuses, filing nothing, a campaign given to another client between the check and the write", async () => {
    const { apiKey, y, xKey, xFolder } = await twoClients();
    const [xCampaign, other] = [await createCampaign(xKey), await createCampaign(xKey)];
    const filed = await racing(updateFolder(apiKey, { campaign_ids: [xCampaign, other], folder_id: xFolder }), /from "campaigns"/i, async () => {
      expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: xCampaign, clientId: y })).status).toBe(200);
    });
    expect(filed.ran, "the move ran in between").toBe(true);
    expect({ status: filed.status, body: filed.body }).toEqual(foreignFolder(xCampaign));
    expect(await folderOf(apiKey, xCampaign)).toBeNull();
    expect(await folderOf(apiKey, other)).toBeNull();
  });
});

describe("a campaign given to another client", () => {
  it("leaves its old client's folder, and so do its subsequences, in the move; an account-wide folder keeps it", async () => {
    const { apiKey, y, xKey, yKey, xFolder } = await twoClients();
    const campaign = await createCampaign(xKey);
    const sub = (await post(apiKey, "/api/v1/campaigns/create-subsequence", { parent_campaign_id: campaign, subsequence_name: "Follow" })).body.id as number;
    const kept = await createCampaign(xKey);
    const everyone = await folder(apiKey, "Everyone's");
    expect((await post(xKey, "/api/v1/campaigns/update-folder", { campaign_ids: [campaign, sub], folder_id: xFolder })).body).toMatchObject({ updated: 2 });
    expect((await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [kept], folder_id: everyone })).body).toMatchObject({ updated: 1 });

    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: y })).status).toBe(200);
    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: kept, clientId: y })).status).toBe(200);
    expect(await folderOf(yKey, campaign)).toBeNull();
    expect(await folderOf(yKey, sub)).toBeNull();
    expect(await folderOf(yKey, kept)).toBe(everyone);
    expect((await get(xKey, "/api/v1/campaigns/folders")).body.data).toEqual([{ id: xFolder, name: "X only", campaign_count: 0, created_at: expect.any(String) }]);
    expect((await get(apiKey, "/api/v1/campaigns/folders")).body.data).toEqual([
      { id: xFolder, name: "X only", campaign_count: 0, created_at: expect.any(String) },
      { id: everyone, name: "Everyone's", campaign_count: 1, created_at: expect.any(String) },
    ]);
  });

  it("leaves its client's folder when it goes back to the account", async () => {
    const { apiKey, xKey, xFolder } = await twoClients();
    const campaign = await createCampaign(xKey);
    expect((await post(xKey, "/api/v1/campaigns/update-folder", { campaign_ids: [campaign], folder_id: xFolder })).body).toMatchObject({ updated: 1 });
    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: null })).status).toBe(200);
    expect(await folderOf(apiKey, campaign)).toBeNull();
  });
});

describe("a campaign's client changed through its settings", () => {
  it("leaves its old client's folder in the same write; an account-wide folder keeps it", async () => {
    const { apiKey, y, xKey, xFolder } = await twoClients();
    const [moved, kept] = [await createCampaign(xKey), await createCampaign(xKey)];
    const everyone = await folder(apiKey, "Everyone's");
    expect((await post(xKey, "/api/v1/campaigns/update-folder", { campaign_ids: [moved], folder_id: xFolder })).body).toMatchObject({ updated: 1 });
    expect((await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [kept], folder_id: everyone })).body).toMatchObject({ updated: 1 });
    for (const campaign of [moved, kept]) expect((await post(apiKey, `/api/v1/campaigns/${campaign}/settings`, { client_id: y })).status).toBe(200);
    expect(await folderOf(apiKey, moved)).toBeNull();
    expect(await folderOf(apiKey, kept)).toBe(everyone);
    expect((await get(xKey, "/api/v1/campaigns/folders")).body.data).toMatchObject([{ id: xFolder, campaign_count: 0 }]);
  });
});
