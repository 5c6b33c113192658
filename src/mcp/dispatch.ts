import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ExecutionContext } from "hono";
import type { Bindings } from "../platform/env";

/** The app's own entry point: every tool call is a request to it, so auth, limits, validation and tenancy are REST's. */
export type AppFetch = (request: Request, env: Bindings, ctx: ExecutionContext) => Response | Promise<Response>;

/** The MCP request's caller, carried into each internal request. */
export interface Caller {
  origin: string;
  apiKey: string;
  clientIp: string | undefined;
  requestId: string;
  env: Bindings;
  ctx: ExecutionContext;
  fetch: AppFetch;
}

export interface RouteCall {
  method: string;
  /** A concrete path (parameters filled in), e.g. /api/v1/campaigns/12. */
  path: string;
  query?: URLSearchParams;
  body?: unknown;
}

export interface RouteResult {
  status: number;
  ok: boolean;
  /** The parsed JSON body, or the text of any other body (a CSV export). */
  body: unknown;
}

/**
 * One REST call made as the caller: the key goes in X-API-Key whichever way the MCP request
 * presented it, and the caller's address and request id come along (auth-failure limits, logs).
 */
export async function callRoute(caller: Caller, call: RouteCall): Promise<RouteResult> {
  const url = new URL(call.path, caller.origin);
  if (call.query) url.search = call.query.toString();
  const headers = new Headers({ "X-API-Key": caller.apiKey, "X-Request-Id": caller.requestId });
  if (caller.clientIp) headers.set("CF-Connecting-IP", caller.clientIp);
  let body: string | undefined;
  if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers.set("Content-Type", "application/json");
  }
  const response = await caller.fetch(new Request(url, { method: call.method, headers, body }), caller.env, caller.ctx);
  const text = await response.text();
  const isJson = (response.headers.get("Content-Type") ?? "").includes("json") && text !== "";
  return { status: response.status, ok: response.ok, body: isJson ? JSON.parse(text) : text };
}

/** A successful tool result: the body as JSON text, and as structured content when it is an object. */
export function toolSuccess(data: unknown): CallToolResult {
  const text = typeof data === "string" ? data : JSON.stringify(data);
  const content: CallToolResult["content"] = [{ type: "text", text }];
  if (data && typeof data === "object" && !Array.isArray(data)) return { content, structuredContent: data as Record<string, unknown> };
  return { content };
}

/** A failed tool call: what went wrong as JSON text, flagged so the model sees an error. */
export function toolError(data: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(data) }] };
}

/** A route's answer as a tool result; a refusal keeps REST's status and body unchanged. */
export function toolResultOf(result: RouteResult): CallToolResult {
  return result.ok ? toolSuccess(result.body) : toolError({ status: result.status, body: result.body });
}
