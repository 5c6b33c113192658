import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { callJson, provisionAccount, type TestAccount } from "../helpers";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { createWebhook } from "../webhooks/fixtures";
import { ALL_TOOLS_URL, callTool, connect, mcpPost } from "./fixtures";

const NO_SUCH_ID = 987654321;

let owner: TestAccount;
let stranger: TestAccount;
/** The default list: the generic tools. */
let client: Client;
let strangerClient: Client;
/** Every operation's own tool, to compare with. */
let allTools: Tool[];
let allClient: Client;

beforeAll(async () => {
  owner = await provisionAccount({ rate_limit_per_minute: 2000, rate_limit_burst: 2000 });
  stranger = await provisionAccount();
  client = await connect(owner.apiKey);
  strangerClient = await connect(stranger.apiKey);
  allClient = await connect(owner.apiKey, "header", ALL_TOOLS_URL);
  allTools = (await allClient.listTools()).tools.filter((tool) => tool.description?.includes("REST: "));
});

type Found = { operation: string; rest: string; summary: string; toolsets: string[]; read_only: boolean; destructive: boolean };

async function find(args: Record<string, unknown>) {
  return (await callTool(client, "find_operations", args)).data as { total: number; operations: Found[] };
}

/**
 * Runs `check` for every item, `CONCURRENT` at a time: the comparison of every tool's answers is
 * reads and refusals, and one by one its round trips were most of this file's time.
 */
async function eachTool<T>(items: T[], check: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENT) await Promise.all(items.slice(i, i + CONCURRENT).map(check));
}
const CONCURRENT = 8;

/** An operation through call_operation (or the read-only call), as the default list reaches it. */
function run(operation: string, args: Record<string, unknown> = {}, as: Client = client, tool = "call_operation") {
  return callTool(as, tool, { operation, arguments: args });
}

const rest = (path: string, options: { method?: string; body?: unknown; apiKey?: string } = {}) => callJson(path, { apiKey: owner.apiKey, ...options });

describe("find_operations", () => {
  it("ranks the operation meant by a few words first", async () => {
    const cases: [string, string][] = [
      ["unread replies", "listUnreadReplies"],
      ["attach mailboxes to a campaign", "attachCampaignEmailAccounts"],
      ["add leads to a campaign", "addCampaignLeads"],
      ["rotate webhook secret", "rotateWebhookSecret"],
      ["SPF verdicts", "spamTestReportSpfDetails"],
      ["read a campaign", "getCampaign"],
      ["export campaign leads csv", "exportCampaignLeads"],
    ];
    for (const [query, expected] of cases) {
      const { operations } = await find({ query });
      expect(operations.slice(0, 3).map((hit) => hit.operation), query).toContain(expected);
    }
    const { operations } = await find({ query: "pause a campaign" });
    expect(operations.slice(0, 3).map((hit) => hit.operation)).toEqual(expect.arrayContaining(["setCampaignStatus", "pauseCampaignLead"]));
  });

  it("answers each hit's REST line, toolsets and hints, at most `limit` of them", async () => {
    const { total, operations } = await find({ query: "delete webhook", limit: 2 });
    expect(total).toBeGreaterThan(2);
    expect(operations).toHaveLength(2);
    for (const hit of operations) {
      const tool = allTools.find((candidate) => candidate.name === hit.operation)!;
      expect(tool.description).toContain(`REST: ${hit.rest}`);
      expect(hit).toMatchObject({ toolsets: ["webhooks"], read_only: false, destructive: true });
    }
  });

  it("lists a toolset whole without a query, searches only it with one, and lists the toolsets with neither", async () => {
    const all = await find({ toolset: "campaigns" });
    const { body: document } = await callJson<{ paths: Record<string, Record<string, { operationId: string; tags?: string[] }>> }>("/openapi.json");
    const tagged = Object.values(document.paths).flatMap((methods) => Object.values(methods).filter((operation) => operation.tags?.includes("Campaigns")));
    expect(all.operations.map((hit) => hit.operation)).toEqual(tagged.map((operation) => operation.operationId));
    const inSet = await find({ toolset: "webhooks", query: "campaign" });
    expect(inSet.operations.length).toBeGreaterThan(0);
    for (const hit of inSet.operations) expect(hit.toolsets).toContain("webhooks");
    const sets = (await callTool(client, "find_operations", {})).data as { toolsets: { name: string; operations: number }[] };
    expect(sets.toolsets).toEqual(expect.arrayContaining([{ name: "master-inbox", operations: expect.any(Number) }]));
    expect(sets.toolsets.reduce((sum, set) => sum + set.operations, 0)).toBe(allTools.length);
  });

  it("refuses an unknown toolset, a bad limit or an unknown argument, and finds nothing for words no operation has", async () => {
    expect((await callTool(client, "find_operations", { toolset: "inbox" })).data).toEqual({ error: expect.stringMatching(/^Unknown toolset: inbox\. Choose from: .*master-inbox/) });
    expect((await callTool(client, "find_operations", { query: "x", limit: 0 })).data).toEqual({ error: "limit must be an integer from 1 to 50" });
    expect((await callTool(client, "find_operations", { q: "campaign" })).data).toEqual({ error: "Unknown argument(s): q" });
    expect(await find({ query: "zebra xylophone" })).toEqual({ total: 0, operations: [] });
  });
});

describe("describe_operation", () => {
  it("gives every operation the input schema and hints of its own tool, by name or by REST line", async () => {
    for (const tool of allTools) {
      const restLine = tool.description!.slice(tool.description!.lastIndexOf("REST: ") + "REST: ".length);
      const described = await callTool(client, "describe_operation", { operation: tool.name });
      expect(described.isError, tool.name).toBe(false);
      const data = described.data as Found & { description: string; input_schema: unknown };
      expect(data.input_schema, tool.name).toEqual(tool.inputSchema);
      expect(data.rest).toBe(restLine);
      expect(data.read_only, tool.name).toBe(tool.annotations?.readOnlyHint === true);
      expect(data.destructive, tool.name).toBe(tool.annotations?.destructiveHint === true);
      expect(tool.description).toContain(data.summary);
    }
    const byRest = await callTool(client, "describe_operation", { operation: "get /api/v1/campaigns/{campaign_id}" });
    expect((byRest.data as Found).operation).toBe("getCampaign");
    const short = await callTool(client, "describe_operation", { operation: "DELETE  /campaigns/{campaign_id}" });
    expect((short.data as Found).operation).toBe("deleteCampaign");
  }, 60_000);

  it("answers an unknown operation with the nearest names", async () => {
    const unknown = await callTool(client, "describe_operation", { operation: "getCampaignz" });
    expect(unknown.isError).toBe(true);
    expect(unknown.data).toEqual({ error: "Unknown operation: getCampaignz", did_you_mean: ["getCampaign", expect.any(String), expect.any(String)] });
  });
});

describe("call_operation reaches every operation as REST does", () => {
  it("answers REST's data across features: path, query, flat and nested bodies, bodies of read-only POSTs", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Through call_operation" });
    await createCampaign(owner.apiKey, { name: "Another" });
    await addLeads(owner.apiKey, campaignId, ["ann@call.example", "bob@call.example", "cy@call.example"]);
    const mailbox = await createMailbox(owner.apiKey);

    // Path, query, path and query together.
    expect((await run("getCampaign", { campaign_id: campaignId })).data).toEqual((await rest(`/api/v1/campaigns/${campaignId}`)).body);
    expect((await run("listCampaigns", { limit: 1, offset: 1 })).data).toEqual((await rest("/api/v1/campaigns?limit=1&offset=1")).body);
    const leads = await run("listCampaignLeads", { campaign_id: campaignId, offset: 1, limit: 1 }, client, "call_read_only_operation");
    expect(leads.data).toEqual((await rest(`/api/v1/campaigns/${campaignId}/leads?offset=1&limit=1`)).body);
    expect((await run("GET /api/v1/email-accounts", { limit: 5 })).data).toEqual((await rest("/api/v1/email-accounts?limit=5")).body);

    // A flat body, then the same object read by REST.
    const list = await run("createLeadList", { listName: "Called" });
    expect(list.isError).toBe(false);
    const listId = (list.data as { data: { id: number } }).data.id;
    expect((await run("getLeadList", { id: listId })).data).toEqual((await rest(`/api/v1/lead-list/${listId}`)).body);
    expect(JSON.stringify((await rest(`/api/v1/lead-list/${listId}`)).body)).toContain("Called");

    // A nested body (object or array of steps).
    const steps = [{ seq_number: 1, subject: "Hi {{first_name}}", email_body: "<p>Hi</p>", seq_delay_details: { delay_in_days: 0 } }];
    const saved = await run("saveCampaignSequences", { campaign_id: campaignId, body: { sequences: steps } });
    expect(saved.isError).toBe(false);
    expect((await run("getCampaignSequences", { campaign_id: campaignId })).data).toEqual((await rest(`/api/v1/campaigns/${campaignId}/sequences`)).body);

    // Mailboxes, webhooks, block list, clients, deliverability.
    const attached = await run("attachCampaignEmailAccounts", { campaign_id: campaignId, email_account_ids: [mailbox.id] });
    expect(attached.isError).toBe(false);
    expect((await run("listCampaignEmailAccounts", { campaign_id: campaignId })).data).toEqual((await rest(`/api/v1/campaigns/${campaignId}/email-accounts`)).body);
    const webhook = await createWebhook(owner.apiKey, campaignId);
    expect((await run("getWebhook", { id: webhook.id })).data).toEqual((await rest(`/api/v1/webhook/${webhook.id}`)).body);
    const blocked = await run("addToBlockList", { domain_block_list: ["spam.example"] });
    expect(blocked.isError).toBe(false);
    expect((await run("listBlockList", {}, client, "call_read_only_operation")).data).toEqual((await rest("/api/v1/leads/get-domain-block-list")).body);
    const savedClient = await run("saveClient", { name: "Acme", email: "acme@clients.example" });
    expect(savedClient.isError).toBe(false);
    expect((await run("listClients")).data).toEqual((await rest("/api/v1/client")).body);
    const folder = await run("createSpamTestFolder", { name: "From MCP" });
    expect(folder.isError).toBe(false);
    expect((await run("listSpamTestFolders")).data).toEqual((await rest("/api/v1/spam-test/folder")).body);

    // Read-only POSTs (filters in the body) and analytics (query).
    const inbox = await run("listUnreadReplies", { campaign_id: campaignId, limit: 5 }, client, "call_read_only_operation");
    expect(inbox.data).toEqual((await rest("/api/v1/master-inbox/unread-replies", { method: "POST", body: { campaign_id: campaignId, limit: 5 } })).body);
    const today = new Date().toISOString().slice(0, 10);
    const daily = await run("getDayWiseOverallStats", { start_date: today, end_date: today, campaign_ids: String(campaignId) }, client, "call_read_only_operation");
    expect(daily.isError).toBe(false);
    expect(daily.data).toEqual((await rest(`/api/v1/analytics/day-wise-overall-stats?start_date=${today}&end_date=${today}&campaign_ids=${campaignId}`)).body);
  });

  it("answers REST's status and body for bad input: schema (422) and meaning (400)", async () => {
    const campaignId = await createCampaign(owner.apiKey);
    const cases: [string, Record<string, unknown>, string, { method?: string; body?: unknown }][] = [
      ["getCampaign", { campaign_id: "abc" }, "/api/v1/campaigns/abc", {}],
      ["listCampaigns", { limit: -1 }, "/api/v1/campaigns?limit=-1", {}],
      ["createLeadList", { listName: 42 }, "/api/v1/lead-list", { method: "POST", body: { listName: 42 } }],
      ["getDayWiseOverallStats", { start_date: "2026-02-10", end_date: "2026-02-01" }, "/api/v1/analytics/day-wise-overall-stats?start_date=2026-02-10&end_date=2026-02-01", {}],
      ["saveCampaignSequences", { campaign_id: campaignId, body: { sequences: "none" } }, `/api/v1/campaigns/${campaignId}/sequences`, { method: "POST", body: { sequences: "none" } }],
      ["listUnreadReplies", { limit: "many" }, "/api/v1/master-inbox/unread-replies", { method: "POST", body: { limit: "many" } }],
    ];
    const statuses = new Set<number>();
    for (const [operation, args, path, options] of cases) {
      const expected = await rest(path, options);
      expect(expected.status, operation).toBeGreaterThanOrEqual(400);
      statuses.add(expected.status);
      const result = await run(operation, args);
      expect(result.isError, operation).toBe(true);
      expect(result.data, operation).toEqual({ status: expected.status, body: expected.body });
    }
    expect([...statuses].sort()).toEqual([400, 422]);
  });

  it("answers another tenant's ids with REST's refusal, and changes nothing of theirs", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Mine" });
    const mailbox = await createMailbox(owner.apiKey);
    const webhook = await createWebhook(owner.apiKey, campaignId);
    const listId = ((await rest("/api/v1/lead-list", { method: "POST", body: { listName: "Mine too" } })).body as { data: { id: number } }).data.id;
    const cases: [string, Record<string, unknown>, string, { method?: string; body?: unknown }][] = [
      ["getCampaign", { campaign_id: campaignId }, `/api/v1/campaigns/${campaignId}`, {}],
      ["deleteCampaign", { campaign_id: campaignId }, `/api/v1/campaigns/${campaignId}`, { method: "DELETE" }],
      ["listCampaignLeads", { campaign_id: campaignId, limit: 1 }, `/api/v1/campaigns/${campaignId}/leads?limit=1`, {}],
      ["getEmailAccount", { id: mailbox.id }, `/api/v1/email-accounts/${mailbox.id}`, {}],
      ["deleteEmailAccount", { id: mailbox.id }, `/api/v1/email-accounts/${mailbox.id}`, { method: "DELETE" }],
      ["deleteWebhookById", { id: webhook.id }, `/api/v1/webhook/delete/${webhook.id}`, { method: "DELETE" }],
      ["renameLeadList", { id: listId, listName: "Theirs now" }, `/api/v1/lead-list/${listId}`, { method: "PUT", body: { listName: "Theirs now" } }],
      ["attachCampaignEmailAccounts", { campaign_id: campaignId, email_account_ids: [mailbox.id] }, `/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", body: { email_account_ids: [mailbox.id] } }],
    ];
    for (const [operation, args, path, options] of cases) {
      const result = await run(operation, args, strangerClient);
      const expected = await rest(path, { ...options, apiKey: stranger.apiKey });
      expect(expected.status, operation).toBeGreaterThanOrEqual(400);
      expect(result.isError, operation).toBe(true);
      expect(result.data, operation).toEqual({ status: expected.status, body: expected.body });
    }
    expect((await rest(`/api/v1/campaigns/${campaignId}`)).status).toBe(200);
    expect((await rest(`/api/v1/email-accounts/${mailbox.id}`)).status).toBe(200);
    expect((await rest(`/api/v1/webhook/${webhook.id}`)).status).toBe(200);
    expect(JSON.stringify((await rest(`/api/v1/lead-list/${listId}`)).body)).toContain("Mine too");
  });

  it("answers every read-only operation, and every operation on an id that does not exist, as the operation's own tool does", async () => {
    const compared: string[] = [];
    await eachTool(allTools, async (tool) => {
      const pathParams = [...tool.description!.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
      const readOnly = tool.annotations?.readOnlyHint === true;
      // Budgets and "now" differ from one call to the next by design.
      if (tool.name === "getRateLimit") return;
      if (!readOnly && pathParams.length === 0) return;
      const args = Object.fromEntries(pathParams.map((name) => [name, NO_SUCH_ID]));
      const viaGeneric = await run(tool.name, args, client, readOnly ? "call_read_only_operation" : "call_operation");
      const viaOwn = await callTool(allClient, tool.name, args);
      expect({ isError: viaGeneric.isError, data: viaGeneric.data }, tool.name).toEqual({ isError: viaOwn.isError, data: viaOwn.data });
      compared.push(tool.name);
    });
    expect(compared.length).toBeGreaterThan(150);
  }, 120_000);
});

describe("call_operation's own refusals", () => {
  it("refuses a write through call_read_only_operation, and changes nothing", async () => {
    const campaignId = await createCampaign(owner.apiKey);
    const refused = await run("deleteCampaign", { campaign_id: campaignId }, client, "call_read_only_operation");
    expect(refused.isError).toBe(true);
    expect(refused.data).toEqual({ error: "deleteCampaign (DELETE /api/v1/campaigns/{campaign_id}) changes data; call it with call_operation" });
    expect((await rest(`/api/v1/campaigns/${campaignId}`)).status).toBe(200);
  });

  it("refuses what cannot become a request: an unknown operation, missing or unknown arguments, arguments that are no object, a dot path", async () => {
    expect((await run("frobnicateCampaign")).data).toEqual({ error: "Unknown operation: frobnicateCampaign", did_you_mean: expect.any(Array) });
    expect((await run("getCampaign", {})).data).toEqual({ error: "Missing required argument: campaign_id" });
    expect((await run("getCampaign", { campaign_id: 1, colour: "red" })).data).toEqual({ error: "Unknown argument(s): colour" });
    expect((await run("deleteCampaignWebhook", { campaign_id: 1, webhook_id: ".." })).data).toEqual({ error: "Not a path value: .." });
    expect((await callTool(client, "call_operation", { operation: "getCampaign", arguments: [1] })).data).toEqual({
      error: "arguments must be an object of the operation's arguments (see describe_operation)",
    });
    expect((await callTool(client, "call_operation", { arguments: {} })).data).toEqual({ error: "Missing required argument: operation" });
    expect((await callTool(client, "call_operation", { operation: "getAccount", extra: 1 })).data).toEqual({ error: "Unknown argument(s): extra" });
  });

  it("spends the caller's rate budget as the operation's own tool does: the MCP request and the route call", async () => {
    const limited = await provisionAccount({ rate_limit_per_minute: 10, rate_limit_burst: 10 });
    const remaining = async () => (await callJson<{ remaining: number }>("/api/v1/rate-limit", { apiKey: limited.apiKey })).body.remaining;
    const before = await remaining();
    const response = await mcpPost(limited.apiKey, { method: "tools/call", params: { name: "call_operation", arguments: { operation: "getAccount" } } });
    expect(response.status).toBe(200);
    expect(await remaining()).toBe(before - 3);
  });

  it("keeps REST's tenancy for a client key too", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Account-wide" });
    const saved = await rest("/api/v1/client/save", { method: "POST", body: { name: "Client", email: "client@tenancy.example" } });
    const clientId = (saved.body as { clientId?: number; id?: number }).clientId ?? (saved.body as { id: number }).id;
    const key = await rest("/api/v1/client/api-key", { method: "POST", body: { clientId, keyName: "mcp" } });
    const clientKey = (key.body as { data: { api_key: string } }).data.api_key;
    const viaClientKey = await connect(clientKey);
    const result = await run("getCampaign", { campaign_id: campaignId }, viaClientKey);
    const expected = await callJson(`/api/v1/campaigns/${campaignId}`, { apiKey: clientKey });
    expect(expected.status).toBe(404);
    expect(result.data).toEqual({ status: 404, body: expected.body });
  });
});
