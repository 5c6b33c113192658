import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { digestKey } from "../src/keys/rules";
import { deleteAccountKeys, deleteClientKey, setAccount } from "./db";
import { ADMIN_TOKEN, call, callJson, createClient, createClientKey, provisionAccount, fileEnv } from "./helpers";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const INVALID = { message: "Invalid API Key" };

interface KeyList {
  ok: boolean;
  data: { id: number; api_key: string; last4: string; created_at: string }[];
}

async function mintAccountKey(accountId: number): Promise<{ id: number; api_key: string }> {
  const { status, body } = await callJson<{ id: number; api_key: string }>(`/admin/v1/accounts/${accountId}/api-keys`, { method: "POST", headers: admin });
  expect(status).toBe(201);
  return body;
}

describe("account keys: list and revoke with the account key", () => {
  it("lists the account's keys masked, oldest first", async () => {
    const account = await provisionAccount();
    const second = await mintAccountKey(account.id);
    const { status, body } = await callJson<KeyList>("/api/v1/account/api-keys", { apiKey: account.apiKey });
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    expect(body.data).toHaveLength(2);
    expect(body.data[1]).toEqual({
      id: second.id,
      api_key: `slv_acct_…${second.api_key.slice(-4)}`,
      last4: second.api_key.slice(-4),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(JSON.stringify(body)).not.toContain(account.apiKey);
    expect(JSON.stringify(body)).not.toContain(second.api_key);
  });

  it("revokes a key: the very next request with it answers 401, the other key still works", async () => {
    const account = await provisionAccount();
    const second = await mintAccountKey(account.id);
    expect((await call("/api/v1/account", { apiKey: second.api_key })).status).toBe(200);
    const revoked = await callJson(`/api/v1/account/api-keys/${second.id}`, { method: "DELETE", apiKey: account.apiKey });
    expect(revoked).toMatchObject({ status: 200, body: { ok: true } });
    const next = await callJson("/api/v1/account", { apiKey: second.api_key });
    expect(next.status).toBe(401);
    expect(next.body).toEqual(INVALID);
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
  });

  it("lets a key revoke itself but never the account's last key", async () => {
    const account = await provisionAccount();
    const second = await mintAccountKey(account.id);
    const firstId = (await callJson<KeyList>("/api/v1/account/api-keys", { apiKey: account.apiKey })).body.data[0]!.id;
    expect((await callJson(`/api/v1/account/api-keys/${firstId}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(401);
    const last = await callJson(`/api/v1/account/api-keys/${second.id}`, { method: "DELETE", apiKey: second.api_key });
    expect(last.status).toBe(400);
    expect(last.body).toEqual({ error: "An account must keep at least one API key" });
    expect((await call("/api/v1/account", { apiKey: second.api_key })).status).toBe(200);
  });

  it("answers 404 for an unknown key or another account's key, and changes nothing", async () => {
    const mine = await provisionAccount();
    const theirs = await provisionAccount();
    const theirKey = await mintAccountKey(theirs.id);
    for (const id of [theirKey.id, 999_999_999]) {
      const { status, body } = await callJson(`/api/v1/account/api-keys/${id}`, { method: "DELETE", apiKey: mine.apiKey });
      expect(status).toBe(404);
      expect(body).toEqual({ error: "API key not found" });
    }
    expect((await call("/api/v1/account", { apiKey: theirKey.api_key })).status).toBe(200);
  });

  it("is for account keys only", async () => {
    const account = await provisionAccount();
    const clientKey = await createClientKey(account.apiKey, await createClient(account.apiKey));
    expect((await call("/api/v1/account/api-keys", { apiKey: clientKey.api_key })).status).toBe(401);
    expect((await call("/api/v1/account/api-keys/1", { method: "DELETE", apiKey: clientKey.api_key })).status).toBe(401);
  });
});

describe("account keys and accounts: operator routes", () => {
  it("lists and revokes any key of an account, even the last", async () => {
    const account = await provisionAccount();
    const list = await callJson<KeyList>(`/admin/v1/accounts/${account.id}/api-keys`, { headers: admin });
    expect(list.status).toBe(200);
    expect(list.body.data.map((key) => key.api_key)).toEqual([`slv_acct_…${account.apiKey.slice(-4)}`]);
    const only = list.body.data[0]!.id;
    expect((await callJson(`/admin/v1/accounts/${account.id}/api-keys/${only}`, { method: "DELETE", headers: admin })).body).toEqual({ ok: true });
    expect((await callJson("/api/v1/account", { apiKey: account.apiKey })).body).toEqual(INVALID);
    const again = await callJson(`/admin/v1/accounts/${account.id}/api-keys/${only}`, { method: "DELETE", headers: admin });
    expect(again).toMatchObject({ status: 404, body: { error: "API key not found" } });
  });

  it("answers 404 for another account's key or an unknown account", async () => {
    const a = await provisionAccount();
    const b = await provisionAccount();
    const bKey = (await callJson<KeyList>(`/admin/v1/accounts/${b.id}/api-keys`, { headers: admin })).body.data[0]!.id;
    expect((await call(`/admin/v1/accounts/${a.id}/api-keys/${bKey}`, { method: "DELETE", headers: admin })).status).toBe(404);
    expect((await call("/api/v1/account", { apiKey: b.apiKey })).status).toBe(200);
    expect((await call("/admin/v1/accounts/999999999/api-keys", { headers: admin })).status).toBe(404);
    expect((await call("/admin/v1/accounts/999999999", { method: "PATCH", headers: admin, body: { disabled: true } })).status).toBe(404);
  });

  it("disables an account: its account and client keys answer 401 on the very next request, and work again once enabled", async () => {
    const account = await provisionAccount();
    const clientKey = await createClientKey(account.apiKey, await createClient(account.apiKey));
    const other = await provisionAccount();
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
    expect((await call("/api/v1/campaigns", { apiKey: clientKey.api_key })).status).toBe(200);

    const disabled = await callJson(`/admin/v1/accounts/${account.id}`, { method: "PATCH", headers: admin, body: { disabled: true } });
    expect(disabled).toMatchObject({ status: 200, body: { id: account.id, email: account.email, disabled: true } });
    for (const [path, apiKey] of [["/api/v1/account", account.apiKey], ["/api/v1/campaigns", clientKey.api_key]] as const) {
      const { status, body } = await callJson(path, { apiKey });
      expect(status).toBe(401);
      expect(body).toEqual(INVALID);
    }
    expect((await call("/api/v1/account", { apiKey: other.apiKey })).status).toBe(200);

    const enabled = await callJson(`/admin/v1/accounts/${account.id}`, { method: "PATCH", headers: admin, body: { disabled: false } });
    expect(enabled.body).toMatchObject({ disabled: false });
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
    expect((await call("/api/v1/campaigns", { apiKey: clientKey.api_key })).status).toBe(200);
  });

  it("refuses a body without a boolean disabled", async () => {
    const account = await provisionAccount();
    expect((await call(`/admin/v1/accounts/${account.id}`, { method: "PATCH", headers: admin, body: { disabled: "yes" } })).status).toBe(422);
  });
});

describe("a key row deleted by any path stops the key", () => {
  it("refuses a key whose row was deleted out of band once the object's cached owner is older than the bound", async () => {
    const account = await provisionAccount();
    const clientKey = await createClientKey(account.apiKey, await createClient(account.apiKey));
    for (const key of [account.apiKey, clientKey.api_key]) expect((await call("/api/v1/campaigns", { apiKey: key })).status).toBe(200);

    await deleteAccountKeys(account.id);
    await deleteClientKey(clientKey.id);

    // Within the bound the cached owner still answers (the trade-off for one round trip per request)...
    expect((await call("/api/v1/campaigns", { apiKey: account.apiKey })).status).toBe(200);
    // ...and once the cache is older than KEY_REVALIDATE_SECONDS (60 s) the row is read again.
    for (const [key, kind] of [
      [account.apiKey, "account"],
      [clientKey.api_key, "client"],
    ] as const) {
      const keyHash = await digestKey(key);
      const stub = fileEnv().KEY_GATE.get(fileEnv().KEY_GATE.idFromName(keyHash));
      await runInDurableObject(stub, async (gate, state) => {
        const cached = state.storage.kv.get<{ checkedAt: number }>("owner");
        expect(cached?.checkedAt).toEqual(expect.any(Number));
        expect((await gate.admit(kind, keyHash, cached!.checkedAt + 61_000)).outcome).toBe("unknown");
      });
      const { status, body } = await callJson("/api/v1/campaigns", { apiKey: key });
      expect(status).toBe(401);
      expect(body).toEqual(INVALID);
    }
  });

  it("refuses a key right after its account was disabled directly in D1, once revalidated", async () => {
    const account = await provisionAccount();
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
    await setAccount(account.id, { disabledAt: new Date() });
    const keyHash = await digestKey(account.apiKey);
    const stub = fileEnv().KEY_GATE.get(fileEnv().KEY_GATE.idFromName(keyHash));
    expect((await runInDurableObject(stub, (gate) => gate.admit("account", keyHash))).outcome).toBe("admitted");
    const later = Date.now() + 61_000;
    expect((await runInDurableObject(stub, (gate) => gate.admit("account", keyHash, later))).outcome).toBe("unknown");
  });
});
