import { sql } from "drizzle-orm";
import { rawBatch, statement } from "../db/raw-batch";
import { DELIVERY_TIMEOUT_MS, judge, signatureHeader, type Verdict } from "../domain/webhook-delivery";
import type { Bindings } from "../env";
import { log } from "../http/logging";
import type { DeliveryMessage } from "../webhooks/outbox";
import { deliverySecrets } from "../webhooks/secrets";

/** Every environment names its dead-letter queue `<queue>-dlq` (see wrangler.toml). */
export function isDeadLetterQueue(name: string): boolean {
  return name.endsWith("-dlq");
}

interface DeliveryRow {
  id: number;
  message_id: string;
  payload: string;
  status: string;
  secret_ciphertext: string | null;
  legacy_secret: string | null;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: number | null;
  secret_key_ciphertext: string | null;
  url: string;
  disabled_at: number | null;
  webhook_id: number;
}

function load(env: Bindings, deliveryId: number) {
  return statement(
    env.DB,
    sql`SELECT d.id, d.message_id, d.payload, d.status, w.secret_ciphertext, w.legacy_secret, w.previous_secret_ciphertext,
               w.previous_secret_expires_at, w.secret_key_ciphertext, w.url, w.disabled_at, w.id AS webhook_id
        FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ${deliveryId}`,
  ).first<DeliveryRow>();
}

type Secrets = Awaited<ReturnType<typeof deliverySecrets>>;

function secretsOf(env: Bindings, row: DeliveryRow, now: number): Promise<Secrets> {
  return deliverySecrets(
    env,
    {
      webhookId: row.webhook_id,
      secretCiphertext: row.secret_ciphertext,
      legacySecret: row.legacy_secret,
      previousSecretCiphertext: row.previous_secret_ciphertext,
      previousSecretExpiresAt: row.previous_secret_expires_at,
      secretKeyCiphertext: row.secret_key_ciphertext,
    },
    now,
  );
}

/** POSTs one signed delivery; redirects are not followed and the receiver gets 10 s. */
async function post(row: DeliveryRow, secrets: Secrets, now: number) {
  // `secret_key` is the user's own token; the signing secret only ever goes into the signature.
  const payload = { ...(JSON.parse(row.payload) as Record<string, unknown>), secret_key: secrets.secretKey };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(now / 1000);
  const started = Date.now();
  try {
    const response = await fetch(row.url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "Salvo-Webhooks/1",
        "webhook-id": row.message_id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": await signatureHeader(secrets.signing, row.message_id, timestamp, body),
      },
      body,
    });
    await response.body?.cancel();
    return { answer: { status: response.status, retryAfter: response.headers.get("Retry-After") }, error: null, ms: Date.now() - started };
  } catch (error) {
    return { answer: null, error: error instanceof Error ? error.message : String(error), ms: Date.now() - started };
  }
}

const STATUS_AFTER: Record<Verdict["outcome"], string> = {
  delivered: "delivered",
  disabled: "failed",
  failed: "failed",
  retry: "pending",
};

/** Records the attempt and the delivery's new state in one batch (and disables the webhook on 410). */
function record(env: Bindings, row: DeliveryRow, verdict: Verdict, attempt: Awaited<ReturnType<typeof post>>, now: number) {
  const code = attempt.answer?.status ?? null;
  const error = attempt.error ?? (verdict.outcome === "delivered" ? null : `HTTP ${code}`);
  return rawBatch(env.DB, [
    sql`INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, outcome, duration_ms)
        VALUES (${row.id}, ${now}, ${code}, ${error}, ${verdict.outcome}, ${attempt.ms})`,
    sql`UPDATE webhook_deliveries SET status = ${STATUS_AFTER[verdict.outcome]}, attempts = attempts + 1,
          last_attempt_at = ${now}, last_status_code = ${code}, last_error = ${error},
          delivered_at = ${verdict.outcome === "delivered" ? now : null},
          next_attempt_at = ${verdict.outcome === "retry" ? now + verdict.delaySeconds * 1000 : null}
        WHERE id = ${row.id}`,
    ...(verdict.outcome === "disabled" ? [sql`UPDATE webhooks SET disabled_at = ${now} WHERE id = ${row.webhook_id}`] : []),
  ]);
}

async function deliver(env: Bindings, message: Message<DeliveryMessage>): Promise<void> {
  const row = await load(env, message.body.deliveryId);
  // Deleted webhook, or a repeat of a message already settled: nothing to send, ever.
  if (!row || row.status !== "pending") return message.ack();
  const now = Date.now();
  if (row.disabled_at !== null) {
    await record(env, row, { outcome: "failed" }, { answer: null, error: "webhook disabled", ms: 0 }, now);
    return message.ack();
  }
  // Unreadable secrets (SECRETS_KEY missing or wrong) are our fault, not the receiver's: nothing is
  // sent unsigned, and the delivery retries on the usual schedule as if no answer had come.
  const secrets = await secretsOf(env, row, now).catch((error: unknown) => {
    log("error", "webhook secrets unreadable", { delivery_id: row.id, webhook_id: row.webhook_id, error: String(error) });
    return null;
  });
  const attempt = secrets ? await post(row, secrets, now) : { answer: null, error: "signing secret unavailable (server configuration)", ms: 0 };
  const verdict = judge(attempt.answer, message.attempts, now);
  await record(env, row, verdict, attempt, now);
  if (verdict.outcome === "retry") message.retry({ delaySeconds: verdict.delaySeconds });
  else message.ack();
}

/** The queue consumer: every message is one delivery, tried independently of the others. */
export async function consumeWebhookBatch(batch: MessageBatch<DeliveryMessage>, env: Bindings): Promise<void> {
  await Promise.all(batch.messages.map((message) => deliver(env, message)));
}

/** Messages whose retries ran out: their deliveries are failed for good (retrigger can revive them). */
export async function consumeDeadLetters(batch: MessageBatch<DeliveryMessage>, env: Bindings): Promise<void> {
  const ids = batch.messages.map((message) => message.body.deliveryId);
  await statement(
    env.DB,
    sql`UPDATE webhook_deliveries SET status = 'failed', last_error = coalesce(last_error, '') || ' (retries exhausted)'
        WHERE status = 'pending' AND id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
  ).run();
  batch.ackAll();
}
