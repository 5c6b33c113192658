import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { committedTable, measureToolsets, renderToolsetTable } from "../../scripts/lib/mcp-toolsets.mjs";
import { toolsetName, toolsetsOf } from "../../src/mcp/toolsets";
import { apiTools } from "../../src/mcp/tools";
import { callJson, provisionAccount, type TestAccount } from "../helpers";
import { ALL_TOOLS_URL, callTool, connect, CORE_TOOLS, MCP_URL, mcpPost } from "./fixtures";

const readme = import.meta.glob<string>("../../README.md", { query: "?raw", import: "default", eager: true })["../../README.md"]!;

const MAX_DEFAULT_TOOLS = 40;
const MAX_DEFAULT_TOKENS = 20_000;
/** What several agent platforms accept in one request. */
const MAX_TOOLS_PER_REQUEST = 128;
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

interface Operation {
  operationId: string;
  tags?: string[];
}

let owner: TestAccount;
let operations: Operation[];

/** The raw tools/list answer of /mcp?toolsets=<toolsets>, and its tools. */
async function listTools(toolsets: string, headers: Record<string, string> = {}): Promise<{ text: string; tools: Tool[] }> {
  const url = toolsets ? `${MCP_URL}?toolsets=${encodeURIComponent(toolsets)}` : MCP_URL;
  const response = await mcpPost(owner.apiKey, { method: "tools/list", params: {} }, url, headers);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { text, tools: (JSON.parse(text) as { result: { tools: Tool[] } }).result.tools };
}

const names = (tools: Tool[]) => tools.map((tool) => tool.name);
const operationNames = (tools: Tool[]) => names(tools).filter((name) => !CORE_TOOLS.includes(name));

beforeAll(async () => {
  owner = await provisionAccount({ rate_limit_per_minute: 1000, rate_limit_burst: 1000 });
  const { body } = await callJson<{ paths: Record<string, Record<string, Operation>> }>("/openapi.json");
  operations = Object.entries(body.paths)
    .filter(([path]) => path.startsWith("/api/v1/"))
    .flatMap(([, methods]) => Object.entries(methods).filter(([method]) => HTTP_METHODS.includes(method)).map(([, operation]) => operation));
});

describe("the default tool list", () => {
  it(`is at most ${MAX_DEFAULT_TOOLS} tools and ${MAX_DEFAULT_TOKENS} tokens (4 bytes a token of the tools/list answer)`, async () => {
    const { text, tools } = await listTools("");
    expect(names(tools)).toEqual(CORE_TOOLS);
    expect(tools.length).toBeLessThanOrEqual(MAX_DEFAULT_TOOLS);
    expect(new TextEncoder().encode(text).length / 4).toBeLessThanOrEqual(MAX_DEFAULT_TOKENS);
    expect(text).not.toContain("$ref");
  });

  it("keeps its hints: finding and describing only read, calling may destroy unless it is the read-only call", async () => {
    const { tools } = await listTools("");
    const hints = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]));
    expect(hints.find_operations).toMatchObject({ readOnlyHint: true });
    expect(hints.describe_operation).toMatchObject({ readOnlyHint: true });
    expect(hints.call_read_only_operation).toMatchObject({ readOnlyHint: true });
    expect(hints.call_operation).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints.summarize_campaign_week).toMatchObject({ readOnlyHint: true });
    expect(hints.launch_campaign).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });

  it("is what the README's size table says, for every toolset (run `npm run docs:mcp` after route changes)", async () => {
    const rows = await measureToolsets(async (toolsets) => (await listTools(toolsets)).text);
    expect(rows.map((row) => row.selection)).toEqual(["", ...new Set(operations.flatMap((operation) => (operation.tags ?? []).map(toolsetName))), "all"]);
    expect(committedTable(readme), "README.md has the table's markers").toBeDefined();
    expect(committedTable(readme)).toBe(renderToolsetTable(rows));
    for (const row of rows.filter((row) => row.selection !== "all")) expect(row.tools, row.selection).toBeLessThanOrEqual(MAX_TOOLS_PER_REQUEST);
  });
});

describe("toolsets", () => {
  it("put every operation of the document in the toolset of each of its tags, and in no other", async () => {
    const bySet = new Map<string, string[]>();
    for (const operation of operations) {
      expect(operation.tags ?? [], `${operation.operationId} has a tag, so it belongs to a toolset`).not.toEqual([]);
      for (const tag of operation.tags ?? []) bySet.set(toolsetName(tag), [...(bySet.get(toolsetName(tag)) ?? []), operation.operationId]);
    }
    const covered = new Set<string>();
    for (const [set, expected] of bySet) {
      const listed = operationNames((await listTools(set)).tools);
      expect(listed, set).toEqual(expected);
      for (const name of listed) covered.add(name);
    }
    expect([...covered].sort()).toEqual(operations.map((operation) => operation.operationId).sort());
  });

  it("leave an operation without a tag out of every set (the test above then fails), though `all` and the generic tools still reach it", () => {
    const tools = apiTools({
      paths: {
        "/api/v1/tagged": { get: { operationId: "tagged", tags: ["Master inbox"] } },
        "/api/v1/untagged": { get: { operationId: "untagged" } },
      },
    });
    const sets = toolsetsOf(tools);
    expect([...sets.keys()]).toEqual(["master-inbox"]);
    expect(sets.get("master-inbox")?.tools.map((tool) => tool.tool.name)).toEqual(["tagged"]);
    expect(() => toolsetsOf(apiTools({ paths: { "/api/v1/x": { get: { tags: ["All"] } } } }))).toThrow(/cannot name an MCP toolset/);
  });

  it("add up: comma-separated, repeated, in any case, and from the X-MCP-Toolsets header; core is the default list", async () => {
    const { tools: campaigns } = await listTools("campaigns");
    const { tools: webhooks } = await listTools("webhooks");
    const both = [...CORE_TOOLS, ...operationNames(campaigns), ...operationNames(webhooks)].sort();
    expect(names((await listTools(" Webhooks ,campaigns,")).tools).sort()).toEqual(both);
    expect(names((await listTools("campaigns", { "X-MCP-Toolsets": "webhooks" })).tools).sort()).toEqual(both);
    expect(names((await listTools("", { "X-MCP-Toolsets": "campaigns, webhooks" })).tools).sort()).toEqual(both);
    const repeated = await mcpPost(owner.apiKey, { method: "tools/list", params: {} }, `${MCP_URL}?toolsets=campaigns&toolsets=webhooks`);
    expect(names(((await repeated.json()) as { result: { tools: Tool[] } }).result.tools).sort()).toEqual(both);
    expect(names((await listTools("core")).tools)).toEqual(CORE_TOOLS);
    expect(names((await listTools("")).tools)).toEqual(CORE_TOOLS);
    expect(operationNames((await listTools("campaigns,all")).tools)).toEqual(operations.map((operation) => operation.operationId));
  });

  it("refuse an unknown name with the API's 422, naming the toolsets there are, before any JSON-RPC", async () => {
    for (const [url, headers] of [
      [`${MCP_URL}?toolsets=campaigns,inbox`, {}],
      [MCP_URL, { "X-MCP-Toolsets": "inbox" }],
    ] as const) {
      const response = await mcpPost(owner.apiKey, { method: "tools/list", params: {} }, url, headers);
      expect(response.status).toBe(422);
      const body = (await response.json()) as { error: string; details: { path: string; message: string }[] };
      expect(body.error).toBe("Validation failed");
      expect(body.details).toHaveLength(1);
      expect(body.details[0]!.path).toBe("toolsets");
      expect(body.details[0]!.message).toMatch(/^Unknown toolset: inbox\. Choose from: core, all, .*master-inbox/);
    }
    await expect(connect(owner.apiKey, "header", `${MCP_URL}?toolsets=nope`)).rejects.toMatchObject({ code: 422, message: expect.stringContaining("Unknown toolset: nope") });
  });

  it("asks for the key first: an unknown toolset without a key is REST's 401", async () => {
    const response = await mcpPost(undefined, { method: "tools/list", params: {} }, `${MCP_URL}?toolsets=nope`);
    expect(response.status).toBe(401);
  });
});

describe("clients of the per-operation tools", () => {
  it("get them back with toolsets=all, under the same names", async () => {
    const { tools } = await listTools("all");
    expect(operationNames(tools)).toEqual(operations.map((operation) => operation.operationId));
    const viaAll = await connect(owner.apiKey, "header", ALL_TOOLS_URL);
    expect((await callTool(viaAll, "getAccount")).data).toEqual((await callJson("/api/v1/account", { apiKey: owner.apiKey })).body);
  });

  it("can still call an operation's tool by name on the default list, which does not show it", async () => {
    const client = await connect(owner.apiKey);
    expect(names((await client.listTools()).tools)).not.toContain("getAccount");
    const result = await callTool(client, "getAccount");
    expect(result.isError).toBe(false);
    expect(result.data).toEqual((await callJson("/api/v1/account", { apiKey: owner.apiKey })).body);
    await expect(client.callTool({ name: "noSuchTool", arguments: {} })).rejects.toMatchObject({ message: expect.stringContaining("Unknown tool: noSuchTool") });
  });
});
