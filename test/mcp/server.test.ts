import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { DESTRUCTIVE_WRITES, READ_ONLY_WRITES } from "../../src/mcp/tools";
import { callJson, provisionAccount, type TestAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { ALL_TOOLS_URL, callTool, connect, CORE_TOOLS, mcpPost, toolFor, type KeyForm } from "./fixtures";

const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

/** `METHOD /path` of every /api/v1 operation in the document /openapi.json serves. */
async function documentedOperations(): Promise<string[]> {
  const { body } = await callJson<{ paths: Record<string, Record<string, unknown>> }>("/openapi.json");
  return Object.entries(body.paths)
    .filter(([path]) => path.startsWith("/api/v1/"))
    .flatMap(([path, methods]) => Object.keys(methods).filter((m) => HTTP_METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${path}`));
}

let owner: TestAccount;
let client: Client;
let tools: Tool[];

beforeAll(async () => {
  owner = await provisionAccount();
  client = await connect(owner.apiKey, "header", ALL_TOOLS_URL);
  tools = (await client.listTools()).tools;
});

describe("MCP tools at /mcp?toolsets=all", () => {
  it("lists one tool per /api/v1 operation of the document, after the default list's", async () => {
    const operations = await documentedOperations();
    expect(operations.length).toBeGreaterThan(150);
    expect(tools).toHaveLength(operations.length + CORE_TOOLS.length);
    expect(tools.slice(0, CORE_TOOLS.length).map((tool) => tool.name)).toEqual(CORE_TOOLS);
    for (const operation of operations) expect(toolFor(tools, operation).inputSchema.type).toBe("object");
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    for (const tool of tools) expect(tool.description, tool.name).toBeTruthy();
  });

  it("merges path, query and body into one input schema, the body nested only where a flat merge would be ambiguous", () => {
    const leads = toolFor(tools, "GET /api/v1/campaigns/{campaign_id}/leads").inputSchema;
    expect(Object.keys(leads.properties ?? {})).toEqual(expect.arrayContaining(["campaign_id", "offset", "limit"]));
    expect(leads.required).toEqual(["campaign_id"]);

    const create = toolFor(tools, "POST /api/v1/campaigns/create").inputSchema;
    expect(Object.keys(create.properties ?? {})).toEqual(expect.arrayContaining(["name", "client_id"]));
    expect(JSON.stringify(create)).not.toContain("$ref");

    // The body may be an object or an array of steps: one `body` argument.
    const sequences = toolFor(tools, "POST /api/v1/campaigns/{campaign_id}/sequences").inputSchema;
    expect(Object.keys(sequences.properties ?? {}).sort()).toEqual(["body", "campaign_id"]);
    expect(sequences.required).toEqual(["campaign_id", "body"]);

    // file_name and two flags are both query parameters and body fields here.
    const csv = toolFor(tools, "POST /api/v1/lead-list/{id}/import-csv").inputSchema;
    expect(Object.keys(csv.properties ?? {})).toEqual(expect.arrayContaining(["id", "file_name", "body"]));
  });

  it("marks destructive tools, and read-only ones, by their operation", async () => {
    const operations = new Set(await documentedOperations());
    for (const listed of [...DESTRUCTIVE_WRITES, ...READ_ONLY_WRITES]) expect(operations.has(listed), listed).toBe(true);

    for (const operation of operations) {
      const { annotations } = toolFor(tools, operation);
      if (operation.startsWith("GET ") || READ_ONLY_WRITES.has(operation)) {
        expect(annotations?.readOnlyHint, operation).toBe(true);
      } else {
        expect(annotations?.readOnlyHint, operation).toBe(false);
        expect(annotations?.destructiveHint, operation).toBe(operation.startsWith("DELETE ") || DESTRUCTIVE_WRITES.has(operation));
      }
    }
    expect(toolFor(tools, "DELETE /api/v1/campaigns/{campaign_id}").annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(toolFor(tools, "POST /api/v1/campaigns/{campaign_id}/status").annotations?.destructiveHint).toBe(true);
    expect(toolFor(tools, "POST /api/v1/campaigns/create").annotations?.destructiveHint).toBe(false);
    expect(toolFor(tools, "POST /api/v1/master-inbox/inbox-replies").annotations?.readOnlyHint).toBe(true);
    expect(tools.find((tool) => tool.name === "summarize_campaign_week")?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((tool) => tool.name === "launch_campaign")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });
});

describe("MCP tool calls go through the REST routes", () => {
  it("answer the same data as the REST route (path, query, bare-array and flat-body operations)", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Same data" });
    await createCampaign(owner.apiKey, { name: "Second" });

    const read = await callTool(client, toolFor(tools, "GET /api/v1/campaigns/{campaign_id}").name, { campaign_id: campaignId });
    const rest = await callJson(`/api/v1/campaigns/${campaignId}`, { apiKey: owner.apiKey });
    expect(read.isError).toBe(false);
    expect(read.data).toEqual(rest.body);
    expect(read.result.structuredContent).toEqual(rest.body);

    const page = await callTool(client, toolFor(tools, "GET /api/v1/campaigns").name, { limit: 1, offset: 1 });
    expect(page.data).toEqual((await callJson("/api/v1/campaigns?limit=1&offset=1", { apiKey: owner.apiKey })).body);

    const mailboxes = await callTool(client, toolFor(tools, "GET /api/v1/campaigns/{campaign_id}/email-accounts").name, { campaign_id: campaignId });
    expect(mailboxes.data).toEqual((await callJson(`/api/v1/campaigns/${campaignId}/email-accounts`, { apiKey: owner.apiKey })).body);

    const created = await callTool(client, toolFor(tools, "POST /api/v1/lead-list").name, { listName: "From MCP" });
    expect(created.isError).toBe(false);
    const listId = (created.data as { data: { id: number } }).data.id;
    const list = await callJson<{ name?: string; data?: { name: string } }>(`/api/v1/lead-list/${listId}`, { apiKey: owner.apiKey });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain("From MCP");
  });

  it("send a nested body as the route's JSON body", async () => {
    const campaignId = await createCampaign(owner.apiKey);
    const steps = [{ seq_number: 1, subject: "Hello {{first_name}}", email_body: "<p>Hi</p>", seq_delay_details: { delay_in_days: 0 } }];
    const saved = await callTool(client, toolFor(tools, "POST /api/v1/campaigns/{campaign_id}/sequences").name, { campaign_id: campaignId, body: { sequences: steps } });
    expect(saved.isError).toBe(false);
    const rest = await callJson<{ subject: string }[]>(`/api/v1/campaigns/${campaignId}/sequences`, { apiKey: owner.apiKey });
    expect(rest.body.map((step) => step.subject)).toEqual(["Hello {{first_name}}"]);
    expect((saved.data as { data: unknown }).data).toEqual(rest.body);
  });

  it("answer REST's 422 for input the route refuses, and refuse arguments no operation takes", async () => {
    const tool = toolFor(tools, "GET /api/v1/campaigns/{campaign_id}").name;
    const invalid = await callTool(client, tool, { campaign_id: "abc" });
    const rest = await callJson("/api/v1/campaigns/abc", { apiKey: owner.apiKey });
    expect(rest.status).toBe(422);
    expect(invalid.isError).toBe(true);
    expect(invalid.data).toEqual({ status: 422, body: rest.body });

    const unknown = await callTool(client, tool, { campaign_id: 1, colour: "red" });
    expect(unknown.isError).toBe(true);
    expect(unknown.data).toEqual({ error: "Unknown argument(s): colour" });

    const missing = await callTool(client, tool, {});
    expect(missing.data).toEqual({ error: "Missing required argument: campaign_id" });
  });

  it("never let a path argument walk to another route (`..` in a webhook id must not delete the campaign)", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Stays" });
    const deleteWebhook = toolFor(tools, "DELETE /api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}").name;
    for (const webhookId of ["..", "."]) {
      const result = await callTool(client, deleteWebhook, { campaign_id: campaignId, webhook_id: webhookId });
      expect(result.isError).toBe(true);
      expect(result.data).toEqual({ error: `Not a path value: ${webhookId}` });
    }
    const week = await callTool(client, "summarize_campaign_week", { campaign_id: ".." });
    expect(week.data).toEqual({ error: "Not a path value: .." });
    expect((await callJson(`/api/v1/campaigns/${campaignId}`, { apiKey: owner.apiKey })).status).toBe(200);
  });

  it("answer another tenant's id with the same 404 as REST, and change nothing of theirs", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Not yours" });
    const stranger = await provisionAccount();
    const strangerClient = await connect(stranger.apiKey);

    for (const [operation, method] of [
      ["GET /api/v1/campaigns/{campaign_id}", "GET"],
      ["DELETE /api/v1/campaigns/{campaign_id}", "DELETE"],
    ] as const) {
      const viaTool = await callTool(strangerClient, toolFor(tools, operation).name, { campaign_id: campaignId });
      const rest = await callJson(`/api/v1/campaigns/${campaignId}`, { method, apiKey: stranger.apiKey });
      expect(rest.status).toBe(404);
      expect(viaTool.isError).toBe(true);
      expect(viaTool.data).toEqual({ status: 404, body: rest.body });
    }
    expect((await callJson(`/api/v1/campaigns/${campaignId}`, { apiKey: owner.apiKey })).status).toBe(200);
  });

  it("spend the caller's rate budget: the MCP request and each route call it makes", async () => {
    const limited = await provisionAccount({ rate_limit_per_minute: 10, rate_limit_burst: 10 });
    const remaining = async () => (await callJson<{ remaining: number }>("/api/v1/rate-limit", { apiKey: limited.apiKey })).body.remaining;
    const before = await remaining();
    const response = await mcpPost(limited.apiKey, { method: "tools/call", params: { name: toolFor(tools, "GET /api/v1/account").name, arguments: {} } });
    expect(response.status).toBe(200);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("10");
    expect(await remaining()).toBe(before - 3);
  });
});

describe("MCP authentication", () => {
  for (const form of ["header", "bearer", "query"] as KeyForm[]) {
    it(`takes the key the way REST does (${form})`, async () => {
      const viaForm = await connect(owner.apiKey, form);
      const result = await callTool(viaForm, toolFor(tools, "GET /api/v1/account").name);
      expect(result.isError).toBe(false);
      expect(result.data).toEqual((await callJson("/api/v1/account", { apiKey: owner.apiKey })).body);
    });
  }

  it("refuses a missing or unknown key with REST's 401", async () => {
    const listTools = { method: "tools/list", params: {} };
    for (const key of [undefined, "sk_live_not-a-real-key"]) {
      const response = await mcpPost(key, listTools);
      const rest = await callJson("/api/v1/campaigns", key === undefined ? {} : { headers: { "X-API-Key": key } });
      expect(rest.status).toBe(401);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(rest.body);
    }
    await expect(connect(undefined)).rejects.toMatchObject({ code: 401, message: expect.stringContaining("API key is required") });
  });

  it("answers 405 to GET and DELETE (stateless: no server-sent stream, no session)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await callJson("/mcp", { method, apiKey: owner.apiKey });
      expect(response.status).toBe(405);
      expect(response.response.headers.get("Allow")).toBe("POST");
    }
  });
});
