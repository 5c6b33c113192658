import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../platform/env";
import { VERSION } from "./routes";
import { exampleFromSchema, type JsonSchema } from "./schema-example";
import { webhookComponents, webhookOperations } from "./webhook-docs";

/**
 * The served OpenAPI document: what the routes declare (each operation's id, summary, description and
 * request example live beside its route), with the errors and headers every operation shares as
 * reusable components, an example made from the schema for a body that has none, and the webhook
 * payloads as `webhooks`.
 */

type Json = Record<string, unknown>;

interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: unknown;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { in: string; name: string; required?: boolean; schema?: JsonSchema }[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  responses: Record<string, Json>;
  [key: string]: unknown;
}

export interface ApiDocument {
  openapi: string;
  info: Json;
  servers?: Json[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas?: Record<string, JsonSchema>; [key: string]: unknown };
  webhooks?: Record<string, unknown>;
  [key: string]: unknown;
}

export const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const;

const RATE_LIMIT_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit"];

/** The shared error answers, by status: one component each, with the one body schema of that status. */
const ERROR_COMPONENTS: Record<string, { name: string; description: string; schema: string; headers: string[] }> = {
  "400": {
    name: "BadRequest",
    description: "Bad request: malformed JSON, a body over 1 MiB, or parameters that are valid one by one but not together (the message says which).",
    schema: "Error",
    headers: ["X-Request-Id", ...RATE_LIMIT_HEADERS],
  },
  "401": {
    name: "Unauthorized",
    description: 'No API key ("API key is required"), or an unknown, deleted, reset-away or inactive one ("Invalid API Key"); a client key on an account-only route says so. Admin routes: a wrong or missing admin token.',
    schema: "Unauthorized",
    headers: ["X-Request-Id"],
  },
  "404": {
    name: "NotFound",
    description: "The resource does not exist or is not the caller's (the two are indistinguishable), or the path matches no route.",
    schema: "Error",
    headers: ["X-Request-Id", ...RATE_LIMIT_HEADERS],
  },
  "422": {
    name: "ValidationFailed",
    description: "The request breaks the schema (type, required field, enum, pattern, size or range); `details` names each failing path.",
    schema: "ValidationError",
    headers: ["X-Request-Id", ...RATE_LIMIT_HEADERS],
  },
  "429": {
    name: "RateLimited",
    description: "Over the key's budget (or too many failed authentications from this IP); retry after `Retry-After` seconds.",
    schema: "RateLimitExceeded",
    headers: ["X-Request-Id", "Retry-After", ...RATE_LIMIT_HEADERS],
  },
};

/**
 * Header names as src/platform/rate-limit.ts and src/app.ts set them. The rate-limit ones ride on
 * every answer to an authenticated /api/v1 request, errors included (not on 401s, nor on admin routes).
 */
const HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  "X-Request-Id": { description: "This request's id (the caller's own when it sent a sane one); quote it when reporting a problem.", schema: { type: "string" } },
  "X-RateLimit-Limit": { description: "Requests the key may make per 60 seconds.", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in the current 60-second budget.", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Unix time (seconds) when the 60-second budget is full again.", schema: { type: "integer" } },
  "RateLimit-Policy": { description: "The budget in IETF draft syntax: per minute and burst per second, e.g. `60;w=60, 10;w=1`.", schema: { type: "string" } },
  RateLimit: { description: "The current budget in IETF draft syntax, e.g. `limit=60, remaining=59, reset=1`.", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
};

function headerRefs(names: string[]): Json {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

function errorComponents(): Json {
  return Object.fromEntries(
    Object.values(ERROR_COMPONENTS).map(({ name, description, schema, headers }) => [
      name,
      { description, headers: headerRefs(headers), content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } } },
    ]),
  );
}

function isStandardError(status: string, response: Json): boolean {
  const content = response.content as Record<string, MediaType> | undefined;
  const ref = (content?.["application/json"]?.schema as { $ref?: string } | undefined)?.$ref;
  return ref === `#/components/schemas/${ERROR_COMPONENTS[status]!.schema}`;
}

/** The statuses an operation can answer besides its own: what the shared middleware and validation give. */
function sharedStatuses(path: string, operation: Operation): string[] {
  const statuses: string[] = [];
  const hasBody = operation.requestBody !== undefined;
  const hasParameters = (operation.parameters ?? []).length > 0;
  if (hasBody) statuses.push("400");
  if (path.startsWith("/api/v1/") || path.startsWith("/admin/")) statuses.push("401");
  if (path.includes("{")) statuses.push("404");
  if (hasBody || hasParameters) statuses.push("422");
  if (path.startsWith("/api/v1/")) statuses.push("429");
  return statuses;
}

function errorRef(status: string): Json {
  return { $ref: `#/components/responses/${ERROR_COMPONENTS[status]!.name}` };
}

function completeResponses(path: string, operation: Operation): void {
  const responses = operation.responses;
  for (const [status, response] of Object.entries(responses)) {
    if (ERROR_COMPONENTS[status] && isStandardError(status, response)) {
      responses[status] = errorRef(status);
    } else if (status.startsWith("2") && path.startsWith("/api/v1/")) {
      response.headers = { ...headerRefs(["X-Request-Id", ...RATE_LIMIT_HEADERS]), ...(response.headers as Json | undefined) };
    }
  }
  for (const status of sharedStatuses(path, operation)) responses[status] ??= errorRef(status);
}

function resolve(schema: JsonSchema | undefined, schemas: Record<string, JsonSchema>): JsonSchema | undefined {
  const ref = schema?.$ref;
  return typeof ref === "string" ? schemas[ref.replace("#/components/schemas/", "")] : schema;
}

function addRequestExample(operation: Operation, schemas: Record<string, JsonSchema>): void {
  const media = operation.requestBody?.content?.["application/json"];
  if (!media || media.example !== undefined || media.examples !== undefined) return;
  media.example = exampleFromSchema(media.schema, (ref) => resolve({ $ref: ref }, schemas));
}

function completeDocument(document: ApiDocument): ApiDocument {
  const schemas = { ...document.components.schemas, ...webhookComponents() };
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = methods[method];
      if (!operation) continue;
      completeResponses(path, operation);
      addRequestExample(operation, schemas);
    }
  }
  document.components = {
    ...document.components,
    schemas,
    responses: errorComponents(),
    headers: HEADERS,
  };
  document.webhooks = webhookOperations();
  return document;
}

/** The whole document for callers at `origin` (the MCP server builds its tools from the same one). */
export function apiDocument(app: OpenAPIHono<AppEnv>, origin: string): ApiDocument {
  const generated = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Salvo API",
      version: VERSION,
      description:
        "Outbound email campaign API compatible with the hosted service's clients: client keys, campaigns, leads, sequences, mailboxes, " +
        "analytics, master inbox, webhooks, prospect searches and deliverability tests. Every `/api/v1/` operation takes the API key as " +
        "`X-API-Key`, a bearer token or the `api_key` query parameter; every answer carries `X-Request-Id`, and authenticated ones the " +
        "rate-limit headers. Moving from the hosted service: see docs/MOVING.md in the repository.",
    },
    servers: [{ url: origin }],
  });
  // A copy: completing it must not touch what the generator may share with the route definitions.
  return completeDocument(structuredClone(generated) as unknown as ApiDocument);
}
