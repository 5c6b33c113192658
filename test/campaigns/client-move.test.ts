import { describe, expect, it } from "vitest";
import { accountWithTwoClients } from "../helpers";
import { manualBody } from "../deliverability/fixtures";
import { createCampaign, get, post } from "./fixtures";

/**
 * A campaign given to another client (CONTRACT 11's settings `client_id`, 21.1's assign-client): both
 * routes make the same move, so what the new and the old client see afterwards is the same.
 */

const moves = {
  "assign-client": (apiKey: string, campaign: number, client: number | null) => post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: client }),
  "settings' client_id": (apiKey: string, campaign: number, client: number | null) => post(apiKey, `/api/v1/campaigns/${campaign}/settings`, { client_id: client }),
};

/** Client X's campaign with a subsequence, both carrying X's tag, and a spam test of the campaign. */
async function xFamily(apiKey: string, xKey: string) {
  const campaign = await createCampaign(xKey);
  const sub = (await post(apiKey, "/api/v1/campaigns/create-subsequence", { parent_campaign_id: campaign, subsequence_name: "Follow" })).body.id as number;
  const tag = (await post(xKey, "/api/v1/tags", { name: "x-only" })).body.data as { id: number };
  expect((await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [campaign, sub], tagIds: [tag.id] })).body).toMatchObject({ ok: true, added: 2 });
  const test = await post(xKey, "/api/v1/spam-test/manual", manualBody(campaign));
  expect(test.status, JSON.stringify(test.body)).toBe(200);
  return { campaign, sub, test: test.body.id as string };
}

const tagIds = async (apiKey: string, campaign: number) => ((await get(apiKey, `/api/v1/campaigns/${campaign}`)).body.tags as { id: number }[]).map((tag) => tag.id);

describe.each(Object.entries(moves))("a campaign given to another client through %s", (_, move) => {
  it("takes its subsequences along, leaves its old client's tags, and takes its spam tests to the new client", async () => {
    const { apiKey, y, xKey, yKey } = await accountWithTwoClients();
    const { campaign, sub, test } = await xFamily(apiKey, xKey);

    expect((await move(apiKey, campaign, y)).status).toBe(200);

    for (const id of [campaign, sub]) {
      const read = await get(yKey, `/api/v1/campaigns/${id}`);
      expect(read, `campaign ${id}`).toMatchObject({ status: 200, body: { client_id: y, tags: [] } });
      expect((await get(xKey, `/api/v1/campaigns/${id}`)).status, `campaign ${id} for the old client`).toBe(404);
      expect(await tagIds(apiKey, id), "no old scope's tag stays on it").toEqual([]);
    }
    expect(await get(yKey, `/api/v1/spam-test/${test}`)).toMatchObject({ status: 200, body: { client_id: String(y) } });
    expect((await get(xKey, `/api/v1/spam-test/${test}`)).status).toBe(404);
  });

  it("takes the family back to the account the same way", async () => {
    const { apiKey, xKey } = await accountWithTwoClients();
    const { campaign, sub, test } = await xFamily(apiKey, xKey);

    expect((await move(apiKey, campaign, null)).status).toBe(200);

    for (const id of [campaign, sub]) {
      expect((await get(apiKey, `/api/v1/campaigns/${id}`)).body).toMatchObject({ client_id: null, tags: [] });
      expect((await get(xKey, `/api/v1/campaigns/${id}`)).status).toBe(404);
    }
    expect((await get(xKey, `/api/v1/spam-test/${test}`)).status).toBe(404);
    expect((await get(apiKey, `/api/v1/spam-test/${test}`)).body).toMatchObject({ client_id: null });
  });
});

describe("a campaign's client through its settings", () => {
  it("refuses a subsequence another client than its parent's, as assign-client does, and stores none of the post", async () => {
    const { apiKey, x, y, xKey } = await accountWithTwoClients();
    const { sub } = await xFamily(apiKey, xKey);
    expect(await post(apiKey, `/api/v1/campaigns/${sub}/settings`, { client_id: y, name: "Renamed" })).toEqual({ status: 400, body: { error: "Cannot assign client to a sub sequence!" } });
    expect((await get(apiKey, `/api/v1/campaigns/${sub}`)).body).toMatchObject({ client_id: x, name: "Follow" });
  });

  it("takes the client it already has as no change, for the campaign and a subsequence alike, and keeps its tags", async () => {
    const { apiKey, x, xKey } = await accountWithTwoClients();
    const { campaign, sub } = await xFamily(apiKey, xKey);
    for (const id of [campaign, sub]) {
      expect((await post(xKey, `/api/v1/campaigns/${id}/settings`, { client_id: x, follow_up_percentage: 50 })).status).toBe(200);
      expect((await get(xKey, `/api/v1/campaigns/${id}`)).body).toMatchObject({ client_id: x, follow_up_percentage: 50 });
      expect(await tagIds(apiKey, id)).toHaveLength(1);
    }
  });
});
