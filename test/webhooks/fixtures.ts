import { asc, eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { webhookDeliveries } from "../../src/db/schema";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { vi } from "vitest";
import worker from "../../src/index";
import type { DeliveryMessage } from "../../src/webhooks/queue-message";
import { callJson, env } from "../helpers";
import { envOfId } from "../db";

export const RECEIVER = "https://hooks.example.com/salvo";

export async function createWebhook(apiKey: string, campaignId: number, body: Record<string, unknown> = {}) {
  const { status, body: saved } = await callJson<{ data: { id: number }; secret: string }>(`/api/v1/campaigns/${campaignId}/webhooks`, {
    method: "POST",
    apiKey,
    body: { name: "CRM", webhook_url: RECEIVER, event_types: ["EMAIL_SENT", "EMAIL_REPLY"], ...body },
  });
  if (status !== 200) throw new Error(`webhook creation failed with ${status}: ${JSON.stringify(saved)}`);
  return { id: saved.data.id, secret: saved.secret };
}

/** A webhook's deliveries, by id, under the column names the tests read; the payload as stored (JSON text). */
export async function deliveriesOf(webhookId: number) {
  const t = webhookDeliveries;
  return drizzle((await envOfId(webhookId)).DB)
    .select({ id: t.id, event_type: t.eventType, status: t.status, attempts: t.attempts, message_id: t.messageId, payload: sql<string>`${t.payload}` })
    .from(t)
    .where(eq(t.webhookId, webhookId))
    .orderBy(asc(t.id))
    .all();
}
export type Delivery = Awaited<ReturnType<typeof deliveriesOf>>[number];

export type Responder = (request: Request) => Promise<Response> | Response;

/**
 * The receiving endpoint: outbound requests to hooks.example.com are captured and answered by
 * the test's responder; anything else goes to the real fetch.
 */
export function interceptReceiver(responder: Responder = () => new Response("ok")) {
  const received: { request: Request; body: string }[] = [];
  const realFetch = globalThis.fetch;
  let current = responder;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).hostname !== "hooks.example.com") return realFetch(input, init);
    const body = await request.clone().text();
    received.push({ request, body });
    return current(request);
  });
  return {
    received,
    respondWith(next: Responder) {
      current = next;
    },
    restore: () => spy.mockRestore(),
  };
}

type DeliveryRow = typeof webhookDeliveries.$inferInsert;

/** A delivery row written straight to D1 (typed by the schema), not queued: tests hand it to the consumer. */
export async function insertDelivery(row: Omit<DeliveryRow, "messageId"> & { messageId?: string }) {
  const now = new Date();
  const inserted = await drizzle((await envOfId(row.webhookId)).DB)
    .insert(webhookDeliveries)
    .values({ messageId: `msg_${crypto.randomUUID().replaceAll("-", "")}`, nextAttemptAt: now, createdAt: now, ...row })
    .returning({ id: webhookDeliveries.id, messageId: webhookDeliveries.messageId })
    .get();
  return { deliveryId: inserted.id, messageId: inserted.messageId };
}

/** A delivery stored the way fan-out stores it, but not queued: tests hand it to the consumer themselves. */
export function storeDelivery(accountId: number, webhookId: number, campaignId: number, payload: Record<string, unknown> = { event_type: "EMAIL_SENT" }) {
  return insertDelivery({ accountId, webhookId, campaignId, eventType: "EMAIL_SENT", payload });
}

/** Runs the queue consumer on one delivery, with the environment optionally changed. */
export async function consumeDelivery(deliveryId: number, overrides: Partial<Cloudflare.Env> = {}) {
  const batch = createMessageBatch<DeliveryMessage>("salvo-webhooks", [{ id: `m-${deliveryId}`, timestamp: new Date(), attempts: 1, body: { deliveryId } }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...overrides });
  return getQueueResult(batch, ctx);
}

/** A request through the Worker's fetch entry point with the environment changed (a missing secret, local URL rules). */
export async function callWithEnv<T = Record<string, unknown>>(overrides: Partial<Cloudflare.Env>, path: string, options: { method?: string; apiKey: string; body?: unknown }) {
  const url = new URL(path, "http://salvo.test");
  url.searchParams.set("api_key", options.apiKey);
  const request = new Request(url, {
    method: options.method ?? "GET",
    headers: { "Content-Type": "application/json" },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const response = await worker.fetch(request, { ...env, ...overrides }, createExecutionContext());
  return { status: response.status, body: (await response.json()) as T };
}

/** The secrets (`whsec_…`) that verify a delivery, checked the Standard Webhooks way (from the specification, not src/). */
export async function signedBy(secrets: string[], headers: Headers, body: string): Promise<string[]> {
  const signed = `${headers.get("webhook-id")}.${headers.get("webhook-timestamp")}.${body}`;
  const macs = (headers.get("webhook-signature") ?? "").split(" ").map((candidate) => candidate.split(","));
  const verifying: string[] = [];
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey("raw", Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0)), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    for (const [version, mac] of macs) {
      const bytes = Uint8Array.from(atob(mac ?? ""), (c) => c.charCodeAt(0));
      if (version === "v1" && (await crypto.subtle.verify("HMAC", key, bytes, new TextEncoder().encode(signed)))) verifying.push(secret);
    }
  }
  return verifying;
}
