// A Node-side client of the mail lab's OAuth provider (scripts/mail-lab-oauth.mjs), for tests and
// scripts: it does what a person does in a browser (follows an authorization URL, signs in on the
// login page, allows or refuses on the consent page) and what an app does at the token endpoint.
// Every request trusts only the lab's CA.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:https";

/** One HTTPS request to the lab's provider, redirects not followed. */
export function labRequest(lab, url, { method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ca: readFileSync(lab.ca_file), timeout: 10_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on("timeout", () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    req.on("error", reject);
    req.end(body);
  });
}

const form = (fields) => ({
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(Object.entries(fields).filter(([, v]) => v !== undefined)).toString(),
});

/** A verifier and its S256 challenge (RFC 7636). */
export function pkcePair() {
  const verifier = randomBytes(48).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/**
 * Follows an authorization URL of the lab's provider as a browser would, signing in as `email` and
 * answering the consent page (`allow` false presses Cancel; `mailScopes` lists the mail scopes left
 * ticked, all when absent). Resolves to the URL the provider finally sends the browser to: the
 * app's redirect URI with `code` and `state`, or with `error`.
 */
export async function consent(lab, authUrl, { email, password = lab.oauth.password, allow = true, mailScopes } = {}) {
  const origin = new URL(lab.oauth.issuer).origin;
  const cookies = new Map();
  let url = authUrl;
  let pending = null;
  for (let step = 0; step < 20; step++) {
    const response = await labRequest(lab, url, {
      ...pending,
      headers: { ...pending?.headers, Cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
    });
    pending = null;
    for (const cookie of [response.headers["set-cookie"] ?? []].flat()) {
      const [pair] = cookie.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.location, url);
      if (next.origin !== origin) return next.href;
      url = next.href;
      continue;
    }
    if (response.status !== 200) throw new Error(`the lab's provider answered ${response.status} at ${new URL(url).pathname}: ${response.body.slice(0, 300)}`);
    const action = /<form method="post" action="([^"]+)"/.exec(response.body)?.[1];
    if (!action) throw new Error(`no form on the lab's page at ${new URL(url).pathname}: ${response.body.slice(0, 300)}`);
    url = new URL(action, url).href;
    if (action.endsWith("/login")) {
      pending = { method: "POST", ...form({ email, password }) };
    } else {
      const offered = [...response.body.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);
      const ticked = offered.filter((scope) => !mailScopes || mailScopes.includes(scope));
      const body = new URLSearchParams([...ticked.map((scope) => ["scope", scope]), ["decision", allow ? "allow" : "deny"]]);
      pending = { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: body.toString() };
    }
  }
  throw new Error("the lab's provider kept redirecting");
}

/** An authorization URL as Salvo builds it for that provider (18.2's scopes; Google's offline access and consent prompt). */
export function authorizationUrl(lab, provider, { redirectUri = `http://127.0.0.1/oauth/${provider}/callback`, state, challenge, loginHint, scope } = {}) {
  const app = lab.oauth.clients[provider];
  const params = new URLSearchParams({
    response_type: "code",
    client_id: app.client_id,
    redirect_uri: redirectUri,
    scope: scope ?? app.scope,
    state: state ?? randomBytes(16).toString("base64url"),
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(provider === "google" ? { access_type: "offline", prompt: "consent", include_granted_scopes: "true" } : {}),
    ...(loginHint ? { login_hint: loginHint } : {}),
  });
  return `${app.authorize_url}?${params}`;
}

/** A call to the token endpoint with the app's secret in the body. Resolves to `{ status, body }` (the JSON answer). */
export async function tokenRequest(lab, provider, fields) {
  const app = lab.oauth.clients[provider];
  const response = await labRequest(lab, app.token_url, { method: "POST", ...form({ ...fields, client_id: app.client_id, client_secret: app.client_secret }) });
  return { status: response.status, body: JSON.parse(response.body) };
}

/**
 * The whole authorization-code flow with PKCE, signing in as `email`: resolves to the token
 * endpoint's answer (`access_token`, `refresh_token`, `id_token`, `scope`, `expires_in`, ...).
 */
export async function labTokens(lab, provider, email, options = {}) {
  const { verifier, challenge } = pkcePair();
  const redirectUri = `http://127.0.0.1/oauth/${provider}/callback`;
  const landed = new URL(await consent(lab, authorizationUrl(lab, provider, { redirectUri, challenge, loginHint: email, scope: options.scope }), { email, ...options }));
  const code = landed.searchParams.get("code");
  if (!code) throw new Error(`the consent ended with ${landed.searchParams.get("error")}: ${landed.searchParams.get("error_description")}`);
  const { status, body } = await tokenRequest(lab, provider, { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier });
  if (status !== 200) throw new Error(`the token endpoint answered ${status} ${JSON.stringify(body)}`);
  return body;
}

/** Exchanges a refresh token: `{ status, body }` (400 `invalid_grant` once the grant is revoked). */
export function refreshTokens(lab, provider, refreshToken) {
  return tokenRequest(lab, provider, { grant_type: "refresh_token", refresh_token: refreshToken });
}

/** The lab's admin call: destroys the user's grants (to one app when `clientId` is given). Resolves to how many. */
export async function revokeGrants(lab, email, clientId) {
  const response = await labRequest(lab, lab.oauth.admin.revoke_url, {
    method: "POST",
    headers: { Authorization: `Bearer ${lab.oauth.admin.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ email, client_id: clientId }),
  });
  if (response.status !== 200) throw new Error(`the lab's revoke answered ${response.status} ${response.body}`);
  return JSON.parse(response.body).revoked;
}

/** SASL XOAUTH2's initial response (Google's and Microsoft's format), base64. */
export const xoauth2 = (email, token) => Buffer.from(`user=${email}\x01auth=Bearer ${token}\x01\x01`).toString("base64");

/** SASL OAUTHBEARER's initial response (RFC 7628), base64. */
export const oauthbearer = (email, token, host, port) =>
  Buffer.from(`n,a=${email},\x01host=${host}\x01port=${port}\x01auth=Bearer ${token}\x01\x01`).toString("base64");
