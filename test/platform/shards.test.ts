import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { ID_BLOCK_SPAN } from "../../src/platform/shards";
import type { TrackedEvent } from "../../src/tracking/queue-message";
import { digestKey, mintKey } from "../../src/keys/rules";
import type { DeliveryMessage } from "../../src/webhooks/queue-message";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { openHit } from "../tracking/fixtures";
import { createWebhook, storeDelivery } from "../webhooks/fixtures";
import { ADMIN_TOKEN, callJson, env, provisionAccount } from "../helpers";

/**
 * The shard path end to end, with accounts placed on each shard explicitly (the rest of the suite runs
 * each file on one shard): where rows land, how keys, sessions, links, queue batches, the cron and the
 * operator's routes find their shard, and what a deployment from before shards keeps working.
 */

const shardDb = (shard: number) => (shard === 0 ? env.DB : env.DB_1);

async function rowsIn(shard: number, table: string, id: number): Promise<number> {
  return (await shardDb(shard).prepare(`SELECT count(*) AS n FROM ${table} WHERE id = ?`).bind(id).first<{ n: number }>())!.n;
}

async function accountWithLead(shard: number) {
  const account = await provisionAccount({ shard });
  const campaign = await createCampaign(account.apiKey, { name: `Shard ${shard}` });
  const email = `lead-${crypto.randomUUID()}@shards.example`;
  const record = (await addLeads(account.apiKey, campaign, [email]))[email]!;
  return { account, campaign, record };
}

describe("shards", () => {
  it("places an account where the operator says, and keeps its email unique across shards", async () => {
    const email = `owner-${crypto.randomUUID()}@shards.example`;
    const placed = await callJson<{ id: number; shard: number }>("/admin/v1/accounts", {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { email, name: "Owner", shard: 1 },
    });
    expect(placed).toMatchObject({ status: 201, body: { shard: 1 } });
    expect(await env.DB_1.prepare("SELECT email FROM accounts WHERE id = ?").bind(placed.body.id).first()).toEqual({ email });
    expect(await env.DB.prepare("SELECT 1 FROM accounts WHERE id = ?").bind(placed.body.id).first()).toBeNull();
    const again = await callJson("/admin/v1/accounts", { method: "POST", headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { email, name: "Twin", shard: 0 } });
    expect(again).toMatchObject({ status: 400, body: { error: "An account with this email already exists" } });
    const unbound = await callJson("/admin/v1/accounts", { method: "POST", headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { email: `x-${email}`, name: "Nowhere", shard: 7 } });
    expect(unbound.status).toBe(400);
  });

  it("places an account the operator does not place on the shard with the smallest database", async () => {
    const sizes = await Promise.all([env.DB, env.DB_1].map(async (db) => (await db.prepare("SELECT 1").run()).meta.size_after));
    // Make the difference plain: 1 MB more on the shard that is larger already.
    const roomier = sizes[0]! <= sizes[1]! ? 0 : 1;
    const filler = shardDb(1 - roomier);
    await filler.prepare("CREATE TABLE IF NOT EXISTS _test_filler (pad TEXT)").run();
    await filler.prepare("INSERT INTO _test_filler SELECT hex(randomblob(500)) FROM json_each(?)").bind(JSON.stringify(Array.from({ length: 1000 }, (_, i) => i))).run();
    const placed = await callJson<{ shard: number }>("/admin/v1/accounts", {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { email: `roomy-${crypto.randomUUID()}@shards.example`, name: "Roomy" },
    });
    expect(placed).toMatchObject({ status: 201, body: { shard: roomier } });
  });

  it("gives the directory's reservation back when the shard refuses the account", async () => {
    const email = `stray-${crypto.randomUUID()}@shards.example`;
    // A row the directory does not know (as a failed provisioning could leave) holds the email on shard 1.
    await env.DB_1.prepare("INSERT INTO accounts (id, email, name, created_at) VALUES (?, ?, 'Stray', ?)").bind(7_000_000 + Math.floor(Math.random() * 100_000), email, Date.now()).run();
    const refused = await callJson("/admin/v1/accounts", { method: "POST", headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { email, name: "Owner", shard: 1 } });
    expect(refused.status).toBe(400);
    expect(await env.DIRECTORY.prepare("SELECT 1 FROM directory_accounts WHERE email = ?").bind(email).first()).toBeNull();
  });

  it("puts an account's rows on its shard only, under ids of that shard's range", async () => {
    for (const shard of [0, 1]) {
      const { campaign, record } = await accountWithLead(shard);
      for (const id of [campaign, record]) expect(Math.floor(id / ID_BLOCK_SPAN)).toBe(shard);
      expect(await rowsIn(shard, "campaigns", campaign)).toBe(1);
      expect(await rowsIn(1 - shard, "campaigns", campaign)).toBe(0);
      expect(await rowsIn(shard, "campaign_leads", record)).toBe(1);
    }
  });

  it("keeps working a key from before shards (on shard 0, unknown to the directory), and lists it", async () => {
    const key = await mintKey("account");
    const keyHash = await digestKey(key.value);
    const id = 8_000_000 + Math.floor(Math.random() * 100_000);
    await env.DB.batch([
      env.DB.prepare("INSERT INTO accounts (id, email, name, created_at) VALUES (?, ?, 'Legacy', ?)").bind(id, `legacy-${id}@shards.example`, Date.now()),
      env.DB.prepare("INSERT INTO account_keys (account_id, key_hash, last4, created_at) VALUES (?, ?, ?, ?)").bind(id, keyHash, key.last4, Date.now()),
    ]);
    const { status } = await callJson("/api/v1/campaigns", { apiKey: key.value });
    expect(status).toBe(200);
    expect(await env.DIRECTORY.prepare("SELECT account_id FROM directory_keys WHERE key_hash = ?").bind(keyHash).first()).toEqual({ account_id: id });
  });

  it("signs a web session in on the account's shard: the token names it", async () => {
    const { account } = await accountWithLead(1);
    const origin = "https://app.salvo.test";
    const signIn = await exports.default.fetch(new Request(`${origin}/api/v1/sessions`, { method: "POST", headers: { "X-API-Key": account.apiKey, "Sec-Fetch-Site": "same-origin" } }));
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get("Set-Cookie")!.split(";")[0]!;
    expect(cookie).toMatch(/=s1\./);
    const me = await exports.default.fetch(new Request(`${origin}/api/v1/campaigns`, { headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" } }));
    expect(me.status).toBe(200);
    expect(((await me.json()) as { name: string }[]).map((c) => c.name)).toEqual(["Shard 1"]);
  });

  it("records one tracking batch holding hits of both shards, each on its record's shard", async () => {
    const [zero, one] = [await accountWithLead(0), await accountWithLead(1)];
    const batch = createMessageBatch<TrackedEvent>("salvo-tracking", [
      { id: "a", timestamp: new Date(), attempts: 1, body: openHit(zero.record) },
      { id: "b", timestamp: new Date(), attempts: 1, body: openHit(one.record) },
      // A record id of a shard this deployment does not bind: recorded nowhere, and no failure.
      { id: "c", timestamp: new Date(), attempts: 1, body: openHit(5 * ID_BLOCK_SPAN + 1) },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);
    for (const [shard, { record }] of [[0, zero], [1, one]] as const) {
      const opened = await shardDb(shard).prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND type = 'OPEN'").bind(record).first<{ n: number }>();
      expect(opened!.n).toBe(1);
    }
  });

  it("hands each shard's part of a webhook batch to the consumer on that shard", async () => {
    const deliveries = [];
    for (const shard of [0, 1]) {
      const { account, campaign } = await accountWithLead(shard);
      const webhook = await createWebhook(account.apiKey, campaign);
      deliveries.push((await storeDelivery(account.id, webhook.id, campaign)).deliveryId);
    }
    // The dead-letter consumer marks each delivery failed on the shard it reads it from.
    const batch = createMessageBatch<DeliveryMessage>(
      "salvo-webhooks-dlq",
      deliveries.map((deliveryId) => ({ id: `d-${deliveryId}`, timestamp: new Date(), attempts: 7, body: { deliveryId } })),
    );
    await worker.queue(batch, env);
    for (const deliveryId of deliveries) {
      expect(await shardDb(Math.floor(deliveryId / ID_BLOCK_SPAN)).prepare("SELECT status FROM webhook_deliveries WHERE id = ?").bind(deliveryId).first()).toEqual({ status: "failed" });
    }
  });

  it("keeps the operator's seed mailboxes on every shard under one id", async () => {
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const created = await callJson<{ id: number }>("/admin/v1/seed-mailboxes", { method: "POST", headers: admin, body: { provider_id: "naver", email: `seed-${crypto.randomUUID()}@shards.example` } });
    expect(created.status).toBe(200);
    for (const shard of [0, 1]) expect(await rowsIn(shard, "seed_mailboxes", created.body.id)).toBe(1);
    expect((await callJson(`/admin/v1/seed-mailboxes/${created.body.id}`, { method: "DELETE", headers: admin })).status).toBe(200);
    for (const shard of [0, 1]) expect(await rowsIn(shard, "seed_mailboxes", created.body.id)).toBe(0);
  });

  it("runs the minute cron's jobs on every shard", async () => {
    const [zero, one] = [await accountWithLead(0), await accountWithLead(1)];
    const past = Date.now() - 60_000;
    for (const [shard, { record }] of [[0, zero], [1, one]] as const) {
      await shardDb(shard).prepare("UPDATE campaign_leads SET snoozed_until = ?, is_archived = 0 WHERE id = ?").bind(past, record).run();
    }
    await worker.scheduled!(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env);
    for (const [shard, { record }] of [[0, zero], [1, one]] as const) {
      expect(await shardDb(shard).prepare("SELECT snoozed_until FROM campaign_leads WHERE id = ?").bind(record).first()).toEqual({ snoozed_until: null });
    }
  });

  it("answers an operator's route on a shard-1 account from that shard, and a mailbox id of an unbound shard with 404", async () => {
    const { account } = await accountWithLead(1);
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const minted = await callJson<{ api_key: string }>(`/admin/v1/accounts/${account.id}/api-keys`, { method: "POST", headers: admin });
    expect(minted.status).toBe(201);
    expect((await callJson("/api/v1/campaigns", { apiKey: minted.body.api_key })).status).toBe(200);
    const disabled = await callJson(`/admin/v1/accounts/${account.id}`, { method: "PATCH", headers: admin, body: { disabled: true } });
    expect(disabled).toMatchObject({ status: 200, body: { id: account.id, shard: 1, disabled: true } });
    expect((await callJson("/api/v1/campaigns", { apiKey: account.apiKey })).status).toBe(401);
    const nowhere = await callJson(`/admin/v1/email-accounts/${5 * ID_BLOCK_SPAN + 1}/sender-pass`, { method: "POST", headers: admin });
    expect(nowhere.status).toBe(404);
  });
});
