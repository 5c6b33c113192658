import { Validator } from "@seriousme/openapi-schema-validator";
import { createServer } from "node:http";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a Node-side OpenAPI validator (see below). */
    openApiValidator: string;
  }
}

/**
 * The OpenAPI schema validator reads its meta-schemas from disk and compiles them to code, neither of
 * which the Workers runtime allows; so it runs here, in Node, on loopback: POST a document, get
 * `{valid, version, errors}` back.
 */
export default async function setup(project: TestProject) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Parameters<Validator["validate"]>[0]);
      response.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  project.provide("openApiValidator", `http://127.0.0.1:${port}/validate`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
