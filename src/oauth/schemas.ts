import { z } from "@hono/zod-openapi";
import { OAUTH_SESSION_STATUSES } from "../db/schema";
import { FromName, OptionalEmail } from "../mailboxes/schemas";
import { pathId, queryBoolean, queryId } from "../platform/openapi";

export const OAUTH_TAG = ["Email accounts"];

export const ProviderParams = z.object({
  provider: z.string().openapi({ param: { name: "provider", in: "path" }, description: "google or microsoft (gmail and outlook are read as those)", example: "google" }),
});

const Level = z.enum(["client", "account", "deployment"]);

const OAuthApp = z
  .object({
    provider: z.enum(["google", "microsoft"]),
    level: Level,
    client_id: z.number().int().nullable().openapi({ description: "The Salvo client it belongs to; null at account and deployment level" }),
    oauth_client_id: z.string(),
    oauth_client_secret: z.literal("********").openapi({ description: "Write-only: never answered" }),
    tenant: z.string().nullable(),
    redirect_uri: z.string(),
    mailbox_count: z.number().int(),
    updated_at: z.string().nullable(),
  })
  .openapi("OAuthApp");

export const AppSaved = z.object({ ok: z.literal(true), data: OAuthApp }).openapi("OAuthAppSaved");
export const AppRead = z.object({ ok: z.literal(true), data: OAuthApp.nullable(), effective: OAuthApp.nullable() }).openapi("OAuthAppRead");
/** Part three's refusal body. */
export const Refusal = z.object({ error: z.string(), ok: z.literal(false), message: z.string() }).openapi("Refusal");

export const SaveOAuthApp = z
  .object({
    oauth_client_id: z.string().trim().min(1).max(255),
    oauth_client_secret: z.string().min(1).max(1024).optional().openapi({ description: 'Required on create; absent or "********" keeps the stored one' }),
    tenant: z.string().trim().min(1).max(255).optional().openapi({ description: "Microsoft: common, organizations, consumers, a tenant id or domain" }),
    client_id: z.number().int().positive().nullable().optional().openapi({ description: "The caller's client; absent or null: the account's app" }),
  })
  .openapi("SaveOAuthApp");

export const AppQuery = z.object({ client_id: queryId().optional() });
export const DeleteAppQuery = z.object({ client_id: queryId().optional(), force: queryBoolean.optional() });

/** §10's save fields a consent applies to the mailbox it creates. */
const MailboxSettings = {
  from_name: FromName.optional(),
  max_email_per_day: z.number().int().min(1).max(10000).optional(),
  time_to_wait_in_mins: z.number().int().min(0).max(1440).optional(),
  signature: z.string().max(20000).nullable().optional(),
  bcc: OptionalEmail,
  different_reply_to_address: OptionalEmail,
  custom_tracking_url: z.string().max(300).nullable().optional(),
  warmup_enabled: z.boolean().optional(),
};

export const InitConsent = z
  .object({
    email: z.email().max(320).optional().openapi({ description: "Sent as the login hint; the consented address must equal it" }),
    login_hint: z.email().max(320).optional().openapi({ description: "Alias of email" }),
    client_id: z.number().int().positive().nullable().optional(),
    tenant: z.string().trim().min(1).max(255).optional(),
    redirect_url: z.string().max(2048).optional().openapi({ description: "Where the browser goes after the callback (https, or a CLI's loopback listener)" }),
    ...MailboxSettings,
  })
  .openapi("OAuthInit");

export const ReconnectConsent = z
  .object({ redirect_url: z.string().max(2048).optional(), tenant: z.string().trim().min(1).max(255).optional() })
  .openapi("OAuthReconnect");

export const ConsentStarted = z
  .object({
    ok: z.literal(true),
    session_id: z.string(),
    auth_url: z.string(),
    expires_at: z.string(),
    provider: z.enum(["google", "microsoft"]),
    redirect_uri: z.string(),
    email_account_id: z.number().int().optional(),
  })
  .openapi("OAuthConsentStarted");

export const SessionParams = z.object({
  session_id: z.string().max(64).openapi({ param: { name: "session_id", in: "path" }, example: "oas_0123456789abcdef" }),
});

export const ConsentSession = z
  .object({
    ok: z.literal(true),
    session_id: z.string(),
    provider: z.enum(["google", "microsoft"]),
    status: z.enum(OAUTH_SESSION_STATUSES),
    email: z.string().nullable(),
    name: z.string().nullable(),
    email_account_id: z.number().int().nullable(),
    reconnect: z.boolean(),
    connection_state: z.string().nullable(),
    error: z.string().nullable(),
    error_description: z.string().nullable(),
    expires_at: z.string(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("OAuthSession");

export const MailboxIdParams = z.object({ id: pathId("id") });
