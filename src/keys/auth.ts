import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { digestKey, keyKindOf, type KeyKind } from "../keys/rules";
import { rateLimitHeaders } from "../platform/rate-limit";
import type { AppEnv, Bindings } from "../platform/env";
import { refuseAuthentication, refuseIfBlocked, requestBucket } from "./auth-failures";
import { ApiError } from "../platform/errors";
import { clientIp } from "../platform/client-ip";
import { config } from "../config";
import { onShard } from "../platform/shards";
import { unlistKeys } from "../directory/store";

const INVALID_KEY = "Invalid API Key";

function keyGate(env: Bindings, keyHash: string) {
  return env.KEY_GATE.get(env.KEY_GATE.idFromName(keyHash));
}

/**
 * The key a request presents: the `X-API-Key` header, else `Authorization: Bearer <key>`, else
 * the `api_key` query parameter (kept for compatibility; headers stay out of URL logs). The first
 * one present is the key; the others are not consulted.
 */
export function presentedKey(req: { header(name: string): string | undefined; query(name: string): string | undefined }): string | undefined {
  const header = req.header("X-API-Key")?.trim();
  if (header) return header;
  const authorization = req.header("Authorization");
  const bearer = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  if (bearer) return bearer;
  return req.query("api_key") || undefined;
}

/**
 * Resolves a key by its digest and spends its budget in one round trip to the key's own object; the
 * principal and budget go into the context. Null when the key is unknown (deleted, reset away,
 * inactive, account disabled); 429 when its budget is spent. Hands back the rate-limit headers.
 * Sessions (src/sessions/auth.ts) come through here too, so a session spends its key's budget.
 */
export async function admitKey(c: Context<AppEnv>, kind: KeyKind, keyHash: string): Promise<Record<string, string> | null> {
  const admission = await keyGate(c.env, keyHash).admit(kind, keyHash);
  if (admission.outcome === "unknown") return null;
  const { owner, budget, decision } = admission;
  const headers = rateLimitHeaders(decision, budget, Math.floor(Date.now() / 1000));
  if (admission.outcome === "limited") throw ApiError.rateLimited(decision.retryAfterSeconds, headers);
  c.set("principal", { kind, accountId: owner.accountId, clientId: owner.clientId, keyId: owner.keyId, keyHash });
  // From here on the request's DB is its account's shard: the one place a request picks its shard.
  c.env = onShard(c.env, owner.shard ?? 0);
  c.set("rateLimit", { budget, decision });
  return headers;
}

/**
 * API key authentication and rate limiting for every /api/v1/ route, in one Durable Object
 * round trip: the key's own object resolves it and spends its budget. A caller this isolate knows
 * to be over its failure limit is refused before that, at no round trip at all.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const bucket = requestBucket(clientIp(c.req, config(c.env)));
  refuseIfBlocked(bucket);
  const apiKey = presentedKey(c.req);
  if (!apiKey) throw ApiError.unauthorized("API key is required");
  const kind = keyKindOf(apiKey);
  if (!kind) return refuseAuthentication(c.env, bucket, ApiError.unauthorized(INVALID_KEY));

  const headers = await admitKey(c, kind, await digestKey(apiKey));
  if (!headers) return refuseAuthentication(c.env, bucket, ApiError.unauthorized(INVALID_KEY));
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
});

/** A key value that must never be admitted again (deleted, or replaced by reset): its object first, then the directory. */
export async function revokeKey(env: Bindings, keyHash: string): Promise<void> {
  await keyGate(env, keyHash).revoke();
  await unlistKeys(env.DIRECTORY, [keyHash]);
}

/** A key whose standing changed (activated, deactivated, account disabled): its object reads it again. */
export function invalidateKey(env: Bindings, keyHash: string): Promise<void> {
  return keyGate(env, keyHash).invalidate();
}

/** Many keys at once (an account disabled): each key's object reads its key again. */
export async function invalidateKeys(env: Bindings, keyHashes: string[]): Promise<void> {
  await Promise.all(keyHashes.map((keyHash) => invalidateKey(env, keyHash)));
}
