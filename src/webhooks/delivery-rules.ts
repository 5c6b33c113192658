/** Where a webhook may point, Standard Webhooks signing, and what to do with a receiver's answer. */
import { fromBase64, toBase64, toHex } from "../platform/bytes";
import type { UrlRules } from "../platform/outbound";

export const MAX_WEBHOOK_URL_LENGTH = 2048;
/**
 * CONTRACT section 5 on top of the outbound rule (src/platform/outbound.ts): no IP literal even a
 * public one, and https on its default port (the development switch admits loopback, http and ports).
 */
export const WEBHOOK_URL_RULES: UrlRules = { noIpLiterals: true, defaultPortOnly: true };

export const RETRY_SCHEDULE_SECONDS = [30, 120, 600, 3600, 21_600, 43_200] as const;
const MAX_RETRY_AFTER_SECONDS = 43_200;
export const DELIVERY_TIMEOUT_MS = 10_000;

export function newWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(24)))}`;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the base64-decoded secret. */
async function signature(secret: string, messageId: string, timestamp: number, body: string): Promise<string> {
  const keyBytes = fromBase64(secret.replace(/^whsec_/, ""));
  if (!keyBytes) throw new Error("a webhook signing secret is not base64");
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${messageId}.${timestamp}.${body}`));
  return `v1,${toBase64(mac)}`;
}

/**
 * The `webhook-signature` header: one `v1,` signature per secret, space-separated (Standard
 * Webhooks), so a receiver holding either the new or the old secret accepts it during a rotation.
 */
export async function signatureHeader(secrets: readonly string[], messageId: string, timestamp: number, body: string): Promise<string> {
  if (secrets.length === 0) throw new Error("a delivery needs at least one signing secret");
  const signatures = await Promise.all(secrets.map((secret) => signature(secret, messageId, timestamp, body)));
  return signatures.join(" ");
}

/**
 * `X-Smartlead-Signature`: `sha256=<hex HMAC-SHA256 of the raw body>`, keyed by the current signing
 * secret as written (`whsec_…`, its UTF-8 bytes), which is what a receiver handed that string uses.
 */
export async function smartleadSignature(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return `sha256=${toHex(mac)}`;
}

/** How long the previous signing secret still signs after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** The secrets a delivery made at `now` is signed with: the current one, then the previous one until it expires. */
export function signingSecrets(current: string, previous: { secret: string; expiresAt: number } | null, now: number): string[] {
  return previous && now < previous.expiresAt ? [current, previous.secret] : [current];
}

export type Verdict =
  | { outcome: "delivered" }
  | { outcome: "disabled" }
  | { outcome: "failed" }
  | { outcome: "retry"; delaySeconds: number };

/** Retry-After as seconds (delta or HTTP date), or null. */
function retryAfterSeconds(header: string | null, now: number): number | null {
  if (!header) return null;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) : (Date.parse(header) - now) / 1000;
  return Number.isFinite(seconds) ? Math.max(0, Math.ceil(seconds)) : null;
}

/**
 * 2xx delivered; 410 disables the webhook; 408, 429, 5xx and no answer at all (network error,
 * timeout) retry on the schedule, or after Retry-After (up to 12 h); any other answer fails.
 * `attempt` is 1 for the first try.
 */
export function judge(answer: { status: number; retryAfter: string | null } | null, attempt: number, now: number): Verdict {
  const status = answer?.status;
  if (status !== undefined && status >= 200 && status < 300) return { outcome: "delivered" };
  if (status === 410) return { outcome: "disabled" };
  const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
  if (!retryable) return { outcome: "failed" };
  const scheduled = RETRY_SCHEDULE_SECONDS[Math.min(attempt, RETRY_SCHEDULE_SECONDS.length) - 1]!;
  const asked = retryAfterSeconds(answer?.retryAfter ?? null, now);
  return { outcome: "retry", delaySeconds: asked === null ? scheduled : Math.min(asked, MAX_RETRY_AFTER_SECONDS) };
}
