// The mail lab's OAuth 2.0 / OpenID Connect authorization server (issue 24, item 5), started by
// scripts/mail-lab.mjs as one of its daemons: node-oidc-provider (an OpenID Certified provider) over
// HTTPS on loopback with the lab's certificate, configured to behave as Google and Microsoft do for
// a mail client. Authorization code with PKCE (S256, required), refresh tokens (Google's
// `access_type=offline` or the `offline_access` scope), mail scopes as an opaque access token for the
// lab's mail servers, id tokens carrying email, email_verified and name (tid for the Microsoft app),
// token revocation (RFC 7009), introspection (RFC 7662) for Dovecot, and a login and consent page a
// person or Chromium can use. Its state (grants, tokens, sessions) is kept in `.mail-lab/oauth/` so a
// restarted lab keeps every grant. Argument: the JSON file mail-lab.mjs writes (secrets included).
import { createHash, timingSafeEqual } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import { join } from "node:path";
import Provider, { errors, interactionPolicy } from "oidc-provider";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const GOOGLE_MAIL = "https://mail.google.com/";
const OUTLOOK_SMTP = "https://outlook.office.com/SMTP.Send";
const OUTLOOK_IMAP = "https://outlook.office.com/IMAP.AccessAsUser.All";
/** The mail scopes each app may be granted (Google's one; Microsoft's two). */
const MAIL_SCOPES = { google: [GOOGLE_MAIL], microsoft: [OUTLOOK_SMTP, OUTLOOK_IMAP] };
const ALL_MAIL_SCOPES = [GOOGLE_MAIL, OUTLOOK_SMTP, OUTLOOK_IMAP];
/** What a token must carry for each service Dovecot names when it asks (X-Dovecot-Auth-Service). */
const SERVICE_SCOPES = { imap: [GOOGLE_MAIL, OUTLOOK_IMAP], smtp: [GOOGLE_MAIL, OUTLOOK_SMTP] };
/** The audience of every mail access token: Google and Microsoft take no resource parameter, so one is implied. */
const MAIL_RESOURCE = config.mail_resource;
const DAY = 24 * 60 * 60;

function log(line) {
  appendFileSync(config.log, `${new Date().toISOString()} ${line}\n`);
}

/** Google-style numeric subject identifiers: stable per address, telling nothing about it. */
const subjectOf = (email) => BigInt(`0x${createHash("sha256").update(email).digest("hex").slice(0, 16)}`).toString().padStart(21, "1");
const users = new Map(config.users.map((user) => [subjectOf(user.email), { ...user, sub: subjectOf(user.email) }]));
const userByEmail = (email) => [...users.values()].find((user) => user.email === String(email ?? "").trim().toLowerCase());
const kindOf = (clientId) => config.clients.find((c) => c.client_id === clientId)?.kind;

function sameSecret(given, expected) {
  const a = Buffer.from(String(given));
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * oidc-provider's storage: every model in one map, written to disk shortly after each change (and on
 * exit), expired entries dropped. The package's own memory adapter forgets everything on restart and
 * evicts past 1,000 entries.
 */
const storeFile = join(config.state_dir, "store.json");
const issuedFile = join(config.state_dir, "issued-tokens.txt");
const store = new Map(existsSync(storeFile) ? JSON.parse(readFileSync(storeFile, "utf8")) : []);
let saveTimer = null;
function save() {
  saveTimer = null;
  const now = Date.now();
  for (const [key, entry] of store) if (entry.expiresAt !== null && entry.expiresAt <= now) store.delete(key);
  writeFileSync(`${storeFile}.tmp`, JSON.stringify([...store]), { mode: 0o600 });
  renameSync(`${storeFile}.tmp`, storeFile);
}
const changed = () => (saveTimer ??= setTimeout(save, 100));

class LabAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    store.set(this.key(id), { payload, expiresAt: typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : null });
    // An opaque token's id is its value: kept (expired and revoked ones too) so a leak check can look for each.
    if (this.model === "AccessToken" || this.model === "RefreshToken") appendFileSync(issuedFile, `${id}\n`, { mode: 0o600 });
    changed();
  }

  async find(id) {
    const entry = store.get(this.key(id));
    if (!entry || (entry.expiresAt !== null && entry.expiresAt <= Date.now())) return undefined;
    return entry.payload;
  }

  async findByUid(uid) {
    for (const [key, entry] of store) if (key.startsWith(`${this.model}:`) && entry.payload.uid === uid) return this.find(key.slice(this.model.length + 1));
    return undefined;
  }

  async findByUserCode() {
    return undefined;
  }

  async consume(id) {
    const entry = store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
    changed();
  }

  async destroy(id) {
    store.delete(this.key(id));
    changed();
  }

  async revokeByGrantId(grantId) {
    for (const [key, entry] of store) if (key.startsWith(`${this.model}:`) && entry.payload.grantId === grantId) store.delete(key);
    changed();
  }
}

const policy = interactionPolicy.base();
// Google and Microsoft accept prompt=select_account: here it asks who signs in, like a login.
policy.add(new interactionPolicy.Prompt({ name: "select_account", requestable: true }), 0);

const provider = new Provider(config.issuer, {
  adapter: LabAdapter,
  clients: [
    ...config.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      client_name: c.name,
      // "native": a loopback http redirect URI matches on any port (RFC 8252), so a dev server or a
      // test on a free port needs no registration of its own; https ones match exactly.
      application_type: "native",
      redirect_uris: c.redirect_uris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // The secret in the request body: both Google and Microsoft accept it so.
      token_endpoint_auth_method: "client_secret_post",
    })),
    // Dovecot, asking whether a token is good (introspection only).
    { client_id: config.introspector.client_id, client_secret: config.introspector.client_secret, redirect_uris: [], response_types: [], grant_types: [],
      token_endpoint_auth_method: "client_secret_post" },
  ],
  claims: {
    openid: ["sub", "tid"],
    email: ["email", "email_verified"],
    profile: ["name", "given_name", "family_name", "preferred_username"],
  },
  // Google and Microsoft put the scope's claims (email, name) in the id token itself.
  conformIdTokenClaims: false,
  cookies: { keys: config.cookie_keys },
  jwks: config.jwks,
  extraParams: {
    // A refresh token is asked for with Google's access_type=offline or Microsoft's offline_access
    // scope, with or without prompt=consent (OpenID Connect's own rule, which the provider applies
    // before this runs, drops offline_access without that prompt). Runs for every request.
    access_type(ctx, value) {
      const scopes = ctx.oidc.params.scope?.split(" ") ?? [];
      const asked = String((ctx.method === "POST" ? ctx.oidc.body?.scope : ctx.query.scope) ?? "").split(" ").includes("offline_access");
      if ((value === "offline" || asked) && !scopes.includes("offline_access")) ctx.oidc.params.scope = [...scopes, "offline_access"].join(" ");
    },
    include_granted_scopes: null,
  },
  async extraTokenClaims(_ctx, token) {
    // Dovecot reads the mailbox's address from the introspection answer (username_attribute = email).
    return token.kind === "AccessToken" ? { email: users.get(token.accountId)?.email } : undefined;
  },
  features: {
    devInteractions: { enabled: false },
    revocation: { enabled: true },
    introspection: {
      enabled: true,
      async allowedPolicy(ctx, client, token) {
        if (client.clientId !== config.introspector.client_id) return token.clientId === client.clientId;
        // For Dovecot, only a mail access token is active, and only for a service its scopes cover.
        const audience = [token.aud].flat();
        const granted = new Set(token.scope?.split(" "));
        const needed = SERVICE_SCOPES[ctx.get("x-dovecot-auth-service")] ?? ALL_MAIL_SCOPES;
        const allowed = token.kind === "AccessToken" && audience.includes(MAIL_RESOURCE) && needed.some((scope) => granted.has(scope));
        log(`introspection service=${ctx.get("x-dovecot-auth-service") || "-"} account=${users.get(token.accountId)?.email ?? "-"} client=${token.clientId} active=${allowed}`);
        return allowed;
      },
    },
    resourceIndicators: {
      enabled: true,
      async defaultResource(ctx, _client, oneOf) {
        if (oneOf) return oneOf;
        const scopes = ctx.oidc.params?.scope?.split(" ") ?? [];
        return scopes.some((scope) => ALL_MAIL_SCOPES.includes(scope)) ? MAIL_RESOURCE : undefined;
      },
      async getResourceServerInfo(_ctx, resource, client) {
        if (resource !== MAIL_RESOURCE || !kindOf(client.clientId)) throw new errors.InvalidTarget();
        return { scope: MAIL_SCOPES[kindOf(client.clientId)].join(" "), audience: MAIL_RESOURCE, accessTokenTTL: config.access_token_ttl, accessTokenFormat: "opaque" };
      },
      // The token endpoint is called without a resource, as Google's and Microsoft's are: the mail token it is.
      async useGrantedResource() {
        return true;
      },
    },
  },
  async findAccount(ctx, sub) {
    const user = users.get(sub);
    if (!user) return undefined;
    return {
      accountId: sub,
      async claims() {
        const [given, ...family] = user.name.split(" ");
        return {
          sub,
          email: user.email,
          email_verified: user.email_verified,
          name: user.name,
          given_name: given,
          family_name: family.join(" "),
          preferred_username: user.email,
          ...(kindOf(ctx.oidc.client?.clientId) === "microsoft" ? { tid: config.tenant_id } : {}),
        };
      },
    };
  },
  interactions: { policy, url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true },
  rotateRefreshToken(ctx) {
    const kind = kindOf(ctx.oidc.client.clientId);
    return config.rotate === "all" || (config.rotate === "microsoft" && kind === "microsoft");
  },
  ttl: {
    AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? config.access_token_ttl,
    AuthorizationCode: 60,
    IdToken: 3600,
    Interaction: 3600,
    Session: DAY,
    RefreshToken: 30 * DAY,
    Grant: 30 * DAY,
  },
  async renderError(ctx, out) {
    ctx.type = "html";
    ctx.body = page("Sign-in error", `<p>${escape(out.error)}: ${escape(out.error_description ?? "")}</p>`);
  },
});

for (const event of ["authorization.error", "grant.error", "introspection.error", "revocation.error", "server_error"]) {
  provider.on(event, (ctx, error) => log(`${event} client=${ctx?.oidc?.client?.clientId ?? "-"} ${error.message}${error.error_description ? `: ${error.error_description}` : ""}`));
}
provider.on("grant.success", (ctx) => log(`grant.success ${ctx.oidc.params.grant_type} client=${ctx.oidc.client.clientId} account=${users.get(ctx.oidc.entities.Account?.accountId)?.email ?? "-"}`));
provider.on("grant.revoked", (_ctx, grantId) => log(`grant.revoked ${grantId}`));

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · Salvo mail lab</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.8rem 0}
input[type=email],input[type=password]{width:100%;padding:.4rem}button{padding:.5rem 1rem;margin-right:.5rem}.error{color:#b00020}</style>
</head><body><h1>${escape(title)}</h1>${body}</body></html>`;
}

function loginPage(uid, client, hint, error) {
  return page(
    "Sign in",
    `<p>to continue to <strong>${escape(client.clientName ?? client.clientId)}</strong> (Salvo mail lab)</p>
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ""}
<form method="post" action="/interaction/${escape(uid)}/login">
<label>Email <input type="email" name="email" autocomplete="username" required value="${escape(hint ?? "")}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit" name="action" value="login">Sign in</button>
</form>`,
  );
}

/** The consent page: OpenID scopes listed, each mail scope a checkbox (Google lets users untick it). */
function consentPage(uid, client, email, details) {
  const basic = details.missingOIDCScope ?? [];
  const mail = Object.values(details.missingResourceScopes ?? {}).flat();
  return page(
    "Allow access",
    `<p><strong>${escape(client.clientName ?? client.clientId)}</strong> wants to access your account <strong>${escape(email)}</strong>.</p>
<form method="post" action="/interaction/${escape(uid)}/consent">
${basic.length ? `<p>Basic: ${basic.map(escape).join(", ")}</p>` : ""}
${mail.map((scope) => `<label><input type="checkbox" name="scope" value="${escape(scope)}" checked> Mail: ${escape(scope)}</label>`).join("\n")}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form>`,
  );
}

async function readForm(req) {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 16_384) throw new Error("form too large");
  }
  return new URLSearchParams(body);
}

function send(res, status, type, body) {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(body);
}

/** The login, account choice and consent steps of an authorization request. */
async function interaction(req, res, uid, step) {
  const details = await provider.interactionDetails(req, res);
  const client = await provider.Client.find(details.params.client_id);
  if (req.method === "GET" && !step) {
    if (details.prompt.name === "consent") {
      return send(res, 200, "text/html; charset=utf-8", consentPage(uid, client, users.get(details.session.accountId)?.email, details.prompt.details));
    }
    return send(res, 200, "text/html; charset=utf-8", loginPage(uid, client, details.params.login_hint));
  }
  if (req.method !== "POST") return send(res, 405, "text/plain", "method not allowed");
  const form = await readForm(req);
  if (step === "login") {
    const user = userByEmail(form.get("email"));
    if (!user || !sameSecret(form.get("password") ?? "", config.password)) {
      log(`login failed email=${String(form.get("email") ?? "").slice(0, 100)}`);
      return send(res, 401, "text/html; charset=utf-8", loginPage(uid, client, form.get("email"), "Wrong email or password."));
    }
    log(`login ${user.email} client=${client.clientId}`);
    const result = { login: { accountId: user.sub }, ...(details.prompt.name === "select_account" ? { select_account: {} } : {}) };
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }
  if (step === "consent") {
    if (form.get("decision") !== "allow") {
      log(`consent denied client=${client.clientId}`);
      return provider.interactionFinished(req, res, { error: "access_denied", error_description: "The user did not allow access." }, { mergeWithLastSubmission: true });
    }
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = details.prompt.details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: client.clientId });
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(" "));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    const ticked = new Set(form.getAll("scope"));
    for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.filter((s) => ticked.has(s)).join(" "));
      grant.rejectResourceScope(resource, scopes.filter((s) => !ticked.has(s)).join(" "));
    }
    const grantId = await grant.save();
    log(`consent ${users.get(details.session.accountId)?.email} client=${client.clientId} mail=${[...ticked].join(",") || "none"}`);
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  return send(res, 404, "text/plain", "not found");
}

/**
 * The lab's own admin call, for tests: `POST /lab/revoke` with `Authorization: Bearer <admin token>`
 * and a JSON body `{"email": "...", "client_id"?: "..."}` destroys that user's grants (to that app),
 * so every token of them is dead and the next refresh answers invalid_grant, as after a user removes
 * the app from their Google or Microsoft account. Answers `{"revoked": <grants>}`.
 */
async function revokeUser(req, res) {
  const auth = req.headers.authorization ?? "";
  if (req.method !== "POST" || !sameSecret(auth, `Bearer ${config.admin_token}`)) return send(res, 401, "application/json", '{"error":"unauthorized"}');
  let body = "";
  for await (const chunk of req) body += chunk;
  const { email, client_id: clientId } = JSON.parse(body || "{}");
  const user = userByEmail(email);
  if (!user) return send(res, 404, "application/json", '{"error":"no such lab user"}');
  const grantIds = [...store]
    .filter(([key, entry]) => key.startsWith("Grant:") && entry.payload.accountId === user.sub && (!clientId || entry.payload.clientId === clientId))
    .map(([key]) => key.slice("Grant:".length));
  for (const grantId of grantIds) {
    for (const model of ["AccessToken", "AuthorizationCode", "RefreshToken"]) await new LabAdapter(model).revokeByGrantId(grantId);
    await new LabAdapter("Grant").destroy(grantId);
  }
  log(`admin revoke ${user.email} client=${clientId ?? "*"} grants=${grantIds.length}`);
  send(res, 200, "application/json", JSON.stringify({ revoked: grantIds.length }));
}

// Microsoft's endpoints are /{tenant}/oauth2/v2.0/authorize and /token under its authority
// (MICROSOFT_OAUTH_AUTHORITY): the same provider answers them, for any tenant segment.
const MICROSOFT_PATH = /^\/[^/]+\/(oauth2\/v2\.0\/(authorize|token)|v2\.0\/\.well-known\/openid-configuration)(\?.*)?$/;
const MICROSOFT_TARGET = { authorize: "/auth", token: "/token" };
const callback = provider.callback();

const server = createServer({ cert: readFileSync(config.tls.cert), key: readFileSync(config.tls.key) }, (req, res) => {
  const url = new URL(req.url, config.issuer);
  const microsoft = MICROSOFT_PATH.exec(url.pathname + url.search);
  if (microsoft) req.url = `${microsoft[2] ? MICROSOFT_TARGET[microsoft[2]] : "/.well-known/openid-configuration"}${url.search}`;
  const step = /^\/interaction\/([\w-]+)(?:\/(login|consent))?$/.exec(url.pathname);
  const handled = step ? interaction(req, res, step[1], step[2]) : url.pathname === "/lab/revoke" ? revokeUser(req, res) : null;
  if (!handled) return callback(req, res);
  handled.catch((error) => {
    log(`error ${url.pathname} ${error.message}`);
    if (!res.headersSent) send(res, 400, "text/html; charset=utf-8", page("Sign-in error", `<p>${escape(error.message)}</p>`));
  });
});

function shutdown() {
  server.close();
  if (saveTimer) clearTimeout(saveTimer);
  save();
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
server.listen(config.port, config.host, () => log(`listening on ${config.issuer}`));
