import { describe, expect, it } from "vitest";
import { MAX_KEYS_PER_CLIENT } from "../src/keys/client-key-routes";
import { clientKeyRow, clientKeysOf, everyKeyRow } from "./db";
import { callJson, createClient, createClientKey, provisionAccount } from "./helpers";

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface KeyRecord {
  id: number;
  client_id: number;
  key_name: string;
  api_key: string;
  status: string;
  created_at: string;
}

async function ownerWithClient() {
  const account = await provisionAccount();
  const clientId = await createClient(account.apiKey);
  return { ...account, clientId };
}

describe("client API keys: happy paths", () => {
  it("creates a key with exactly the interface's fields", async () => {
    const owner = await ownerWithClient();
    const { status, body } = await callJson<{ ok: boolean; data: KeyRecord }>("/api/v1/client/api-key", {
      method: "POST",
      apiKey: owner.apiKey,
      body: { clientId: owner.clientId, keyName: "Acme reporting_key-1" },
    });
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    expect(body.data).toEqual({
      id: expect.any(Number),
      client_id: owner.clientId,
      key_name: "Acme reporting_key-1",
      api_key: expect.stringMatching(/^slv_cli_[0-9A-Za-z]{40}$/),
      status: "active",
      created_at: expect.stringMatching(ISO_MS),
    });
  });

  it("lists keys masked, with filters by client, status and case-insensitive name substring", async () => {
    const owner = await ownerWithClient();
    const otherClient = await createClient(owner.apiKey, "Other", "other@example.com");
    const a = await createClientKey(owner.apiKey, owner.clientId, "Reporting Prod");
    const b = await createClientKey(owner.apiKey, owner.clientId, "sync");
    const c = await createClientKey(owner.apiKey, otherClient, "reporting staging");
    await callJson(`/api/v1/client/api-key/${b.id}/status`, { method: "PUT", apiKey: owner.apiKey, body: { status: "inactive" } });

    const all = await callJson<{ ok: boolean; data: KeyRecord[] }>("/api/v1/client/api-key", { apiKey: owner.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.ok).toBe(true);
    expect(all.body.data.map((k) => k.id)).toEqual([a.id, b.id, c.id]);
    expect(all.body.data[0]).toEqual({
      id: a.id,
      client_id: owner.clientId,
      key_name: "Reporting Prod",
      api_key: `slv_cli_…${a.api_key.slice(-4)}`,
      status: "active",
      created_at: expect.stringMatching(ISO_MS),
    });
    for (const key of all.body.data) expect(key.api_key).not.toMatch(/[0-9A-Za-z]{40}/);

    const ids = async (query: string) =>
      (await callJson<{ data: KeyRecord[] }>(`/api/v1/client/api-key?${query}`, { apiKey: owner.apiKey })).body.data.map((k) => k.id);
    expect(await ids(`clientId=${owner.clientId}`)).toEqual([a.id, b.id]);
    expect(await ids("status=inactive")).toEqual([b.id]);
    expect(await ids("status=active")).toEqual([a.id, c.id]);
    expect(await ids("keyName=REPORTING")).toEqual([a.id, c.id]);
    expect(await ids(`keyName=report&clientId=${otherClient}`)).toEqual([c.id]);
    expect(await ids("keyName=%25")).toEqual([]);
    // D1 refuses LIKE patterns over 50 bytes: a name filter of the full 100 characters must still work.
    expect(await ids(`keyName=${"x".repeat(100)}`)).toEqual([]);
  });

  it("resets a key: same record and status, new value; the old value stops working at once", async () => {
    const owner = await ownerWithClient();
    const key = await createClientKey(owner.apiKey, owner.clientId, "rotating");
    expect((await callJson("/api/v1/campaigns", { apiKey: key.api_key })).status).toBe(200);

    const { status, body } = await callJson<{ ok: boolean; data: KeyRecord }>(`/api/v1/client/api-key/reset/${key.id}`, {
      method: "PUT",
      apiKey: owner.apiKey,
    });
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    expect(body.data).toMatchObject({ id: key.id, client_id: owner.clientId, key_name: "rotating", status: "active" });
    expect(body.data.api_key).toMatch(/^slv_cli_[0-9A-Za-z]{40}$/);
    expect(body.data.api_key).not.toBe(key.api_key);

    const old = await callJson("/api/v1/campaigns", { apiKey: key.api_key });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ message: "Invalid API Key" });
    expect((await callJson("/api/v1/campaigns", { apiKey: body.data.api_key })).status).toBe(200);
  });

  it("deletes a key; it answers 401 on the very next request", async () => {
    const owner = await ownerWithClient();
    const key = await createClientKey(owner.apiKey, owner.clientId);
    expect((await callJson("/api/v1/campaigns", { apiKey: key.api_key })).status).toBe(200);
    const { status, body } = await callJson(`/api/v1/client/api-key/${key.id}`, { method: "DELETE", apiKey: owner.apiKey });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true });
    const after = await callJson("/api/v1/campaigns", { apiKey: key.api_key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ message: "Invalid API Key" });
    expect(await clientKeyRow(key.id)).toBeUndefined();
  });

  it("deactivates and reactivates a key", async () => {
    const owner = await ownerWithClient();
    const key = await createClientKey(owner.apiKey, owner.clientId);
    const off = await callJson<{ ok: boolean; data: KeyRecord }>(`/api/v1/client/api-key/${key.id}/status`, {
      method: "PUT",
      apiKey: owner.apiKey,
      body: { status: "inactive" },
    });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ id: key.id, status: "inactive", api_key: `slv_cli_…${key.api_key.slice(-4)}` });
    expect((await callJson("/api/v1/campaigns", { apiKey: key.api_key })).status).toBe(401);
    await callJson(`/api/v1/client/api-key/${key.id}/status`, { method: "PUT", apiKey: owner.apiKey, body: { status: "active" } });
    expect((await callJson("/api/v1/campaigns", { apiKey: key.api_key })).status).toBe(200);
  });
});

describe("client API keys: errors", () => {
  it("rejects bad key names and client ids with 422", async () => {
    const owner = await ownerWithClient();
    for (const body of [
      { clientId: owner.clientId, keyName: "bad!name" },
      { clientId: owner.clientId, keyName: "" },
      { clientId: owner.clientId, keyName: "x".repeat(101) },
      { clientId: "1", keyName: "ok" },
      { keyName: "ok" },
      { clientId: owner.clientId },
    ]) {
      const response = await callJson<{ error: string; details: unknown[] }>("/api/v1/client/api-key", {
        method: "POST",
        apiKey: owner.apiKey,
        body,
      });
      expect(response.status).toBe(422);
      expect(response.body.error).toBe("Validation failed");
      expect(response.body.details.length).toBeGreaterThan(0);
    }
  });

  it("answers 400 for an unknown client", async () => {
    const owner = await provisionAccount();
    const { status, body } = await callJson("/api/v1/client/api-key", {
      method: "POST",
      apiKey: owner.apiKey,
      body: { clientId: 987654, keyName: "x" },
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: "Client not found" });
  });

  it(`caps a client at ${MAX_KEYS_PER_CLIENT} keys, even under concurrent creation`, async () => {
    const owner = await ownerWithClient();
    const attempts = await Promise.all(
      Array.from({ length: MAX_KEYS_PER_CLIENT + 5 }, (_, i) =>
        callJson("/api/v1/client/api-key", { method: "POST", apiKey: owner.apiKey, body: { clientId: owner.clientId, keyName: `k${i}` } }),
      ),
    );
    expect(attempts.filter((a) => a.status === 200)).toHaveLength(MAX_KEYS_PER_CLIENT);
    const refused = attempts.filter((a) => a.status === 400);
    expect(refused).toHaveLength(5);
    expect(refused[0]!.body).toEqual({ error: `A client can have at most ${MAX_KEYS_PER_CLIENT} API keys` });
    expect(await clientKeysOf(owner.clientId)).toHaveLength(MAX_KEYS_PER_CLIENT);
  });

  it("answers 400 for unknown key ids and 422 for non-numeric ones", async () => {
    const owner = await ownerWithClient();
    const unknown = [
      { method: "DELETE", path: "/api/v1/client/api-key/424242" },
      { method: "PUT", path: "/api/v1/client/api-key/reset/424242" },
      { method: "PUT", path: "/api/v1/client/api-key/424242/status", body: { status: "inactive" } },
    ];
    for (const { method, path, body } of unknown) {
      const response = await callJson(path, { method, apiKey: owner.apiKey, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: "Client API key not found" });
    }
    for (const path of ["/api/v1/client/api-key/abc", "/api/v1/client/api-key/reset/1.5", "/api/v1/client/api-key/-3"]) {
      const method = path.includes("reset") ? "PUT" : "DELETE";
      expect((await callJson(path, { method, apiKey: owner.apiKey })).status).toBe(422);
    }
  });

  it("validates list filters and the status body", async () => {
    const owner = await ownerWithClient();
    expect((await callJson("/api/v1/client/api-key?status=paused", { apiKey: owner.apiKey })).status).toBe(422);
    expect((await callJson("/api/v1/client/api-key?clientId=x", { apiKey: owner.apiKey })).status).toBe(422);
    const key = await createClientKey(owner.apiKey, owner.clientId);
    const bad = await callJson(`/api/v1/client/api-key/${key.id}/status`, { method: "PUT", apiKey: owner.apiKey, body: { status: "gone" } });
    expect(bad.status).toBe(422);
  });
});

describe("client API keys: security", () => {
  it("a client key cannot list, create, reset, delete or change keys", async () => {
    const owner = await ownerWithClient();
    const key = await createClientKey(owner.apiKey, owner.clientId);
    const attempts = [
      { method: "GET", path: "/api/v1/client/api-key" },
      { method: "POST", path: "/api/v1/client/api-key", body: { clientId: owner.clientId, keyName: "escalate" } },
      { method: "PUT", path: `/api/v1/client/api-key/reset/${key.id}` },
      { method: "DELETE", path: `/api/v1/client/api-key/${key.id}` },
      { method: "PUT", path: `/api/v1/client/api-key/${key.id}/status`, body: { status: "inactive" } },
    ];
    for (const { method, path, body } of attempts) {
      const response = await callJson(path, { method, apiKey: key.api_key, body });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ message: "This API key cannot manage clients or API keys" });
    }
    const rows = await clientKeysOf(owner.clientId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "active" });
  });

  it("one account cannot see or touch another's keys, and gets the same answer as for a missing key", async () => {
    const owner = await ownerWithClient();
    const intruder = await ownerWithClient();
    const key = await createClientKey(owner.apiKey, owner.clientId);

    const list = await callJson<{ data: KeyRecord[] }>("/api/v1/client/api-key", { apiKey: intruder.apiKey });
    expect(list.body.data).toEqual([]);
    const filtered = await callJson<{ data: KeyRecord[] }>(`/api/v1/client/api-key?clientId=${owner.clientId}`, { apiKey: intruder.apiKey });
    expect(filtered.body.data).toEqual([]);

    const create = await callJson("/api/v1/client/api-key", {
      method: "POST",
      apiKey: intruder.apiKey,
      body: { clientId: owner.clientId, keyName: "stolen" },
    });
    expect(create.status).toBe(400);
    expect(create.body).toEqual({ error: "Client not found" });

    for (const { method, path, body } of [
      { method: "DELETE", path: `/api/v1/client/api-key/${key.id}` },
      { method: "PUT", path: `/api/v1/client/api-key/reset/${key.id}` },
      { method: "PUT", path: `/api/v1/client/api-key/${key.id}/status`, body: { status: "inactive" } },
    ]) {
      const response = await callJson(path, { method, apiKey: intruder.apiKey, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: "Client API key not found" });
    }
    expect((await callJson("/api/v1/campaigns", { apiKey: key.api_key })).status).toBe(200);
  });

  it("never stores a key in plain text", async () => {
    const owner = await ownerWithClient();
    const key = await createClientKey(owner.apiKey, owner.clientId);
    const reset = await callJson<{ data: KeyRecord }>(`/api/v1/client/api-key/reset/${key.id}`, { method: "PUT", apiKey: owner.apiKey });
    const dump = JSON.stringify(await everyKeyRow());
    for (const value of [owner.apiKey, key.api_key, reset.body.data.api_key]) {
      expect(dump).not.toContain(value);
      expect(dump).not.toContain(value.slice(9, 30));
    }
    const row = await clientKeyRow(key.id);
    expect(row!.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.last4).toBe(reset.body.data.api_key.slice(-4));
  });
});
