import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { presentedKey } from "../keys/auth";
import { VERSION } from "../ops/routes";
import { createRouter } from "../platform/openapi";
import { callRoute, toolError, toolResultOf, type AppFetch, type Caller } from "./dispatch";
import { taskTools } from "./task-tools";
import { apiTools, ArgumentError, routeCallOf, type OpenApiDocument } from "./tools";

const INSTRUCTIONS =
  "Salvo runs outbound email campaigns. Each tool is one operation of its REST API (/api/v1, described at /openapi.json), " +
  "called with your API key: same validation, errors and rate limit. launch_campaign and summarize_campaign_week combine several. " +
  "A refused call answers isError with the REST status and body.";

type ToolRun = (caller: Caller, args: Record<string, unknown>) => Promise<CallToolResult>;

interface Catalogue {
  tools: Tool[];
  run: Map<string, ToolRun>;
}

/** Every /api/v1 operation of the served document, plus the task tools. */
function catalogueOf(document: OpenApiDocument): Catalogue {
  const run = new Map<string, ToolRun>();
  const tools: Tool[] = [];
  const add = (tool: Tool, handler: ToolRun) => {
    if (run.has(tool.name)) throw new Error(`Two MCP tools are named ${tool.name}`);
    run.set(tool.name, handler);
    tools.push(tool);
  };
  for (const task of taskTools(document)) add(task.tool, task.run);
  for (const { tool, operation } of apiTools(document)) {
    add(tool, async (caller, args) => toolResultOf(await callRoute(caller, routeCallOf(operation, args))));
  }
  return { tools, run };
}

function mcpServer(catalogue: Catalogue, caller: Caller): Server {
  const server = new Server({ name: "salvo", version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalogue.tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const run = catalogue.run.get(request.params.name);
    if (!run) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    try {
      return await run(caller, request.params.arguments ?? {});
    } catch (error) {
      if (error instanceof ArgumentError) return toolError({ error: error.message });
      throw error;
    }
  });
  return server;
}

/**
 * `/mcp`: the Model Context Protocol over streamable HTTP, stateless (each POST stands alone; no
 * session, no server-sent stream), behind the same API key middleware as /api/v1. Tool calls are
 * requests to the app itself (`appFetch`), so a tool answers exactly what its route answers.
 */
export function mcpRoutes(appFetch: AppFetch) {
  const router = createRouter();
  // Built once per isolate from the document /openapi.json serves, so tools and reference agree.
  let catalogue: Promise<Catalogue> | undefined;

  async function loadCatalogue(caller: Caller): Promise<Catalogue> {
    const response = await caller.fetch(new Request(new URL("/openapi.json", caller.origin)), caller.env, caller.ctx);
    if (!response.ok) throw new Error(`/openapi.json answered ${response.status}`);
    return catalogueOf((await response.json()) as OpenApiDocument);
  }

  router.all("/mcp", async (c) => {
    if (c.req.method !== "POST") {
      return c.json({ error: "Method not allowed: /mcp is stateless streamable HTTP; send JSON-RPC with POST" }, 405, { Allow: "POST" });
    }
    const caller: Caller = {
      origin: new URL(c.req.url).origin,
      // The auth middleware has admitted this key already.
      apiKey: presentedKey(c.req) ?? "",
      clientIp: c.req.header("CF-Connecting-IP"),
      requestId: c.get("requestId"),
      env: c.env,
      ctx: c.executionCtx,
      fetch: appFetch,
    };
    catalogue ??= loadCatalogue(caller).catch((error: unknown) => {
      catalogue = undefined;
      throw error;
    });
    const server = mcpServer(await catalogue, caller);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });

  return router;
}
