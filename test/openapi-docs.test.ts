import { beforeAll, describe, expect, it } from "vitest";
import { HTTP_METHODS, type ApiDocument, type Operation } from "../src/ops/openapi-document";
import { payloadMembers } from "../src/ops/webhook-docs";
import { WEBHOOK_EVENT_KINDS, type WebhookEventKind } from "../src/webhooks/event-kinds";
import {
  categoryDeliveries,
  disconnectDeliveries,
  eventDeliveries,
  statusDeliveries,
  untrackedReplyDeliveries,
  type EventFacts,
  type WebhookTarget,
} from "../src/webhooks/fanout";
import { ADMIN_TOKEN, call, callJson, provisionAccount } from "./helpers";

let document: ApiDocument;

function operations(): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    HTTP_METHODS.filter((method) => methods[method]).map((method) => [method, path, methods[method]!] as [string, string, Operation]),
  );
}

beforeAll(async () => {
  document = (await callJson<ApiDocument>("/openapi.json")).body;
});

describe("the reference explains every operation", () => {
  it("gives each one a unique camelCase operationId, a summary and a description", () => {
    const missing: string[] = [];
    const ids = new Map<string, string>();
    for (const [method, path, operation] of operations()) {
      const key = `${method.toUpperCase()} ${path}`;
      if (!operation.operationId || !/^[a-z][A-Za-z0-9]*$/.test(operation.operationId)) missing.push(`${key}: operationId`);
      if (!operation.summary?.trim()) missing.push(`${key}: summary`);
      if (!operation.description || operation.description.trim().length < 20) missing.push(`${key}: description`);
      if (operation.operationId) {
        expect(ids.get(operation.operationId), `operationId ${operation.operationId} of ${key}`).toBeUndefined();
        ids.set(operation.operationId, key);
      }
    }
    expect(missing).toEqual([]);
    expect(ids.size).toBeGreaterThan(200);
  });

  it("shows a request example for every JSON body", () => {
    const without = operations()
      .filter(([, , operation]) => {
        const media = operation.requestBody?.content?.["application/json"];
        return media !== undefined && media.example === undefined;
      })
      .map(([method, path]) => `${method.toUpperCase()} ${path}`);
    expect(without).toEqual([]);
    expect(operations().filter(([method]) => ["post", "put", "patch"].includes(method)).length).toBeGreaterThan(90);
  });

  it("names the shared errors as reused components, and the rate-limit headers on every API answer", () => {
    const responses = document.components.responses as Record<string, { content: Record<string, { schema: { $ref: string } }> }>;
    expect(responses.ValidationFailed!.content["application/json"]!.schema.$ref).toBe("#/components/schemas/ValidationError");
    expect(responses.RateLimited!.content["application/json"]!.schema.$ref).toBe("#/components/schemas/RateLimitExceeded");
    expect(Object.keys(document.components.headers as object)).toEqual(
      expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit", "Retry-After"]),
    );
    for (const [method, path, operation] of operations()) {
      if (!path.startsWith("/api/v1/")) continue;
      const where = `${method.toUpperCase()} ${path}`;
      expect(operation.responses["401"], where).toEqual({ $ref: "#/components/responses/Unauthorized" });
      expect(operation.responses["429"], where).toEqual({ $ref: "#/components/responses/RateLimited" });
      if (operation.requestBody) expect(operation.responses["422"], where).toEqual({ $ref: "#/components/responses/ValidationFailed" });
      if (path.includes("{")) expect(operation.responses["404"], where).toEqual({ $ref: "#/components/responses/NotFound" });
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))![1] as { headers?: Record<string, unknown> };
      expect(Object.keys(success.headers ?? {}), where).toEqual(expect.arrayContaining(["X-RateLimit-Remaining", "RateLimit", "X-Request-Id"]));
    }
  });

  it("sends those rate-limit headers for real", async () => {
    const account = await provisionAccount();
    const response = await call("/api/v1/campaigns", { apiKey: account.apiKey });
    const missing = await call("/api/v1/campaigns/999999999", { apiKey: account.apiKey });
    expect(missing.status).toBe(404);
    for (const name of Object.keys(document.components.headers as object).filter((header) => header !== "Retry-After")) {
      expect(response.headers.get(name), name).not.toBeNull();
      expect(missing.headers.get(name), `${name} on a 404`).not.toBeNull();
    }
  });

  it("states the webhook_url limit the server enforces (2048, not the schema's old 4096)", async () => {
    const schemas = document.components.schemas!;
    for (const [schema, member] of [
      ["SaveWebhook", "webhook_url"],
      ["CreateWebhook", "webhook_url"],
      ["UpdateWebhook", "webhook_url"],
      ["CreateWebhookShort", "url"],
      ["UpdateWebhookShort", "url"],
    ] as const) {
      expect(schemas[schema]!.properties![member]!.maxLength, `${schema}.${member}`).toBe(2048);
    }
    const account = await provisionAccount();
    const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey: account.apiKey, body: { name: "limits" } });
    const save = (url: string) =>
      call(`/api/v1/campaigns/${campaign.id}/webhooks`, { method: "POST", apiKey: account.apiKey, body: { name: "w", webhook_url: url, event_types: ["EMAIL_REPLY"] } });
    const base = "https://hooks.example.com/";
    expect((await save(base + "a".repeat(2048 - base.length))).status).toBe(200);
    expect((await save(base + "a".repeat(2049 - base.length))).status).toBe(422);
  });
});

describe("the request examples are requests the server accepts", () => {
  it("passes each documented body through its route's validation (no 422)", async () => {
    const account = await provisionAccount();
    const refused: string[] = [];
    for (const [method, path, operation] of operations()) {
      const example = operation.requestBody?.content?.["application/json"]?.example;
      if (example === undefined) continue;
      // A path parameter takes its documented example (a provider name), else an id.
      const parameters = (operation.parameters ?? []) as { name: string; in: string; example?: unknown; schema?: { example?: unknown } }[];
      const url = path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
        const parameter = parameters.find((p) => p.in === "path" && p.name === name);
        return String(parameter?.example ?? parameter?.schema?.example ?? "1");
      });
      const admin = path.startsWith("/admin/");
      const response = await call(url, {
        method: method.toUpperCase(),
        body: example,
        ...(admin ? { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } } : { apiKey: account.apiKey }),
      });
      if (response.status === 422) refused.push(`${method.toUpperCase()} ${path}: ${await response.text()}`);
      else await response.body?.cancel();
    }
    expect(refused).toEqual([]);
    // One request per documented body (over a hundred), in turn: more than the default 5 s on a busy machine.
  }, 30_000);
});

describe("webhook payloads", () => {
  const webhook: WebhookTarget = {
    id: 1,
    accountId: 1,
    associationType: "user",
    name: "all",
    url: "https://hooks.example.com/salvo",
    eventTypes: [...WEBHOOK_EVENT_KINDS],
    categoryIds: [],
    createdAt: new Date(0),
  };
  const campaign = { id: 1, name: "C", status: "ACTIVE" as const, clientId: null };
  const event = (type: EventFacts["type"], firstSend = false): { facts: EventFacts } => ({
    facts: { type, occurredAt: 0, sequenceNumber: 1, firstSend, toEmail: "a@x.example", fromEmail: "b@y.example", subject: "s", body: "b", linkUrl: "https://x.example", recordId: 1, leadId: 1, leadEmail: "a@x.example", leadCategoryId: null },
  });

  /** One payload of each kind the builders make, with the member the consumer adds at delivery. */
  function builtPayloads(): Map<string, Record<string, unknown>> {
    const deliveries = [
      ...eventDeliveries([webhook], campaign, ["SENT", "OPEN", "CLICK", "REPLY", "BOUNCE", "UNSUBSCRIBE"].map((type) => event(type as EventFacts["type"], type === "SENT"))),
      ...categoryDeliveries([webhook], campaign, { recordId: 1, leadId: 1, leadEmail: "a@x.example", oldCategoryId: null, newCategoryId: 1, newCategoryName: "Interested", occurredAt: 0 }),
      ...statusDeliveries([webhook], campaign, "PAUSED", 0),
      ...untrackedReplyDeliveries([webhook], { accountId: 1, clientId: null, emailAccountId: 1, fromEmail: "x@y.example", toEmail: "me@z.example", subject: "s", messageId: null, receivedAt: 0, text: "t", html: null }),
      ...disconnectDeliveries([webhook], { accountId: 1, clientId: null, emailAccountId: 1, fromEmail: "me@z.example", smtpFailureError: "x", imapFailureError: null, disconnectReason: { code: "auth_rejected", message: "x", at: 0 }, occurredAt: 0 }),
    ];
    return new Map(deliveries.map((delivery) => [delivery.eventType, { ...delivery.payload, secret_key: null }]));
  }

  it("documents every kind as an OpenAPI 3.1 webhook with its payload schema", () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...WEBHOOK_EVENT_KINDS].sort());
    const first = (document.webhooks!.EMAIL_REPLY as { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }).post;
    expect(first.requestBody.content["application/json"]!.schema.$ref).toBe("#/components/schemas/WebhookEmailReplyPayload");
  });

  it("lists exactly the members the payload builders send, kind by kind", () => {
    const built = builtPayloads();
    const sent = WEBHOOK_EVENT_KINDS.filter((kind) => kind !== "MANUAL_STEP_REACHED");
    expect([...built.keys()].sort()).toEqual([...sent].sort());
    for (const kind of sent) {
      expect(payloadMembers(kind as WebhookEventKind).sort(), kind).toEqual(Object.keys(built.get(kind)!).sort());
      const schema = document.components.schemas![`Webhook${kind.toLowerCase().split("_").map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")}Payload`]!;
      expect(Object.keys(schema.properties!).sort(), kind).toEqual(Object.keys(built.get(kind)!).sort());
      const example = (document.webhooks![kind] as { post: { requestBody: { content: Record<string, { example: Record<string, unknown> }> } } }).post.requestBody.content["application/json"]!.example;
      expect(Object.keys(example).sort(), `${kind} example`).toEqual(Object.keys(built.get(kind)!).sort());
      expect(example.event_type, `${kind} example`).toBe(kind);
    }
  });
});

describe("the bare origin", () => {
  it("leads to the reference page, which stays public with the document", async () => {
    const response = await call("/", { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe("/docs");
    expect((await call("/docs")).status).toBe(200);
    expect((await call("/openapi.json")).status).toBe(200);
  });
});
