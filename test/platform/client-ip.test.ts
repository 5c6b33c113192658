import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { call, provisionAccount, fileEnv, env } from "../helpers";

afterEach(() => vi.restoreAllMocks());

/** Whether the AuthFailureLimiter object of a bucket has counted anything. */
function charged(bucket: string) {
  const stub = fileEnv().AUTH_FAILURES.get(fileEnv().AUTH_FAILURES.idFromName(bucket));
  return runInDurableObject(stub, (_, state) => state.storage.kv.get("budget") !== undefined);
}

async function failWith(headers: Record<string, string>, overrides: Partial<Cloudflare.Env> = {}) {
  const request = new Request("http://salvo.test/api/v1/account", { headers: { "X-API-Key": "slv_acct_wrong", ...headers } });
  return (await worker.fetch(request, { ...env, ...overrides }, createExecutionContext())).status;
}

const unique = () => {
  const [a, b] = crypto.getRandomValues(new Uint8Array(2));
  return `198.51.${a}.${b}`;
};

describe("the trusted client-IP header (issue 23)", () => {
  it("counts failed authentications by the header CLIENT_IP_HEADER names, and ignores CF-Connecting-IP then", async () => {
    const [real, cloudflare] = [unique(), unique()];
    expect(await failWith({ "X-Real-IP": real, "CF-Connecting-IP": cloudflare }, { CLIENT_IP_HEADER: "X-Real-IP" })).toBe(401);
    expect(await charged(real)).toBe(true);
    expect(await charged(cloudflare)).toBe(false);
  });

  it("takes the last address of a forwarded list (the one the trusted proxy added)", async () => {
    const [forged, added] = [unique(), unique()];
    expect(await failWith({ "X-Forwarded-For": `${forged}, ${added}` }, { CLIENT_IP_HEADER: "X-Forwarded-For" })).toBe(401);
    expect(await charged(added)).toBe(true);
    expect(await charged(forged)).toBe(false);
  });

  it("keeps CF-Connecting-IP by default", async () => {
    const ip = unique();
    expect(await failWith({ "CF-Connecting-IP": ip, "X-Real-IP": unique() })).toBe(401);
    expect(await charged(ip)).toBe(true);
  });
});

describe("API keys in the URL path (issue 23)", () => {
  it("never reach the access log: a path segment that holds a key is redacted", async () => {
    const account = await provisionAccount();
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    await call(`/api/v1/${account.apiKey}/campaigns`, { apiKey: account.apiKey, headers: { "X-Request-Id": "key-in-path" } });
    await call(`/api/v1/campaigns/key=${encodeURIComponent(account.apiKey)}`, { apiKey: account.apiKey, headers: { "X-Request-Id": "key-in-path-2" } });
    const entries = lines.map((line) => JSON.parse(line) as { request_id?: string; path?: string });
    expect(entries.find((e) => e.request_id === "key-in-path")?.path).toBe("/api/v1/:key/campaigns");
    expect(entries.find((e) => e.request_id === "key-in-path-2")?.path).toBe("/api/v1/campaigns/:key");
    expect(lines.join("\n")).not.toContain(account.apiKey.slice(9));
  });
});
