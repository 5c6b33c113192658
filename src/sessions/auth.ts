import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { admitKey, apiKeyAuth, presentedKey } from "../keys/auth";
import { refuseAuthentication, refuseIfBlocked, requestBucket } from "../keys/auth-failures";
import { ApiError } from "../platform/errors";
import { clientIp } from "../platform/client-ip";
import { config } from "../config";
import { deleteSession, findLiveSession, touchSession } from "./store";
import { isAccountMoving } from "../platform/db-errors";
import { digestToken, fromOwnPages, slidingExpiry, tokenFromCookies, TOUCH_EVERY_MS } from "./rules";
import type { Bindings } from "../platform/env";
import { onShard, shardOfTag } from "../platform/shards";
import { findByTag } from "../directory/locate";

const SESSION_ENDED = "Session expired or signed out";

/**
 * The session token of a request the app's own pages made, when it presents no API key. From anywhere
 * else the cookie is not a credential at all (the request is answered as one without a key).
 */
function sessionToken(c: Context<AppEnv>): string | undefined {
  if (presentedKey(c.req)) return undefined;
  const url = new URL(c.req.url);
  const token = tokenFromCookies(url, c.req.header("Cookie"));
  if (!token) return undefined;
  return fromOwnPages(url, { secFetchSite: c.req.header("Sec-Fetch-Site"), origin: c.req.header("Origin") }) ? token : undefined;
}

/** A session by its token: on the shard the token names, or where its account moved since. */
async function findTaggedSession(env: Bindings, token: string, now: number) {
  const digest = await digestToken(token);
  const tagged = await findByTag(env, shardOfTag(token), (shard) => findLiveSession(onShard(env, shard).DB, digest, now));
  return tagged && { DB: onShard(env, tagged.shard).DB, session: tagged.found };
}

/**
 * Authentication for /api/v1/: an API key as before, or a web app session from the app's own pages.
 * A session resolves through its key's gate exactly as the key would (same principal, same budget,
 * same refusal once the key is deleted, reset or deactivated), so there is one tenancy rule and one
 * rate limit, whatever the credential.
 */
export const apiAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = sessionToken(c);
  if (!token) return apiKeyAuth(c, next);
  const bucket = requestBucket(clientIp(c.req, config(c.env)));
  refuseIfBlocked(bucket);
  const now = Date.now();
  const found = await findTaggedSession(c.env, token, now);
  if (!found) return refuseAuthentication(c.env, bucket, ApiError.unauthorized(SESSION_ENDED));
  const { DB, session } = found;
  const headers = await admitKey(c, session.keyKind, session.keyHash);
  if (!headers) {
    await deleteSession(DB, session.id);
    return refuseAuthentication(c.env, bucket, ApiError.unauthorized(SESSION_ENDED));
  }
  c.set("sessionId", session.id);
  if (now - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
    // On the account's shard, where admitKey put the request: a session found where its account left holds no more writes.
    // While the account is copied to another shard its writes are refused: the touch waits for a later request, and a
    // read goes on (the session is far from its expiry: it slides with every minute of use).
    await touchSession(c.env.DB, session.id, now, slidingExpiry(session.createdAt.getTime(), now)).catch((error: unknown) => {
      if (!isAccountMoving(error)) throw error;
    });
  }
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
});
