/**
 * The callback's work (CONTRACT 18.3): from a consumed consent session and the provider's answer to
 * a connected mailbox, or the named error. Every refusal writes nothing but the session's outcome.
 */
import type { OAuthProvider } from "../config";
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { loadKeyring, type Keyring } from "../platform/crypto";
import type { Database } from "../platform/db";
import { runConnectionCheck } from "../mailboxes/connection-check";
import type { MailboxRow } from "../mailboxes/rules";
import { findMailboxOfAccount, insertMailbox, mailboxOfAddress, updateMailbox, type MailboxChanges } from "../mailboxes/store";
import { wakeMailboxes } from "../mailboxes/wake";
import { grantsMail, identityOf, MAILBOX_TYPE, serversFor, type ResolvedApp } from "./rules";
import { appById, deploymentApp, openApp, openVerifier, type OAuthSessionRow } from "./store";
import { exchangeCode } from "./token-client";

export type ConsentError =
  | "access_denied"
  | "provider_error"
  | "expired"
  | "token_exchange_failed"
  | "no_refresh_token"
  | "scope_missing"
  | "email_unverified"
  | "address_in_use"
  | "address_mismatch"
  | "oauth_app_missing";

export type ConsentOutcome =
  | { ok: true; mailbox: MailboxRow; email: string; name: string | null; reconnect: boolean }
  | { ok: false; error: ConsentError; description: string; email?: string; name?: string | null };

const refuse = (error: ConsentError, description: string, extra: { email?: string; name?: string | null } = {}): ConsentOutcome => ({ ok: false, error, description, ...extra });

/** The app a session was started with, opened again for the exchange. */
async function sessionApp(db: Database, keyring: Keyring, env: Bindings, session: OAuthSessionRow): Promise<ResolvedApp | null> {
  const providerConfig = config(env).oauth[session.provider];
  if (session.appLevel === "deployment") return deploymentApp(providerConfig, session.tenant);
  const row = session.appId === null ? undefined : await appById(db, session.appId);
  if (!row) return null;
  const app = await openApp(keyring, row, session.appLevel);
  return session.tenant ? { ...app, tenant: session.tenant } : app;
}

/** The redirect URI of a provider's callback on this deployment. */
export function callbackUri(publicUrl: string, provider: OAuthProvider): string {
  return `${publicUrl}/oauth/${provider}/callback`;
}

/**
 * Exchanges the code, checks the grant and the person, and creates or updates the mailbox (a
 * password mailbox of the same address becomes an OAuth one), its refresh token sealed. The
 * connection check then runs with the fresh access token, so the answer already says whether the
 * mailbox can send and read.
 */
export async function completeConsent(env: Bindings, db: Database, session: OAuthSessionRow, code: string, now: number): Promise<ConsentOutcome> {
  const settings = config(env);
  const keyring = await loadKeyring(settings.secretsKey);
  const provider = session.provider;
  const providerConfig = settings.oauth[provider];
  const app = await sessionApp(db, keyring, env, session);
  if (!app) return refuse("oauth_app_missing", "The OAuth app this consent was started with no longer exists");
  const verifier = await openVerifier(keyring, session);
  const exchanged = await exchangeCode(provider, providerConfig, app, code, verifier, callbackUri(settings.publicUrl, provider), now);
  if (!exchanged.ok) return refuse("token_exchange_failed", `${exchanged.error}${exchanged.description ? `: ${exchanged.description}` : ""}`);
  const { tokens } = exchanged;
  if (!tokens.refreshToken) return refuse("no_refresh_token", "The provider sent no refresh token (offline access was not granted)");
  if (!grantsMail(provider, tokens.scope)) return refuse("scope_missing", "Mail access was not granted: reconnect and allow it");
  const identity = identityOf(provider, providerConfig, app.clientId, tokens.idToken, now);
  if (!identity.ok) return refuse(identity.error, identity.description);
  const { email, name, accountKind, tenantId } = identity.claims;
  const named = { email, name };

  let existing: MailboxRow | null = null;
  if (session.mailboxId !== null) {
    existing = (await findMailboxOfAccount(db, session.accountId, session.mailboxId)) ?? null;
    if (!existing) return refuse("address_mismatch", "The mailbox to reconnect no longer exists", named);
    if (existing.fromEmail !== email) return refuse("address_mismatch", `The consent was for ${email}, not ${existing.fromEmail}`, named);
  } else {
    if (session.loginHint && session.loginHint.toLowerCase() !== email) return refuse("address_mismatch", `The consent was for ${email}, not ${session.loginHint}`, named);
    const holder = await mailboxOfAddress(db, session.accountId, email);
    if (holder) {
      // A client's consent may only take over its own mailbox; an account-level one, any of the account's.
      if (session.clientId !== null && holder.clientId !== session.clientId) return refuse("address_in_use", `${email} is already a mailbox of another client`, named);
      existing = (await findMailboxOfAccount(db, session.accountId, holder.id)) ?? null;
    }
  }

  const servers = serversFor(provider, providerConfig, accountKind);
  const oauthColumns = {
    authType: "OAUTH",
    type: MAILBOX_TYPE[provider],
    username: email,
    imapUsername: null,
    smtpHost: servers.smtp.host,
    smtpPort: servers.smtp.port,
    smtpPortType: servers.smtp.portType,
    imapHost: servers.imap.host,
    imapPort: servers.imap.port,
    imapPortType: servers.imap.portType,
    oauthProvider: provider,
    oauthAppId: app.appId,
    oauthAppLevel: app.level,
    oauthAccountKind: accountKind,
    oauthScopes: tokens.scope ?? null,
    oauthTenant: provider === "microsoft" ? (tenantId ?? app.tenant) : null,
    oauthConnectedAt: new Date(now),
    oauthLastRefreshAt: new Date(now),
    disconnectCode: null,
    disconnectMessage: null,
    disconnectedAt: null,
    isSmtpSuccess: null,
    isImapSuccess: null,
    smtpFailureError: null,
    imapFailureError: null,
    checkedAt: null,
    updatedAt: new Date(now),
  } satisfies MailboxChanges;
  const refresh = JSON.stringify({ refresh_token: tokens.refreshToken });
  let mailbox: MailboxRow;
  if (existing) {
    mailbox = await updateMailbox(db, keyring, existing.id, oauthColumns, { password: null, imapPassword: null, oauthToken: refresh });
  } else {
    const given = session.settings as Record<string, unknown>;
    const text = (key: string) => (typeof given[key] === "string" ? (given[key] as string) : null);
    mailbox = await insertMailbox(
      db,
      keyring,
      {
        ...oauthColumns,
        accountId: session.accountId,
        clientId: session.clientId,
        fromEmail: email,
        fromName: text("from_name") ?? name ?? email.split("@")[0]!,
        ...(typeof given.max_email_per_day === "number" ? { maxEmailPerDay: given.max_email_per_day } : {}),
        ...(typeof given.time_to_wait_in_mins === "number" ? { timeToWaitInMins: given.time_to_wait_in_mins } : {}),
        ...(typeof given.warmup_enabled === "boolean" ? { warmupEnabled: given.warmup_enabled } : {}),
        signature: text("signature"),
        bccEmail: text("bcc"),
        differentReplyToAddress: text("different_reply_to_address"),
        customTrackingDomain: text("custom_tracking_url"),
      },
      { oauthToken: refresh },
    );
  }
  if (settings.mailboxConnectionChecks) {
    await runConnectionCheck(env, mailbox, { accessToken: tokens.accessToken });
    await wakeMailboxes(env, [mailbox.id]);
  }
  return { ok: true, mailbox: (await findMailboxOfAccount(db, session.accountId, mailbox.id)) ?? mailbox, email, name, reconnect: session.mailboxId !== null };
}
