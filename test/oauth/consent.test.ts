import { describe, expect, it } from "vitest";
import { mailboxCount, mailboxRow, oauthAppOf, oauthSessionCount, oauthSessionRow, setOAuthSession } from "../db";
import { call, callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createMailbox, readMailbox } from "../mailboxes/fixtures";

/**
 * The OAuth consent's own rules (CONTRACT 18.1-18.3) in the Workers runtime: apps per level, the
 * authorization request, single-use state bound to its account, and every refusal writing no
 * mailbox. A consent that reaches a real provider runs in test/mail/oauth.test.ts against the lab's.
 */

/** An answer read loosely: the tests check its members. */
type Loose = Record<string, Record<string, unknown> & { [key: string]: unknown }> & { id?: number };

interface Started {
  ok: true;
  session_id: string;
  auth_url: string;
  expires_at: string;
  provider: string;
  redirect_uri: string;
}

async function init(apiKey: string, provider = "google", body: Record<string, unknown> = {}) {
  return callJson<Started & { error?: string; message?: string }>(`/api/v1/email-accounts/oauth/${provider}/init`, { method: "POST", apiKey, body });
}

function stateOf(started: Started): string {
  return new URL(started.auth_url).searchParams.get("state")!;
}

async function callback(provider: string, query: Record<string, string>, ip = "203.0.113.7") {
  const response = await call(`/oauth/${provider}/callback?${new URLSearchParams(query)}`, { headers: { "CF-Connecting-IP": ip }, redirect: "manual" });
  return { response, text: await response.text() };
}


describe("starting a consent", () => {
  it("answers an authorization-code request with PKCE S256, a 32-byte state and the deployment's app", async () => {
    const account = await provisionAccount();
    const { status, body } = await init(account.apiKey, "gmail", { email: "Ann@Acme.example" });
    expect(status).toBe(200);
    expect(body.session_id).toMatch(/^oas_[A-Za-z0-9_-]{24}$/);
    expect(body.provider).toBe("google");
    expect(body.redirect_uri).toBe("https://salvo.test/oauth/google/callback");
    const url = new URL(body.auth_url);
    expect(url.origin + url.pathname).toBe("https://accounts.google.com/o/oauth2/v2/auth");
    const params = url.searchParams;
    expect(params.get("client_id")).toBe("deployment-google-app");
    expect(params.get("redirect_uri")).toBe(body.redirect_uri);
    expect(params.get("response_type")).toBe("code");
    expect(params.get("scope")!.split(" ")).toEqual(["openid", "email", "profile", "https://mail.google.com/"]);
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get("state")).toMatch(/^s\d+\.[A-Za-z0-9_-]{43}$/);
    expect(params.get("access_type")).toBe("offline");
    expect(params.get("prompt")).toBe("consent");
    expect(params.get("login_hint")).toBe("ann@acme.example");
    const ttl = Date.parse(body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    // Only the state's digest is stored, and the verifier sealed.
    const stored = await oauthSessionRow(body.session_id);
    expect(stored.stateDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.stateDigest).not.toContain(stateOf(body));
    expect(stored.verifierCiphertext).toMatch(/^v1\./);
  });

  it("refuses a provider with no app configured, writing nothing", async () => {
    const account = await provisionAccount();
    const { status, body } = await init(account.apiKey, "outlook");
    expect(status).toBe(400);
    const text = "No Microsoft OAuth app is configured: set MICROSOFT_OAUTH_CLIENT_ID and MICROSOFT_OAUTH_CLIENT_SECRET, or PUT /email-accounts/oauth/microsoft/app";
    expect(body).toEqual({ error: text, ok: false, message: text });
    expect(await oauthSessionCount(account.id)).toBe(0);
  });

  it("refuses an unknown provider and an unsafe redirect_url", async () => {
    const account = await provisionAccount();
    expect((await init(account.apiKey, "yahoo")).status).toBe(422);
    const insecure = await init(account.apiKey, "google", { redirect_url: "http://attacker.example/back" });
    expect(insecure.status).toBe(422);
    expect((await init(account.apiKey, "google", { redirect_url: "http://127.0.0.1:8123/done" })).status).toBe(200);
  });

  it("binds the session to its account: another account, or another client's key, reads 404", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const client = await createClient(owner.apiKey);
    const otherClient = await createClient(owner.apiKey, "Other");
    const clientKey = (await createClientKey(owner.apiKey, client)).api_key;
    const otherKey = (await createClientKey(owner.apiKey, otherClient)).api_key;
    const started = (await init(clientKey)).body;
    const read = await callJson<Record<string, unknown>>(`/api/v1/email-accounts/oauth/sessions/${started.session_id}`, { apiKey: owner.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ session_id: started.session_id, status: "pending", provider: "google", reconnect: false, error: null, email_account_id: null });
    for (const key of [stranger.apiKey, otherKey]) {
      const foreign = await callJson(`/api/v1/email-accounts/oauth/sessions/${started.session_id}`, { apiKey: key });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: "OAuth session not found" });
    }
  });
});

describe("the callback", () => {
  it("takes a state once: a declined consent is recorded, and the same state again is refused as unknown", async () => {
    const account = await provisionAccount();
    const started = (await init(account.apiKey)).body;
    const declined = await callback("google", { state: stateOf(started), error: "access_denied", error_description: "The user said no" });
    expect(declined.response.status).toBe(400);
    expect(declined.response.headers.get("Cache-Control")).toBe("no-store");
    expect(declined.response.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(declined.text).toContain("declined");
    const session = (await callJson<Record<string, unknown>>(`/api/v1/email-accounts/oauth/sessions/${started.session_id}`, { apiKey: account.apiKey })).body;
    expect(session).toMatchObject({ status: "error", error: "access_denied" });
    const again = await callback("google", { state: stateOf(started), code: "a-code" });
    expect(again.response.status).toBe(400);
    expect(again.text).toContain("unknown or was already used");
    expect(await mailboxCount(account.id)).toBe(0);
  });

  it("refuses an expired state and a state used at the other provider's callback", async () => {
    const account = await provisionAccount();
    const started = (await init(account.apiKey)).body;
    expect((await callback("microsoft", { state: stateOf(started), code: "a-code" })).response.status).toBe(400);
    await setOAuthSession(started.session_id, { expiresAt: new Date(Date.now() - 1000) });
    const expired = await callback("google", { state: stateOf(started), code: "a-code" });
    expect(expired.response.status).toBe(400);
    expect(expired.text).toContain("expired");
    const session = (await callJson<Record<string, unknown>>(`/api/v1/email-accounts/oauth/sessions/${started.session_id}`, { apiKey: account.apiKey })).body;
    expect(session).toMatchObject({ status: "expired", error: "expired" });
    expect(await mailboxCount(account.id)).toBe(0);
  });

  it("records a failed exchange without a mailbox, and never shows the code", async () => {
    const account = await provisionAccount();
    const started = (await init(account.apiKey)).body;
    const failed = await callback("google", { state: stateOf(started), code: "secret-code-value" });
    expect(failed.response.status).toBe(400);
    expect(failed.text).not.toContain("secret-code-value");
    expect(failed.text).not.toContain(stateOf(started));
    const session = (await callJson<Record<string, unknown>>(`/api/v1/email-accounts/oauth/sessions/${started.session_id}`, { apiKey: account.apiKey })).body;
    expect(session).toMatchObject({ status: "error", error: "token_exchange_failed" });
    expect(await mailboxCount(account.id)).toBe(0);
  });

  it("sends the browser back to redirect_url with the outcome, nothing secret", async () => {
    const account = await provisionAccount();
    const started = (await init(account.apiKey, "google", { redirect_url: "http://127.0.0.1:8123/done" })).body;
    const back = await callback("google", { state: stateOf(started), error: "access_denied" });
    expect(back.response.status).toBe(303);
    const location = new URL(back.response.headers.get("Location")!);
    expect(location.origin + location.pathname).toBe("http://127.0.0.1:8123/done");
    expect(Object.fromEntries(location.searchParams)).toEqual({ session_id: started.session_id, status: "error", error: "access_denied" });
  });

  it("counts unknown states against the caller's failed-authentication budget", async () => {
    let last = 0;
    for (let i = 0; i < 32; i += 1) last = (await callback("google", { state: `forged-${i}`, code: "x" }, "198.51.100.99")).response.status;
    expect(last).toBe(429);
  });
});

describe("OAuth apps per account and client", () => {
  it("registers the account's app (secret sealed, never answered) and consents use it; a client's app wins for that client", async () => {
    const account = await provisionAccount();
    const put = await callJson<Loose>("/api/v1/email-accounts/oauth/google/app", {
      method: "PUT",
      apiKey: account.apiKey,
      body: { oauth_client_id: "agency-app", oauth_client_secret: "agency-secret" },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ provider: "google", level: "account", client_id: null, oauth_client_id: "agency-app", oauth_client_secret: "********", mailbox_count: 0 });
    expect(JSON.stringify(put.body)).not.toContain("agency-secret");
    expect((await oauthAppOf(account.id)).clientSecretCiphertext).toMatch(/^v1\./);
    expect(new URL((await init(account.apiKey)).body.auth_url).searchParams.get("client_id")).toBe("agency-app");

    const client = await createClient(account.apiKey);
    const clientKey = (await createClientKey(account.apiKey, client)).api_key;
    const refused = await callJson("/api/v1/email-accounts/oauth/google/app", { method: "PUT", apiKey: clientKey, body: { oauth_client_id: "x", oauth_client_secret: "y" } });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ message: "This API key cannot manage OAuth apps" });
    await callJson("/api/v1/email-accounts/oauth/google/app", { method: "PUT", apiKey: account.apiKey, body: { oauth_client_id: "client-app", oauth_client_secret: "s", client_id: client } });
    expect(new URL((await init(clientKey)).body.auth_url).searchParams.get("client_id")).toBe("client-app");
    const read = await callJson<Loose>(`/api/v1/email-accounts/oauth/google/app`, { apiKey: clientKey });
    expect(read.body.data).toMatchObject({ level: "client", oauth_client_id: "client-app" });
    expect(read.body.effective).toMatchObject({ level: "client", oauth_client_id: "client-app" });

    const missing = await callJson("/api/v1/email-accounts/oauth/microsoft/app", { method: "PUT", apiKey: account.apiKey, body: { oauth_client_id: "ms" } });
    expect(missing.status).toBe(422);
  });

  it("keeps an app mailboxes use unless forced", async () => {
    const account = await provisionAccount();
    await callJson("/api/v1/email-accounts/oauth/google/app", { method: "PUT", apiKey: account.apiKey, body: { oauth_client_id: "in-use", oauth_client_secret: "s" } });
    const saved = await callJson<Loose>("/api/v1/email-accounts/save-oauth", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Ann", from_email: "ann@acme.example", username: "ann@acme.example", type: "GMAIL", token: { refresh_token: "r", expiry_date: 0, scope: "https://mail.google.com/" } },
    });
    expect(saved.status).toBe(200);
    const refused = await callJson("/api/v1/email-accounts/oauth/google/app", { method: "DELETE", apiKey: account.apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: "1 mailboxes use this OAuth app", ok: false, message: "1 mailboxes use this OAuth app" });
    expect((await callJson("/api/v1/email-accounts/oauth/google/app?force=true", { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
  });
});

describe("save-oauth (tokens the caller holds)", () => {
  it("stores an OAuth mailbox: the refresh token sealed, no password, its app recorded", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<Loose>("/api/v1/email-accounts/save-oauth", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Ann", from_email: "ann@acme.example", username: "ann@acme.example", type: "GMAIL", token: { refresh_token: "the-refresh-token", expiry_date: 0, scope: "https://mail.google.com/" } },
    });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ auth_type: "OAUTH", password: null, type: "GMAIL", smtp_host: "smtp.gmail.com", connection_state: "unchecked", needs_reconnect: false });
    expect(body.data!.oauth).toMatchObject({ provider: "google", app_level: "deployment", scopes: ["https://mail.google.com/"] });
    expect(JSON.stringify(body)).not.toContain("the-refresh-token");
    const row = await mailboxRow(body.id!);
    expect(row.oauthTokenCiphertext).toMatch(/^v1\./);
    expect(row.passwordCiphertext).toBeNull();
  });

  it("refuses a token without a refresh token, and a provider with no app", async () => {
    const account = await provisionAccount();
    const base = { from_name: "Ann", from_email: "ann@acme.example", username: "ann@acme.example" };
    const noRefresh = await callJson("/api/v1/email-accounts/save-oauth", { method: "POST", apiKey: account.apiKey, body: { ...base, type: "GMAIL", token: { access_token: "a", expiry_date: 0, scope: "s" } } });
    expect(noRefresh.status).toBe(422);
    const noApp = await callJson<Record<string, string>>("/api/v1/email-accounts/save-oauth", { method: "POST", apiKey: account.apiKey, body: { ...base, type: "OUTLOOK", token: { refresh_token: "r", expiry_date: 0, scope: "s" } } });
    expect(noApp.status).toBe(400);
    expect(noApp.body.error).toMatch(/^No Microsoft OAuth app is configured/);
    expect(await mailboxCount(account.id)).toBe(0);
  });

  it("refuses a reconnect of a password mailbox", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const { status, body } = await callJson(`/api/v1/email-accounts/${mailbox.id}/oauth/reconnect`, { method: "POST", apiKey: account.apiKey, body: {} });
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "This mailbox signs in with a password; update its credentials instead" });
    expect((await readMailbox(account.apiKey, mailbox.id)).body.auth_type).toBe("PASSWORD");
  });
});
