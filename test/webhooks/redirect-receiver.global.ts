import { createServer } from "node:http";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of a real HTTP receiver on loopback (see below). */
    redirectReceiver: string;
  }
}

/**
 * A real receiver on 127.0.0.1, outside the Worker, so a test can see what a delivery actually did:
 * `/redirect/<token>` answers 301 to `/target/<token>`, which answers 200; `GET /visits/<token>`
 * tells how often each of the two was requested.
 */
export default async function setup(project: TestProject) {
  const visits = new Map<string, { redirect: number; target: number }>();
  const server = createServer((request, response) => {
    request.resume();
    const [, route, token = ""] = (request.url ?? "").split("/");
    const counts = visits.get(token) ?? { redirect: 0, target: 0 };
    visits.set(token, counts);
    if (route === "redirect") {
      counts.redirect += 1;
      response.writeHead(301, { Location: `/target/${token}` }).end();
    } else if (route === "target") {
      counts.target += 1;
      response.writeHead(200).end("ok");
    } else if (route === "visits") {
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(counts));
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  project.provide("redirectReceiver", `http://127.0.0.1:${port}`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
