import { sql } from "drizzle-orm";
import type { Bindings } from "../platform/env";
import { jsonList, rawBatch, statement } from "../platform/sql";
import { log } from "../platform/logging";
import { afterTheMove } from "../platform/moving";
import { guardedFetch, OutboundError, urlPolicy, type OutboundPolicy } from "../platform/outbound";
import { config } from "../config";
import { withPayloadBodies } from "../platform/bodies";
import { DELIVERY_TIMEOUT_MS, judge, signatureHeader, smartleadSignature, WEBHOOK_URL_RULES, type Verdict } from "./delivery-rules";
import { deliverySecrets } from "./secrets";
import type { DeliveryMessage } from "./queue-message";
import { settleDeleted } from "./store";

/** Every environment names its dead-letter queue `<queue>-dlq` (see wrangler.toml). */
export function isDeadLetterQueue(name: string): boolean {
  return name.endsWith("-dlq");
}

interface DeliveryRow {
  id: number;
  account_id: number;
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
  association_type: string;
  /** The delivery's account is being moved to another shard (src/moves/): its outcome could not be written here, so it is not sent now. */
  fenced: number;
}

/** Every delivery of a queue batch, with its webhook, in one query. */
async function loadAll(env: Bindings, ids: number[]): Promise<Map<number, DeliveryRow>> {
  const rows = await statement(
    env.DB,
    sql`SELECT d.id, d.account_id, d.message_id, d.payload, d.status, w.secret_ciphertext, w.legacy_secret, w.previous_secret_ciphertext,
               w.previous_secret_expires_at, w.secret_key_ciphertext, w.url, w.disabled_at, w.id AS webhook_id,
               w.association_type, EXISTS (SELECT 1 FROM account_moves m WHERE m.account_id = d.account_id AND m.open = 0) AS fenced
        FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.id IN (SELECT value FROM json_each(${jsonList(ids)}))`,
  ).all<DeliveryRow>();
  return new Map(rows.results.map((row) => [row.id, row]));
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

/**
 * POSTs one signed delivery; redirects are not followed and the receiver gets 10 s. The URL is judged
 * again first (the outbound rule, its name looked up now): `refused` when it may not be reached.
 */
async function post(row: DeliveryRow, secrets: Secrets, now: number, policy: OutboundPolicy, bodies: R2Bucket | undefined) {
  const timestamp = Math.floor(now / 1000);
  const started = Date.now();
  try {
    // Bodies kept in R2 go out whole; a failed read of them is this delivery's failed attempt (retried
    // on its schedule), not the batch's, whose other deliveries went out. `secret_key` is the user's
    // own token; the signing secret only ever goes into the signature.
    const stored = await withPayloadBodies(bodies, row.account_id, JSON.parse(row.payload) as Record<string, unknown>);
    const body = JSON.stringify({ ...stored, secret_key: secrets.secretKey });
    const { response } = await guardedFetch(
      row.url,
      {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "Salvo-Webhooks/1",
          "webhook-id": row.message_id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": await signatureHeader(secrets.signing, row.message_id, timestamp, body),
          // The hosted service's headers (CONTRACT section 14), for receivers written against it.
          "X-Webhook-Level": row.association_type,
          "X-Request-Id": row.message_id,
          "X-Smartlead-Signature": await smartleadSignature(secrets.signing[0]!, body),
        },
        body,
      },
      policy,
      { ...WEBHOOK_URL_RULES, redirects: 0, timeoutMs: DELIVERY_TIMEOUT_MS },
    );
    await response.body?.cancel();
    return { answer: { status: response.status, retryAfter: response.headers.get("Retry-After") }, error: null, refused: false, ms: Date.now() - started };
  } catch (error) {
    const refused = error instanceof OutboundError && error.kind === "refused";
    return { answer: null, error: error instanceof Error ? error.message : String(error), refused, ms: Date.now() - started };
  }
}

const STATUS_AFTER: Record<Verdict["outcome"], string> = {
  delivered: "delivered",
  disabled: "failed",
  failed: "failed",
  retry: "pending",
};

interface Outcome {
  row: DeliveryRow;
  verdict: Verdict;
  attempt: Awaited<ReturnType<typeof post>>;
  at: number;
}

/**
 * A queue batch's attempts and the deliveries' new states in ONE D1 batch (three statements,
 * however many deliveries): attempts, delivery rows, and webhooks disabled by a 410.
 */
async function recordAll(env: Bindings, outcomes: Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const rows = outcomes.map(({ row, verdict, attempt, at }) => {
    const code = attempt.answer?.status ?? null;
    return {
      id: row.id,
      webhook_id: row.webhook_id,
      at,
      code,
      error: attempt.error ?? (verdict.outcome === "delivered" ? null : `HTTP ${code}`),
      outcome: verdict.outcome,
      status: STATUS_AFTER[verdict.outcome],
      ms: attempt.ms,
      delivered_at: verdict.outcome === "delivered" ? at : null,
      next_at: verdict.outcome === "retry" ? at + verdict.delaySeconds * 1000 : null,
    };
  });
  const list = jsonList(rows);
  const disabled = rows.filter((row) => row.outcome === "disabled");
  await rawBatch(env.DB, [
    // A delivery deleted meanwhile (its campaign or webhook went) keeps no attempt.
    sql`INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, outcome, duration_ms)
        SELECT value ->> '$.id', value ->> '$.at', value ->> '$.code', value ->> '$.error', value ->> '$.outcome', value ->> '$.ms'
        FROM json_each(${list}) WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = value ->> '$.id')`,
    sql`UPDATE webhook_deliveries SET status = r.value ->> '$.status', attempts = attempts + 1,
          last_attempt_at = r.value ->> '$.at', last_status_code = r.value ->> '$.code', last_error = r.value ->> '$.error',
          delivered_at = r.value ->> '$.delivered_at', next_attempt_at = r.value ->> '$.next_at'
        FROM json_each(${list}) AS r WHERE webhook_deliveries.id = r.value ->> '$.id'`,
    ...(disabled.length > 0
      ? [
          sql`UPDATE webhooks SET disabled_at = ${disabled[0]!.at}
              WHERE id IN (SELECT value ->> '$.webhook_id' FROM json_each(${jsonList(disabled)}))`,
        ]
      : []),
    settleDeleted(sql`SELECT value ->> '$.webhook_id' FROM json_each(${list})`),
  ]);
}

/** Attempts one message's delivery; null when there is nothing to send, ever. */
async function attemptOne(
  env: Bindings,
  row: DeliveryRow | undefined,
  message: Message<DeliveryMessage>,
  secretsOfWebhook: Map<number, Promise<Secrets>>,
): Promise<Outcome | null> {
  // Deleted webhook, or a repeat of a message already settled.
  if (!row || row.status !== "pending") return null;
  const now = Date.now();
  if (row.disabled_at !== null) {
    return { row, verdict: { outcome: "failed" }, attempt: { answer: null, error: "webhook disabled", refused: false, ms: 0 }, at: now };
  }
  // Unreadable secrets (SECRETS_KEY missing or wrong) are our fault, not the receiver's: nothing is
  // sent unsigned, and the delivery retries on the usual schedule as if no answer had come.
  // One decryption per webhook per batch: a burst to one receiver shares it.
  if (!secretsOfWebhook.has(row.webhook_id)) secretsOfWebhook.set(row.webhook_id, secretsOf(env, row, now));
  const secrets = await secretsOfWebhook.get(row.webhook_id)!.catch((error: unknown) => {
    log("error", "webhook secrets unreadable", { delivery_id: row.id, webhook_id: row.webhook_id, error: String(error) });
    return null;
  });
  const attempt = secrets ? await post(row, secrets, now, urlPolicy(config(env)), env.BODIES) : { answer: null, error: "signing secret unavailable (server configuration)", refused: false, ms: 0 };
  // A receiver the rule refuses is not retried: nothing was sent, and the same rule would refuse it again.
  return { row, verdict: attempt.refused ? { outcome: "failed" } : judge(attempt.answer, message.attempts, now), attempt, at: now };
}

/**
 * The queue consumer: one read for the whole batch, the receivers called in parallel, one write
 * for every outcome; then each message is acknowledged or retried after its delay.
 */
export async function consumeWebhookBatch(batch: MessageBatch<DeliveryMessage>, env: Bindings): Promise<void> {
  const rows = await loadAll(env, [...new Set(batch.messages.map((m) => m.body.deliveryId))]);
  // A delivery sent while its account is being moved would be sent again after (its outcome cannot
  // be written): it waits for the move, as the batch would if its write were refused.
  const waiting = batch.messages.filter((message) => rows.get(message.body.deliveryId)?.fenced);
  for (const message of waiting) message.retry({ delaySeconds: afterTheMove(message.attempts) });
  const messages = batch.messages.filter((message) => !waiting.includes(message));
  const attempted = new Set<number>();
  const secretsOfWebhook = new Map<number, Promise<Secrets>>();
  const outcomes = await Promise.all(
    messages.map((message) => {
      // Two messages for one delivery in a batch (a requeue raced the original): send it once.
      const id = message.body.deliveryId;
      if (attempted.has(id)) return null;
      attempted.add(id);
      return attemptOne(env, rows.get(id), message, secretsOfWebhook);
    }),
  );
  await recordAll(env, outcomes.filter((o): o is Outcome => o !== null));
  messages.forEach((message, index) => {
    const verdict = outcomes[index]?.verdict;
    if (verdict?.outcome === "retry") message.retry({ delaySeconds: verdict.delaySeconds });
    else message.ack();
  });
}

/** Messages whose retries ran out: their deliveries are failed for good (retrigger can revive them). */
export async function consumeDeadLetters(batch: MessageBatch<DeliveryMessage>, env: Bindings): Promise<void> {
  const ids = jsonList(batch.messages.map((message) => message.body.deliveryId));
  await rawBatch(env.DB, [
    sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,
          last_error = coalesce(last_error, '') || ' (retries exhausted)'
        WHERE status = 'pending' AND id IN (SELECT value FROM json_each(${ids}))`,
    settleDeleted(sql`SELECT webhook_id FROM webhook_deliveries WHERE id IN (SELECT value FROM json_each(${ids}))`),
  ]);
  batch.ackAll();
}
