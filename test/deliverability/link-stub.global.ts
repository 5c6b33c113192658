import { createServer, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the link checker's stand-in for the public web (see below). */
    linkStub: string;
  }
}

/**
 * Public link targets on 127.0.0.1 for the link checker: `/ok` 200; `/no-head` refuses HEAD with 405
 * and answers GET 200; `/moved` 302 to `/hop`, which 301s (relative Location) to `/ok`; `/loop` redirects
 * to itself; `/broken-redirect` 302s to a Location no URL parser reads; `/gone` 404; `/slow` never answers. `GET /methods` lists the methods each path was asked with.
 */
export default async function setup(project: TestProject) {
  const methods: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response: ServerResponse) => {
    request.resume();
    const path = new URL(request.url ?? "/", "http://stub").pathname;
    if (path === "/methods") return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(methods));
    methods.push(`${request.method} ${path}`);
    switch (path) {
      case "/ok":
        return response.writeHead(200).end("ok");
      case "/no-head":
        return response.writeHead(request.method === "HEAD" ? 405 : 200).end();
      case "/moved":
        return response.writeHead(302, { Location: "/hop" }).end();
      case "/hop":
        return response.writeHead(301, { Location: "ok" }).end();
      case "/loop":
        return response.writeHead(302, { Location: "/loop" }).end();
      case "/broken-redirect":
        return response.writeHead(302, { Location: "http://[::1" }).end();
      case "/slow":
        return;
      default:
        return response.writeHead(404).end();
    }
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  project.provide("linkStub", `http://127.0.0.1:${port}`);
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
}
