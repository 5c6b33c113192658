import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "./helpers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "./db";
import worker from "../src/index";

describe("admin routes without ADMIN_TOKEN", () => {
  it("answer 404 as if they did not exist", async () => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request("http://salvo.test/admin/v1/accounts", {
        method: "POST",
        headers: { Authorization: "Bearer ", "Content-Type": "application/json" },
        body: JSON.stringify({ email: "a@example.com", name: "A" }),
      }),
      { ...env, ADMIN_TOKEN: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "Not found" });
    expect(await testDb().$count(schema.accounts, eq(schema.accounts.email, "a@example.com"))).toBe(0);
  });
});
