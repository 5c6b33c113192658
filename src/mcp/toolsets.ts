import { ApiError } from "../platform/errors";
import type { ApiTool } from "./tools";

/** Selects every operation's own tool: the list /mcp served before toolsets existed. */
const ALL_TOOLSETS = "all";
/** The default list (the generic operation tools and the task tools), always served. */
const CORE_TOOLSET = "core";

/** The header a client may name toolsets in, besides the URL's `toolsets` parameter. */
export const TOOLSETS_HEADER = "X-MCP-Toolsets";

export interface Toolset {
  name: string;
  /** The OpenAPI tag it comes from. */
  tag: string;
  tools: ApiTool[];
}

/** A tag as a toolset name: "Master inbox" becomes master-inbox. */
export function toolsetName(tag: string): string {
  return tag
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * One toolset per tag of the document, in order of first appearance, holding the operations that
 * carry the tag: a new route lands in its tag's set without a list to keep here.
 */
export function toolsetsOf(tools: ApiTool[]): Map<string, Toolset> {
  const sets = new Map<string, Toolset>();
  for (const apiTool of tools) {
    for (const tag of apiTool.tags) {
      const name = toolsetName(tag);
      if (!name || name === ALL_TOOLSETS || name === CORE_TOOLSET) throw new Error(`The tag "${tag}" cannot name an MCP toolset`);
      const set = sets.get(name) ?? { name, tag, tools: [] };
      if (set.tag !== tag) throw new Error(`The tags "${set.tag}" and "${tag}" both name the MCP toolset ${name}`);
      if (!set.tools.includes(apiTool)) set.tools.push(apiTool);
      sets.set(name, set);
    }
  }
  return sets;
}

/** What a client asked to be listed, besides the core tools. */
export type Selection = { all: true } | { all: false; names: string[] };

/**
 * The toolsets named by the URL's `toolsets` parameters and the header, each a comma-separated
 * list (case and spaces ignored); nothing named is the default. An unknown name is refused with
 * the API's 422, naming the toolsets there are.
 */
export function selectionOf(requested: string[], known: ReadonlySet<string>): Selection {
  const names = [...new Set(requested.flatMap((value) => value.split(",")).map((name) => name.trim().toLowerCase()).filter(Boolean))];
  const unknown = names.filter((name) => name !== ALL_TOOLSETS && name !== CORE_TOOLSET && !known.has(name));
  if (unknown.length > 0) {
    const choices = [CORE_TOOLSET, ALL_TOOLSETS, ...known].join(", ");
    throw ApiError.validation([{ path: "toolsets", message: `Unknown toolset${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}. Choose from: ${choices}` }]);
  }
  if (names.includes(ALL_TOOLSETS)) return { all: true };
  return { all: false, names: names.filter((name) => name !== CORE_TOOLSET) };
}
