import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "./db";
import worker from "../src/index";
import { call, callJson, provisionAccount, env } from "./helpers";

describe("HTTP core", () => {
  it("answers unknown routes with 404 and the contract body", async () => {
    const { status, body, response } = await callJson("/nowhere");
    expect(status).toBe(404);
    expect(body).toEqual({ error: "Not found" });
    expect(response.headers.get("Content-Type")).toContain("application/json");
    expect(response.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("requires an API key on /api/v1/ routes", async () => {
    const { status, body } = await callJson("/api/v1/client/api-key");
    expect(status).toBe(401);
    expect(body).toEqual({ message: "API key is required" });
  });

  it("refuses unknown and malformed keys with the same 401 body", async () => {
    for (const apiKey of ["slv_acct_doesnotexist", "slv_cli_doesnotexist", "garbage"]) {
      const { status, body } = await callJson("/api/v1/client/api-key", { apiKey });
      expect(status).toBe(401);
      expect(body).toEqual({ message: "Invalid API Key" });
    }
  });

  it("answers 400 for malformed JSON", async () => {
    const { apiKey } = await provisionAccount();
    const { status, body } = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey,
      rawBody: "{not json",
      headers: { "Content-Type": "application/json" },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "Malformed JSON in request body" });
  });

  it("answers 400 for a body that is not JSON", async () => {
    const { apiKey } = await provisionAccount();
    const { status, body } = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey,
      rawBody: "name=x",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "Request body must be JSON (Content-Type: application/json)" });
  });

  it("answers 400 for a body over 1 MiB and stores nothing", async () => {
    const { apiKey } = await provisionAccount();
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024), email: "big@example.com" });
    const { status, body } = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey,
      rawBody: big,
      headers: { "Content-Type": "application/json" },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "Request body exceeds 1 MiB" });
    expect(await testDb().$count(schema.clients, eq(schema.clients.email, "big@example.com"))).toBe(0);
  });

  it("echoes a caller's X-Request-Id and mints one otherwise", async () => {
    const echoed = await call("/health", { headers: { "X-Request-Id": "trace-123" } });
    expect(echoed.headers.get("X-Request-Id")).toBe("trace-123");
    const minted = await call("/health", { headers: { "X-Request-Id": "bad id with spaces" } });
    expect(minted.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 503 with Retry-After in maintenance mode, keeping /health up", async () => {
    const maintenanceEnv = { ...env, MAINTENANCE_MODE: "true" };
    const ask = async (path: string) => {
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request(`http://salvo.test${path}`), maintenanceEnv, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    };
    const refused = await ask("/api/v1/client?api_key=anything");
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: "Service temporarily unavailable" });
    expect(refused.headers.get("Retry-After")).toBe("300");
    expect(refused.headers.get("X-Request-Id")).toBeTruthy();
    expect((await ask("/health")).status).toBe(200);
  });
});
