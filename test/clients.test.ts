import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "./helpers";

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("clients", () => {
  it("creates a client and lists it with every field", async () => {
    const account = await provisionAccount();
    const saved = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey: account.apiKey,
      body: { name: "Acme", email: "ops@acme.example" },
    });
    expect(saved.status).toBe(200);
    const id = saved.body.id as number;
    expect(saved.body).toEqual({ ok: true, clientId: id, id, name: "Acme", email: "ops@acme.example" });

    for (const path of ["/api/v1/client/", "/api/v1/client"]) {
      const list = await callJson<Record<string, unknown>[]>(path, { apiKey: account.apiKey });
      expect(list.status).toBe(200);
      expect(list.body).toHaveLength(1);
      expect(list.body[0]).toEqual({ id, name: "Acme", email: "ops@acme.example", user_id: account.id, created_at: expect.stringMatching(ISO_MS) });
    }
  });

  it("updates a client when id is given", async () => {
    const account = await provisionAccount();
    const id = await createClient(account.apiKey);
    const updated = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey: account.apiKey,
      body: { id, name: "Acme Corp", email: "new@acme.example" },
    });
    expect(updated.body).toEqual({ ok: true, clientId: id, id, name: "Acme Corp", email: "new@acme.example" });
    const list = await callJson<Record<string, unknown>[]>("/api/v1/client/", { apiKey: account.apiKey });
    expect(list.body).toEqual([expect.objectContaining({ id, name: "Acme Corp", email: "new@acme.example" })]);
  });

  it("validates name and email", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<{ details: { path: string }[] }>("/api/v1/client/save", {
      method: "POST",
      apiKey: account.apiKey,
      body: { name: "", email: "nope" },
    });
    expect(status).toBe(422);
    expect(body.details.map((d) => d.path).sort()).toEqual(["email", "name"]);
  });

  it("keeps tenants apart: another account's client cannot be updated or seen", async () => {
    const owner = await provisionAccount();
    const intruder = await provisionAccount();
    const id = await createClient(owner.apiKey, "Owned", "owned@example.com");
    const { status, body } = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey: intruder.apiKey,
      body: { id, name: "Hijacked", email: "evil@example.com" },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "Client not found" });
    expect((await callJson("/api/v1/client/", { apiKey: intruder.apiKey })).body).toEqual([]);
    const mine = await callJson<Record<string, unknown>[]>("/api/v1/client/", { apiKey: owner.apiKey });
    expect(mine.body).toEqual([expect.objectContaining({ id, name: "Owned" })]);
  });

  it("is closed to client keys", async () => {
    const account = await provisionAccount();
    const key = await createClientKey(account.apiKey, await createClient(account.apiKey));
    const list = await callJson("/api/v1/client/", { apiKey: key.api_key });
    expect(list.status).toBe(401);
    expect(list.body).toEqual({ message: "This API key cannot manage clients or API keys" });
    const save = await callJson("/api/v1/client/save", {
      method: "POST",
      apiKey: key.api_key,
      body: { name: "Sneaky", email: "s@example.com" },
    });
    expect(save.status).toBe(401);
  });
});
