import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks/queue-message";
import { webhookRow } from "../db";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createWebhook, deliveriesOf, insertDelivery, interceptReceiver, RECEIVER } from "./fixtures";

/** A webhook's life around its deliveries: a body R2 cannot give, a 410 and what turns it back on. */

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

/** Runs the webhook queue's consumer over these deliveries' messages, as the platform would. */
async function consume(deliveryIds: number[], envOverride: Partial<Cloudflare.Env> = {}) {
  const batch = createMessageBatch<DeliveryMessage>(
    "salvo-webhooks",
    deliveryIds.map((deliveryId) => ({ id: `m-${deliveryId}`, timestamp: new Date(), attempts: 1, body: { deliveryId } })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...fileEnv(), ...envOverride });
  return getQueueResult(batch, ctx);
}

describe("a webhook's deliveries", () => {
  it("record a body R2 cannot give as that delivery's failed attempt, retried; the batch's other deliveries are recorded as sent, not sent again", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const hook = await createWebhook(account.apiKey, campaign);
    const plain = await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId: campaign, eventType: "EMAIL_SENT", payload: { event_type: "EMAIL_SENT" } });
    const large = await insertDelivery({
      accountId: account.id,
      webhookId: hook.id,
      campaignId: campaign,
      eventType: "EMAIL_REPLY",
      payload: { event_type: "EMAIL_REPLY", reply_body: `salvo-body:bodies/${account.id}/some-object` },
    });
    // R2 failing for that read (an outage of the binding: nothing else can make it fail).
    const failingR2 = { get: () => Promise.reject(new Error("R2 unavailable")) } as unknown as R2Bucket;
    const result = await consume([plain.deliveryId, large.deliveryId], { BODIES: failingR2 });
    expect(receiver.received).toHaveLength(1);
    const rows = await deliveriesOf(hook.id);
    expect(rows.find((row) => row.id === plain.deliveryId)).toMatchObject({ status: "delivered", attempts: 1 });
    expect(rows.find((row) => row.id === large.deliveryId)).toMatchObject({ status: "pending", attempts: 1 });
    expect(result.explicitAcks).toEqual([`m-${plain.deliveryId}`]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual([`m-${large.deliveryId}`]);
  });

  it("already queued are still tried after their webhook is deleted, which is gone from every read at once and from the database once they settle", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const hook = await createWebhook(account.apiKey, campaign);
    const idle = await createWebhook(account.apiKey, campaign, { webhook_url: `${RECEIVER}/idle` });
    const { deliveryId } = await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId: campaign, eventType: "EMAIL_SENT", payload: { event_type: "EMAIL_SENT" } });
    for (const id of [hook.id, idle.id]) expect((await callJson(`/api/v1/campaigns/${campaign}/webhooks/${id}`, { method: "DELETE", apiKey: account.apiKey })).body).toEqual({ ok: true });
    expect((await callJson(`/api/v1/webhook/${hook.id}`, { apiKey: account.apiKey })).status).toBe(404);
    const listed = await callJson<unknown>(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: account.apiKey });
    expect(JSON.stringify(listed.body)).not.toContain(`"id":${hook.id}`);
    const present = async (id: number) => (await fileEnv().DB.prepare("SELECT count(*) AS n FROM webhooks WHERE id = ?").bind(id).first<{ n: number }>())!.n;
    expect(await present(idle.id), "nothing pending: gone at once").toBe(0);
    expect(await present(hook.id), "kept, hidden, while its delivery is pending").toBe(1);

    await consume([deliveryId]);
    expect(receiver.received).toHaveLength(1);
    expect(await present(hook.id), "its delivery settled: gone, with its deliveries").toBe(0);
  });

  it("stop when the receiver answers 410 Gone, and start again once a person changes the webhook (or creates it again)", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    await addLeads(k, campaign, ["a@lead.example"]);
    const hook = await createWebhook(k, campaign, { event_types: ["EMAIL_SENT"] });
    const { deliveryId } = await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId: campaign, eventType: "EMAIL_SENT", payload: {} });
    receiver.respondWith(() => new Response("gone", { status: 410 }));
    await consume([deliveryId]);
    const disabledAt = (await webhookRow(hook.id)).disabledAt;
    expect(disabledAt).not.toBeNull();
    // Its owner reads why nothing arrives any more.
    const read = await callJson<{ data: { disabled_at: string | null } }>(`/api/v1/webhook/${hook.id}`, { apiKey: k });
    expect(read.body.data.disabled_at).toBe(disabledAt!.toISOString());
    receiver.respondWith(() => new Response("ok"));
    const sent = async (at: string) => {
      const before = (await deliveriesOf(hook.id)).length;
      await ingestOk(k, campaign, [{ event_id: `sent-${at}`, type: "SENT", lead_email: "a@lead.example", occurred_at: at, sequence_number: 1 }]);
      return (await deliveriesOf(hook.id)).length - before;
    };
    expect(await sent("2026-11-01T09:00:00Z"), "disabled: nothing queued").toBe(0);

    const update = await callJson(`/api/v1/webhook/update/${hook.id}`, { method: "PUT", apiKey: k, body: { webhook_url: `${RECEIVER}/v2` } });
    expect(update.status).toBe(200);
    expect((await webhookRow(hook.id)).disabledAt).toBeNull();
    expect((await callJson<{ data: { disabled_at: string | null } }>(`/api/v1/webhook/${hook.id}`, { apiKey: k })).body.data.disabled_at).toBeNull();
    expect(await sent("2026-11-01T10:00:00Z")).toBe(1);
  });
});
