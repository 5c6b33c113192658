import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createCampaign } from "../campaigns/fixtures";
import { campaignCount, sessionRow, setSession } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";

const ORIGIN = "https://app.salvo.test";
const OWN_PAGE = { "Sec-Fetch-Site": "same-origin" };

interface Sent {
  status: number;
  body: Record<string, unknown> & { data?: unknown };
  headers: Headers;
}

/** A request as a browser would make it (no CF-Connecting-IP: failures count against one local bucket, so they stay few). */
async function browser(path: string, init: { method?: string; cookie?: string; key?: string; headers?: Record<string, string>; body?: unknown; origin?: string } = {}): Promise<Sent> {
  const headers: Record<string, string> = { "CF-Connecting-IP": `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`, ...init.headers };
  if (init.cookie) headers.Cookie = init.cookie;
  if (init.key) headers["X-API-Key"] = init.key;
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await exports.default.fetch(
    new Request(new URL(path, init.origin ?? ORIGIN), { method: init.method ?? "GET", headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

/** Signs in with a key and hands back the Cookie header value the browser would send. */
async function signIn(key: string, origin = ORIGIN) {
  const sent = await browser("/api/v1/sessions", { method: "POST", key, origin, headers: { "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/140" } });
  expect(sent.status).toBe(201);
  const setCookie = sent.headers.get("Set-Cookie")!;
  const cookie = setCookie.split(";")[0]!;
  return { cookie, setCookie, session: (sent.body.data as { id: number }) };
}

describe("web app sessions", () => {
  it("signs in with a key: an HttpOnly, Secure, SameSite=Strict cookie whose token is stored only as a digest", async () => {
    const account = await provisionAccount();
    const { cookie, setCookie, session } = await signIn(account.apiKey);
    expect(setCookie).toMatch(/^__Host-salvo_session=s\d+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800; Secure$/);
    const token = cookie.split("=")[1]!;
    const row = await sessionRow(session.id);
    expect(row).toBeDefined();
    expect(JSON.stringify(row)).not.toContain(token);
    expect(JSON.stringify(row)).not.toContain(account.apiKey);
    expect(row!.userAgent).toContain("Chrome/140");

    const current = await browser("/api/v1/sessions/current", { cookie, headers: OWN_PAGE });
    expect(current.status).toBe(200);
    expect(current.body.data).toMatchObject({ id: session.id, kind: "account", client_id: null, current: true, key_hint: `slv_acct_…${account.apiKey.slice(-4)}` });
    expect(current.headers.get("X-RateLimit-Limit")).not.toBeNull();
  });

  it("uses a Secure-less cookie only on plain http to loopback", async () => {
    const account = await provisionAccount();
    const { setCookie } = await signIn(account.apiKey, "http://127.0.0.1:8787");
    expect(setCookie).toMatch(/^salvo_session=\S+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800$/);
    const { setCookie: remote } = await signIn(account.apiKey, "http://salvo.example.com");
    expect(remote).toMatch(/^__Host-salvo_session=.*; Secure$/);
  });

  it("counts the cookie only on requests from the app's own pages: a cross-site request with it changes nothing", async () => {
    const account = await provisionAccount();
    const { cookie } = await signIn(account.apiKey);
    const count = () => campaignCount(account.id);
    const create = (headers: Record<string, string>) => browser("/api/v1/campaigns/create", { method: "POST", cookie, headers, body: { name: "From a page" } });

    const attempts: Record<string, string>[] = [
      { "Sec-Fetch-Site": "cross-site", Origin: "https://evil.example" },
      { "Sec-Fetch-Site": "same-site", Origin: "https://other.salvo.test" },
      { "Sec-Fetch-Site": "none" },
      { Origin: "https://evil.example" },
      { Origin: "null" },
      { "Sec-Fetch-Site": "same-origin", Origin: "https://evil.example" },
      {},
    ];
    for (const headers of attempts) {
      const refused = await create(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(refused.body).toEqual({ message: "API key is required" });
    }
    expect(await count()).toBe(0);

    expect((await create({ "Sec-Fetch-Site": "same-origin", Origin: ORIGIN })).status).toBe(200);
    // A browser without Fetch Metadata still sends Origin on a POST.
    expect((await create({ Origin: ORIGIN })).status).toBe(200);
    expect(await count()).toBe(2);
  });

  it("gives a client key's session exactly the key's view: its client's campaigns and sessions only", async () => {
    const account = await provisionAccount();
    const mine = await createClient(account.apiKey, "Mine", "mine@example.com");
    const other = await createClient(account.apiKey, "Other", "other@example.com");
    const mineKey = await createClientKey(account.apiKey, mine);
    const otherKey = await createClientKey(account.apiKey, other);
    const ownCampaign = await createCampaign(mineKey.api_key, { name: "Mine" });
    const otherCampaign = await createCampaign(otherKey.api_key, { name: "Other" });
    await createCampaign(account.apiKey, { name: "Account-wide" });

    const { cookie, session } = await signIn(mineKey.api_key);
    const { session: otherSession } = await signIn(otherKey.api_key);
    const { session: accountSession, cookie: accountCookie } = await signIn(account.apiKey);

    const campaigns = await browser("/api/v1/campaigns", { cookie, headers: OWN_PAGE });
    expect(campaigns.status).toBe(200);
    expect((campaigns.body as unknown as { id: number }[]).map((c) => c.id)).toEqual([ownCampaign]);
    expect((await browser(`/api/v1/campaigns/${otherCampaign}`, { cookie, headers: OWN_PAGE })).status).toBe(404);
    // Client keys may not manage clients; neither may their sessions.
    expect((await browser("/api/v1/client/api-key", { cookie, headers: OWN_PAGE })).status).toBe(401);

    const seen = await browser("/api/v1/sessions", { cookie, headers: OWN_PAGE });
    expect((seen.body.data as { id: number }[]).map((s) => s.id)).toEqual([session.id]);
    expect((await browser(`/api/v1/sessions/${otherSession.id}`, { method: "DELETE", cookie, headers: OWN_PAGE })).status).toBe(404);
    expect((await browser(`/api/v1/sessions/${accountSession.id}`, { method: "DELETE", cookie, headers: OWN_PAGE })).body).toEqual({ error: "Session not found" });

    const all = await browser("/api/v1/sessions", { cookie: accountCookie, headers: OWN_PAGE });
    expect((all.body.data as { id: number }[]).map((s) => s.id).sort((a, b) => a - b)).toEqual([session.id, otherSession.id, accountSession.id]);
    // Another account sees none of them.
    const stranger = await provisionAccount();
    const theirs = await callJson<{ data: unknown[] }>("/api/v1/sessions", { apiKey: stranger.apiKey });
    expect(theirs.body.data).toEqual([]);
    expect((await callJson(`/api/v1/sessions/${session.id}`, { apiKey: stranger.apiKey, method: "DELETE" })).status).toBe(404);
  });

  it("ends a session at once on sign-out, on revoke and when its key is deleted", async () => {
    const account = await provisionAccount();
    const client = await createClient(account.apiKey);
    const key = await createClientKey(account.apiKey, client);

    const first = await signIn(account.apiKey);
    const out = await browser("/api/v1/sessions/current", { method: "DELETE", cookie: first.cookie, headers: OWN_PAGE });
    expect(out.status).toBe(200);
    expect(out.headers.get("Set-Cookie")).toMatch(/^__Host-salvo_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0; Secure$/);
    const after = await browser("/api/v1/campaigns", { cookie: first.cookie, headers: OWN_PAGE });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ message: "Session expired or signed out" });

    const second = await signIn(account.apiKey);
    const third = await signIn(account.apiKey);
    expect((await browser(`/api/v1/sessions/${second.session.id}`, { method: "DELETE", cookie: third.cookie, headers: OWN_PAGE })).status).toBe(200);
    expect((await browser("/api/v1/campaigns", { cookie: second.cookie, headers: OWN_PAGE })).status).toBe(401);
    expect((await browser("/api/v1/campaigns", { cookie: third.cookie, headers: OWN_PAGE })).status).toBe(200);

    const clientSession = await signIn(key.api_key);
    expect((await browser("/api/v1/campaigns", { cookie: clientSession.cookie, headers: OWN_PAGE })).status).toBe(200);
    expect((await callJson(`/api/v1/client/api-key/${key.id}`, { apiKey: account.apiKey, method: "DELETE" })).status).toBe(200);
    expect((await browser("/api/v1/campaigns", { cookie: clientSession.cookie, headers: OWN_PAGE })).status).toBe(401);
    expect(await sessionRow(clientSession.session.id)).toBeUndefined();
  });

  it("expires: a session past its time is refused, and use slides the expiry forward", async () => {
    const account = await provisionAccount();
    const { cookie, session } = await signIn(account.apiKey);
    const before = Date.now();
    // Last used two minutes ago: the next use records itself and slides the expiry.
    await setSession(session.id, { lastSeenAt: new Date(before - 120_000), expiresAt: new Date(before + 60_000) });
    expect((await browser("/api/v1/sessions/current", { cookie, headers: OWN_PAGE })).status).toBe(200);
    const slid = await sessionRow(session.id);
    expect(slid!.lastSeenAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(slid!.expiresAt.getTime()).toBeGreaterThan(before + 11 * 3600_000);

    await setSession(session.id, { expiresAt: new Date(Date.now() - 1) });
    const expired = await browser("/api/v1/sessions/current", { cookie, headers: OWN_PAGE });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ message: "Session expired or signed out" });
  });

  it("spends the key's own rate-limit budget", async () => {
    const account = await provisionAccount({ rate_limit_per_minute: 5, rate_limit_burst: 5 });
    const { cookie } = await signIn(account.apiKey); // 1
    await callJson("/api/v1/campaigns", { apiKey: account.apiKey }); // 2
    const viaSession = await browser("/api/v1/campaigns", { cookie, headers: OWN_PAGE }); // 3
    expect(viaSession.headers.get("X-RateLimit-Remaining")).toBe("2");
    await browser("/api/v1/campaigns", { cookie, headers: OWN_PAGE }); // 4
    await callJson("/api/v1/campaigns", { apiKey: account.apiKey }); // 5
    const limited = await browser("/api/v1/campaigns", { cookie, headers: OWN_PAGE });
    expect(limited.status).toBe(429);
  });

  it("opens a session only with a key, never from another session", async () => {
    const account = await provisionAccount();
    const { cookie } = await signIn(account.apiKey);
    const again = await browser("/api/v1/sessions", { method: "POST", cookie, headers: OWN_PAGE });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: "Sign in with an API key" });
    expect((await browser("/api/v1/sessions", { method: "POST", key: "slv_acct_nope" })).status).toBe(401);
    // A key's request has no current session.
    expect((await callJson("/api/v1/sessions/current", { apiKey: account.apiKey })).status).toBe(404);
  });
});
