import { describe, expect, it } from "vitest";
import { accountKeysOf, accountRow, accountsWithEmail } from "./db";
import { ADMIN_TOKEN, callJson, fileShard, provisionAccount } from "./helpers";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

describe("admin provisioning", () => {
  it("provisions an account with a working account key, stored only as a digest", async () => {
    const email = `Fresh-${crypto.randomUUID()}@Example.com`;
    const { status, body } = await callJson<{ id: number; email: string; api_key: string }>("/admin/v1/accounts", {
      method: "POST",
      headers: admin,
      // On the file's shard, where the test reads the rows (placement itself: test/platform/shards.test.ts).
      body: { email, name: "Fresh", ignore_ooo_replies: true, deliverability_enabled: false, rate_limit_per_minute: 120, shard: fileShard() },
    });
    expect(status).toBe(201);
    expect(Object.keys(body).sort()).toEqual(["api_key", "email", "id", "shard"]);
    expect(body.email).toBe(email.toLowerCase());
    expect(body.api_key).toMatch(/^slv_acct_[0-9A-Za-z]{40}$/);

    const account = await callJson("/api/v1/account", { apiKey: body.api_key });
    expect(account.status).toBe(200);
    expect(account.body).toEqual({
      id: body.id,
      email: email.toLowerCase(),
      name: "Fresh",
      ignore_ooo_replies: true,
      deliverability_enabled: false,
    });

    const stored = await accountKeysOf(body.id);
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(body.api_key);
    expect(stored[0]).toMatchObject({ last4: body.api_key.slice(-4) });
    expect(String(stored[0]!.keyHash)).toMatch(/^[0-9a-f]{64}$/);
    expect((await accountRow(body.id)).rateLimitPerMinute).toBe(120);
  });

  it("defaults deliverability on and the out-of-office toggle off", async () => {
    const { apiKey } = await provisionAccount();
    const { body } = await callJson("/api/v1/account", { apiKey });
    expect(body).toMatchObject({ deliverability_enabled: true, ignore_ooo_replies: false });
  });

  it("refuses a duplicate email with 400 and creates nothing", async () => {
    const first = await provisionAccount();
    const { status, body } = await callJson("/admin/v1/accounts", {
      method: "POST",
      headers: admin,
      body: { email: first.email.toUpperCase(), name: "Again" },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "An account with this email already exists" });
    expect(await accountsWithEmail(first.email)).toBe(1);
  });

  it("validates the provisioning body", async () => {
    const { status, body } = await callJson<{ error: string; details: { path: string }[] }>("/admin/v1/accounts", {
      method: "POST",
      headers: admin,
      body: { email: "not-an-email", rate_limit_per_minute: 0 },
    });
    expect(status).toBe(422);
    expect(body.error).toBe("Validation failed");
    expect(body.details.map((d) => d.path).sort()).toEqual(["email", "name", "rate_limit_per_minute"]);
  });

  it("mints further account keys that work independently", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<{ id: number; account_id: number; api_key: string }>(
      `/admin/v1/accounts/${account.id}/api-keys`,
      { method: "POST", headers: admin },
    );
    expect(status).toBe(201);
    expect(body.account_id).toBe(account.id);
    expect(body.api_key).toMatch(/^slv_acct_/);
    expect(body.api_key).not.toBe(account.apiKey);
    for (const apiKey of [account.apiKey, body.api_key]) {
      expect((await callJson("/api/v1/account", { apiKey })).body).toMatchObject({ id: account.id });
    }
  });

  it("answers 404 for an unknown account and 422 for a bad id", async () => {
    const missing = await callJson("/admin/v1/accounts/999999/api-keys", { method: "POST", headers: admin });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "Account not found" });
    const bad = await callJson("/admin/v1/accounts/abc/api-keys", { method: "POST", headers: admin });
    expect(bad.status).toBe(422);
  });

  it("refuses a wrong or missing admin token", async () => {
    for (const headers of [{ Authorization: "Bearer wrong" }, {} as Record<string, string>]) {
      const { status, body } = await callJson("/admin/v1/accounts", {
        method: "POST",
        headers,
        body: { email: "x@example.com", name: "X" },
      });
      expect(status).toBe(401);
      expect(body).toEqual({ message: "Invalid admin token" });
    }
  });

  it("does not accept an account API key as the admin token", async () => {
    const account = await provisionAccount();
    const { status } = await callJson("/admin/v1/accounts", {
      method: "POST",
      headers: { Authorization: `Bearer ${account.apiKey}` },
      body: { email: "y@example.com", name: "Y" },
    });
    expect(status).toBe(401);
  });
});
