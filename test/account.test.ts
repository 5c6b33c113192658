import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "./helpers";

describe("account settings", () => {
  it("turns the ignore-out-of-office toggle on and off", async () => {
    const account = await provisionAccount();
    const on = await callJson("/api/v1/account", { method: "PATCH", apiKey: account.apiKey, body: { ignore_ooo_replies: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id: account.id, email: account.email, ignore_ooo_replies: true });
    const read = await callJson("/api/v1/account", { apiKey: account.apiKey });
    expect(read.body).toMatchObject({ ignore_ooo_replies: true });
    const off = await callJson("/api/v1/account", { method: "PATCH", apiKey: account.apiKey, body: { ignore_ooo_replies: false } });
    expect(off.body).toMatchObject({ ignore_ooo_replies: false });
  });

  it("validates the settings body", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson("/api/v1/account", {
      method: "PATCH",
      apiKey: account.apiKey,
      body: { ignore_ooo_replies: "yes" },
    });
    expect(status).toBe(422);
    expect(body).toMatchObject({ error: "Validation failed", details: [{ path: "ignore_ooo_replies" }] });
  });

  it("is closed to client keys", async () => {
    const account = await provisionAccount();
    const key = await createClientKey(account.apiKey, await createClient(account.apiKey));
    for (const method of ["GET", "PATCH"]) {
      const { status, body } = await callJson("/api/v1/account", {
        method,
        apiKey: key.api_key,
        body: method === "PATCH" ? { ignore_ooo_replies: true } : undefined,
      });
      expect(status).toBe(401);
      expect(body).toEqual({ message: "This API key cannot manage the account" });
    }
    expect((await callJson("/api/v1/account", { apiKey: account.apiKey })).body).toMatchObject({ ignore_ooo_replies: false });
  });
});
