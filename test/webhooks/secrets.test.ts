import { createScheduledController } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { newWebhookSecret } from "../../src/webhooks/delivery-rules";
import { deliveryRow, setWebhook, webhookRow } from "../db";
import { callJson, createClient, createClientKey, provisionAccount, env } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { callWithEnv, consumeDelivery, createWebhook, interceptReceiver, RECEIVER, signedBy, storeDelivery } from "./fixtures";

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

const storedRow = webhookRow;

/** Delivers one stored event to the webhook and returns what the receiver got. */
async function deliverOne(account: { id: number }, campaign: number, webhookId: number) {
  const { deliveryId } = await storeDelivery(account.id, webhookId, campaign, { webhook_id: webhookId, event_type: "EMAIL_SENT" });
  const before = receiver.received.length;
  await consumeDelivery(deliveryId);
  expect(receiver.received.length).toBe(before + 1);
  const { request, body } = receiver.received.at(-1)!;
  return { headers: request.headers, body, payload: JSON.parse(body) as Record<string, unknown>, deliveryId };
}

async function setup(body: Record<string, unknown> = {}) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const hook = await createWebhook(account.apiKey, campaign, body);
  return { account, campaign, hook };
}

function save(apiKey: string, campaign: number, body: Record<string, unknown>) {
  return callJson(`/api/v1/campaigns/${campaign}/webhooks`, {
    method: "POST",
    apiKey,
    body: { name: "CRM", webhook_url: RECEIVER, event_types: ["EMAIL_SENT"], ...body },
  });
}

function rotate(apiKey: string, campaign: number, webhookId: number) {
  return callJson<{ ok: boolean; secret: string }>(`/api/v1/campaigns/${campaign}/webhooks/${webhookId}/rotate-secret`, { method: "POST", apiKey });
}

describe("webhook secrets at rest", () => {
  it("stores neither the signing secret nor the user's secret_key in plain text", async () => {
    const { hook } = await setup({ secret_key: "receiver-token-7f3a" });
    const row = await storedRow(hook.id);
    expect(row.secretCiphertext).toMatch(/^v1\.test\.[^.]+\.[^.]+$/);
    expect(row.secretKeyCiphertext).toMatch(/^v1\.test\.[^.]+\.[^.]+$/);
    expect(row.legacySecret).toBeNull();
    const everything = JSON.stringify(row);
    expect(everything).not.toContain(hook.secret.slice("whsec_".length));
    expect(everything).not.toContain("receiver-token-7f3a");
  });

  it("does not answer secret_key in reads: like the interface's Webhook, and a credential", async () => {
    const { account, hook } = await setup({ secret_key: "receiver-token" });
    const read = await callJson<{ data: Record<string, unknown> }>(`/api/v1/webhook/${hook.id}`, { apiKey: account.apiKey });
    expect(JSON.stringify(read.body)).not.toContain("receiver-token");
    expect(read.body.data).not.toHaveProperty("secret_key");
  });

  it("refuses to store a secret without SECRETS_KEY (503, nothing written) and never falls back to plain text", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    for (const SECRETS_KEY of [undefined, "", "change-me"]) {
      const created = await callWithEnv({ SECRETS_KEY }, `/api/v1/campaigns/${campaign}/webhooks`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { name: "CRM", webhook_url: RECEIVER, event_types: ["EMAIL_SENT"] },
      });
      expect(created, String(SECRETS_KEY)).toEqual({ status: 503, body: { error: "Credential storage is not configured" } });
    }
    expect((await callJson(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: account.apiKey })).body).toEqual([]);
  });
});

describe("payload secret_key", () => {
  it("is the user's own value, echoed as given, never the signing secret; null when unset", async () => {
    const { account, campaign, hook } = await setup({ secret_key: "Shared token ✓ 123" });
    const first = await deliverOne(account, campaign, hook.id);
    expect(first.payload.secret_key).toBe("Shared token ✓ 123");
    expect(first.body).not.toContain(hook.secret);
    expect(first.body).not.toContain(hook.secret.slice("whsec_".length));
    expect(await signedBy([hook.secret], first.headers, first.body)).toEqual([hook.secret]);

    const unset = await setup();
    const plain = await deliverOne(unset.account, unset.campaign, unset.hook.id);
    expect(plain.payload).toHaveProperty("secret_key", null);
    expect(plain.body).not.toContain(unset.hook.secret.slice("whsec_".length));
  });

  it("is set, kept (when the update leaves it out) and cleared (null or empty) by updates", async () => {
    const { account, campaign, hook } = await setup();
    const steps: [Record<string, unknown>, string | null][] = [
      [{ secret_key: "first" }, "first"],
      [{}, "first"],
      [{ secret_key: "second" }, "second"],
      [{ secret_key: null }, null],
      [{ secret_key: "third" }, "third"],
      [{ secret_key: "" }, null],
    ];
    for (const [change, expected] of steps) {
      expect((await save(account.apiKey, campaign, { id: hook.id, ...change })).status).toBe(200);
      expect((await deliverOne(account, campaign, hook.id)).payload.secret_key, JSON.stringify(change)).toBe(expected);
    }
  });

  it("is at most 255 characters and a string", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    for (const secret_key of ["x".repeat(256), 42]) {
      const { status, body } = await save(account.apiKey, campaign, { secret_key });
      expect(status).toBe(422);
      expect(body).toMatchObject({ details: [expect.objectContaining({ path: "secret_key" })] });
    }
    expect((await save(account.apiKey, campaign, { secret_key: "x".repeat(255) })).status).toBe(200);
  });
});

describe("signing secret rotation", () => {
  it("answers a new secret; for 24 h deliveries carry both signatures, then only the new one", async () => {
    const { account, campaign, hook } = await setup();
    const before = Date.now();
    const rotated = await rotate(account.apiKey, campaign, hook.id);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ ok: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
    const fresh = rotated.body.secret;
    expect(fresh).not.toBe(hook.secret);

    const row = await storedRow(hook.id);
    const everything = JSON.stringify(row);
    expect(everything).not.toContain(fresh.slice("whsec_".length));
    expect(everything).not.toContain(hook.secret.slice("whsec_".length));
    const expiry = Number(row.previousSecretExpiresAt);
    expect(expiry).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000);

    const during = await deliverOne(account, campaign, hook.id);
    expect(during.headers.get("webhook-signature")!.split(" ")).toHaveLength(2);
    expect(await signedBy([fresh, hook.secret], during.headers, during.body)).toEqual([fresh, hook.secret]);

    // The clock moves on: the overlap is over a moment ago.
    await setWebhook(hook.id, { previousSecretExpiresAt: new Date(Date.now() - 1) });
    const after = await deliverOne(account, campaign, hook.id);
    expect(after.headers.get("webhook-signature")!.split(" ")).toHaveLength(1);
    expect(await signedBy([fresh, hook.secret], after.headers, after.body)).toEqual([fresh]);
  });

  it("keeps only the secret before the last rotation", async () => {
    const { account, campaign, hook } = await setup();
    const second = (await rotate(account.apiKey, campaign, hook.id)).body.secret;
    const third = (await rotate(account.apiKey, campaign, hook.id)).body.secret;
    const delivered = await deliverOne(account, campaign, hook.id);
    expect(await signedBy([hook.secret, second, third], delivered.headers, delivered.body)).toEqual([second, third]);
  });

  it("answers 404 for another tenant's, another client's, another campaign's or a missing webhook, and changes nothing", async () => {
    const { account, campaign, hook } = await setup();
    const otherCampaign = await createCampaign(account.apiKey);
    const stranger = await provisionAccount();
    const strangerCampaign = await createCampaign(stranger.apiKey);
    const clientKey = await createClientKey(account.apiKey, await createClient(account.apiKey));
    const before = await storedRow(hook.id);
    const attempts = [
      rotate(stranger.apiKey, campaign, hook.id),
      rotate(stranger.apiKey, strangerCampaign, hook.id),
      rotate(clientKey.api_key, campaign, hook.id),
      rotate(account.apiKey, otherCampaign, hook.id),
      rotate(account.apiKey, campaign, hook.id + 100_000),
    ];
    for (const { status, body } of await Promise.all(attempts)) {
      expect(status).toBe(404);
      expect(body).toHaveProperty("error");
    }
    expect(await storedRow(hook.id)).toEqual(before);
    expect((await callJson(`/api/v1/campaigns/${campaign}/webhooks/${hook.id}/rotate-secret`, { method: "POST" })).status).toBe(401);
  });
});

describe("signing secrets stored before encryption (migration 0009)", () => {
  /** A webhook as the migration leaves it: its secret moved to legacy_secret, nothing encrypted. */
  async function legacyWebhook() {
    const made = await setup();
    const secret = newWebhookSecret();
    await setWebhook(made.hook.id, { secretCiphertext: null, legacySecret: secret });
    return { ...made, secret };
  }

  const minuteCron = (overrides: Partial<Cloudflare.Env> = {}) =>
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), { ...env, ...overrides });

  it("still signs with the legacy secret, until the minute cron encrypts it and clears the plain text", async () => {
    const { account, campaign, hook, secret } = await legacyWebhook();
    const before = await deliverOne(account, campaign, hook.id);
    expect(await signedBy([secret], before.headers, before.body)).toEqual([secret]);

    await minuteCron();
    const row = await storedRow(hook.id);
    expect(row.legacySecret).toBeNull();
    expect(row.secretCiphertext).toMatch(/^v1\.test\./);
    expect(JSON.stringify(row)).not.toContain(secret.slice("whsec_".length));
    const after = await deliverOne(account, campaign, hook.id);
    expect(await signedBy([secret], after.headers, after.body)).toEqual([secret]);
  });

  it("fails the cron loudly without SECRETS_KEY while legacy secrets remain, keeping them usable", async () => {
    const { account, campaign, hook, secret } = await legacyWebhook();
    await expect(minuteCron({ SECRETS_KEY: undefined })).rejects.toThrow(/SECRETS_KEY is not set/);
    expect((await storedRow(hook.id)).legacySecret).toBe(secret);
    const delivered = await deliverOne(account, campaign, hook.id);
    expect(await signedBy([secret], delivered.headers, delivered.body)).toEqual([secret]);
  });

  it("rotates a legacy secret into the previous slot", async () => {
    const { account, campaign, hook, secret } = await legacyWebhook();
    const fresh = (await rotate(account.apiKey, campaign, hook.id)).body.secret;
    expect((await storedRow(hook.id)).legacySecret).toBeNull();
    const delivered = await deliverOne(account, campaign, hook.id);
    expect(await signedBy([fresh, secret], delivered.headers, delivered.body)).toEqual([fresh, secret]);
  });
});

describe("deliveries when SECRETS_KEY is missing", () => {
  it("are retried on the schedule and recorded, not sent unsigned, not failed for good", async () => {
    const { account, campaign, hook } = await setup();
    const { deliveryId } = await storeDelivery(account.id, hook.id, campaign);
    const result = await consumeDelivery(deliveryId, { SECRETS_KEY: undefined });
    expect(result.retryMessages).toEqual([{ msgId: `m-${deliveryId}` }]);
    expect(receiver.received).toHaveLength(0);
    const row = await deliveryRow(deliveryId);
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "signing secret unavailable (server configuration)" });
    expect(Number(row.nextAttemptAt)).toBeGreaterThanOrEqual(Date.now() + 25_000);

    expect((await consumeDelivery(deliveryId)).explicitAcks).toEqual([`m-${deliveryId}`]);
    expect(receiver.received).toHaveLength(1);
  });
});
