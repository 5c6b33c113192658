import { currentShard, tagWithShard } from "../platform/shards";
import { createRoute, z } from "@hono/zod-openapi";
import { config, type Config, type OAuthProvider } from "../config";
import type { OAuthAppLevel } from "../db/schema";
import { answerSaved, canonical, checkedTrackingDomain, saveMailbox } from "../mailboxes/routes";
import { EmailAccount, SaveOAuthMailbox } from "../mailboxes/schemas";
import { findMailbox } from "../mailboxes/store";
import { connectionStateOf } from "../mailboxes/rules";
import { owningClient } from "../platform/access";
import { loadKeyring } from "../platform/crypto";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, optionalJsonBody } from "../platform/openapi";
import { requireAccountKey, type Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { mailPolicy, urlPolicy, urlProblem } from "../platform/outbound";
import { WEBHOOK_URL_RULES } from "../webhooks/delivery-rules";
import { callbackUri } from "./connect";
import { appMissingMessage, authorizationUrl, MAILBOX_TYPE, codeChallenge, effectiveApp, providerNamed, randomToken, stateDigest, type ResolvedApp } from "./rules";
import {
  AppQuery,
  AppRead,
  AppSaved,
  ConsentSession,
  ConsentStarted,
  DeleteAppQuery,
  InitConsent,
  MailboxIdParams,
  OAUTH_TAG,
  ProviderParams,
  ReconnectConsent,
  Refusal,
  SaveOAuthApp,
  SessionParams,
} from "./schemas";
import {
  appAt,
  deleteApp,
  deploymentApp,
  expireSessions,
  findSession,
  insertSession,
  mailboxesUsingApp,
  openApp,
  pendingSessions,
  saveApp,
  type OAuthAppRow,
  type OAuthSessionRow,
} from "./store";
import { Ack } from "../campaigns/schemas";

/** A consent an account may have waiting at once (CONTRACT 18.3: inferred bound). */
const MAX_PENDING_SESSIONS = 20;
/** How long a finished consent can still be read. */
const SESSION_READABLE_MS = 86_400_000;
const SECRET_MASK = "********";

const security = API_KEY_SECURITY;

const routes = {
  saveApp: createRoute({
    method: "put",
    path: "/api/v1/email-accounts/oauth/{provider}/app",
    operationId: "saveOAuthApp",
    summary: "Register the account's (or a client's) own Google or Microsoft OAuth app",
    description:
      "Sets the OAuth app consents at this level use instead of the deployment's (CONTRACT 18.1), so an agency shows its customers its own " +
      "consent screen: `oauth_client_id`, `oauth_client_secret` (required on create; absent or `********` keeps it; stored encrypted, never " +
      "answered), `tenant` (Microsoft), `client_id` (a client of the account; absent: the account level). A changed `oauth_client_id` " +
      "disconnects the mailboxes connected with the old one at their next refresh. Account key only (a client key → 401).",
    "x-salvo-extension": true,
    tags: OAUTH_TAG,
    security,
    request: { params: ProviderParams, body: jsonBody(SaveOAuthApp, { oauth_client_id: "1234-abcd.apps.googleusercontent.com", oauth_client_secret: "GOCSPX-…" }) },
    responses: { 200: json(AppSaved, "The app"), ...errorResponses(400, 401, 422, 429, 503) },
  }),
  readApp: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/oauth/{provider}/app",
    operationId: "getOAuthApp",
    summary: "The OAuth app of one level, and the app a consent there would use",
    description:
      "`data`: the app registered at the account level (or the client's, with `client_id`; a client key reads its own client's), or null; " +
      "`effective`: the app a consent there uses (client, else account, else the deployment's), or null when none is configured.",
    "x-salvo-extension": true,
    tags: OAUTH_TAG,
    security,
    request: { params: ProviderParams, query: AppQuery },
    responses: { 200: json(AppRead, "The app and the effective one"), ...errorResponses(400, 401, 422, 429) },
  }),
  deleteApp: createRoute({
    method: "delete",
    path: "/api/v1/email-accounts/oauth/{provider}/app",
    operationId: "deleteOAuthApp",
    summary: "Remove the OAuth app of one level",
    description:
      "Mailboxes connected with it keep working until their next refresh, when they are disconnected (`oauth_app_invalid`); so while any use " +
      "it the answer is 409 `N mailboxes use this OAuth app` unless `force=true`. Account key only.",
    "x-salvo-extension": true,
    tags: OAUTH_TAG,
    security,
    request: { params: ProviderParams, query: DeleteAppQuery },
    responses: { 200: json(Ack, "Removed"), 409: json(Refusal, "Mailboxes use it"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  init: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/oauth/{provider}/init",
    operationId: "startOAuthConsent",
    summary: "Start connecting a Google or Microsoft mailbox: the consent URL to open",
    description:
      "Answers `auth_url` (an authorization-code request with PKCE S256 and a single-use `state` valid until `expires_at`) and a `session_id` " +
      "to poll. The person opens `auth_url`, consents, and the provider sends the browser to Salvo's callback, which creates (or updates) the " +
      "mailbox with the provider's servers and runs its connection check. `email` (alias `login_hint`): the consented address must equal it " +
      "(`address_mismatch`). `client_id`: the caller's client (a client key's own is forced). `redirect_url`: where the browser goes after " +
      "the callback (https, or `http://127.0.0.1:<port>/…` for a CLI). No app configured → 400 naming the settings. At most 20 pending " +
      "consents per account (429).",
    "x-salvo-extension": true,
    tags: OAUTH_TAG,
    security,
    request: { params: ProviderParams, body: optionalJsonBody(InitConsent, { email: "ann@acme.example", from_name: "Ann Lee" }) },
    responses: { 200: json(ConsentStarted, "The consent to open"), ...errorResponses(400, 401, 422, 429, 503) },
  }),
  session: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/oauth/sessions/{session_id}",
    operationId: "getOAuthSession",
    summary: "A consent's state: pending, success (with the mailbox), error or expired",
    description:
      "What a CLI or MCP client polls after opening `auth_url`. `error`: access_denied, provider_error, expired, token_exchange_failed, " +
      "no_refresh_token, scope_missing, email_unverified, address_in_use, address_mismatch, oauth_app_missing. A consent whose connection " +
      "check failed is still `success`: the mailbox exists with its reason. Readable 24 h after it ends; unknown or foreign → 404.",
    "x-salvo-extension": true,
    tags: OAUTH_TAG,
    security,
    request: { params: SessionParams },
    responses: { 200: json(ConsentSession, "The consent"), ...errorResponses(401, 404, 422, 429) },
  }),
  reconnect: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/oauth/reconnect",
    operationId: "reconnectOAuthMailbox",
    summary: "Consent again for a disconnected OAuth mailbox",
    description:
      "Answers as init, plus `email_account_id`. The consent must be for the mailbox's own address (else `address_mismatch`, the mailbox " +
      "untouched); success replaces its refresh token, ends the disconnect and re-runs the check. A password mailbox → 400.",
    "x-salvo-extension": true,
    tags: OAUTH_TAG,
    security,
    request: { params: MailboxIdParams, body: optionalJsonBody(ReconnectConsent) },
    responses: { 200: json(ConsentStarted, "The consent to open"), ...errorResponses(400, 401, 404, 422, 429, 503) },
  }),
};

const saveOAuthMailbox = createRoute({
  method: "post",
  path: "/api/v1/email-accounts/save-oauth",
  operationId: "saveOauthEmailAccount",
  summary: "Create or update a Gmail/Outlook mailbox from OAuth material the caller already holds",
  description:
    "For callers that ran the consent themselves (CONTRACT 18.4): the token must carry a `refresh_token` (stored encrypted, never answered). " +
    "The refresh uses the app resolved as a consent would (the client's, else the account's, else the deployment's; " +
    "`use_whitelabel_credentials: false` uses the deployment's), so it must be the app the token was granted to; none configured → 400. " +
    "A still-valid `access_token` runs the connection check at once. A password mailbox of that address becomes an OAuth one.",
  tags: OAUTH_TAG,
  security,
  request: {
    body: jsonBody(SaveOAuthMailbox, {
      from_name: "Ann from Acme",
      from_email: "ann@acme.example",
      username: "ann@acme.example",
      type: "GMAIL",
      token: { refresh_token: "1//0g-refresh-token", expiry_date: 1769331600000, scope: "https://mail.google.com/", token_type: "Bearer" },
    }),
  },
  responses: {
    200: json(Ack.extend({ id: z.number().int(), data: EmailAccount }), "The saved mailbox"),
    ...errorResponses(400, 401, 404, 422, 429, 503),
  },
});

export const oauthRoutes = createRouter();

function providerOf(name: string): OAuthProvider {
  const provider = providerNamed(name);
  if (!provider) throw ApiError.validation([{ path: "provider", message: "Must be google or microsoft" }]);
  return provider;
}

function presentApp(provider: OAuthProvider, publicUrl: string, level: OAuthAppLevel, row: OAuthAppRow | null, app: ResolvedApp, mailboxCount: number) {
  return {
    provider,
    level,
    client_id: row?.clientId ?? null,
    oauth_client_id: app.clientId,
    oauth_client_secret: SECRET_MASK,
    tenant: provider === "microsoft" ? app.tenant : null,
    redirect_uri: callbackUri(publicUrl, provider),
    mailbox_count: mailboxCount,
    updated_at: row ? iso(row.updatedAt) : null,
  } as const;
}

/** The client level a call names: a client key's own, an account key's named client, or the account (null). */
async function levelClient(db: Database, principal: Principal, requested: number | null | undefined): Promise<number | null> {
  return owningClient(db, principal, requested);
}

/** The app a consent at this level uses, with the rows it came from. */
async function resolveApp(db: Database, env: { secretsKey: string | undefined }, providerConfig: ReturnType<typeof config>["oauth"][OAuthProvider], accountId: number, clientId: number | null, provider: OAuthProvider) {
  const [clientRow, accountRow] = await Promise.all([clientId === null ? undefined : appAt(db, accountId, clientId, provider), appAt(db, accountId, null, provider)]);
  const keyring = clientRow || accountRow ? await loadKeyring(env.secretsKey) : null;
  const client = clientRow ? await openApp(keyring!, clientRow, "client") : null;
  const account = accountRow ? await openApp(keyring!, accountRow, "account") : null;
  const app = effectiveApp({ client, account, deployment: deploymentApp(providerConfig) });
  const row = app?.level === "client" ? clientRow! : app?.level === "account" ? accountRow! : null;
  return { app, row };
}

oauthRoutes.openapi(routes.saveApp, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, "This API key cannot manage OAuth apps");
  const provider = providerOf(c.req.valid("param").provider);
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const settings = config(c.env);
  const clientId = await levelClient(db, principal, body.client_id);
  const existing = await appAt(db, principal.accountId, clientId, provider);
  const secret = body.oauth_client_secret === undefined || body.oauth_client_secret === SECRET_MASK ? undefined : body.oauth_client_secret;
  if (!existing && secret === undefined) throw ApiError.validation([{ path: "oauth_client_secret", message: "oauth_client_secret is required to create an OAuth app" }]);
  const keyring = await loadKeyring(settings.secretsKey);
  const row = await saveApp(
    db,
    keyring,
    { accountId: principal.accountId, clientId, provider },
    { oauthClientId: body.oauth_client_id, clientSecret: secret, tenant: provider === "microsoft" ? (body.tenant ?? existing?.tenant ?? "common") : null },
    existing,
  );
  const level = clientId === null ? "account" : "client";
  const app = await openApp(keyring, row, level);
  return c.json({ ok: true as const, data: presentApp(provider, settings.publicUrl, level, row, app, await mailboxesUsingApp(db, row.id)) }, 200);
});

oauthRoutes.openapi(routes.readApp, async (c) => {
  const principal = c.get("principal");
  const provider = providerOf(c.req.valid("param").provider);
  const db = database(c.env.DB);
  const settings = config(c.env);
  const clientId = await levelClient(db, principal, c.req.valid("query").client_id);
  const row = await appAt(db, principal.accountId, clientId, provider);
  const level = clientId === null ? "account" : "client";
  const keyring = row ? await loadKeyring(settings.secretsKey) : null;
  const data = row ? presentApp(provider, settings.publicUrl, level, row, await openApp(keyring!, row, level), await mailboxesUsingApp(db, row.id)) : null;
  const effective = await resolveApp(db, settings, settings.oauth[provider], principal.accountId, clientId, provider);
  const effectiveAnswer = effective.app
    ? presentApp(provider, settings.publicUrl, effective.app.level, effective.row, effective.app, effective.row ? await mailboxesUsingApp(db, effective.row.id) : 0)
    : null;
  return c.json({ ok: true as const, data, effective: effectiveAnswer }, 200);
});

oauthRoutes.openapi(routes.deleteApp, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, "This API key cannot manage OAuth apps");
  const provider = providerOf(c.req.valid("param").provider);
  const { client_id, force } = c.req.valid("query");
  const db = database(c.env.DB);
  const clientId = await levelClient(db, principal, client_id);
  const row = await appAt(db, principal.accountId, clientId, provider);
  if (!row) throw ApiError.notFound("OAuth app not found");
  const using = await mailboxesUsingApp(db, row.id);
  if (using > 0 && !force) throw ApiError.refused(409, `${using} mailboxes use this OAuth app`);
  await deleteApp(db, row.id);
  return c.json({ ok: true, success: true, message: "OAuth app deleted" }, 200);
});

/** Where the browser may be sent after the callback: an https URL passing the webhook rules, or a CLI's loopback listener. */
function checkedRedirect(value: string | undefined, settings: Config): string | null {
  if (value === undefined) return null;
  if (URL.canParse(value)) {
    const url = new URL(value);
    const loopback = url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost") && url.port !== "" && !url.username && !url.password;
    if (loopback) return url.toString();
  }
  // Salvo never fetches it, so its spelling is judged (no lookup).
  const problem = urlProblem(value, urlPolicy(settings), WEBHOOK_URL_RULES);
  if (problem) throw ApiError.validation([{ path: "redirect_url", message: `redirect_url ${problem}` }]);
  return value;
}

/** The mailbox settings a consent keeps for the mailbox it creates (checked now, applied at the callback). */
async function mailboxSettings(body: Record<string, unknown>, settings: Config): Promise<Record<string, unknown>> {
  const keys = ["from_name", "max_email_per_day", "time_to_wait_in_mins", "signature", "bcc", "different_reply_to_address", "warmup_enabled"];
  const kept: Record<string, unknown> = Object.fromEntries(keys.filter((key) => body[key] !== undefined).map((key) => [key, body[key]]));
  if (typeof body.custom_tracking_url === "string") {
    const checked = await checkedTrackingDomain(body.custom_tracking_url, mailPolicy(settings));
    if ("problem" in checked) throw ApiError.validation([{ path: "custom_tracking_url", message: `custom_tracking_url ${checked.problem}` }]);
    if (checked.host) kept.custom_tracking_url = checked.host;
  }
  return kept;
}

/** Creates a consent session and answers where to send the person. */
async function startConsent(
  c: { env: Parameters<typeof config>[0] & { DB: D1Database } },
  principal: Principal,
  provider: OAuthProvider,
  request: { clientId: number | null; tenant?: string; loginHint: string | null; redirectUrl: string | null; mailboxId: number | null; settings: Record<string, unknown> },
) {
  const db = database(c.env.DB);
  const settings = config(c.env);
  const now = Date.now();
  const { app } = await resolveApp(db, settings, settings.oauth[provider], principal.accountId, request.clientId, provider);
  if (!app) throw ApiError.refused(400, appMissingMessage(provider));
  if ((await pendingSessions(db, principal.accountId, now)) >= MAX_PENDING_SESSIONS) throw ApiError.rateLimited(Math.ceil(settings.oauth.sessionTtlMs / 1000));
  const used = provider === "microsoft" && request.tenant ? { ...app, tenant: request.tenant } : app;
  // Tagged with the shard, where the callback (which carries no key) finds the consent.
  const state = tagWithShard(currentShard(c.env), randomToken(32));
  const verifier = randomToken(48);
  const id = `oas_${randomToken(18)}`;
  const expiresAt = now + settings.oauth.sessionTtlMs;
  const redirectUri = callbackUri(settings.publicUrl, provider);
  await insertSession(
    db,
    await loadKeyring(settings.secretsKey),
    {
      id,
      accountId: principal.accountId,
      clientId: request.clientId,
      provider,
      appId: used.appId,
      appLevel: used.level,
      stateDigest: await stateDigest(state),
      tenant: provider === "microsoft" ? used.tenant : null,
      loginHint: request.loginHint,
      redirectUrl: request.redirectUrl,
      mailboxId: request.mailboxId,
      settings: request.settings,
      expiresAt: new Date(expiresAt),
    },
    verifier,
  );
  const authUrl = authorizationUrl({
    provider,
    config: settings.oauth[provider],
    app: used,
    redirectUri,
    state,
    codeChallenge: await codeChallenge(verifier),
    loginHint: request.loginHint,
  });
  return { ok: true as const, session_id: id, auth_url: authUrl, expires_at: iso(expiresAt), provider, redirect_uri: redirectUri };
}

oauthRoutes.openapi(routes.init, async (c) => {
  const principal = c.get("principal");
  const provider = providerOf(c.req.valid("param").provider);
  const body = (c.req.valid("json") ?? {}) as Record<string, unknown> & { email?: string; login_hint?: string; client_id?: number | null; tenant?: string; redirect_url?: string };
  const db = database(c.env.DB);
  const clientId = await levelClient(db, principal, body.client_id);
  const hint = body.email ?? body.login_hint;
  return c.json(
    await startConsent(c, principal, provider, {
      clientId,
      tenant: body.tenant,
      loginHint: hint ? hint.toLowerCase() : null,
      redirectUrl: checkedRedirect(body.redirect_url, config(c.env)),
      mailboxId: null,
      settings: await mailboxSettings(body, config(c.env)),
    }),
    200,
  );
});

oauthRoutes.openapi(routes.reconnect, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json") ?? {};
  const db = database(c.env.DB);
  const mailbox = await findMailbox(db, principal, c.req.valid("param").id);
  if (mailbox.authType !== "OAUTH" || mailbox.oauthProvider === null) {
    throw ApiError.refused(400, "This mailbox signs in with a password; update its credentials instead");
  }
  const started = await startConsent(c, principal, mailbox.oauthProvider, {
    clientId: mailbox.clientId,
    tenant: body.tenant,
    loginHint: mailbox.fromEmail,
    redirectUrl: checkedRedirect(body.redirect_url, config(c.env)),
    mailboxId: mailbox.id,
    settings: {},
  });
  return c.json({ ...started, email_account_id: mailbox.id }, 200);
});

function presentSession(session: OAuthSessionRow, connectionState: string | null) {
  return {
    ok: true as const,
    session_id: session.id,
    provider: session.provider,
    status: session.status,
    email: session.email,
    name: session.name,
    email_account_id: session.emailAccountId,
    reconnect: session.mailboxId !== null,
    connection_state: connectionState,
    error: session.error,
    error_description: session.errorDescription,
    expires_at: iso(session.expiresAt),
    created_at: iso(session.createdAt),
    completed_at: session.completedAt ? iso(session.completedAt) : null,
  };
}

oauthRoutes.openapi(routes.session, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const now = Date.now();
  await expireSessions(db, principal.accountId, now);
  const session = await findSession(db, principal, c.req.valid("param").session_id);
  if (!session || (session.completedAt && session.completedAt.getTime() < now - SESSION_READABLE_MS)) throw ApiError.notFound("OAuth session not found");
  let connectionState: string | null = null;
  if (session.emailAccountId !== null) {
    const mailbox = await findMailbox(db, principal, session.emailAccountId).catch(() => null);
    connectionState = mailbox ? connectionStateOf(mailbox) : null;
  }
  return c.json(presentSession(session, connectionState), 200);
});

oauthRoutes.openapi(saveOAuthMailbox, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const settings = config(c.env);
  const { id, token, username, type, use_whitelabel_credentials, ...fields } = c.req.valid("json");
  const provider: OAuthProvider = type === "OUTLOOK" ? "microsoft" : "google";
  if (!token.refresh_token) throw ApiError.validation([{ path: "token.refresh_token", message: "A refresh token is required: Salvo refreshes the access token itself" }]);
  const clientId = await levelClient(db, principal, fields.client_id);
  const { app } =
    use_whitelabel_credentials === false
      ? { app: deploymentApp(settings.oauth[provider]) }
      : await resolveApp(db, settings, settings.oauth[provider], principal.accountId, clientId, provider);
  if (!app) throw ApiError.refused(400, appMissingMessage(provider));
  const servers = settings.oauth[provider].servers;
  const body = canonical({
    ...fields,
    type: MAILBOX_TYPE[provider],
    user_name: username,
    smtp_host: servers.smtp.host,
    smtp_port: servers.smtp.port,
    smtp_port_type: servers.smtp.portType,
    imap_host: servers.imap.host,
    imap_port: servers.imap.port,
    imap_port_type: servers.imap.portType,
  });
  const now = Date.now();
  const fresh = token.access_token && token.expiry_date > now + 60_000 ? token.access_token : undefined;
  const oauth = {
    material: JSON.stringify({ refresh_token: token.refresh_token }),
    accessToken: fresh,
    columns: {
      authType: "OAUTH",
      oauthProvider: provider,
      oauthAppId: app.appId,
      oauthAppLevel: app.level,
      oauthScopes: token.scope,
      oauthTenant: provider === "microsoft" ? app.tenant : null,
      oauthConnectedAt: new Date(now),
      disconnectCode: null,
      disconnectMessage: null,
      disconnectedAt: null,
    },
  } as const;
  const { row, updated } = await saveMailbox(c, db, principal, id, body, oauth);
  return c.json(await answerSaved(db, principal, row, updated, config(c.env).warmup), 200);
});
