import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { setDelivery } from "../db";
import { call, callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { consumeDelivery, createWebhook, deliveriesOf, interceptReceiver, RECEIVER, signedBy } from "./fixtures";

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

type Created = { ok: boolean; id: number; webhook_url: string; data: Record<string, unknown>; secret?: string; error?: string; message?: string; details?: { path: string; message: string }[] };

function create(apiKey: string, body: Record<string, unknown>) {
  return callJson<Created>("/api/v1/webhook/create", { method: "POST", apiKey, body });
}

async function createOk(apiKey: string, body: Record<string, unknown>) {
  const answer = await create(apiKey, body);
  if (answer.status !== 200) throw new Error(`create failed with ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

describe("webhook/create, update, delete and read for every scope", () => {
  it("creates user, client and campaign webhooks in DL's form (numbers, maps) and VQ's form (strings, lists, aliases)", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const client = await createClient(k);
    const campaign = await createCampaign(k);

    const user = await createOk(k, { webhook_url: RECEIVER, association_type: 1, event_type_map: { EMAIL_REPLY: true, EMAIL_SENT: false, UNTRACKED_REPLIES: true }, name: "All" });
    expect(user).toEqual({ ok: true, id: expect.any(Number), webhook_url: RECEIVER, data: expect.any(Object), secret: expect.stringMatching(/^whsec_/) });
    expect(user.data).toMatchObject({
      id: user.id,
      association_type: "user",
      client_id: null,
      email_campaign_id: null,
      name: "All",
      event_types: ["EMAIL_REPLY", "UNTRACKED_REPLIES"],
      event_type_map: expect.objectContaining({ EMAIL_REPLY: true, EMAIL_SENT: false, UNTRACKED_REPLIES: true, EMAIL_ACCOUNT_DISCONNECTED: false }),
    });

    const forClient = await createOk(k, {
      webhook_url: `${RECEIVER}/client`,
      association_type: "CLIENT",
      client_id: String(client),
      event_types: ["LEAD_REPLIED", "email_opened"],
      categories: ["Interested"],
      webhook_type: "crm",
    });
    expect(forClient.data).toMatchObject({
      association_type: "client",
      client_id: client,
      name: "Webhook",
      webhook_type: "crm",
      event_types: ["EMAIL_OPEN", "EMAIL_REPLY"],
      categories: ["Interested"],
      category_id_map: { "1": "Interested" },
    });

    const forCampaign = await createOk(k, { webhook_url: `${RECEIVER}/campaign`, association_type: "3", campaign_id: campaign, event_type: "EMAIL_BOUNCED", category_id_map: { "2": true } });
    expect(forCampaign.data).toMatchObject({ association_type: "campaign", email_campaign_id: campaign, event_types: ["EMAIL_BOUNCE"], categories: ["Meeting Request"] });

    for (const hook of [user, forClient, forCampaign]) {
      const read = await callJson(`/api/v1/webhook/${hook.id}`, { apiKey: k });
      expect(read.body).toEqual({ ok: true, data: hook.data });
    }
    // Section 5's campaign list shows the campaign scope only.
    expect((await callJson<unknown[]>(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: k })).body.map((w) => (w as { id: number }).id)).toEqual([forCampaign.id]);
    const listed = await callJson<{ id: number }[]>("/api/v1/webhooks", { apiKey: k });
    expect(listed.body.map((w) => w.id)).toEqual([user.id, forClient.id, forCampaign.id]);
    expect((await callJson<{ id: number }[]>(`/api/v1/webhooks?association_type=client&client_id=${client}`, { apiKey: k })).body.map((w) => w.id)).toEqual([forClient.id]);
    expect((await callJson<{ id: number }[]>(`/api/v1/webhooks/?email_campaign_id=${campaign}`, { apiKey: k })).body.map((w) => w.id)).toEqual([forCampaign.id]);
  });

  it("answers the contract's 422s: unknown kinds by name, LinkedIn, no kind on, a missing target", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const bad = await create(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT", "EMAIL_TELEPORTED"] });
    expect(bad.status).toBe(422);
    expect(bad.body.details).toEqual([{ path: "event_types.1", message: "Invalid event_types - EMAIL_TELEPORTED" }]);
    const linkedIn = await create(k, { webhook_url: RECEIVER, association_type: "user", event_type_map: { LINKEDIN_DISCONNECTED: true } });
    expect(linkedIn.status).toBe(422);
    expect(linkedIn.body.details![0]!.message).toBe("Invalid event_types - LINKEDIN_DISCONNECTED");
    const none = await create(k, { webhook_url: RECEIVER, association_type: "user", event_type_map: { EMAIL_SENT: false } });
    expect(none.status).toBe(422);
    expect((await create(k, { webhook_url: RECEIVER, association_type: "campaign", event_types: ["EMAIL_SENT"] })).status).toBe(422);
    expect((await create(k, { webhook_url: RECEIVER, association_type: "team", event_types: ["EMAIL_SENT"] })).status).toBe(422);
    expect((await create(k, { webhook_url: "http://10.0.0.1/x", association_type: "user", event_types: ["EMAIL_SENT"] })).status).toBe(422);
    const campaign = await createCampaign(k);
    const disconnected = await create(k, { webhook_url: RECEIVER, association_type: "campaign", email_campaign_id: campaign, event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] });
    expect(disconnected.status).toBe(422);
    expect((await create(k, { webhook_url: RECEIVER, association_type: "client", client_id: 999999, event_types: ["EMAIL_SENT"] })).body).toEqual({ error: "Client not found" });
  });

  it("updates the similar webhook without force_create and makes a new one with it", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const first = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    const again = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_OPEN"], name: "Renamed" });
    expect(again.id).toBe(first.id);
    expect(again.secret).toBeUndefined();
    expect(again.data).toMatchObject({ name: "Renamed", event_types: ["EMAIL_OPEN"] });
    const forced = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_OPEN"], force_create: true });
    expect(forced.id).not.toBe(first.id);
    expect(forced.secret).toMatch(/^whsec_/);
  });

  it("updates with PUT webhook/update/{id} (scope fixed) and deletes by body and by path", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const hook = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    const updated = await callJson<{ ok: boolean; id: number; message: string; data: Record<string, unknown> }>(`/api/v1/webhook/update/${hook.id}`, {
      method: "PUT",
      apiKey: k,
      body: { name: "New name", webhook_url: `${RECEIVER}/v2`, event_type_map: { EMAIL_REPLY: true }, category_id_map: { "1": true }, association_type: "client" },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ ok: true, id: hook.id, message: "Webhook saved successfully" });
    expect(updated.body.data).toMatchObject({ name: "New name", webhook_url: `${RECEIVER}/v2`, association_type: "user", event_types: ["EMAIL_REPLY"], categories: ["Interested"] });
    expect((await callJson(`/api/v1/webhook/update/${hook.id}`, { method: "PUT", apiKey: k, body: { event_types: ["NOPE"] } })).status).toBe(422);

    const other = await createOk(k, { webhook_url: `${RECEIVER}/other`, association_type: "user", event_types: ["EMAIL_SENT"] });
    expect((await callJson("/api/v1/webhook/delete", { method: "DELETE", apiKey: k, body: { id: String(hook.id) } })).body).toEqual({ ok: true });
    expect((await callJson(`/api/v1/webhook/delete/${other.id}/`, { method: "DELETE", apiKey: k })).body).toEqual({ ok: true });
    expect((await callJson(`/api/v1/webhook/${hook.id}`, { apiKey: k })).status).toBe(404);
    expect((await callJson(`/api/v1/webhook/delete/${other.id}`, { method: "DELETE", apiKey: k })).status).toBe(404);
  });

  it("serves BC's /webhooks forms: client scope with client_id, else user; PATCH and DELETE by id", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const client = await createClient(k);
    const user = await callJson<Created>("/api/v1/webhooks", { method: "POST", apiKey: k, body: { name: "BC", url: RECEIVER, events: ["EMAIL_SENT"] } });
    expect(user.status).toBe(200);
    expect(user.body.data).toMatchObject({ association_type: "user", name: "BC", webhook_url: RECEIVER });
    const forClient = await callJson<Created>("/api/v1/webhooks", { method: "POST", apiKey: k, body: { name: "BC2", url: RECEIVER, events: ["EMAIL_SENT"], client_id: client } });
    expect(forClient.body.data).toMatchObject({ association_type: "client", client_id: client });
    const patched = await callJson<{ data: Record<string, unknown> }>(`/api/v1/webhooks/${user.body.id}`, { method: "PATCH", apiKey: k, body: { url: `${RECEIVER}/p`, events: ["EMAIL_OPEN"] } });
    expect(patched.body.data).toMatchObject({ webhook_url: `${RECEIVER}/p`, event_types: ["EMAIL_OPEN"], name: "BC" });
    expect((await callJson(`/api/v1/webhooks/${user.body.id}`, { method: "DELETE", apiKey: k })).body).toEqual({ ok: true });
    expect((await callJson<{ id: number }[]>("/api/v1/webhooks", { apiKey: k })).body.map((w) => w.id)).toEqual([forClient.body.id]);
  });

  it("lets a client key manage only its client's and its campaigns' webhooks, never the account's", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const mine = await createClient(k, "Mine", "mine@c.example");
    const theirs = await createClient(k, "Theirs", "theirs@c.example");
    const key = (await createClientKey(k, mine)).api_key;
    const ownCampaign = await createCampaign(k, { client_id: mine });
    const otherCampaign = await createCampaign(k, { client_id: theirs });
    const accountHook = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    const theirHook = await createOk(k, { webhook_url: RECEIVER, association_type: "client", client_id: theirs, event_types: ["EMAIL_SENT"] });

    const user = await create(key, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    expect(user.status).toBe(401);
    expect(user.body).toEqual({ message: "This API key cannot manage account-level webhooks" });
    const own = await create(key, { webhook_url: RECEIVER, association_type: "client", event_types: ["EMAIL_SENT"] });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ association_type: "client", client_id: mine });
    expect((await create(key, { webhook_url: RECEIVER, association_type: "client", client_id: theirs, event_types: ["EMAIL_SENT"] })).body).toEqual({ error: "Client not found" });
    expect((await create(key, { webhook_url: RECEIVER, association_type: "campaign", email_campaign_id: otherCampaign, event_types: ["EMAIL_SENT"] })).status).toBe(404);
    const ownCampaignHook = await create(key, { webhook_url: RECEIVER, association_type: "campaign", email_campaign_id: ownCampaign, event_types: ["EMAIL_SENT"] });
    expect(ownCampaignHook.status).toBe(200);

    for (const foreign of [accountHook.id, theirHook.id]) {
      expect((await callJson(`/api/v1/webhook/${foreign}`, { apiKey: key })).body).toEqual({ error: "Webhook not found" });
      expect((await callJson(`/api/v1/webhook/update/${foreign}`, { method: "PUT", apiKey: key, body: { name: "x" } })).status).toBe(404);
      expect((await callJson(`/api/v1/webhook/delete/${foreign}`, { method: "DELETE", apiKey: key })).status).toBe(404);
      expect((await callJson(`/api/v1/webhook/${foreign}/deliveries`, { apiKey: key })).status).toBe(404);
    }
    expect((await callJson<{ id: number }[]>("/api/v1/webhooks", { apiKey: key })).body.map((w) => w.id)).toEqual([own.body.id, ownCampaignHook.body.id]);
    // Another account sees none of them.
    const stranger = await provisionAccount();
    expect((await callJson(`/api/v1/webhook/${own.body.id}`, { apiKey: stranger.apiKey })).status).toBe(404);
    expect((await callJson<unknown[]>("/api/v1/webhooks", { apiKey: stranger.apiKey })).body).toEqual([]);
  });
});

describe("section 5's campaign route", () => {
  it("creates on `\"id\": null` (C1) and stores the docs' aliases as their kinds", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const saved = await callJson<{ ok: boolean; data: { event_types: string[] }; secret?: string }>(`/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { id: null, name: "acc-hook", webhook_url: RECEIVER, event_types: ["LEAD_REPLIED", "LEAD_OPENED"], categories: [] },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.secret).toMatch(/^whsec_/);
    expect(saved.body.data.event_types).toEqual(["EMAIL_OPEN", "EMAIL_REPLY"]);
  });
});

describe("who receives an event", () => {
  it("delivers to the account's user webhooks, the campaign's client's and the campaign's, one each even on one URL, with category filters per webhook", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const client = await createClient(k, "A", "a@c.example");
    const otherClient = await createClient(k, "B", "b@c.example");
    const campaign = await createCampaign(k, { client_id: client });
    const otherCampaign = await createCampaign(k, { client_id: otherClient });
    await addLeads(k, campaign, ["lead@who.example"]);
    const user = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_REPLY"] });
    const forClient = await createOk(k, { webhook_url: RECEIVER, association_type: "client", client_id: client, event_types: ["EMAIL_REPLY"], force_create: true });
    const forCampaign = await createWebhook(k, campaign, { webhook_url: RECEIVER, event_types: ["EMAIL_REPLY"] });
    const filteredOut = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_REPLY"], categories: [2], force_create: true });
    const otherClientHook = await createOk(k, { webhook_url: RECEIVER, association_type: "client", client_id: otherClient, event_types: ["EMAIL_REPLY"] });
    const otherCampaignHook = await createWebhook(k, otherCampaign, { event_types: ["EMAIL_REPLY"] });
    const stranger = await provisionAccount();
    const strangerHook = await createOk(stranger.apiKey, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_REPLY"] });

    await ingestOk(k, campaign, [{ type: "REPLY", event_id: "r-1", lead_email: "lead@who.example", occurred_at: "2026-03-04T10:00:00Z", body: "Hi", category_id: 1 }]);
    for (const hook of [user.id, forClient.id, forCampaign.id]) {
      const deliveries = await deliveriesOf(hook);
      expect(deliveries.map((d) => d.event_type)).toEqual(["EMAIL_REPLY"]);
      expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({ webhook_id: hook, campaign_id: campaign, client_id: client });
    }
    for (const hook of [filteredOut.id, otherClientHook.id, otherCampaignHook.id, strangerHook.id]) expect(await deliveriesOf(hook)).toEqual([]);
    // The campaign's summary counts every scope's deliveries of its events.
    const summary = await callJson<{ data: { total: number } }>(`/api/v1/campaigns/${campaign}/webhooks/summary`, { apiKey: k });
    expect(summary.body.data.total).toBe(3);
  });

  it("sends X-Webhook-Level, X-Request-Id (= webhook-id) and X-Smartlead-Signature over the raw body", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    await addLeads(k, campaign, ["sig@who.example"]);
    const hook = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    await ingestOk(k, campaign, [{ type: "SENT", lead_email: "sig@who.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    const [delivery] = await deliveriesOf(hook.id);
    await consumeDelivery(delivery!.id);
    const { request, body } = receiver.received.at(-1)!;
    expect(request.headers.get("X-Webhook-Level")).toBe("user");
    expect(request.headers.get("X-Request-Id")).toBe(request.headers.get("webhook-id"));
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(hook.secret!), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
    expect(request.headers.get("X-Smartlead-Signature")).toBe(`sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`);
    expect(JSON.parse(body)).toMatchObject({ webhook_url: RECEIVER, event_type: "EMAIL_SENT", metadata: { webhook_created_at: hook.data.created_at } });
  });
});

describe("delivery log and redelivery", () => {
  it("lists a webhook's deliveries with every attempt's status code and response time and the next retry, and sends one again", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    await addLeads(k, campaign, ["log@who.example"]);
    const hook = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    await ingestOk(k, campaign, [{ type: "SENT", lead_email: "log@who.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    const [delivery] = await deliveriesOf(hook.id);
    receiver.respondWith(() => new Response("down", { status: 503 }));
    await consumeDelivery(delivery!.id);

    type Log = { data: { id: number; status: string; attempts: number; next_retry_at: string | null; attempt_log: { status_code: number; outcome: string; response_time_ms: number }[] }[]; next_before: number | null };
    const log = await callJson<Log>(`/api/v1/webhook/${hook.id}/deliveries`, { apiKey: k });
    expect(log.status).toBe(200);
    expect(log.body.next_before).toBeNull();
    expect(log.body.data).toEqual([
      expect.objectContaining({ id: delivery!.id, status: "pending", last_status_code: 503, next_retry_at: expect.stringMatching(/Z$/) }),
    ]);
    // The queue may have made an attempt of its own besides ours: each one is logged.
    const [logged] = log.body.data;
    expect(logged!.attempt_log).toHaveLength(logged!.attempts);
    expect(logged!.attempt_log.at(-1)).toMatchObject({ status_code: 503, outcome: "retry", response_time_ms: expect.any(Number) });
    const pending = await callJson(`/api/v1/webhook/${hook.id}/deliveries/${delivery!.id}/redeliver`, { method: "POST", apiKey: k });
    expect(pending.status).toBe(400);

    receiver.respondWith(() => new Response("gone wrong", { status: 400 }));
    await consumeDelivery(delivery!.id);
    const one = await callJson<{ data: { status: string; payload: Record<string, unknown>; attempt_log: unknown[] } }>(`/api/v1/webhook/${hook.id}/deliveries/${delivery!.id}`, { apiKey: k });
    expect(one.body.data).toMatchObject({ status: "failed", next_retry_at: null, payload: expect.objectContaining({ event_type: "EMAIL_SENT" }) });
    expect(one.body.data.attempt_log.at(-1)).toMatchObject({ status_code: 400, outcome: "failed" });

    const redelivered = await callJson(`/api/v1/webhook/${hook.id}/deliveries/${delivery!.id}/redeliver`, { method: "POST", apiKey: k });
    expect(redelivered.body).toEqual({ ok: true, success: true, message: "Delivery queued", data: { delivery_id: delivery!.id, status: "pending" } });
    receiver.respondWith(() => new Response("ok"));
    await consumeDelivery(delivery!.id);
    const after = await deliveriesOf(hook.id);
    expect(after.map((d) => [d.status, d.message_id])).toEqual([["delivered", delivery!.message_id]]);
    expect((await callJson(`/api/v1/webhook/${hook.id}/deliveries/999999`, { apiKey: k })).status).toBe(404);
  });

  it("rotates the signing secret of a user-scope webhook: deliveries verify with the new one", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    await addLeads(k, campaign, ["rot@who.example"]);
    const hook = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    const rotated = await callJson<{ ok: boolean; secret: string }>(`/api/v1/webhook/${hook.id}/rotate-secret`, { method: "POST", apiKey: k });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    await ingestOk(k, campaign, [{ type: "SENT", lead_email: "rot@who.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    const [delivery] = await deliveriesOf(hook.id);
    await consumeDelivery(delivery!.id);
    const { request, body } = receiver.received.at(-1)!;
    expect(await signedBy([rotated.body.secret, hook.secret!], request.headers, body)).toEqual([rotated.body.secret, hook.secret]);
    const stranger = await provisionAccount();
    expect((await callJson(`/api/v1/webhook/${hook.id}/rotate-secret`, { method: "POST", apiKey: stranger.apiKey })).status).toBe(404);
  });

  it("serves POST campaigns/{id}/retrigger-webhooks as retrigger-failed-events, body optional", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    await addLeads(k, campaign, ["rt@who.example"]);
    const hook = await createOk(k, { webhook_url: RECEIVER, association_type: "user", event_types: ["EMAIL_SENT"] });
    await ingestOk(k, campaign, [{ type: "SENT", lead_email: "rt@who.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    const [delivery] = await deliveriesOf(hook.id);
    await setDelivery(delivery!.id, { status: "failed", nextAttemptAt: null });
    const answer = await call(`/api/v1/campaigns/${campaign}/retrigger-webhooks`, { method: "POST", apiKey: k });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true, requeued: 1 });
    expect((await deliveriesOf(hook.id))[0]!.status).toBe("pending");
  });
});
