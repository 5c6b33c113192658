import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { digestKey } from "../src/keys/rules";
import type { KeyGate } from "../src/keys/gate.do";
import { call, callJson, createClient, createClientKey, provisionAccount, fileEnv } from "./helpers";

async function limitedAccount(perMinute: number, burst = perMinute) {
  return provisionAccount({ rate_limit_per_minute: perMinute, rate_limit_burst: burst });
}

async function gateOf(apiKey: string) {
  return fileEnv().KEY_GATE.get(fileEnv().KEY_GATE.idFromName(await digestKey(apiKey)));
}

describe("per-key rate limiting", () => {
  for (const [requests, budget] of [
    [20, 5],
    [12, 12],
    [5, 40],
    [60, 25],
  ] as const) {
    it(`admits exactly min(N, B) of ${requests} parallel requests against a budget of ${budget}`, async () => {
      const account = await limitedAccount(budget);
      const responses = await Promise.all(Array.from({ length: requests }, () => call("/api/v1/rate-limit", { apiKey: account.apiKey })));
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(Math.min(requests, budget));
      expect(statuses.filter((s) => s === 429)).toHaveLength(Math.max(0, requests - budget));
    });
  }

  it("answers the headers on 200 and the contract's 429 with Retry-After", async () => {
    const account = await limitedAccount(2);
    const first = await call("/api/v1/account", { apiKey: account.apiKey });
    expect(first.status).toBe(200);
    expect(first.headers.get("X-RateLimit-Limit")).toBe("2");
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("1");
    const reset = Number(first.headers.get("X-RateLimit-Reset"));
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    expect(reset).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 61);
    expect(first.headers.get("RateLimit-Policy")).toBe("2;w=60, 2;w=1");
    expect(first.headers.get("RateLimit")).toMatch(/^limit=2, remaining=1, reset=\d+$/);

    await call("/api/v1/account", { apiKey: account.apiKey });
    const refused = await call("/api/v1/account", { apiKey: account.apiKey });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(await refused.json()).toEqual({ error: "Rate limit exceeded", retry_after: retryAfter });
    expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(refused.headers.get("RateLimit")).toMatch(/^limit=2, remaining=0, reset=\d+$/);
  });

  it("limits bursts per second as well as the minute budget", async () => {
    const account = await limitedAccount(100, 3);
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => call("/api/v1/rate-limit", { apiKey: account.apiKey })))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
  });

  it("refills over time, by the object's own clock", async () => {
    const account = await limitedAccount(60, 60);
    const gate = await gateOf(account.apiKey);
    const keyHash = await digestKey(account.apiKey);
    await runInDurableObject(gate, async (instance: KeyGate) => {
      const t0 = 1_800_000_000_000;
      for (let i = 0; i < 60; i += 1) expect((await instance.admit("account", keyHash, t0)).outcome).toBe("admitted");
      expect((await instance.admit("account", keyHash, t0)).outcome).toBe("limited");
      // 60 per minute refills one token a second.
      expect((await instance.admit("account", keyHash, t0 + 500)).outcome).toBe("limited");
      expect((await instance.admit("account", keyHash, t0 + 1_000)).outcome).toBe("admitted");
      expect((await instance.admit("account", keyHash, t0 + 1_000)).outcome).toBe("limited");
      const later = await instance.admit("account", keyHash, t0 + 61_000);
      expect(later.outcome).toBe("admitted");
      if (later.outcome === "admitted") expect(later.decision.remaining).toBe(59);
    });
  });

  it("keeps an independent budget per key", async () => {
    const account = await limitedAccount(3);
    const clientId = await createClient(account.apiKey);
    const clientKey = await createClientKey(account.apiKey, clientId);
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(429);
    for (let i = 0; i < 3; i += 1) expect((await call("/api/v1/campaigns", { apiKey: clientKey.api_key })).status).toBe(200);
    expect((await call("/api/v1/campaigns", { apiKey: clientKey.api_key })).status).toBe(429);
    const other = await limitedAccount(1);
    expect((await call("/api/v1/account", { apiKey: other.apiKey })).status).toBe(200);
  });

  it("remembers a spent budget when the object is evicted", async () => {
    const account = await limitedAccount(3);
    for (let i = 0; i < 3; i += 1) expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
    await evictDurableObject(await gateOf(account.apiKey));
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(429);
  });

  it("writes a budget with plenty left at most once a second, and every spend once half of it is gone", async () => {
    const account = await limitedAccount(10, 10);
    const gate = await gateOf(account.apiKey);
    const keyHash = await digestKey(account.apiKey);
    await runInDurableObject(gate, async (instance: KeyGate, state) => {
      const stored = () => Math.round(state.storage.kv.get<{ minute: { tokens: number } }>("budget")!.minute.tokens);
      const t0 = 1_900_000_000_000;
      await instance.admit("account", keyHash, t0);
      expect(stored()).toBe(9);
      // 8 and 7 left, within the second: memory only.
      await instance.admit("account", keyHash, t0 + 100);
      await instance.admit("account", keyHash, t0 + 200);
      expect(stored()).toBe(9);
      // A second later: written.
      await instance.admit("account", keyHash, t0 + 1_000);
      expect(stored()).toBe(6);
      // Below half the minute's budget: every spend, within the same second too.
      await instance.admit("account", keyHash, t0 + 1_100);
      await instance.admit("account", keyHash, t0 + 1_200);
      expect(stored()).toBe(4);
    });
  });

  it("reports the budget at GET /api/v1/rate-limit", async () => {
    const account = await limitedAccount(50, 7);
    const { status, body } = await callJson("/api/v1/rate-limit", { apiKey: account.apiKey });
    expect(status).toBe(200);
    expect(body).toEqual({ limit: 50, remaining: 49, reset: expect.any(Number), burst: 7 });
  });
});

describe("brute-force protection", () => {
  it("answers 429 from the 31st failed authentication a minute from one IP, and not for others", async () => {
    const ip = "203.0.113.7";
    const statuses: number[] = [];
    for (let i = 0; i < 32; i += 1) {
      const guess = i % 2 === 0 ? `slv_acct_guess${i}aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` : "not-even-a-key";
      statuses.push((await call("/api/v1/account", { apiKey: guess, headers: { "CF-Connecting-IP": ip } })).status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(30)).toEqual([429, 429]);
    const blocked = await callJson("/api/v1/account", { apiKey: "slv_acct_again", headers: { "CF-Connecting-IP": ip } });
    expect(blocked.body).toEqual({ error: "Rate limit exceeded", retry_after: expect.any(Number) });
    expect(blocked.response.headers.get("Retry-After")).toBe(String(blocked.body.retry_after));

    const elsewhere = await callJson("/api/v1/account", { apiKey: "slv_acct_wrong", headers: { "CF-Connecting-IP": "198.51.100.1" } });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body).toEqual({ message: "Invalid API Key" });
    // While the address is over its limit it is refused before any key lookup, so even a real key
    // from it waits; below the limit (a few failures) real keys still work: only failures count.
    const account = await provisionAccount();
    expect((await call("/api/v1/account", { apiKey: account.apiKey, headers: { "CF-Connecting-IP": ip } })).status).toBe(429);
    const fumbling = "203.0.113.8";
    expect((await call("/api/v1/account", { apiKey: "slv_acct_typo", headers: { "CF-Connecting-IP": fumbling } })).status).toBe(401);
    expect((await call("/api/v1/account", { apiKey: account.apiKey, headers: { "CF-Connecting-IP": fumbling } })).status).toBe(200);
  });
});

describe("revocation reaches the key's object at once", () => {
  it("refuses a deleted key, a reset key's old value and a deactivated key on the next request, and admits a reactivated one", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const doomed = await createClientKey(account.apiKey, clientId, "doomed");
    const rotated = await createClientKey(account.apiKey, clientId, "rotated");
    const paused = await createClientKey(account.apiKey, clientId, "paused");
    for (const key of [doomed, rotated, paused]) expect((await call("/api/v1/campaigns", { apiKey: key.api_key })).status).toBe(200);

    await call(`/api/v1/client/api-key/${doomed.id}`, { method: "DELETE", apiKey: account.apiKey });
    const reset = await callJson<{ data: { api_key: string } }>(`/api/v1/client/api-key/reset/${rotated.id}`, {
      method: "PUT",
      apiKey: account.apiKey,
    });
    await call(`/api/v1/client/api-key/${paused.id}/status`, { method: "PUT", apiKey: account.apiKey, body: { status: "inactive" } });

    for (const key of [doomed.api_key, rotated.api_key, paused.api_key]) {
      const refused = await callJson("/api/v1/campaigns", { apiKey: key });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ message: "Invalid API Key" });
    }
    expect((await call("/api/v1/campaigns", { apiKey: reset.body.data.api_key })).status).toBe(200);
    await call(`/api/v1/client/api-key/${paused.id}/status`, { method: "PUT", apiKey: account.apiKey, body: { status: "active" } });
    expect((await call("/api/v1/campaigns", { apiKey: paused.api_key })).status).toBe(200);
  });
});
