import type { TestProject } from "vitest/node";
import { rmSync } from "node:fs";
import { startDevServer } from "../../scripts/lib/dev-server.mjs";
import { runningLab, type MailLab } from "../../scripts/lib/mail-lab.mjs";

export interface LabSalvo {
  url: string;
  adminToken: string;
  lab: MailLab;
}

declare module "vitest" {
  export interface ProvidedContext {
    labSalvo: LabSalvo | null;
  }
}

/**
 * A dev server that knows the running mail lab (`npm run test:mail` starts one): `npm run dev` trusts
 * the lab's CA and takes its OAuth provider as the deployment's Google and Microsoft apps. Without a
 * lab the suite has nothing to run against and its tests are skipped.
 */
export default async function setup(project: TestProject) {
  const lab = runningLab() as MailLab | null;
  if (!lab) {
    project.provide("labSalvo", null);
    return;
  }
  const server = await startDevServer({ quiet: true });
  project.provide("labSalvo", { url: server.url, adminToken: server.adminToken, lab });
  return async () => {
    await server.stop();
    rmSync(server.stateDir, { recursive: true, force: true });
  };
}
