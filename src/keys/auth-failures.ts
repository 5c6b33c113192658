import { failureBucket } from "../platform/client-ip";
import type { Bindings } from "../platform/env";
import { ApiError } from "../platform/errors";

const LOCAL_CLIENT = "local";
/** Enough for a large attack from many addresses; past it the oldest entries go first. */
const MAX_REMEMBERED = 10_000;

/**
 * Buckets this isolate has been told are over their failure limit, and until when (epoch ms).
 * A blocked caller is refused from here without a Durable Object or D1 round trip; callers not
 * in it pay nothing extra. Another isolate learns of a block on its own first failure from the
 * bucket (one AuthFailureLimiter round trip), so the memory is per isolate, the truth is the object.
 */
const blockedUntil = new Map<string, number>();

function remember(bucket: string, until: number, now: number): void {
  blockedUntil.delete(bucket);
  if (blockedUntil.size >= MAX_REMEMBERED) {
    for (const [name, expiry] of blockedUntil) if (expiry <= now) blockedUntil.delete(name);
  }
  while (blockedUntil.size >= MAX_REMEMBERED) blockedUntil.delete(blockedUntil.keys().next().value!);
  blockedUntil.set(bucket, until);
}

/** Where a request's failed authentications are counted (see failureBucket). */
export function requestBucket(header: string | undefined): string {
  return failureBucket(header ?? LOCAL_CLIENT);
}

/** 429 at once, before any key lookup, when this isolate knows the bucket is over its limit. */
export function refuseIfBlocked(bucket: string, now = Date.now()): void {
  const until = blockedUntil.get(bucket);
  if (until === undefined) return;
  if (until <= now) {
    blockedUntil.delete(bucket);
    return;
  }
  throw ApiError.rateLimited(Math.ceil((until - now) / 1000));
}

/** Counts a failed authentication in the bucket: null while under the limit, else the seconds to wait. */
export async function countAuthFailure(env: Bindings, bucket: string): Promise<number | null> {
  const limiter = env.AUTH_FAILURES.get(env.AUTH_FAILURES.idFromName(bucket));
  const decision = await limiter.recordFailure();
  if (decision.admitted) return null;
  const now = Date.now();
  remember(bucket, now + decision.retryAfterSeconds * 1000, now);
  return decision.retryAfterSeconds;
}

/** Counts a failed authentication: the given error (401), or 429 once the bucket has failed too often. */
export async function refuseAuthentication(env: Bindings, bucket: string, failure: ApiError): Promise<never> {
  const retryAfter = await countAuthFailure(env, bucket);
  if (retryAfter !== null) throw ApiError.rateLimited(retryAfter);
  throw failure;
}
