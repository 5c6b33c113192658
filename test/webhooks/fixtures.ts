import { vi } from "vitest";
import { callJson, env } from "../helpers";

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

export interface Delivery {
  id: number;
  event_type: string;
  status: string;
  attempts: number;
  message_id: string;
  payload: string;
}

export async function deliveriesOf(webhookId: number): Promise<Delivery[]> {
  const rows = await env.DB.prepare("SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id").bind(webhookId).all<Delivery>();
  return rows.results;
}

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
