/* global TextEncoder */
// Measures what each MCP toolset costs an agent (the tools/list answer of /mcp?toolsets=<name>:
// tools, bytes, tokens at 4 bytes a token) and writes that table into README's MCP section. Pure
// apart from the `listTools` it is given: `npm run docs:mcp` passes one that POSTs to a throwaway
// Salvo, test/mcp/toolsets.test.ts one that calls the Worker, and the test fails when the README differs.

export const START = "<!-- mcp-toolsets:start (npm run docs:mcp writes this table) -->";
export const END = "<!-- mcp-toolsets:end -->";

const BYTES_PER_TOKEN = 4;

/**
 * Every toolset's tools/list answer. `listTools(toolsets)` answers the raw JSON-RPC answer text of
 * tools/list at /mcp?toolsets=<toolsets> ("" for the default). The toolsets are the ones the
 * server names in find_operations' `toolset` enum, so a new tag is measured without a list here.
 */
export async function measureToolsets(listTools) {
  const measure = async (selection) => {
    const text = await listTools(selection);
    const tools = JSON.parse(text).result.tools;
    return { selection, tools, bytes: new TextEncoder().encode(text).length };
  };
  const core = await measure("");
  const find = core.tools.find((tool) => tool.name === "find_operations");
  const names = find?.inputSchema?.properties?.toolset?.enum;
  if (!Array.isArray(names)) throw new Error("find_operations names no toolsets");
  const rows = [core];
  for (const name of names) rows.push(await measure(name));
  rows.push(await measure("all"));
  return rows.map(({ selection, tools, bytes }) => ({
    selection,
    tools: tools.length,
    operations: tools.length - core.tools.length,
    bytes,
    tokens: Math.ceil(bytes / BYTES_PER_TOKEN),
  }));
}

const number = (value) => value.toLocaleString("en-US");

/** The measurements as the README's markdown table, between its markers. */
export function renderToolsetTable(rows) {
  const lines = [
    START,
    "| URL | Operations' own tools | Tools listed | Bytes | Tokens (bytes / 4) |",
    "|---|--:|--:|--:|--:|",
    ...rows.map((row) => {
      const url = row.selection ? `\`/mcp?toolsets=${row.selection}\`` : "`/mcp` (default)";
      return `| ${url} | ${number(row.operations)} | ${number(row.tools)} | ${number(row.bytes)} | ${number(row.tokens)} |`;
    }),
    END,
  ];
  return lines.join("\n");
}

/** The table as the README has it now (markers included), or undefined when the markers are missing. */
export function committedTable(readme) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END, start);
  return start < 0 || end < 0 ? undefined : readme.slice(start, end + END.length);
}

/** The README with its table replaced. */
export function withTable(readme, table) {
  const current = committedTable(readme);
  if (current === undefined) throw new Error(`README.md has no ${START} … ${END} block`);
  return readme.replace(current, table);
}
