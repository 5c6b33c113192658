import { expect, inject, it } from "vitest";

// Issue 24: Salvo's Worker will call the lab's OAuth provider as it calls Google's and Microsoft's
// token endpoints, with fetch over TLS. This shows the Workers runtime trusts the lab's CA for fetch
// (NODE_EXTRA_CA_CERTS, set by scripts/with-mail-lab.mjs) and how a Workers-runtime test gets tokens:
// PKCE here, the person's part through the global setup's `labConsent`, the exchange here.
const lab = inject("mailLab");
const labConsent = inject("labConsent");

const base64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

async function tokenCall(provider: "google" | "microsoft", fields: Record<string, string>) {
  const app = lab.oauth.clients[provider];
  const response = await fetch(app.token_url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...fields, client_id: app.client_id, client_secret: app.client_secret }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string | number> };
}

it.each(["google", "microsoft"] as const)("the Workers runtime exchanges a %s-style code (PKCE) at the lab's provider over TLS, and refreshes", async (provider) => {
  const app = lab.oauth.clients[provider];
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(48)));
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const redirectUri = `https://salvo.test/oauth/${provider}/callback`;
  const state = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const authUrl = `${app.authorize_url}?${new URLSearchParams({
    response_type: "code",
    client_id: app.client_id,
    redirect_uri: redirectUri,
    scope: app.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(provider === "google" ? { access_type: "offline", prompt: "consent" } : {}),
  })}`;
  const person = await fetch(labConsent, { method: "POST", body: JSON.stringify({ auth_url: authUrl, email: "sender9@lab.salvo.test" }) });
  expect(person.status).toBe(200);
  const redirect = new URL(((await person.json()) as { redirect: string }).redirect);
  expect(`${redirect.origin}${redirect.pathname}`).toBe(redirectUri);
  expect(redirect.searchParams.get("state")).toBe(state);

  const exchanged = await tokenCall(provider, { grant_type: "authorization_code", code: redirect.searchParams.get("code")!, redirect_uri: redirectUri, code_verifier: verifier });
  expect(exchanged.status).toBe(200);
  expect(exchanged.body).toMatchObject({ token_type: "Bearer", expires_in: lab.oauth.access_token_ttl });
  const claims = JSON.parse(atob(String(exchanged.body.id_token).split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;
  expect(claims).toMatchObject({ iss: lab.oauth.issuer, aud: app.client_id, email: "sender9@lab.salvo.test", email_verified: true });

  const refreshed = await tokenCall(provider, { grant_type: "refresh_token", refresh_token: String(exchanged.body.refresh_token) });
  expect(refreshed.status).toBe(200);
  expect(refreshed.body.refresh_token !== exchanged.body.refresh_token).toBe(app.rotates_refresh_tokens);

  // The lab's admin call, as a test that revokes a user's consent would make it.
  const revoked = await fetch(lab.oauth.admin.revoke_url, {
    method: "POST",
    headers: { Authorization: `Bearer ${lab.oauth.admin.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ email: "sender9@lab.salvo.test", client_id: app.client_id }),
  });
  expect(revoked.status).toBe(200);
  expect(await tokenCall(provider, { grant_type: "refresh_token", refresh_token: String(refreshed.body.refresh_token) })).toMatchObject({
    status: 400,
    body: { error: "invalid_grant" },
  });
});
