// The lab's OAuth provider as scripts/mail-lab.mjs sets it up: its lasting secrets (made once in
// .mail-lab/oauth/, so grants and tokens survive a restart), its users (the lab's mailboxes), its
// apps, the file scripts/mail-lab-oauth.mjs starts from, what Dovecot needs to ask it about tokens,
// and the `oauth` block of `.mail-lab.json`.
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const GOOGLE_SCOPE = "openid email profile https://mail.google.com/";
const MICROSOFT_SCOPE = "openid email profile offline_access https://outlook.office.com/SMTP.Send https://outlook.office.com/IMAP.AccessAsUser.All";
/** A made-up Entra tenant id for the lab's users (Microsoft's personal-account tenant is 9188040d-6c67-4c5b-b112-36a304b66dad). */
const LAB_TENANT = "5a1b0000-1ab0-4000-8000-00000000a1ab";

const secret = () => randomBytes(24).toString("base64url");

/** Made once and kept: the users' password, the apps' secrets, the signing key, the cookie keys, the admin token. */
function ensureSecrets(dir) {
  const path = join(dir, "secrets.json");
  if (existsSync(path)) return JSON.parse(readFileSync(path, "utf8"));
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const secrets = {
    password: `lab-${randomBytes(9).toString("base64url")}`,
    admin_token: secret(),
    cookie_keys: [secret()],
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" }] },
    clients: { google: secret(), microsoft: secret(), dovecot: secret() },
  };
  writeFileSync(path, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

/** "bench-seed-google-workspace" → "Bench Seed Google Workspace", "sender1" → "Sender 1". */
const nameOf = (local) => local.replace(/(\d+)$/, "-$1").split("-").map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");

/**
 * Writes the provider's start file and answers what the rest of the lab needs: `providerConfig`
 * (that file), `dovecot` (for its oauth2 passdb) and `published` (`.mail-lab.json` `oauth`).
 * Environment: MAIL_LAB_OAUTH_ACCESS_TTL (seconds an access token lives, default 60),
 * MAIL_LAB_OAUTH_ROTATE (microsoft | all | none: whose refresh tokens are replaced on every use,
 * default microsoft, as Microsoft does), MAIL_LAB_OAUTH_ORIGINS (comma-separated https origins whose
 * /oauth/{google,microsoft}/callback are registered too, e.g. a dev server's public URL),
 * MAIL_LAB_OAUTH_TENANT_ID (the `tid` of Microsoft id tokens).
 */
export function prepareOAuth({ labDir, host, port, domain, mailboxes, tls, caForDaemons, logDir, ports }) {
  const dir = join(labDir, "oauth");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secrets = ensureSecrets(dir);
  const issuer = `https://${host}:${port}`;
  const env = process.env;
  const accessTokenTtl = Number(env.MAIL_LAB_OAUTH_ACCESS_TTL ?? 60);
  const rotate = env.MAIL_LAB_OAUTH_ROTATE ?? "microsoft";
  if (!(accessTokenTtl > 0)) throw new Error("MAIL_LAB_OAUTH_ACCESS_TTL must be a positive number of seconds");
  if (!["microsoft", "all", "none"].includes(rotate)) throw new Error("MAIL_LAB_OAUTH_ROTATE must be microsoft, all or none");
  const origins = (env.MAIL_LAB_OAUTH_ORIGINS ?? "").split(",").map((o) => o.trim().replace(/\/$/, "")).filter(Boolean);
  const users = [
    ...mailboxes.map((m) => ({ email: m.email, name: nameOf(m.email.split("@")[0]), email_verified: true })),
    // Not a mailbox: an account whose address its provider has not verified (Salvo refuses it: email_unverified).
    { email: `unverified@${domain}`, name: "Unverified User", email_verified: false },
  ];
  const redirectUris = (kind) =>
    // Loopback http ones match on any port (the apps are registered as native, RFC 8252).
    [`http://127.0.0.1/oauth/${kind}/callback`, `http://localhost/oauth/${kind}/callback`, `https://salvo.test/oauth/${kind}/callback`,
      ...origins.map((origin) => `${origin}/oauth/${kind}/callback`)];
  const clients = [
    { kind: "google", name: "Salvo (lab Google app)", client_id: "salvo-lab-google", client_secret: secrets.clients.google, redirect_uris: redirectUris("google") },
    { kind: "microsoft", name: "Salvo (lab Microsoft app)", client_id: "salvo-lab-microsoft", client_secret: secrets.clients.microsoft, redirect_uris: redirectUris("microsoft") },
  ];
  const introspector = { client_id: "salvo-lab-dovecot", client_secret: secrets.clients.dovecot };
  const tenantId = env.MAIL_LAB_OAUTH_TENANT_ID ?? LAB_TENANT;
  const log = join(logDir, "oauth.log");
  const providerConfig = join(dir, "provider.json");
  writeFileSync(
    providerConfig,
    JSON.stringify({
      host, port, issuer, tls, log, clients, introspector, users,
      state_dir: dir,
      mail_resource: `https://mail.${domain}/`,
      access_token_ttl: accessTokenTtl,
      rotate,
      tenant_id: tenantId,
      password: secrets.password,
      admin_token: secrets.admin_token,
      cookie_keys: secrets.cookie_keys,
      jwks: secrets.jwks,
    }),
    { mode: 0o600 },
  );
  const url = (path) => `${issuer}${path}`;
  const microsoftEndpoint = (step) => url(`/organizations/oauth2/v2.0/${step}`);
  const app = (client, scope, authorize, token) => ({
    client_id: client.client_id,
    client_secret: client.client_secret,
    scope,
    authorize_url: authorize,
    token_url: token,
    redirect_uris: client.redirect_uris,
    token_endpoint_auth_method: "client_secret_post",
    rotates_refresh_tokens: rotate === "all" || (rotate === "microsoft" && client.kind === "microsoft"),
  });
  const servers = (smtp, imap) => JSON.stringify({ smtp, imap });
  return {
    providerConfig,
    log,
    dovecot: {
      introspection_url: url("/token/introspection"),
      client_id: introspector.client_id,
      client_secret: introspector.client_secret,
      ca_file: caForDaemons,
      openid_configuration_url: url("/.well-known/openid-configuration"),
    },
    published: {
      issuer,
      discovery_url: url("/.well-known/openid-configuration"),
      authorize_url: url("/auth"),
      token_url: url("/token"),
      revocation_url: url("/token/revocation"),
      introspection_url: url("/token/introspection"),
      userinfo_url: url("/me"),
      jwks_url: url("/jwks"),
      // Microsoft's shape: <authority>/<tenant>/oauth2/v2.0/authorize and /token, any tenant segment.
      microsoft_authority: issuer,
      tenant_id: tenantId,
      access_token_ttl: accessTokenTtl,
      password: secrets.password,
      admin: { revoke_url: url("/lab/revoke"), token: secrets.admin_token },
      // Every access and refresh token the provider ever issued, one a line (for npm run check:no-keys).
      issued_tokens: join(dir, "issued-tokens.txt"),
      users,
      clients: {
        google: app(clients[0], GOOGLE_SCOPE, url("/auth"), url("/token")),
        microsoft: app(clients[1], MICROSOFT_SCOPE, microsoftEndpoint("authorize"), microsoftEndpoint("token")),
      },
      // CONTRACT 18.1's deployment settings, pointing at the lab (scripts/with-mail-lab.mjs exports them).
      salvo_vars: {
        GOOGLE_OAUTH_CLIENT_ID: clients[0].client_id,
        GOOGLE_OAUTH_CLIENT_SECRET: clients[0].client_secret,
        GOOGLE_OAUTH_AUTHORIZE_URL: url("/auth"),
        GOOGLE_OAUTH_TOKEN_URL: url("/token"),
        GOOGLE_OAUTH_ISSUER: issuer,
        MICROSOFT_OAUTH_CLIENT_ID: clients[1].client_id,
        MICROSOFT_OAUTH_CLIENT_SECRET: clients[1].client_secret,
        MICROSOFT_OAUTH_AUTHORITY: issuer,
        MICROSOFT_OAUTH_ISSUER: issuer,
        GOOGLE_MAIL_SERVERS: servers(`${host}:${ports.submissions}:SSL`, `${host}:${ports.imaps}:SSL`),
        MICROSOFT_MAIL_SERVERS: servers(`${host}:${ports.submission}:STARTTLS`, `${host}:${ports.imaps}:SSL`),
      },
    },
  };
}
