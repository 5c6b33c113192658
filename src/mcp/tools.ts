import type { Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { RouteCall } from "./dispatch";

export type JsonSchema = Record<string, unknown>;

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const API_PREFIX = "/api/v1/";
const HTTP_METHODS = new Set(["get", "post", "put", "patch", "delete"]);
/** Tool names stay within what every MCP host accepts (some cap names at 64 characters). */
const MAX_NAME_LENGTH = 64;

/** POSTs that only read (listings and reports whose filters travel in a body). */
export const READ_ONLY_WRITES = new Set([
  "POST /api/v1/master-inbox/inbox-replies",
  "POST /api/v1/master-inbox/archived",
  "POST /api/v1/master-inbox/snoozed",
  "POST /api/v1/master-inbox/unread-replies",
  "POST /api/v1/master-inbox/important",
  "POST /api/v1/master-inbox/scheduled",
  "POST /api/v1/master-inbox/reminders",
  "POST /api/v1/master-inbox/sent",
  "POST /api/v1/master-inbox/assigned-me",
  "POST /api/v1/master-inbox/views",
  "POST /api/v1/campaigns/{campaign_id}/message-history-for-leads/{token}",
  "POST /api/v1/smart-delivery/provider-report",
  "POST /api/v1/spam-test/report/{spamTestId}/providerwise",
  "POST /api/v1/spam-test/report",
  "POST /api/v1/email-accounts/tag-list",
]);

/**
 * Writes other than DELETE that end something for good or take it out of use: stops, deletions,
 * unsubscribes, suspensions, keys and secrets replaced, blocks, steps retired.
 */
export const DESTRUCTIVE_WRITES = new Set([
  "PUT /api/v1/client/api-key/reset/{id}",
  "PUT /api/v1/client/api-key/{id}/status",
  "POST /api/v1/campaigns/{campaign_id}/status",
  "PATCH /api/v1/campaigns/{campaign_id}/status",
  "POST /api/v1/campaigns/{campaign_id}/sequences",
  "POST /api/v1/campaigns/{campaign_id}/leads/{email_lead_map_id}/manual-complete",
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/unsubscribe",
  "POST /api/v1/leads/{lead_id}/unsubscribe",
  "PUT /api/v1/leads/{lead_id}/status",
  "POST /api/v1/leads/campaign/push-to-list",
  "POST /api/v1/leads/add-domain-block-list",
  "POST /api/v1/master-inbox/block-domains",
  "POST /api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/rotate-secret",
  "POST /api/v1/webhook/{id}/rotate-secret",
  "POST /api/v1/spam-test/delete",
  "PUT /api/v1/spam-test/{spamTestId}/stop",
  "PUT /api/v1/email-accounts/suspend/{id}",
]);

/** How a tool's arguments become the operation's request. */
export interface ApiOperation {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** flat: the JSON body's properties are arguments; nested: the body is the `body` argument. */
  body: "none" | "flat" | "nested";
  bodyRequired: boolean;
}

export interface ApiTool {
  tool: Tool;
  operation: ApiOperation;
  /** The document's words for it, which find_operations searches. */
  tags: string[];
  summary: string;
  description: string;
}

/** `$ref`s replaced by the schemas they name: a tool's input schema stands alone. */
export function inlineRefs(schema: unknown, components: Record<string, JsonSchema>, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlineRefs(item, components, seen));
  if (!schema || typeof schema !== "object") return schema;
  const { $ref, ...rest } = schema as JsonSchema;
  if (typeof $ref === "string") {
    const name = $ref.replace("#/components/schemas/", "");
    const target = components[name];
    if (!target) throw new Error(`Unknown schema ${$ref}`);
    if (seen.includes(name)) throw new Error(`Recursive schema ${name} cannot become a tool input`);
    return { ...(inlineRefs(target, components, [...seen, name]) as JsonSchema), ...(inlineRefs(rest, components, seen) as JsonSchema) };
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inlineRefs(value, components, seen)]));
}

function isPlainObjectSchema(schema: JsonSchema): schema is JsonSchema & { properties: Record<string, JsonSchema> } {
  return schema.type === "object" && typeof schema.properties === "object" && !schema.anyOf && !schema.oneOf && !schema.allOf;
}

/** Until every operation has an operationId: method and path, e.g. get_campaigns_campaign_id_leads. */
export function fallbackName(method: string, path: string): string {
  const segments = path.slice(API_PREFIX.length).split("/");
  const name = (kept: string[]) => `${method}_${kept.join("_")}`.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/_+$/, "");
  const full = name(segments.map((segment) => segment.replace(/[{}]/g, "")));
  return full.length <= MAX_NAME_LENGTH ? full : name(segments.filter((segment) => !segment.startsWith("{")));
}

function toolName(method: string, path: string, operation: OpenApiOperation): string {
  const given = operation.operationId?.replace(/[^A-Za-z0-9_-]/g, "_");
  return given || fallbackName(method, path);
}

function describe(method: string, path: string, operation: OpenApiOperation): string {
  const parts = [operation.summary, operation.description].filter((text): text is string => Boolean(text?.trim()));
  const unique = parts.filter((text, index) => parts.indexOf(text) === index);
  return [...unique, `REST: ${method.toUpperCase()} ${path}`].join("\n\n");
}

function annotationsOf(key: string, method: string, title: string | undefined): ToolAnnotations {
  const readOnly = method === "get" || READ_ONLY_WRITES.has(key);
  if (readOnly) return { title, readOnlyHint: true };
  return { title, readOnlyHint: false, destructiveHint: method === "delete" || DESTRUCTIVE_WRITES.has(key) };
}

function apiTool(method: string, path: string, operation: OpenApiOperation, components: Record<string, JsonSchema>): ApiTool {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== "path" && parameter.in !== "query") continue;
    (parameter.in === "path" ? pathParams : queryParams).push(parameter.name);
    const schema = inlineRefs(parameter.schema ?? {}, components) as JsonSchema;
    properties[parameter.name] = parameter.description ? { ...schema, description: parameter.description } : schema;
    if (parameter.required || parameter.in === "path") required.push(parameter.name);
  }

  let body: ApiOperation["body"] = "none";
  const bodyRequired = operation.requestBody?.required === true;
  const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
  if (bodySchema) {
    const schema = inlineRefs(bodySchema, components) as JsonSchema;
    const names = isPlainObjectSchema(schema) ? Object.keys(schema.properties) : [];
    // Flat only where no body field shares a name with a parameter (or with `body` itself).
    if (isPlainObjectSchema(schema) && !names.some((name) => name === "body" || name in properties)) {
      body = "flat";
      Object.assign(properties, schema.properties);
      if (bodyRequired && Array.isArray(schema.required)) required.push(...(schema.required as string[]));
    } else {
      body = "nested";
      properties.body = { ...schema, description: [schema.description, "The JSON request body."].filter(Boolean).join(" ") };
      if (bodyRequired) required.push("body");
    }
  }

  const key = `${method.toUpperCase()} ${path}`;
  const inputSchema: Tool["inputSchema"] = { type: "object", properties };
  if (required.length > 0) inputSchema.required = [...new Set(required)];
  return {
    tool: {
      name: toolName(method, path, operation),
      title: operation.summary,
      description: describe(method, path, operation),
      inputSchema,
      annotations: annotationsOf(key, method, operation.summary),
    },
    operation: { method: method.toUpperCase(), path, pathParams, queryParams, body, bodyRequired },
    tags: operation.tags ?? [],
    summary: operation.summary ?? "",
    description: operation.description ?? "",
  };
}

/** One tool per /api/v1 operation of the document, in the document's order. */
export function apiTools(document: OpenApiDocument): ApiTool[] {
  const components = document.components?.schemas ?? {};
  const tools: ApiTool[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!path.startsWith(API_PREFIX)) continue;
    for (const [method, operation] of Object.entries(operations)) {
      if (HTTP_METHODS.has(method)) tools.push(apiTool(method, path, operation, components));
    }
  }
  return tools;
}

function queryValue(value: unknown): string {
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * A path parameter's value as one segment. `.` and `..` are refused: URL parsing reads them (and
 * their %2E spellings) as steps to another path, and no operation's parameter takes them.
 */
export function pathSegment(value: unknown): string {
  const text = String(value);
  if (text === "." || text === "..") throw new ArgumentError(`Not a path value: ${text}`);
  return encodeURIComponent(text);
}

/** An argument that cannot be placed (not a parameter, and the operation takes no flat body). */
export class ArgumentError extends Error {}

/** The request a tool call makes: path parameters filled in, the rest in the query string or the body. */
export function routeCallOf(operation: ApiOperation, args: Record<string, unknown>): RouteCall {
  const leftover = new Map(Object.entries(args));
  const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = leftover.get(name);
    if (value === undefined || value === null || value === "") throw new ArgumentError(`Missing required argument: ${name}`);
    leftover.delete(name);
    return pathSegment(value);
  });

  const query = new URLSearchParams();
  for (const name of operation.queryParams) {
    const value = leftover.get(name);
    leftover.delete(name);
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, queryValue(item));
  }

  let body: unknown;
  if (operation.body === "nested") {
    body = leftover.get("body");
    leftover.delete("body");
  } else if (operation.body === "flat") {
    body = leftover.size > 0 || operation.bodyRequired ? Object.fromEntries(leftover) : undefined;
    leftover.clear();
  }
  if (leftover.size > 0) throw new ArgumentError(`Unknown argument(s): ${[...leftover.keys()].join(", ")}`);
  return { method: operation.method, path, query, body };
}
