import { createMiddleware } from "hono/factory";
import { digestKey, keyKindOf, type KeyKind } from "../keys/rules";
import { rateLimitHeaders, type Budget, type Decision } from "../keys/rate-limit";
import type { AppEnv, Bindings } from "../config";
import { ApiError } from "./errors";

/** Who is calling: the account, and for client keys the one client they act for. */
export interface Principal {
  kind: KeyKind;
  accountId: number;
  clientId: number | null;
  keyId: number;
  keyHash: string;
}

/** The caller's budget after this request, for the headers and GET /api/v1/rate-limit. */
export interface RateLimitInfo {
  budget: Budget;
  decision: Decision;
}

export const INVALID_KEY = "Invalid API Key";
const LOCAL_CLIENT = "local";

function keyGate(env: Bindings, keyHash: string) {
  return env.KEY_GATE.get(env.KEY_GATE.idFromName(keyHash));
}

/** A failed authentication is 401, or 429 once the client's IP has failed too often this minute. */
async function refuseAuthentication(env: Bindings, clientIp: string): Promise<never> {
  const limiter = env.AUTH_FAILURES.get(env.AUTH_FAILURES.idFromName(clientIp));
  const decision = await limiter.recordFailure();
  if (!decision.admitted) throw ApiError.rateLimited(decision.retryAfterSeconds);
  throw ApiError.unauthorized(INVALID_KEY);
}

/**
 * Query-string `api_key` authentication and rate limiting for every /api/v1/ route, in one
 * Durable Object round trip: the key's own object resolves it and spends its budget.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const apiKey = c.req.query("api_key");
  if (!apiKey) throw ApiError.unauthorized("API key is required");
  const clientIp = c.req.header("CF-Connecting-IP") ?? LOCAL_CLIENT;
  const kind = keyKindOf(apiKey);
  if (!kind) return refuseAuthentication(c.env, clientIp);

  const keyHash = await digestKey(apiKey);
  const admission = await keyGate(c.env, keyHash).admit(kind, keyHash);
  if (admission.outcome === "unknown") return refuseAuthentication(c.env, clientIp);

  const { owner, budget, decision } = admission;
  const headers = rateLimitHeaders(decision, budget, Math.floor(Date.now() / 1000));
  if (admission.outcome === "limited") throw ApiError.rateLimited(decision.retryAfterSeconds, headers);

  c.set("principal", { kind, accountId: owner.accountId, clientId: owner.clientId, keyId: owner.keyId, keyHash });
  c.set("rateLimit", { budget, decision });
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
});

/** A key value that must never be admitted again (deleted, or replaced by reset). */
export function revokeKey(env: Bindings, keyHash: string): Promise<void> {
  return keyGate(env, keyHash).revoke();
}

/** A key whose standing changed (activated, deactivated): its object reads it again. */
export function invalidateKey(env: Bindings, keyHash: string): Promise<void> {
  return keyGate(env, keyHash).invalidate();
}

/** Client keys act for one client and may not manage clients, keys or the account itself. */
export function requireAccountKey(principal: Principal, message = "This API key cannot manage clients or API keys"): void {
  if (principal.kind !== "account") throw ApiError.unauthorized(message);
}
