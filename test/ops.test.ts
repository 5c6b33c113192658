import { describe, expect, it } from "vitest";
import { call, callJson } from "./helpers";

describe("operations routes", () => {
  it("reports health with the package version", async () => {
    const { status, body, response } = await callJson("/health");
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, version: "0.1.0" });
    expect(response.headers.get("X-Request-Id")).toMatch(/^[\w.-]+$/);
  });

  it("serves an OpenAPI 3.1 document listing every route of the foundation", async () => {
    const { status, body } = await callJson<{ openapi: string; paths: Record<string, Record<string, unknown>>; components: { securitySchemes: Record<string, unknown> } }>("/openapi.json");
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    const operations = Object.entries(body.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        "GET /health",
        "POST /admin/v1/accounts",
        "POST /admin/v1/accounts/{id}/api-keys",
        "GET /api/v1/account",
        "PATCH /api/v1/account",
        "POST /api/v1/client/save",
        "GET /api/v1/client",
        "POST /api/v1/client/api-key",
        "GET /api/v1/client/api-key",
        "DELETE /api/v1/client/api-key/{id}",
        "PUT /api/v1/client/api-key/reset/{id}",
        "PUT /api/v1/client/api-key/{id}/status",
      ]),
    );
    expect(body.components.securitySchemes.ApiKeyAuth).toEqual({ type: "apiKey", in: "query", name: "api_key" });
  });

  it("serves the reference page with its UI bundled locally, not from a CDN", async () => {
    const response = await call("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toContain("text/html");
    const html = await response.text();
    expect(html).toContain('src="/vendor/swagger-ui/swagger-ui-bundle.js"');
    expect(html).toContain('url: "/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
  });
});
