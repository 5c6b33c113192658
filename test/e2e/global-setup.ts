import type { TestProject } from "vitest/node";
import { startDevServer } from "../../scripts/lib/dev-server.mjs";

export interface SalvoInstance {
  url: string;
  apiKey: string;
  adminToken: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    salvo: SalvoInstance;
  }
}

export default async function setup(project: TestProject) {
  const server = await startDevServer({ quiet: true });
  project.provide("salvo", { url: server.url, apiKey: server.apiKey, adminToken: server.adminToken });
  return async () => server.stop();
}
