import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { createCampaign } from "../campaigns/fixtures";
import { deliveryRow, webhookCount } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { consumeDelivery, storeDelivery } from "./fixtures";

const dns = inject("dnsControl");

afterEach(() => vi.restoreAllMocks());

function setRecord(name: string, a: string[], aaaa: string[] = []) {
  return fetch(`${dns}/records`, { method: "POST", body: JSON.stringify({ name, a, aaaa }) });
}

/** Outbound requests to `host` land here (it stands in for a public receiver); anything else goes out for real. */
function receiverAt(host: string) {
  const received: string[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).hostname !== host) return realFetch(input, init);
    received.push(request.url);
    return new Response("ok");
  });
  return received;
}

describe("webhook URLs and the outbound rule (issue 23)", () => {
  it("refuses names that resolve to loopback or private addresses when the webhook is saved (422)", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    for (const webhook_url of ["https://localtest.me/hook", "https://127.0.0.1.nip.io/hook", "https://app.10-0-0-1.nip.io/hook", "https://kubernetes.default.svc/hook"]) {
      const perCampaign = await callJson<{ details: { path: string; message: string }[] }>(`/api/v1/campaigns/${campaign}/webhooks`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { name: "x", webhook_url, event_types: ["EMAIL_SENT"] },
      });
      expect(perCampaign.status, webhook_url).toBe(422);
      expect(perCampaign.body.details[0]).toMatchObject({ path: "webhook_url", message: expect.stringContaining("must name a public host") });
      const global = await callJson(`/api/v1/webhook/create`, { method: "POST", apiKey: account.apiKey, body: { webhook_url, association_type: "user", event_types: ["EMAIL_SENT"] } });
      expect(global.status, webhook_url).toBe(422);
    }
    expect(await webhookCount(account.id)).toBe(0);
  });

  it("judges the name again at each delivery: once it resolves to a private address, nothing is sent there", async () => {
    const host = `flip-${crypto.randomUUID().slice(0, 8)}.hooks-salvo-test.com`;
    await setRecord(host, ["93.184.215.14"]);
    const received = receiverAt(host);
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const created = await callJson<{ data: { id: number } }>(`/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { name: "Flip", webhook_url: `https://${host}/hook`, event_types: ["EMAIL_SENT"] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const first = await storeDelivery(account.id, created.body.data.id, campaign);
    await consumeDelivery(first.deliveryId);
    expect(received).toEqual([`https://${host}/hook`]);

    // The name now points inside (DNS rebinding, or a record changed after the save).
    await setRecord(host, ["169.254.169.254"]);
    const second = await storeDelivery(account.id, created.body.data.id, campaign);
    const result = await consumeDelivery(second.deliveryId);
    expect(received).toHaveLength(1);
    // Refused for good (no retry): the attempt names why.
    expect(result.retryMessages).toEqual([]);
    const row = await deliveryRow(second.deliveryId);
    expect({ status: row.status, last_error: row.lastError }).toEqual({ status: "failed", last_error: `refused https://${host}/hook: ${host} resolves to 169.254.169.254, a link-local address (cloud metadata services answer there)` });
  });

  it("retries a delivery whose name the resolver cannot answer for, sending nothing meanwhile", async () => {
    const host = `down.servfail.example`;
    const received = receiverAt(host);
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    // The save goes on when the resolver cannot tell (the delivery checks again).
    const created = await callJson<{ data: { id: number } }>(`/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { name: "Down", webhook_url: `https://${host}/hook`, event_types: ["EMAIL_SENT"] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const delivery = await storeDelivery(account.id, created.body.data.id, campaign);
    const result = await consumeDelivery(delivery.deliveryId);
    expect(received).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: `m-${delivery.deliveryId}` }]);
    const stored = await deliveryRow(delivery.deliveryId);
    const row = { status: stored.status, last_error: stored.lastError, delay: stored.nextAttemptAt!.getTime() - stored.lastAttemptAt!.getTime() };
    expect(row).toMatchObject({ status: "pending", delay: 30_000 });
    expect(row.last_error).toContain(`${host} could not be checked`);
  });
});
