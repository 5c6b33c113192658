import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { config } from "../config";
import { database, type Database } from "../platform/db";
import { webhooks } from "../db/schema";
import { newWebhookSecret, ROTATION_OVERLAP_MS, signingSecrets } from "./delivery-rules";
import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";
import { decryptSecret, encryptSecret, loadKeyring } from "../platform/crypto";
import { notMoving } from "../platform/moving";

/**
 * A webhook's secrets at rest: the signing secret (and the one before the last rotation) and the
 * user's own `secret_key`, each encrypted and bound to its webhook and purpose.
 */

const signingContext = (webhookId: number) => `webhook-signing-secret:${webhookId}`;
const secretKeyContext = (webhookId: number) => `webhook-secret-key:${webhookId}`;

const ROTATION_ATTEMPTS = 3;
const LEGACY_BATCH = 100;

type NewWebhook = typeof webhooks.$inferInsert;
type WebhookRow = typeof webhooks.$inferSelect;

/** The user's `secret_key` as stored: `""` and null both mean unset (and need no key). */
export async function sealSecretKey(secretsKey: string | undefined, webhookId: number, secretKey: string | null): Promise<string | null> {
  return secretKey ? encryptSecret(await loadKeyring(secretsKey), secretKey, secretKeyContext(webhookId)) : null;
}

/**
 * Creates a webhook with a new signing secret, which it returns (shown once). The contexts name the
 * row's id, so the ciphertexts are written once the insert has given one; a webhook whose second
 * write failed is removed again rather than left without a secret.
 */
export async function insertWebhook(
  db: Database,
  secretsKey: string | undefined,
  values: Omit<NewWebhook, "secretCiphertext" | "secretKeyCiphertext">,
  secretKey: string | null,
): Promise<{ row: WebhookRow; secret: string }> {
  // Before the insert: without a usable key nothing is written.
  const keyring = await loadKeyring(secretsKey);
  const inserted = await db.insert(webhooks).values(values).returning().get();
  const secret = newWebhookSecret();
  try {
    const row = await db
      .update(webhooks)
      .set({
        secretCiphertext: await encryptSecret(keyring, secret, signingContext(inserted.id)),
        secretKeyCiphertext: await sealSecretKey(secretsKey, inserted.id, secretKey),
      })
      .where(eq(webhooks.id, inserted.id))
      .returning()
      .get();
    return { row, secret };
  } catch (error) {
    await db.delete(webhooks).where(eq(webhooks.id, inserted.id));
    throw error;
  }
}

/**
 * Replaces a webhook's signing secret; the old one keeps signing (beside the new) for
 * ROTATION_OVERLAP_MS. Only the secret before this rotation is kept: rotating twice within the
 * overlap retires the oldest at once. Concurrent rotations do not lose a secret one of them handed
 * out: each writes only over the state it read.
 */
export async function rotateSigningSecret(db: Database, secretsKey: string | undefined, webhookId: number, now: number): Promise<string> {
  const keyring = await loadKeyring(secretsKey);
  for (let attempt = 0; attempt < ROTATION_ATTEMPTS; attempt += 1) {
    const stored = await db
      .select({ secretCiphertext: webhooks.secretCiphertext, legacySecret: webhooks.legacySecret })
      .from(webhooks)
      .where(eq(webhooks.id, webhookId))
      .get();
    if (!stored) throw new Error(`webhook ${webhookId} vanished during rotation`);
    const current = stored.secretCiphertext
      ? await decryptSecret(keyring, stored.secretCiphertext, signingContext(webhookId))
      : stored.legacySecret;
    const secret = newWebhookSecret();
    const rotated = await db
      .update(webhooks)
      .set({
        secretCiphertext: await encryptSecret(keyring, secret, signingContext(webhookId)),
        previousSecretCiphertext: current ? await encryptSecret(keyring, current, signingContext(webhookId)) : null,
        previousSecretExpiresAt: current ? new Date(now + ROTATION_OVERLAP_MS) : null,
        legacySecret: null,
        updatedAt: new Date(now),
      })
      .where(
        and(
          eq(webhooks.id, webhookId),
          sql`${webhooks.secretCiphertext} IS ${stored.secretCiphertext}`,
          sql`${webhooks.legacySecret} IS ${stored.legacySecret}`,
        ),
      )
      .returning({ id: webhooks.id })
      .get();
    if (rotated) return secret;
  }
  throw new Error(`webhook ${webhookId}: the signing secret kept changing during rotation`);
}

interface StoredSecrets {
  webhookId: number;
  secretCiphertext: string | null;
  legacySecret: string | null;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: number | null;
  secretKeyCiphertext: string | null;
}

/**
 * What a delivery made at `now` needs: the secrets that sign it and the user's `secret_key` for the
 * payload. SECRETS_KEY is read only when something is encrypted (a legacy row signs without it).
 */
export async function deliverySecrets(env: Bindings, stored: StoredSecrets, now: number): Promise<{ signing: string[]; secretKey: string | null }> {
  const encrypted = stored.secretCiphertext ?? stored.previousSecretCiphertext ?? stored.secretKeyCiphertext;
  const keyring = encrypted === null ? null : await loadKeyring(config(env).secretsKey);
  const open = (ciphertext: string | null, context: string) =>
    ciphertext === null ? Promise.resolve(null) : decryptSecret(keyring!, ciphertext, context);
  const context = signingContext(stored.webhookId);
  // An expired previous secret is not even decrypted: the key it was sealed under may be gone.
  const previousLive = stored.previousSecretExpiresAt !== null && now < stored.previousSecretExpiresAt;
  const [current, previous, secretKey] = await Promise.all([
    stored.secretCiphertext === null ? stored.legacySecret : open(stored.secretCiphertext, context),
    previousLive ? open(stored.previousSecretCiphertext, context) : null,
    open(stored.secretKeyCiphertext, secretKeyContext(stored.webhookId)),
  ]);
  if (current === null) throw new Error(`webhook ${stored.webhookId} has no signing secret`);
  const signing = signingSecrets(current, previous === null ? null : { secret: previous, expiresAt: stored.previousSecretExpiresAt! }, now);
  return { signing, secretKey };
}

/**
 * Minute job: encrypts signing secrets still stored in plain text (rows from before migration 0009)
 * and clears the plain text. Without a valid SECRETS_KEY it fails loudly while such rows remain.
 */
export async function sealLegacySecrets(env: Bindings): Promise<number> {
  const db = database(env.DB);
  const legacy = await db
    .select({ id: webhooks.id, legacySecret: webhooks.legacySecret })
    .from(webhooks)
    .where(and(isNotNull(webhooks.legacySecret), notMoving(sql`${webhooks.accountId}`)))
    .limit(LEGACY_BATCH);
  if (legacy.length === 0) return 0;
  const keyring = await loadKeyring(config(env).secretsKey);
  const sealed = await Promise.all(legacy.map(({ id, legacySecret }) => encryptSecret(keyring, legacySecret!, signingContext(id))));
  const [first, ...rest] = legacy.map(({ id, legacySecret }, index) =>
    db
      .update(webhooks)
      .set({ secretCiphertext: sealed[index], legacySecret: null })
      .where(and(eq(webhooks.id, id), eq(webhooks.legacySecret, legacySecret!), isNull(webhooks.secretCiphertext))),
  );
  await db.batch([first!, ...rest]);
  log("info", "encrypted legacy webhook signing secrets", { webhooks: legacy.length });
  return legacy.length;
}
