/**
 * The pure rules of mailboxes through OAuth (CONTRACT 18): provider names, the scopes and the
 * authorization request of each provider, PKCE, the id token's claims, and the plain reasons a
 * mailbox is disconnected for. Google and Microsoft differ only in configuration and in these
 * tables: their endpoints are the deployment's settings (src/config.ts), never a code branch.
 */
import type { OAuthProvider, OAuthProviderConfig } from "../config";
import type { OAuthAppLevel } from "../db/schema";
import { toBase64Url, fromBase64Url } from "../platform/bytes";

const GOOGLE_MAIL_SCOPE = "https://mail.google.com/";
const MICROSOFT_SMTP_SCOPE = "https://outlook.office.com/SMTP.Send";
const MICROSOFT_IMAP_SCOPE = "https://outlook.office.com/IMAP.AccessAsUser.All";
const MICROSOFT_DEFAULT_SCOPE = "https://outlook.office.com/.default";
/** Entra's tenant of personal Microsoft accounts (Outlook.com, Hotmail, Live). */
const MICROSOFT_PERSONAL_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad";

export const SCOPES: Record<OAuthProvider, string> = {
  google: `openid email profile ${GOOGLE_MAIL_SCOPE}`,
  microsoft: `openid email profile offline_access ${MICROSOFT_SMTP_SCOPE} ${MICROSOFT_IMAP_SCOPE}`,
};

/** The mailbox type a provider's mailboxes get. */
export const MAILBOX_TYPE: Record<OAuthProvider, "GMAIL" | "OUTLOOK"> = { google: "GMAIL", microsoft: "OUTLOOK" };

/** `{provider}` of a path: `google` or `microsoft`, with the hosted names `gmail` and `outlook` read as those. */
export function providerNamed(name: string): OAuthProvider | null {
  const lower = name.toLowerCase();
  if (lower === "google" || lower === "gmail") return "google";
  if (lower === "microsoft" || lower === "outlook") return "microsoft";
  return null;
}

/** The app a consent or a refresh uses: its client id and secret, its tenant, and where it comes from. */
export interface ResolvedApp {
  level: OAuthAppLevel;
  /** The oauth_apps row; null for the deployment's app. */
  appId: number | null;
  clientId: string;
  clientSecret: string;
  tenant: string;
}

/** The app a new consent uses (CONTRACT 18.1): the client's, else the account's, else the deployment's. */
export function effectiveApp(candidates: { client: ResolvedApp | null; account: ResolvedApp | null; deployment: ResolvedApp | null }): ResolvedApp | null {
  return candidates.client ?? candidates.account ?? candidates.deployment;
}

export function appMissingMessage(provider: OAuthProvider): string {
  const [name, prefix] = provider === "google" ? ["Google", "GOOGLE"] : ["Microsoft", "MICROSOFT"];
  return `No ${name} OAuth app is configured: set ${prefix}_OAUTH_CLIENT_ID and ${prefix}_OAUTH_CLIENT_SECRET, or PUT /email-accounts/oauth/${provider}/app`;
}

/** A provider endpoint with the app's tenant filled in (Microsoft's `{tenant}`). */
export function endpointFor(template: string, tenant: string): string {
  return template.replace("{tenant}", encodeURIComponent(tenant || "common"));
}

interface AuthorizationRequest {
  provider: OAuthProvider;
  config: OAuthProviderConfig;
  app: ResolvedApp;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  loginHint: string | null;
}

/** The authorization-code request with PKCE (S256) the user's browser is sent to. */
export function authorizationUrl(request: AuthorizationRequest): string {
  const url = new URL(endpointFor(request.config.authorizeUrl, request.app.tenant));
  const params = url.searchParams;
  params.set("client_id", request.app.clientId);
  params.set("redirect_uri", request.redirectUri);
  params.set("response_type", "code");
  params.set("scope", SCOPES[request.provider]);
  params.set("state", request.state);
  params.set("code_challenge", request.codeChallenge);
  params.set("code_challenge_method", "S256");
  if (request.provider === "google") {
    // A refresh token only with offline access, and only on a fresh consent.
    params.set("access_type", "offline");
    params.set("prompt", "consent");
    params.set("include_granted_scopes", "true");
  } else {
    params.set("response_mode", "query");
  }
  if (request.loginHint) params.set("login_hint", request.loginHint);
  return url.toString();
}

/** Random bytes as base64url: the state (32 bytes) and the PKCE verifier (48 bytes: 64 characters). */
export function randomToken(bytes: number): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The S256 challenge of a PKCE verifier (RFC 7636 4.2). */
export async function codeChallenge(verifier: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

/** A state as stored: its SHA-256 digest in hex (the state itself is never kept). */
export async function stateDigest(state: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(state)));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** What the id token says about the person, once checked. */
interface IdentityClaims {
  email: string;
  name: string | null;
  accountKind: "workspace" | "consumer" | "work" | "personal";
  tenantId: string | null;
}

type ClaimsResult = { ok: true; claims: IdentityClaims } | { ok: false; error: "email_unverified" | "token_exchange_failed"; description: string };

function payloadOf(idToken: string): Record<string, unknown> | null {
  const part = idToken.split(".")[1];
  if (!part) return null;
  try {
    const bytes = fromBase64Url(part);
    if (!bytes) return null;
    const value = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const text = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

/**
 * The id token's claims (CONTRACT 18.2). It came from the token endpoint over TLS, in answer to our
 * own code and secret (OpenID Connect Core 3.1.3.7: its signature need not be checked then); its
 * issuer, audience and lifetime are. Google's address must be verified; Microsoft's is `email`, else
 * `preferred_username`.
 */
export function identityOf(provider: OAuthProvider, config: OAuthProviderConfig, clientId: string, idToken: string | undefined, now: number): ClaimsResult {
  const claims = idToken ? payloadOf(idToken) : null;
  if (!claims) return { ok: false, error: "token_exchange_failed", description: "The provider's answer has no readable id token" };
  const tenantId = text(claims.tid);
  const issuer = config.issuer.replace("{tenantid}", tenantId ?? "");
  const issuers = provider === "google" && issuer === "https://accounts.google.com" ? [issuer, "accounts.google.com"] : [issuer];
  if (!issuers.includes(String(claims.iss))) return { ok: false, error: "token_exchange_failed", description: `The id token's issuer ${String(claims.iss)} is not ${issuer}` };
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audience.includes(clientId)) return { ok: false, error: "token_exchange_failed", description: "The id token was not issued to this app" };
  if (typeof claims.exp === "number" && claims.exp * 1000 < now - 300_000) return { ok: false, error: "token_exchange_failed", description: "The id token has expired" };
  const email = (provider === "google" ? text(claims.email) : (text(claims.email) ?? text(claims.preferred_username)))?.toLowerCase() ?? null;
  if (!email || !email.includes("@")) return { ok: false, error: "token_exchange_failed", description: "The id token names no email address" };
  if (provider === "google" && claims.email_verified !== true && claims.email_verified !== "true") {
    return { ok: false, error: "email_unverified", description: `Google has not verified ${email}` };
  }
  const accountKind = provider === "google" ? (text(claims.hd) ? "workspace" : "consumer") : tenantId === MICROSOFT_PERSONAL_TENANT ? "personal" : "work";
  return { ok: true, claims: { email, name: text(claims.name), accountKind, tenantId } };
}

/** Whether the grant carries the mail scopes (Google lets a user untick mail access). */
export function grantsMail(provider: OAuthProvider, grantedScope: string | undefined): boolean {
  if (grantedScope === undefined) return true;
  const scopes = new Set(grantedScope.split(/\s+/).filter(Boolean));
  if (provider === "google") return scopes.has(GOOGLE_MAIL_SCOPE);
  return scopes.has(MICROSOFT_DEFAULT_SCOPE) || (scopes.has(MICROSOFT_SMTP_SCOPE) && scopes.has(MICROSOFT_IMAP_SCOPE));
}

/** The mail servers a provider's mailbox uses; Outlook.com and Hotmail accounts submit to their own host. */
export function serversFor(provider: OAuthProvider, config: OAuthProviderConfig, accountKind: IdentityClaims["accountKind"]) {
  if (provider === "microsoft" && accountKind === "personal" && config.servers.smtp.host === "smtp.office365.com") {
    return { ...config.servers, smtp: { ...config.servers.smtp, host: "smtp-mail.outlook.com" } };
  }
  return config.servers;
}
