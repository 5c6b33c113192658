import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { exports } from "cloudflare:workers";

export const MCP_URL = "http://salvo.test/mcp";
/** Every operation's own tool listed, as /mcp was before toolsets. */
export const ALL_TOOLS_URL = `${MCP_URL}?toolsets=all`;
/** The default list, in its order. */
export const CORE_TOOLS = ["find_operations", "describe_operation", "call_read_only_operation", "call_operation", "launch_campaign", "summarize_campaign_week"];

export type KeyForm = "header" | "bearer" | "query";

function randomIp(): string {
  const [a, b, c] = crypto.getRandomValues(new Uint8Array(3));
  return `10.${a}.${b}.${c}`;
}

/**
 * The SDK's own client over its streamable HTTP transport, its fetch going to the Worker's entry
 * point (as test/helpers.ts's call does), presenting the key the way a host would.
 */
export async function connect(apiKey: string | undefined, form: KeyForm = "header", endpoint = MCP_URL): Promise<Client> {
  const url = new URL(endpoint);
  const headers: Record<string, string> = { "CF-Connecting-IP": randomIp() };
  if (apiKey !== undefined && form === "header") headers["X-API-Key"] = apiKey;
  if (apiKey !== undefined && form === "bearer") headers.Authorization = `Bearer ${apiKey}`;
  if (apiKey !== undefined && form === "query") url.searchParams.set("api_key", apiKey);
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: (input, init) => exports.default.fetch(new Request(input, init)),
    requestInit: { headers },
  });
  const client = new Client({ name: "salvo-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** The tool made from one operation (`METHOD /path`), found by the REST line of its description. */
export function toolFor(tools: Tool[], operation: string): Tool {
  const tool = tools.find((candidate) => candidate.description?.endsWith(`REST: ${operation}`));
  if (!tool) throw new Error(`no tool for ${operation}`);
  return tool;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  const text = first?.type === "text" ? first.text : "";
  return { result, isError: result.isError === true, text, data: JSON.parse(text) as unknown };
}

/** One JSON-RPC message POSTed to /mcp by hand (stateless: no initialize needed), for exact request counts. */
export function mcpPost(apiKey: string | undefined, message: Record<string, unknown>, endpoint = MCP_URL, extra: Record<string, string> = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "CF-Connecting-IP": randomIp(),
    ...extra,
  };
  if (apiKey !== undefined) headers["X-API-Key"] = apiKey;
  return exports.default.fetch(new Request(endpoint, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }) }));
}
