import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { presentedKey } from "../keys/auth";
import { VERSION } from "../ops/routes";
import { createRouter } from "../platform/openapi";
import { callRoute, toolError, toolResultOf, type AppFetch, type Caller } from "./dispatch";
import { operationTools } from "./operations";
import { taskTools } from "./task-tools";
import { apiTools, ArgumentError, routeCallOf, type ApiTool, type OpenApiDocument } from "./tools";
import { selectionOf, TOOLSETS_HEADER, toolsetsOf, type Selection, type Toolset } from "./toolsets";

const INSTRUCTIONS =
  "Salvo runs outbound email campaigns. Its REST API (/api/v1, described at /openapi.json) is reachable through find_operations, " +
  "describe_operation and call_operation (call_read_only_operation for reads), called with your API key: same validation, errors and rate limit. " +
  "launch_campaign and summarize_campaign_week combine several calls. A refused call answers isError with the REST status and body. " +
  "One tool per operation: add ?toolsets=<names> (or all) to the /mcp URL.";

type ToolRun = (caller: Caller, args: Record<string, unknown>) => Promise<CallToolResult>;

interface Catalogue {
  /** Always listed: the generic operation tools and the task tools. */
  core: Tool[];
  operations: ApiTool[];
  toolsets: Map<string, Toolset>;
  /** Every tool by name, listed or not: a client that kept an operation's tool name can still call it. */
  run: Map<string, ToolRun>;
}

/** Every /api/v1 operation of the served document as a tool, grouped by tag, plus the generic and task tools. */
function catalogueOf(document: OpenApiDocument): Catalogue {
  const run = new Map<string, ToolRun>();
  const core: Tool[] = [];
  const add = (tool: Tool, handler: ToolRun) => {
    if (run.has(tool.name)) throw new Error(`Two MCP tools are named ${tool.name}`);
    run.set(tool.name, handler);
  };
  const operations = apiTools(document);
  const toolsets = toolsetsOf(operations);
  for (const generic of [...operationTools(operations, toolsets), ...taskTools(document)]) {
    add(generic.tool, generic.run);
    core.push(generic.tool);
  }
  for (const { tool, operation } of operations) {
    add(tool, async (caller, args) => toolResultOf(await callRoute(caller, routeCallOf(operation, args))));
  }
  return { core, operations, toolsets, run };
}

/** The core tools, then the selected operations' own tools in the document's order. */
function listedTools(catalogue: Catalogue, selection: Selection): Tool[] {
  if (selection.all) return [...catalogue.core, ...catalogue.operations.map((operation) => operation.tool)];
  const selected = new Set(selection.names.flatMap((name) => catalogue.toolsets.get(name)?.tools ?? []));
  return [...catalogue.core, ...catalogue.operations.filter((operation) => selected.has(operation)).map((operation) => operation.tool)];
}

function mcpServer(catalogue: Catalogue, tools: Tool[], caller: Caller): Server {
  const server = new Server({ name: "salvo", version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
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
    const loaded = await catalogue;
    const requested = [...new URL(c.req.url).searchParams.getAll("toolsets"), c.req.header(TOOLSETS_HEADER) ?? ""];
    const selection = selectionOf(requested, new Set(loaded.toolsets.keys()));
    const server = mcpServer(loaded, listedTools(loaded, selection), caller);
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
