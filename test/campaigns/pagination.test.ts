import { describe, expect, it } from "vitest";
import { callJson, createClient, provisionAccount } from "../helpers";
import { createCampaign } from "./fixtures";
import { createWebhook } from "../webhooks/fixtures";

async function ids(path: string, apiKey: string): Promise<number[]> {
  const { status, body } = await callJson<{ id: number }[]>(path, { apiKey });
  expect(status, path).toBe(200);
  expect(Array.isArray(body), path).toBe(true);
  return body.map((row) => row.id);
}

/** Walks a listing by cursor, adding a row after each page: every row is seen once, in id order. */
async function walk(path: string, apiKey: string, addRow: () => Promise<number>) {
  const seen: number[] = [];
  const added: number[] = [];
  let cursor: number | undefined;
  for (;;) {
    const page = await ids(`${path}${path.includes("?") ? "&" : "?"}limit=2${cursor === undefined ? "" : `&starting_after=${cursor}`}`, apiKey);
    if (page.length === 0) break;
    seen.push(...page);
    cursor = page.at(-1);
    if (added.length < 2) added.push(await addRow());
  }
  return { seen, added };
}

describe("paged bare-array listings", () => {
  it("pages campaigns by offset/limit and by starting_after, staying right while campaigns are added", async () => {
    const account = await provisionAccount();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createCampaign(account.apiKey, { name: `c${i}` }));
    expect(await ids("/api/v1/campaigns", account.apiKey)).toEqual(created);
    expect(await ids("/api/v1/campaigns/?offset=1&limit=2", account.apiKey)).toEqual(created.slice(1, 3));
    expect(await ids(`/api/v1/campaigns?starting_after=${created[2]}`, account.apiKey)).toEqual(created.slice(3));
    const { seen, added } = await walk("/api/v1/campaigns", account.apiKey, () => createCampaign(account.apiKey));
    expect(seen).toEqual([...created, ...added]);
    expect((await callJson("/api/v1/campaigns?limit=0", { apiKey: account.apiKey })).status).toBe(422);
    expect((await callJson("/api/v1/campaigns?limit=1001", { apiKey: account.apiKey })).status).toBe(422);
  });

  it("pages clients the same way", async () => {
    const account = await provisionAccount();
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createClient(account.apiKey, `Client ${i}`, `c${i}@clients.example`));
    expect(await ids("/api/v1/client/?limit=2", account.apiKey)).toEqual(created.slice(0, 2));
    expect(await ids(`/api/v1/client?starting_after=${created[0]}&limit=1`, account.apiKey)).toEqual([created[1]]);
    const { seen, added } = await walk("/api/v1/client", account.apiKey, () => createClient(account.apiKey, "New", `n${Math.random()}@clients.example`));
    expect(seen).toEqual([...created, ...added]);
  });

  it("pages a campaign's webhooks the same way", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const created = [];
    for (let i = 0; i < 3; i++) created.push((await createWebhook(account.apiKey, campaign, { name: `hook ${i}` })).id);
    const path = `/api/v1/campaigns/${campaign}/webhooks`;
    expect(await ids(path, account.apiKey)).toEqual(created);
    expect(await ids(`${path}?offset=2`, account.apiKey)).toEqual(created.slice(2));
    const { seen, added } = await walk(path, account.apiKey, async () => (await createWebhook(account.apiKey, campaign)).id);
    expect(seen).toEqual([...created, ...added]);
  });

  it("pages the global webhook list (every scope) the same way", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const create = async (name: string) =>
      (await callJson<{ id: number }>("/api/v1/webhook/create", {
        method: "POST",
        apiKey: account.apiKey,
        body: { name, webhook_url: "https://hooks.example.com/paged", association_type: "user", event_types: ["EMAIL_REPLY"], force_create: true },
      })).body.id;
    const created = [await create("a"), (await createWebhook(account.apiKey, campaign)).id, await create("c")];
    expect(await ids("/api/v1/webhooks", account.apiKey)).toEqual(created);
    expect(await ids("/api/v1/webhooks?offset=1&limit=1", account.apiKey)).toEqual([created[1]]);
    const { seen, added } = await walk("/api/v1/webhooks", account.apiKey, () => create("added"));
    expect(seen).toEqual([...created, ...added]);
  });
});
