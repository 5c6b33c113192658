import type { TestProject } from "vitest/node";
import { rmSync } from "node:fs";
import { defaultDirs, findKeys, labTokenValues } from "../../scripts/check-no-keys.mjs";
import { startDevServer } from "../../scripts/lib/dev-server.mjs";

export interface SalvoInstance {
  url: string;
  apiKey: string;
  adminToken: string;
  /** What `npm run dev` printed up to the moment it answered /health. */
  devOutput: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    salvo: SalvoInstance;
  }
}

export default async function setup(project: TestProject) {
  // Without the mail lab even when a developer runs one: the suite sees what a fresh clone sees.
  const startedAt = Date.now();
  const server = await startDevServer({ quiet: true, keepState: true, mailLab: false });
  project.provide("salvo", { url: server.url, apiKey: server.apiKey, adminToken: server.adminToken, devOutput: server.output() });
  // After the run, no API key value may be stored in the instance's state (D1, Durable Objects,
  // the local trace and log store) or in wrangler's log files.
  return async () => {
    await server.stop();
    const found = findKeys([server.stateDir, ...defaultDirs()], labTokenValues(), startedAt);
    rmSync(server.stateDir, { recursive: true, force: true });
    if (found.length > 0) {
      throw new Error(`API key values stored locally:\n${found.map((f) => `${f.path}: ${f.keys.join(", ")}`).join("\n")}`);
    }
  };
}
