import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { callRoute, toolError, toolResultOf, toolSuccess, type Caller } from "./dispatch";
import { nearestNames, rankByKeywords } from "./search";
import type { TaskTool } from "./task-tools";
import { ArgumentError, routeCallOf, type ApiTool } from "./tools";
import type { Toolset } from "./toolsets";

const DEFAULT_RESULTS = 10;
const MAX_RESULTS = 50;
const API_PREFIX = "/api/v1";

/** The operations by name (their operationId, the tool name under toolsets=all) and by `METHOD /path`. */
interface Index {
  operations: ApiTool[];
  byName: Map<string, ApiTool>;
  toolsetsOf: Map<ApiTool, string[]>;
  toolsets: Map<string, Toolset>;
}

function indexOf(operations: ApiTool[], toolsets: Map<string, Toolset>): Index {
  const byName = new Map<string, ApiTool>();
  const toolsetsOf = new Map<ApiTool, string[]>(operations.map((operation) => [operation, []]));
  for (const operation of operations) {
    byName.set(operation.tool.name.toLowerCase(), operation);
    byName.set(restLine(operation).toLowerCase(), operation);
    byName.set(`${operation.operation.method} ${operation.operation.path.slice(API_PREFIX.length)}`.toLowerCase(), operation);
  }
  for (const set of toolsets.values()) for (const operation of set.tools) toolsetsOf.get(operation)?.push(set.name);
  return { operations, byName, toolsetsOf, toolsets };
}

function restLine(operation: ApiTool): string {
  return `${operation.operation.method} ${operation.operation.path}`;
}

function effectOf(operation: ApiTool): { read_only: boolean; destructive: boolean } {
  const hints = operation.tool.annotations ?? {};
  return { read_only: hints.readOnlyHint === true, destructive: hints.destructiveHint === true };
}

function argumentsOf(raw: Record<string, unknown>): { name: string; args: Record<string, unknown> } {
  const { operation, arguments: args, ...rest } = raw;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new ArgumentError(`Unknown argument(s): ${extra.join(", ")}`);
  if (typeof operation !== "string" || !operation.trim()) throw new ArgumentError("Missing required argument: operation");
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
    throw new ArgumentError("arguments must be an object of the operation's arguments (see describe_operation)");
  }
  return { name: operation.trim(), args: (args ?? {}) as Record<string, unknown> };
}

/** An operation by its name or its `METHOD /path` (the /api/v1 prefix optional), in any case. */
function lookUp(index: Index, name: string): ApiTool | undefined {
  return index.byName.get(name.trim().replace(/\s+/g, " ").toLowerCase());
}

function unknownOperation(index: Index, name: string): CallToolResult {
  const near = nearestNames(index.operations, (operation) => operation.tool.name, searchable, name, 3);
  return toolError({ error: `Unknown operation: ${name}`, did_you_mean: near });
}

function searchable(operation: ApiTool) {
  return {
    name: operation.tool.name,
    summary: operation.summary,
    path: operation.operation.path.slice(API_PREFIX.length),
    tags: operation.tags,
    description: operation.description,
  };
}

function found(index: Index, operation: ApiTool) {
  return { operation: operation.tool.name, rest: restLine(operation), summary: operation.summary, toolsets: index.toolsetsOf.get(operation) ?? [], ...effectOf(operation) };
}

function toolsetList(index: Index): string {
  return [...index.toolsets.values()].map((set) => `${set.name} (${set.tools.length})`).join(", ");
}

function findOperations(index: Index): TaskTool {
  const tool: Tool = {
    name: "find_operations",
    title: "Find API operations",
    description: [
      `Search the ${index.operations.length} operations of Salvo's REST API (/api/v1) by what you want to do, e.g. "pause a campaign" or "unread replies": ranked by the words of their names, summaries, paths and descriptions.`,
      "Give a toolset (alone, to list all its operations, or with a query, to search only it). Then describe_operation for an operation's arguments, and call_operation to run it.",
      `Toolsets: ${toolsetList(index)}.`,
    ].join("\n\n"),
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What you want to do, in a few words." },
        toolset: { type: "string", enum: [...index.toolsets.keys()], description: "Only operations of this toolset." },
        limit: { type: "integer", minimum: 1, maximum: MAX_RESULTS, description: `How many to answer (default ${DEFAULT_RESULTS}; a toolset listed without a query answers all of it).` },
      },
    },
    annotations: { title: "Find API operations", readOnlyHint: true },
  };

  async function run(_caller: Caller, raw: Record<string, unknown>): Promise<CallToolResult> {
    const { query, toolset, limit, ...rest } = raw;
    if (Object.keys(rest).length > 0) throw new ArgumentError(`Unknown argument(s): ${Object.keys(rest).join(", ")}`);
    if (query !== undefined && typeof query !== "string") throw new ArgumentError("query must be a string");
    if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_RESULTS)) {
      throw new ArgumentError(`limit must be an integer from 1 to ${MAX_RESULTS}`);
    }
    let pool = index.operations;
    if (toolset !== undefined) {
      const set = typeof toolset === "string" ? index.toolsets.get(toolset.trim().toLowerCase()) : undefined;
      if (!set) throw new ArgumentError(`Unknown toolset: ${String(toolset)}. Choose from: ${[...index.toolsets.keys()].join(", ")}`);
      pool = set.tools;
    }
    const words = query?.trim() ?? "";
    if (!words && toolset === undefined) {
      return toolSuccess({ toolsets: [...index.toolsets.values()].map((set) => ({ name: set.name, operations: set.tools.length })), hint: "Give a query, a toolset, or both." });
    }
    const ranked = words ? rankByKeywords(pool, searchable, words) : pool;
    const shown = ranked.slice(0, (limit as number | undefined) ?? (words ? DEFAULT_RESULTS : MAX_RESULTS));
    return toolSuccess({ total: ranked.length, operations: shown.map((operation) => found(index, operation)) });
  }

  return { tool, run };
}

function describeOperation(index: Index): TaskTool {
  const tool: Tool = {
    name: "describe_operation",
    title: "Describe an API operation",
    description:
      "An operation's REST method and path, what it does, whether it only reads or destroys, and the JSON schema of its arguments (path, query and body fields in one object, as call_operation takes them).",
    inputSchema: {
      type: "object",
      properties: { operation: { type: "string", description: 'Its name from find_operations (e.g. getCampaign), or "METHOD /api/v1/path".' } },
      required: ["operation"],
    },
    annotations: { title: "Describe an API operation", readOnlyHint: true },
  };

  async function run(_caller: Caller, raw: Record<string, unknown>): Promise<CallToolResult> {
    const { operation: name, ...rest } = raw;
    if (Object.keys(rest).length > 0) throw new ArgumentError(`Unknown argument(s): ${Object.keys(rest).join(", ")}`);
    if (typeof name !== "string" || !name.trim()) throw new ArgumentError("Missing required argument: operation");
    const operation = lookUp(index, name);
    if (!operation) return unknownOperation(index, name.trim());
    return toolSuccess({
      ...found(index, operation),
      description: operation.description,
      input_schema: operation.tool.inputSchema,
    });
  }

  return { tool, run };
}

const CALL_ARGUMENTS: Tool["inputSchema"] = {
  type: "object",
  properties: {
    operation: { type: "string", description: 'Its name from find_operations (e.g. getCampaign), or "METHOD /api/v1/path".' },
    arguments: { type: "object", description: "Its arguments, as describe_operation's input_schema gives them (path, query and body fields in one object)." },
  },
  required: ["operation"],
};

/**
 * Runs an operation exactly as its own tool does (toolsets=all): one request to the app's route
 * with the caller's key. The read-only variant refuses writes, so a host may let it run unasked.
 */
function callOperation(index: Index, readOnly: boolean): TaskTool {
  const name = readOnly ? "call_read_only_operation" : "call_operation";
  const title = readOnly ? "Call a read-only API operation" : "Call an API operation";
  const tool: Tool = {
    name,
    title,
    description: readOnly
      ? "Run an operation that only reads (read_only in find_operations), with its arguments; answers what its REST route answers. Operations that change data go through call_operation."
      : "Run any operation of the REST API with its arguments, as your API key: the same answer, validation, errors (isError with REST's status and body) and rate limit as the REST call. Some operations delete or stop things: check describe_operation first.",
    inputSchema: CALL_ARGUMENTS,
    annotations: readOnly ? { title, readOnlyHint: true } : { title, readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  };

  async function run(caller: Caller, raw: Record<string, unknown>): Promise<CallToolResult> {
    const call = argumentsOf(raw);
    const operation = lookUp(index, call.name);
    if (!operation) return unknownOperation(index, call.name);
    if (readOnly && !effectOf(operation).read_only) {
      return toolError({ error: `${operation.tool.name} (${restLine(operation)}) changes data; call it with call_operation` });
    }
    return toolResultOf(await callRoute(caller, routeCallOf(operation.operation, call.args)));
  }

  return { tool, run };
}

/** The generic tools that reach every operation without listing one tool per operation. */
export function operationTools(operations: ApiTool[], toolsets: Map<string, Toolset>): TaskTool[] {
  const index = indexOf(operations, toolsets);
  return [findOperations(index), describeOperation(index), callOperation(index, true), callOperation(index, false)];
}
