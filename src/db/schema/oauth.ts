import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { createdAt, instant, updatedAt } from "./columns";
import { emailAccounts } from "./mailboxes";

const OAUTH_PROVIDERS = ["google", "microsoft"] as const;
const OAUTH_APP_LEVELS = ["client", "account", "deployment"] as const;
export type OAuthAppLevel = (typeof OAUTH_APP_LEVELS)[number];
export const OAUTH_SESSION_STATUSES = ["pending", "success", "error", "expired"] as const;

/** An account's (or one client's) own OAuth app for a provider: its consent screen instead of the deployment's. */
export const oauthApps = sqliteTable(
  "oauth_apps",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: OAUTH_PROVIDERS }).notNull(),
    oauthClientId: text("oauth_client_id").notNull(),
    /** Sealed with src/platform/crypto.ts under `oauth-app:<id>`; never answered. */
    clientSecretCiphertext: text("client_secret_ciphertext").notNull(),
    tenant: text("tenant"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("oauth_apps_scope_idx").on(t.accountId, sql`coalesce(${t.clientId}, 0)`, t.provider)],
);

/**
 * One consent: created by init, consumed once by the callback (`consumed_at`), then readable with its
 * outcome for a day. The `state` is stored only as its SHA-256 digest and the PKCE verifier sealed.
 */
export const oauthSessions = sqliteTable(
  "oauth_sessions",
  {
    id: text("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: OAUTH_PROVIDERS }).notNull(),
    appId: integer("app_id").references(() => oauthApps.id, { onDelete: "set null" }),
    appLevel: text("app_level", { enum: OAUTH_APP_LEVELS }).notNull(),
    stateDigest: text("state_digest").notNull(),
    verifierCiphertext: text("verifier_ciphertext").notNull(),
    tenant: text("tenant"),
    loginHint: text("login_hint"),
    redirectUrl: text("redirect_url"),
    /** A reconnect's mailbox. */
    mailboxId: integer("mailbox_id").references(() => emailAccounts.id, { onDelete: "set null" }),
    /** The save fields given to init, applied when the mailbox is created (JSON). */
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    status: text("status", { enum: OAUTH_SESSION_STATUSES }).notNull().default("pending"),
    consumedAt: instant("consumed_at"),
    error: text("error"),
    errorDescription: text("error_description"),
    email: text("email"),
    name: text("name"),
    emailAccountId: integer("email_account_id"),
    expiresAt: instant("expires_at").notNull(),
    createdAt: createdAt(),
    completedAt: instant("completed_at"),
  },
  (t) => [uniqueIndex("oauth_sessions_state_idx").on(t.stateDigest), index("oauth_sessions_account_idx").on(t.accountId, t.status, t.expiresAt)],
);
