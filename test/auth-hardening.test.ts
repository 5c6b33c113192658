import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { digestKey } from "../src/keys/rules";
import { failureBucket } from "../src/platform/client-ip";
import { ADMIN_TOKEN, call, callJson, provisionAccount, fileEnv } from "./helpers";

const LIMIT = 30;

/** The failure budget the AuthFailureLimiter object of a bucket holds. */
function limiterState(bucket: string) {
  const stub = fileEnv().AUTH_FAILURES.get(fileEnv().AUTH_FAILURES.idFromName(bucket));
  return runInDurableObject(stub, (_, state) => state.storage.kv.get("budget") ?? null);
}

async function exhaust(ips: string[]) {
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT; i += 1) {
    const ip = ips[i % ips.length]!;
    statuses.push((await call("/api/v1/account", { apiKey: `slv_acct_guess${i}`, headers: { "CF-Connecting-IP": ip } })).status);
  }
  return statuses;
}

/** What the key's own KeyGate object holds (its budget and cached owner). */
async function gateState(apiKey: string) {
  const stub = fileEnv().KEY_GATE.get(fileEnv().KEY_GATE.idFromName(await digestKey(apiKey)));
  return runInDurableObject(stub, (_, state) => ({ budget: state.storage.kv.get("budget"), owner: state.storage.kv.get("owner") }));
}

describe("API key in a header", () => {
  it("admits the key in X-API-Key, in Authorization: Bearer and (compatibility) in api_key", async () => {
    const account = await provisionAccount();
    const viaHeader = await callJson("/api/v1/account", { headers: { "X-API-Key": account.apiKey } });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body).toMatchObject({ id: account.id });
    expect((await call("/api/v1/account", { headers: { Authorization: `Bearer ${account.apiKey}` } })).status).toBe(200);
    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
  });

  it("refuses a wrong key in a header as in the query", async () => {
    const wrong = await callJson("/api/v1/account", { headers: { "X-API-Key": "slv_acct_nope" } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ message: "Invalid API Key" });
    const none = await callJson("/api/v1/account", { headers: { Authorization: "Bearer " } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ message: "API key is required" });
  });

  it("documents the header schemes next to the query scheme", async () => {
    const { body } = await callJson<{ components: { securitySchemes: Record<string, unknown> }; paths: Record<string, Record<string, { security?: unknown }>> }>("/openapi.json");
    expect(body.components.securitySchemes).toMatchObject({
      ApiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key" },
      ApiKeyBearer: { type: "http", scheme: "bearer" },
      ApiKeyAuth: { type: "apiKey", in: "query", name: "api_key" },
    });
    expect(body.paths["/api/v1/account"]!.get!.security).toEqual([{ ApiKeyHeader: [] }, { ApiKeyBearer: [] }, { ApiKeyAuth: [] }]);
  });
});

describe("a blocked address is refused before any key lookup", () => {
  it("answers 429 to a blocked IP without consulting the key's object or its own limiter again", async () => {
    const account = await provisionAccount();
    const ip = "192.0.2.77";
    expect(await exhaust([ip])).toEqual(Array(LIMIT).fill(401));
    // The budget refills one failure every 2 s: a loaded machine may refill one or two while it is spent.
    let tipping = await call("/api/v1/account", { apiKey: "slv_acct_onemore", headers: { "CF-Connecting-IP": ip } });
    for (let refills = 0; tipping.status === 401 && refills < 3; refills += 1) {
      tipping = await call("/api/v1/account", { apiKey: "slv_acct_onemore", headers: { "CF-Connecting-IP": ip } });
    }
    expect(tipping.status).toBe(429);

    expect((await call("/api/v1/account", { apiKey: account.apiKey })).status).toBe(200);
    const gateBefore = await gateState(account.apiKey);
    const limiterBefore = await limiterState(ip);
    for (const apiKey of [account.apiKey, "slv_acct_again", "not-a-key"]) {
      const { status, body, response } = await callJson("/api/v1/account", { apiKey, headers: { "CF-Connecting-IP": ip } });
      expect(status, apiKey).toBe(429);
      expect(body).toEqual({ error: "Rate limit exceeded", retry_after: expect.any(Number) });
      expect(Number(response.headers.get("Retry-After"))).toBeGreaterThan(0);
    }
    // The valid key's object spent nothing and the limiter's state is untouched: neither was asked.
    expect(await gateState(account.apiKey)).toEqual(gateBefore);
    expect(await limiterState(ip)).toEqual(limiterBefore);
  });
});

describe("IPv6 addresses share a budget per /64", () => {
  it("groups by the first 64 bits, reads every spelling, and keeps IPv4 per address", () => {
    expect(failureBucket("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(failureBucket("2001:0DB8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(failureBucket("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(failureBucket("::1")).toBe("0:0:0:0::/64");
    expect(failureBucket("::ffff:198.51.100.4")).toBe("198.51.100.4");
    expect(failureBucket("198.51.100.4")).toBe("198.51.100.4");
    expect(failureBucket("198.51.100.5")).toBe("198.51.100.5");
  });

  it("limits two addresses of one /64 together, and not a neighbouring /64", async () => {
    const statuses = await exhaust(["2001:db8:aa:1::1", "2001:db8:aa:1:ffff:1234:5678:9abc"]);
    expect(statuses).toEqual(Array(LIMIT).fill(401));
    const sameNet = await call("/api/v1/account", { apiKey: "slv_acct_x", headers: { "CF-Connecting-IP": "2001:db8:aa:1::beef" } });
    expect(sameNet.status).toBe(429);
    const otherNet = await call("/api/v1/account", { apiKey: "slv_acct_x", headers: { "CF-Connecting-IP": "2001:db8:aa:2::1" } });
    expect(otherNet.status).toBe(401);
  });
});

describe("admin token failures", () => {
  it("counts wrong admin tokens per IP: 401 up to the limit, then 429 even for the right token", async () => {
    const ip = "192.0.2.200";
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i += 1) {
      const headers = { "CF-Connecting-IP": ip, ...(i % 2 ? { Authorization: `Bearer wrong-${i}` } : {}) };
      statuses.push((await call("/admin/v1/accounts/1/api-keys", { headers })).status);
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(statuses[LIMIT]).toBe(429);
    const blocked = await call("/admin/v1/accounts/1/api-keys", { headers: { "CF-Connecting-IP": ip, Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(blocked.status).toBe(429);
    const elsewhere = await call("/admin/v1/accounts/1/api-keys", { headers: { "CF-Connecting-IP": "192.0.2.201", Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect([200, 404]).toContain(elsewhere.status);
  });
});
