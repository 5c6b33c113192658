import { describe, expect, inject, it } from "vitest";
import { createApp } from "../src/app";
import { callJson } from "./helpers";

/**
 * Routes that serve the documentation itself (and `/`, a redirect to it), the links inside emails
 * (src/tracking/routes.ts) and the OAuth provider's redirect back (src/oauth/callback-routes.ts, a
 * page for the person's browser, CONTRACT 18.3): not the API.
 */
const UNDOCUMENTED = new Set([
  "GET /",
  "GET /docs",
  "GET /openapi.json",
  "GET /t/o/{file}",
  "GET /t/c/{token}",
  "GET /u/{token}",
  "POST /u/{token}",
  "GET /oauth/{provider}/callback",
]);

function toOpenApiPath(path: string): string {
  return path.replace(/:(\w+)/g, "{$1}");
}

describe("OpenAPI document", () => {
  it("describes every route the app serves", async () => {
    const served = createApp()
      .routes.filter((route) => route.method !== "ALL")
      .map((route) => `${route.method} ${toOpenApiPath(route.path)}`)
      .filter((route) => !UNDOCUMENTED.has(route));
    const { body } = await callJson<{ paths: Record<string, Record<string, unknown>> }>("/openapi.json");
    const documented = new Set(
      Object.entries(body.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    expect(served.length).toBeGreaterThan(10);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });

  it("declares a success response and the error responses for every operation", async () => {
    const { body } = await callJson<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>("/openapi.json");
    for (const [path, methods] of Object.entries(body.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const statuses = Object.keys(operation.responses);
        expect(statuses.some((s) => s.startsWith("2")), `${method} ${path} success`).toBe(true);
        if (path.startsWith("/api/v1/")) expect(statuses, `${method} ${path} errors`).toContain("401");
      }
    }
  });

  it("is a valid OpenAPI 3.1 document (checked by the schema validator, in Node)", async () => {
    const { body } = await callJson("/openapi.json");
    const response = await fetch(inject("openApiValidator"), { method: "POST", body: JSON.stringify(body) });
    const result = (await response.json()) as { valid: boolean; version: string; errors: unknown };
    expect(result.errors).toBeNull();
    expect(result.valid).toBe(true);
    expect(result.version).toBe("3.1");
  });
});
