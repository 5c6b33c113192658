/**
 * The provider's token endpoint (RFC 6749 4.1.3 and 6): exchanging a consent's code (with the PKCE
 * verifier) and refreshing an access token. The app's secret goes in the form body
 * (`client_secret_post`), which Google and Microsoft both take. Answers are classified so the
 * caller can tell a refused grant (a person must act) from a passing fault (try again later).
 */
import type { OAuthProvider, OAuthProviderConfig } from "../config";
import { endpointFor, SCOPES, type ResolvedApp } from "./rules";

const TIMEOUT_MS = 15_000;

interface Tokens {
  accessToken: string;
  /** Epoch ms when the access token stops working. */
  expiresAt: number;
  /** A new refresh token, when the provider sent one (Microsoft rotates it on every use). */
  refreshToken: string | null;
  scope: string | undefined;
  idToken: string | undefined;
}

type TokenResult =
  | { ok: true; tokens: Tokens }
  /** `refused`: the provider answered an OAuth error (`invalid_grant`, `invalid_client`, ...). `unavailable`: network, timeout, 5xx. */
  | { ok: false; kind: "refused" | "unavailable"; error: string; description: string | null };

async function tokenRequest(url: string, form: Record<string, string>, now: number): Promise<TokenResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams(form),
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    return { ok: false, kind: "unavailable", error: "unreachable", description: (error as Error).message };
  }
  let body: Record<string, unknown> = {};
  try {
    body = (await response.json()) as Record<string, unknown>;
  } catch {
    // A body that is not JSON is classified by its status below.
  }
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  if (response.ok && typeof body.access_token === "string") {
    const expiresIn = Number(body.expires_in ?? 3600);
    return {
      ok: true,
      tokens: {
        accessToken: body.access_token,
        expiresAt: now + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000,
        refreshToken: text(body.refresh_token) ?? null,
        scope: text(body.scope),
        idToken: text(body.id_token),
      },
    };
  }
  const error = text(body.error);
  if (error && response.status >= 400 && response.status < 500) {
    return { ok: false, kind: "refused", error, description: text(body.error_description) ?? null };
  }
  return { ok: false, kind: "unavailable", error: `http_${response.status}`, description: text(body.error_description) ?? null };
}

/** The consent's code for tokens (the refresh token is in them when the grant allows offline access). */
export function exchangeCode(provider: OAuthProvider, config: OAuthProviderConfig, app: ResolvedApp, code: string, verifier: string, redirectUri: string, now: number): Promise<TokenResult> {
  return tokenRequest(
    endpointFor(config.tokenUrl, app.tenant),
    {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      ...(provider === "microsoft" ? { scope: SCOPES.microsoft } : {}),
    },
    now,
  );
}

/** A new access token from the refresh token (and, from Microsoft, a new refresh token). */
export function refreshAccess(provider: OAuthProvider, config: OAuthProviderConfig, app: ResolvedApp, refreshToken: string, now: number): Promise<TokenResult> {
  return tokenRequest(
    endpointFor(config.tokenUrl, app.tenant),
    {
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      ...(provider === "microsoft" ? { scope: SCOPES.microsoft } : {}),
    },
    now,
  );
}
