import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks/queue-message";
import { asc, eq } from "drizzle-orm";
import { schema, setCampaign, testDb, webhookRow } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createWebhook, deliveriesOf, insertDelivery, interceptReceiver } from "./fixtures";

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

/** A stored delivery that is not on the queue: the tests hand it to the consumer themselves. */
async function pendingDelivery(options: { createdAt?: number; status?: string } = {}) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const hook = await createWebhook(account.apiKey, campaign);
  const payload = { webhook_id: hook.id, event_type: "EMAIL_SENT", campaign_id: campaign };
  const at = new Date(options.createdAt ?? Date.now());
  const status = (options.status ?? "pending") as "pending" | "delivered" | "failed";
  const { deliveryId, messageId } = await insertDelivery({
    accountId: account.id,
    webhookId: hook.id,
    campaignId: campaign,
    eventType: "EMAIL_SENT",
    payload,
    status,
    nextAttemptAt: at,
    createdAt: at,
  });
  return { account, campaign, hook, deliveryId, messageId, payload };
}

async function consume(deliveryId: number, attempts = 1, queue = "salvo-webhooks") {
  const batch = createMessageBatch<DeliveryMessage>(queue, [{ id: `m-${deliveryId}-${attempts}`, timestamp: new Date(), attempts, body: { deliveryId } }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, fileEnv());
  return getQueueResult(batch, ctx);
}

/** A delivery's row, under the column names the tests read (null once it is gone). */
async function delivery(id: number) {
  const t = schema.webhookDeliveries;
  const row = await testDb()
    .select({ status: t.status, attempts: t.attempts, last_status_code: t.lastStatusCode, last_error: t.lastError, next_attempt_at: t.nextAttemptAt })
    .from(t)
    .where(eq(t.id, id))
    .get();
  return row ?? null;
}

function attemptsOf(id: number) {
  const t = schema.webhookAttempts;
  return testDb().select({ status_code: t.statusCode, outcome: t.outcome, error: t.error }).from(t).where(eq(t.deliveryId, id)).orderBy(asc(t.id)).all();
}

/**
 * The retry's delay, as the consumer recorded it (the test queue helper does not report the
 * delaySeconds given to message.retry; the domain test checks judge() itself).
 */
function expectRetryIn(row: { next_attempt_at: Date | null }, before: number, seconds: number) {
  const next = Number(row.next_attempt_at);
  expect(next).toBeGreaterThanOrEqual(before + seconds * 1000);
  expect(next).toBeLessThanOrEqual(Date.now() + seconds * 1000);
}

/** Standard Webhooks verification, written from the specification, not from src/. */
async function verify(secret: string, headers: Headers, body: string): Promise<boolean> {
  const id = headers.get("webhook-id")!;
  const timestamp = headers.get("webhook-timestamp")!;
  const key = await crypto.subtle.importKey(
    "raw",
    Uint8Array.from(atob(secret.split("_")[1]!), (c) => c.charCodeAt(0)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  for (const candidate of headers.get("webhook-signature")!.split(" ")) {
    const [version, mac] = candidate.split(",");
    if (version !== "v1" || !mac) continue;
    const bytes = Uint8Array.from(atob(mac), (c) => c.charCodeAt(0));
    if (await crypto.subtle.verify("HMAC", key, bytes, new TextEncoder().encode(`${id}.${timestamp}.${body}`))) return true;
  }
  return false;
}

describe("webhook delivery", () => {
  it("records nothing, and does not fail the batch, for a delivery whose campaign was deleted while it was being sent", async () => {
    const { campaign, deliveryId } = await pendingDelivery();
    receiver.respondWith(async () => {
      await setCampaign(campaign, { status: "PAUSED" });
      await testDb().delete(schema.campaigns).where(eq(schema.campaigns.id, campaign));
      return new Response("ok");
    });
    const result = await consume(deliveryId);
    expect(result.explicitAcks).toEqual([`m-${deliveryId}-1`]);
    expect(await delivery(deliveryId)).toBeNull();
    expect(await attemptsOf(deliveryId)).toEqual([]);
  });

  it("POSTs the payload signed the Standard Webhooks way, and a 2xx marks it delivered", async () => {
    const { hook, deliveryId, messageId, payload } = await pendingDelivery();
    const result = await consume(deliveryId);
    expect(result.explicitAcks).toEqual([`m-${deliveryId}-1`]);
    expect(result.retryMessages).toEqual([]);

    expect(receiver.received).toHaveLength(1);
    const { request, body } = receiver.received[0]!;
    expect(request.method).toBe("POST");
    expect(request.headers.get("Content-Type")).toBe("application/json");
    expect(request.headers.get("webhook-id")).toBe(messageId);
    expect(Math.abs(Number(request.headers.get("webhook-timestamp")) - Date.now() / 1000)).toBeLessThan(60);
    expect(await verify(hook.secret, request.headers, body)).toBe(true);
    expect(await verify(hook.secret, request.headers, body.replace("EMAIL_SENT", "EMAIL_OPEN"))).toBe(false);
    // No secret_key was set: null, and never the signing secret.
    expect(JSON.parse(body)).toEqual({ ...payload, secret_key: null });

    expect(await delivery(deliveryId)).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 200 });
    expect(await attemptsOf(deliveryId)).toEqual([{ status_code: 200, outcome: "delivered", error: null }]);
  });

  it("retries 5xx, 408, 429 and network errors on the schedule, keeping the webhook-id", async () => {
    const cases: [() => Response | Promise<Response>, number, number][] = [
      [() => new Response("down", { status: 500 }), 1, 30],
      [() => new Response("down", { status: 503 }), 2, 120],
      [() => new Response("slow", { status: 408 }), 3, 600],
      [() => new Response("busy", { status: 429 }), 4, 3600],
      [() => Promise.reject(new TypeError("connection refused")), 5, 21_600],
      [() => new Response("down", { status: 502 }), 6, 43_200],
    ];
    for (const [answer, attempt, delay] of cases) {
      const { deliveryId } = await pendingDelivery();
      receiver.respondWith(answer);
      const before = Date.now();
      const result = await consume(deliveryId, attempt);
      expect(result.retryMessages, `attempt ${attempt}`).toEqual([{ msgId: `m-${deliveryId}-${attempt}` }]);
      expect(result.explicitAcks).toEqual([]);
      expect(await delivery(deliveryId)).toMatchObject({ status: "pending", attempts: 1 });
      expectRetryIn((await delivery(deliveryId))!, before, delay);
    }
    const { deliveryId, messageId } = await pendingDelivery();
    receiver.respondWith(() => new Response("down", { status: 500 }));
    await consume(deliveryId, 1);
    await consume(deliveryId, 2);
    const ids = receiver.received.slice(-2).map(({ request }) => request.headers.get("webhook-id"));
    expect(ids).toEqual([messageId, messageId]);
    expect(await attemptsOf(deliveryId)).toEqual([
      { status_code: 500, outcome: "retry", error: "HTTP 500" },
      { status_code: 500, outcome: "retry", error: "HTTP 500" },
    ]);
  });

  it("honours Retry-After up to 12 hours", async () => {
    for (const [header, delay] of [
      ["90", 90],
      ["100000", 43_200],
    ] as const) {
      const { deliveryId } = await pendingDelivery();
      receiver.respondWith(() => new Response("busy", { status: 429, headers: { "Retry-After": header } }));
      const before = Date.now();
      expect((await consume(deliveryId)).retryMessages).toEqual([{ msgId: `m-${deliveryId}-1` }]);
      expectRetryIn((await delivery(deliveryId))!, before, delay);
    }
  });

  it("fails at once on other 4xx and on redirects (not followed), without retrying", async () => {
    for (const status of [400, 404, 301]) {
      const { deliveryId } = await pendingDelivery();
      const headers: Record<string, string> = status === 301 ? { Location: "https://elsewhere.example/" } : {};
      receiver.respondWith(() => new Response(null, { status, headers }));
      const result = await consume(deliveryId);
      expect(result.explicitAcks, String(status)).toEqual([`m-${deliveryId}-1`]);
      expect(result.retryMessages).toEqual([]);
      expect(await delivery(deliveryId)).toMatchObject({ status: "failed", last_status_code: status });
    }
    expect(receiver.received.every(({ request }) => new URL(request.url).hostname === "hooks.example.com")).toBe(true);
  });

  it("disables the webhook on 410 and sends it nothing more", async () => {
    const { hook, deliveryId, account, campaign } = await pendingDelivery();
    receiver.respondWith(() => new Response("gone", { status: 410 }));
    expect((await consume(deliveryId)).explicitAcks).toHaveLength(1);
    expect(await delivery(deliveryId)).toMatchObject({ status: "failed", last_status_code: 410 });
    expect((await webhookRow(hook.id)).disabledAt).not.toBeNull();

    const next = await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId: campaign, eventType: "EMAIL_SENT", payload: {} });
    const before = receiver.received.length;
    expect((await consume(next.deliveryId)).explicitAcks).toHaveLength(1);
    expect(receiver.received.length).toBe(before);
    expect(await delivery(next.deliveryId)).toMatchObject({ status: "failed", last_error: "webhook disabled" });
  });

  it("never POSTs a delivery twice: a repeated message for a settled delivery is acknowledged silently", async () => {
    const { deliveryId } = await pendingDelivery();
    await consume(deliveryId);
    const again = await consume(deliveryId, 2);
    expect(again.explicitAcks).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
  });

  it("marks dead-lettered deliveries failed", async () => {
    const { deliveryId } = await pendingDelivery();
    const result = await consume(deliveryId, 7, "salvo-webhooks-dlq");
    expect(result.ackAll).toBe(true);
    expect(receiver.received).toHaveLength(0);
    expect(await delivery(deliveryId)).toMatchObject({ status: "failed" });
  });

  it("re-enqueues overdue pending deliveries (never enqueued, or their message lost) from the minute cron, and no others", async () => {
    const now = Date.now();
    const overdue = await pendingDelivery({ createdAt: now - 5 * 60_000 });
    const fresh = await pendingDelivery({ createdAt: now - 30_000 });
    const sendBatch = vi.spyOn(fileEnv().WEBHOOK_QUEUE, "sendBatch");
    await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "* * * * *" }), fileEnv());
    const sent = sendBatch.mock.calls.flatMap(([messages]) => [...messages].map((m) => (m.body as DeliveryMessage).deliveryId));
    sendBatch.mockRestore();
    expect(sent).toContain(overdue.deliveryId);
    expect(sent).not.toContain(fresh.deliveryId);
    // Due now again: the next firing leaves it alone while this message is in flight.
    expect(Number((await delivery(overdue.deliveryId))!.next_attempt_at)).toBe(now);
    expect(Number((await delivery(fresh.deliveryId))!.next_attempt_at)).toBe(now - 30_000);
  });
});

describe("summary and retrigger", () => {
  it("counts deliveries by state and kind, and sends failed ones of a range again with the same webhook-id", async () => {
    const { account, campaign, hook, deliveryId } = await pendingDelivery({ status: "failed" });
    const owner = { accountId: account.id, webhookId: hook.id, campaignId: campaign, payload: {} };
    await insertDelivery({ ...owner, eventType: "EMAIL_REPLY", status: "delivered" });
    await insertDelivery({ ...owner, eventType: "EMAIL_REPLY", status: "pending" });
    await insertDelivery({ ...owner, messageId: "msg_old", eventType: "EMAIL_SENT", status: "failed", createdAt: new Date("2020-01-01T00:00:00Z") });
    const summary = await callJson(`/api/v1/campaigns/${campaign}/webhooks/summary`, { apiKey: account.apiKey });
    expect(summary.body).toEqual({
      ok: true,
      total: 4,
      success: 1,
      failed: 2,
      data: {
        total: 4,
        delivered: 1,
        failed: 2,
        pending: 1,
        by_event_type: {
          EMAIL_SENT: { total: 2, delivered: 0, failed: 2, pending: 0 },
          EMAIL_REPLY: { total: 2, delivered: 1, failed: 0, pending: 1 },
        },
      },
    });
    const recent = await callJson(`/api/v1/campaigns/${campaign}/webhooks/summary?fromTime=2026-01-01T00:00:00Z`, { apiKey: account.apiKey });
    expect(recent.body).toMatchObject({ data: { total: 3, failed: 1 } });

    const retrigger = await callJson(`/api/v1/campaigns/${campaign}/webhooks/retrigger-failed-events`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { fromTime: "2026-01-01T00:00:00Z", toTime: new Date(Date.now() + 60_000).toISOString() },
    });
    expect(retrigger.body).toEqual({ ok: true, requeued: 1 });
    expect(await delivery(deliveryId)).toMatchObject({ status: "pending" });
    const old = (await deliveriesOf(hook.id)).find((d) => d.message_id === "msg_old");
    expect(old!.status).toBe("failed");
    const bad = await callJson(`/api/v1/campaigns/${campaign}/webhooks/summary?fromTime=yesterday`, { apiKey: account.apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: "Validation failed", details: [{ path: "fromTime", message: "Must be an ISO 8601 date-time" }] });
  });

  it("reads a range's times in any ISO 8601 form, one without a zone as UTC (CONTRACT 0)", async () => {
    const { account, campaign, hook } = await pendingDelivery({ status: "failed" });
    const owner = { accountId: account.id, webhookId: hook.id, campaignId: campaign, payload: {} };
    await insertDelivery({ ...owner, messageId: "msg_edge", eventType: "EMAIL_SENT", status: "failed", createdAt: new Date("2026-01-01T00:00:00Z") });
    const total = async (query: string) => (await callJson<{ data: { total: number } }>(`/api/v1/campaigns/${campaign}/webhooks/summary?${query}`, { apiKey: account.apiKey })).body.data.total;
    // The delivery made at midnight UTC is in a range that starts or ends then, not in one a millisecond off.
    expect(await total("fromTime=2026-01-01T00:00:00&toTime=2026-01-01T00:00:00.000")).toBe(1);
    expect(await total("fromTime=2026-01-01T00:00:00.001&toTime=2026-01-01T01:00")).toBe(0);
    expect(await total("fromTime=2025-12-01T00:00&toTime=2025-12-31T23:59:59.999")).toBe(0);
    expect(await total("fromTime=2025-12-01T00:00&toTime=2026-01-01T00:00")).toBe(1);
    expect(await total(`fromTime=2025-12-01T00:00&toTime=${encodeURIComponent("2026-01-01T00:59:59.999+01:00")}`)).toBe(0);
    expect(await total(`fromTime=2025-12-01T00:00&toTime=${encodeURIComponent("2026-01-01T01:00+01")}`)).toBe(1);
  });
});
