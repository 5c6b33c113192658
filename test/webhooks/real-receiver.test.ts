import { inject, describe, expect, it } from "vitest";
import { deliveryRow, setDelivery, setWebhook } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { callWithEnv, consumeDelivery, createWebhook, storeDelivery } from "./fixtures";

describe("delivery to a real receiver (test/webhooks/redirect-receiver.global.ts)", () => {
  it("does not follow a redirect: the delivery fails on the 301 and the redirect's target is never requested", async () => {
    const base = inject("redirectReceiver");
    const token = crypto.randomUUID();
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    // A loopback http URL is admitted only under local URL rules, as in `npm run dev`.
    const created = await callWithEnv<{ data: { id: number } }>({ ALLOW_INSECURE_WEBHOOKS: "true" }, `/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { name: "Redirecting", webhook_url: `${base}/redirect/${token}`, event_types: ["EMAIL_SENT"] },
    });
    expect(created.status).toBe(200);
    const { deliveryId } = await storeDelivery(account.id, created.body.data.id, campaign);

    // Delivered under the same local rules: the outbound rule judges the URL again at each delivery.
    const result = await consumeDelivery(deliveryId, { ALLOW_INSECURE_WEBHOOKS: "true" });
    expect(result.explicitAcks).toEqual([`m-${deliveryId}`]);
    expect(result.retryMessages).toEqual([]);
    const visits = await (await fetch(`${base}/visits/${token}`)).json();
    expect(visits).toEqual({ redirect: 1, target: 0 });
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "failed", lastStatusCode: 301 });
  });
});

describe("retrigger-failed-events", () => {
  it("requeues the failed deliveries of enabled webhooks only, never a disabled webhook's", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const enabled = await createWebhook(account.apiKey, campaign);
    const disabled = await createWebhook(account.apiKey, campaign);
    const live = await storeDelivery(account.id, enabled.id, campaign);
    const dead = await storeDelivery(account.id, disabled.id, campaign);
    await setDelivery([live.deliveryId, dead.deliveryId], { status: "failed" });
    await setWebhook(disabled.id, { disabledAt: new Date() });

    const retrigger = await callJson(`/api/v1/campaigns/${campaign}/webhooks/retrigger-failed-events`, { method: "POST", apiKey: account.apiKey, body: {} });
    expect(retrigger.body).toEqual({ ok: true, requeued: 1 });
    const status = async (id: number) =>
      (await deliveryRow(id)).status;
    expect(await status(live.deliveryId)).toBe("pending");
    expect(await status(dead.deliveryId)).toBe("failed");
  });
});
