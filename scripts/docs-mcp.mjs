// `npm run docs:mcp`: starts a throwaway Salvo and writes the size of each MCP toolset's tool list
// into README's MCP section (test/mcp/toolsets.test.ts fails when the committed table differs).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDevServer } from "./lib/dev-server.mjs";
import { measureToolsets, renderToolsetTable, withTable } from "./lib/mcp-toolsets.mjs";

const readmePath = join(import.meta.dirname, "..", "README.md");
const server = await startDevServer({ quiet: true, mailLab: false });
try {
  // An account of its own, its rate limit above the ~20 requests the table takes at once.
  const provisioned = await fetch(new URL("/admin/v1/accounts", server.url), {
    method: "POST",
    headers: { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ email: `mcp-sizes-${Date.now()}@example.com`, name: "MCP sizes", rate_limit_per_minute: 1000, rate_limit_burst: 1000 }),
  });
  if (provisioned.status !== 201) throw new Error(`provisioning answered ${provisioned.status}: ${await provisioned.text()}`);
  const { api_key: apiKey } = await provisioned.json();
  const rows = await measureToolsets(async (toolsets) => {
    const url = new URL("/mcp", server.url);
    if (toolsets) url.searchParams.set("toolsets", toolsets);
    const response = await fetch(url, {
      method: "POST",
      headers: { "X-API-Key": apiKey, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    if (!response.ok) throw new Error(`/mcp?toolsets=${toolsets} answered ${response.status}: ${await response.text()}`);
    return response.text();
  });
  writeFileSync(readmePath, withTable(readFileSync(readmePath, "utf8"), renderToolsetTable(rows)));
  console.log(`Wrote the MCP toolset table into README.md (${rows.length} rows).`);
} finally {
  await server.stop();
}
