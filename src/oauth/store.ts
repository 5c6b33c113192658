import { and, count, eq, gt, isNull, lte, sql } from "drizzle-orm";
import type { OAuthProvider, OAuthProviderConfig } from "../config";
import { emailAccounts, oauthApps, oauthSessions, type OAuthAppLevel } from "../db/schema";
import { decryptSecret, encryptSecret, type Keyring } from "../platform/crypto";
import type { Database } from "../platform/db";
import type { ResolvedApp } from "./rules";

export type OAuthAppRow = typeof oauthApps.$inferSelect;
export type OAuthSessionRow = typeof oauthSessions.$inferSelect;

const appSecretContext = (id: number) => `oauth-app-secret:${id}`;
const verifierContext = (id: string) => `oauth-session-verifier:${id}`;

const scopeOf = (clientId: number | null) => (clientId === null ? isNull(oauthApps.clientId) : eq(oauthApps.clientId, clientId));

/** The app registered at one level: the account's (`clientId` null) or one client's. */
export function appAt(db: Database, accountId: number, clientId: number | null, provider: OAuthProvider): Promise<OAuthAppRow | undefined> {
  return db
    .select()
    .from(oauthApps)
    .where(and(eq(oauthApps.accountId, accountId), scopeOf(clientId), eq(oauthApps.provider, provider)))
    .get();
}

export async function appById(db: Database, id: number): Promise<OAuthAppRow | undefined> {
  return db.select().from(oauthApps).where(eq(oauthApps.id, id)).get();
}

/** Creates or changes the app of one level; an absent secret keeps the stored one. */
export async function saveApp(
  db: Database,
  keyring: Keyring,
  scope: { accountId: number; clientId: number | null; provider: OAuthProvider },
  values: { oauthClientId: string; clientSecret: string | undefined; tenant: string | null },
  existing: OAuthAppRow | undefined,
): Promise<OAuthAppRow> {
  if (existing) {
    const sealed = values.clientSecret === undefined ? {} : { clientSecretCiphertext: await encryptSecret(keyring, values.clientSecret, appSecretContext(existing.id)) };
    return db
      .update(oauthApps)
      .set({ oauthClientId: values.oauthClientId, tenant: values.tenant, updatedAt: new Date(), ...sealed })
      .where(eq(oauthApps.id, existing.id))
      .returning()
      .get();
  }
  // The secret's context names the row, so the row is written first with a placeholder that never opens.
  const inserted = await db
    .insert(oauthApps)
    .values({ ...scope, oauthClientId: values.oauthClientId, tenant: values.tenant, clientSecretCiphertext: "pending" })
    .returning()
    .get();
  try {
    return await db
      .update(oauthApps)
      .set({ clientSecretCiphertext: await encryptSecret(keyring, values.clientSecret!, appSecretContext(inserted.id)) })
      .where(eq(oauthApps.id, inserted.id))
      .returning()
      .get();
  } catch (error) {
    await db.delete(oauthApps).where(eq(oauthApps.id, inserted.id));
    throw error;
  }
}

export async function deleteApp(db: Database, id: number): Promise<void> {
  await db.delete(oauthApps).where(eq(oauthApps.id, id));
}

/** How many mailboxes were connected with this app. */
export async function mailboxesUsingApp(db: Database, appId: number): Promise<number> {
  const row = await db.select({ n: count() }).from(emailAccounts).where(eq(emailAccounts.oauthAppId, appId)).get();
  return row?.n ?? 0;
}

/** A stored app opened for use (its secret decrypted). */
export async function openApp(keyring: Keyring, row: OAuthAppRow, level: OAuthAppLevel): Promise<ResolvedApp> {
  return {
    level,
    appId: row.id,
    clientId: row.oauthClientId,
    clientSecret: await decryptSecret(keyring, row.clientSecretCiphertext, appSecretContext(row.id)),
    tenant: row.tenant ?? "common",
  };
}

/** The deployment's app, when both its id and secret are set. */
export function deploymentApp(config: OAuthProviderConfig, tenant?: string | null): ResolvedApp | null {
  if (!config.app) return null;
  return { level: "deployment", appId: null, clientId: config.app.clientId, clientSecret: config.app.clientSecret, tenant: tenant || config.app.tenant || "common" };
}

/** The app a mailbox refreshes with: the one it was connected with (CONTRACT 18.1), or null when it is gone. */
export async function mailboxApp(db: Database, keyring: Keyring, config: OAuthProviderConfig, mailbox: { oauthAppId: number | null; oauthAppLevel: OAuthAppLevel | null; oauthTenant: string | null }): Promise<ResolvedApp | null> {
  if (mailbox.oauthAppLevel === "deployment" || mailbox.oauthAppLevel === null) return deploymentApp(config, mailbox.oauthTenant);
  if (mailbox.oauthAppId === null) return null;
  const row = await appById(db, mailbox.oauthAppId);
  if (!row) return null;
  const app = await openApp(keyring, row, mailbox.oauthAppLevel);
  return mailbox.oauthTenant ? { ...app, tenant: mailbox.oauthTenant } : app;
}

/** Pending consents of an account that have not expired (a bound against abuse). */
export async function pendingSessions(db: Database, accountId: number, now: number): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(oauthSessions)
    .where(and(eq(oauthSessions.accountId, accountId), eq(oauthSessions.status, "pending"), gt(oauthSessions.expiresAt, new Date(now))))
    .get();
  return row?.n ?? 0;
}

export async function insertSession(db: Database, keyring: Keyring, values: Omit<typeof oauthSessions.$inferInsert, "verifierCiphertext">, verifier: string): Promise<OAuthSessionRow> {
  const verifierCiphertext = await encryptSecret(keyring, verifier, verifierContext(values.id));
  return db
    .insert(oauthSessions)
    .values({ ...values, verifierCiphertext })
    .returning()
    .get();
}

export function openVerifier(keyring: Keyring, session: OAuthSessionRow): Promise<string> {
  return decryptSecret(keyring, session.verifierCiphertext, verifierContext(session.id));
}

/**
 * Takes a consent's state once: the session whose state digest this is, marked consumed in the same
 * statement, so a second use (even while the first is still working) finds nothing.
 */
export async function consumeSession(db: Database, stateDigest: string, provider: OAuthProvider, now: number): Promise<OAuthSessionRow | undefined> {
  return db
    .update(oauthSessions)
    .set({ consumedAt: new Date(now) })
    .where(and(eq(oauthSessions.stateDigest, stateDigest), eq(oauthSessions.provider, provider), isNull(oauthSessions.consumedAt)))
    .returning()
    .get();
}

/** Writes a consent's outcome. */
export async function finishSession(
  db: Database,
  id: string,
  outcome: { status: "success" | "error" | "expired"; error?: string | null; errorDescription?: string | null; email?: string | null; name?: string | null; emailAccountId?: number | null },
  now: number,
): Promise<void> {
  await db
    .update(oauthSessions)
    .set({
      status: outcome.status,
      error: outcome.error ?? null,
      errorDescription: outcome.errorDescription ?? null,
      email: outcome.email ?? null,
      name: outcome.name ?? null,
      emailAccountId: outcome.emailAccountId ?? null,
      completedAt: new Date(now),
    })
    .where(eq(oauthSessions.id, id));
}

/** A session of the account (and, for a client key, of its client). */
export async function findSession(db: Database, principal: { accountId: number; clientId: number | null }, id: string): Promise<OAuthSessionRow | undefined> {
  return db
    .select()
    .from(oauthSessions)
    .where(
      and(
        eq(oauthSessions.id, id),
        eq(oauthSessions.accountId, principal.accountId),
        principal.clientId === null ? sql`1` : eq(oauthSessions.clientId, principal.clientId),
      ),
    )
    .get();
}

/** Pending sessions past their expiry become `expired` (read lazily: a status read or a callback). */
export async function expireSessions(db: Database, accountId: number, now: number): Promise<void> {
  await db
    .update(oauthSessions)
    .set({ status: "expired", error: "expired", completedAt: new Date(now) })
    .where(and(eq(oauthSessions.accountId, accountId), eq(oauthSessions.status, "pending"), lte(oauthSessions.expiresAt, new Date(now))));
}
