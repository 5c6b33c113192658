/**
 * `GET /oauth/{provider}/callback` (CONTRACT 18.3): where the provider sends the person's browser
 * after the consent. Public (no key) and outside /api/v1 and the OpenAPI document, like the links in
 * emails: it is a page for a browser, not an API call. The state is taken once, atomically; an
 * unknown one counts as a failed authentication of the caller's address. No code, token or key ever
 * appears in the page, the redirect or a log line.
 */
import { onShard, shardOfTag } from "../platform/shards";
import { findByTag } from "../directory/locate";
import { Hono, type Context } from "hono";
import type { OAuthProvider } from "../config";
import { countAuthFailure, requestBucket } from "../keys/auth-failures";
import { database } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { log } from "../platform/logging";
import { htmlText, page } from "../platform/page";
import { completeConsent, type ConsentError, type ConsentOutcome } from "./connect";
import { providerNamed, stateDigest } from "./rules";
import { consumeSession, finishSession, type OAuthSessionRow } from "./store";

const NO_STORE = { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff" };

const WORDS: Record<ConsentError, string> = {
  access_denied: "The consent was declined.",
  provider_error: "The provider reported an error.",
  expired: "This consent link has expired. Start again from Salvo.",
  token_exchange_failed: "The provider did not complete the sign-in.",
  no_refresh_token: "The provider did not grant offline access, so Salvo could not keep the mailbox connected.",
  scope_missing: "Mail access was not allowed. Start again and allow Salvo to send and read mail.",
  email_unverified: "The provider has not verified this address.",
  address_in_use: "This address is already connected by someone else.",
  address_mismatch: "You signed in with a different address than the one requested.",
  oauth_app_missing: "The OAuth app this consent was started with is gone.",
};

function errorPage(c: Context<AppEnv>, status: 400 | 429, heading: string, detail: string) {
  return c.html(page("Mailbox not connected", `<h1>${htmlText(heading)}</h1><p>${htmlText(detail)}</p>`), status, NO_STORE);
}

/** The outcome as the caller's own `redirect_url` hears it: 303 with the session and its outcome, nothing secret. */
function redirectTo(c: Context<AppEnv>, session: OAuthSessionRow, status: "success" | "error" | "expired", error: string | null) {
  const url = new URL(session.redirectUrl!);
  url.searchParams.set("session_id", session.id);
  url.searchParams.set("status", status);
  if (error) url.searchParams.set("error", error);
  return c.body(null, 303, { ...NO_STORE, Location: url.toString() });
}

async function answer(c: Context<AppEnv>, session: OAuthSessionRow, outcome: ConsentOutcome, now: number) {
  const db = database(c.env.DB);
  if (outcome.ok) {
    await finishSession(db, session.id, { status: "success", email: outcome.email, name: outcome.name, emailAccountId: outcome.mailbox.id }, now);
    if (session.redirectUrl) return redirectTo(c, session, "success", null);
    const state = outcome.mailbox.disconnectCode ? ` but cannot send yet: ${outcome.mailbox.disconnectMessage}` : outcome.mailbox.isSmtpSuccess === false ? ` but its check failed: ${outcome.mailbox.smtpFailureError}` : "";
    return c.html(
      page("Mailbox connected", `<h1>${htmlText(outcome.email)} is connected</h1><p>${htmlText(outcome.reconnect ? "The mailbox was reconnected" : "The mailbox was added")}${htmlText(state)}. You can close this window.</p>`),
      200,
      NO_STORE,
    );
  }
  const status = outcome.error === "expired" ? "expired" : "error";
  await finishSession(db, session.id, { status, error: outcome.error, errorDescription: outcome.description, email: outcome.email ?? null, name: outcome.name ?? null }, now);
  if (session.redirectUrl) return redirectTo(c, session, status, outcome.error);
  return errorPage(c, 400, WORDS[outcome.error], outcome.description);
}

/**
 * The consent a state names, on the shard its tag says (an untagged state is from before shards:
 * shard 0) or where its account moved since; that shard is the request's from here on.
 */
async function consumeTaggedSession(c: Context<AppEnv>, state: string, provider: OAuthProvider, now: number) {
  const digest = await stateDigest(state);
  const tagged = await findByTag(c.env, shardOfTag(state), (shard) => consumeSession(database(onShard(c.env, shard).DB), digest, provider, now));
  if (!tagged) return undefined;
  c.env = onShard(c.env, tagged.shard);
  return tagged.found;
}

export const oauthCallbackRoutes = new Hono<AppEnv>();

oauthCallbackRoutes.get("/oauth/:provider/callback", async (c) => {
  const provider: OAuthProvider | null = providerNamed(c.req.param("provider"));
  const state = c.req.query("state");
  if (!provider || !state) return errorPage(c, 400, "This is not a consent answer.", "The link is incomplete.");
  const now = Date.now();
  const session = state.length <= 128 ? await consumeTaggedSession(c, state, provider, now) : undefined;
  const db = database(c.env.DB);
  if (!session) {
    const retryAfter = await countAuthFailure(c.env, requestBucket(c.req.header("CF-Connecting-IP")));
    if (retryAfter !== null) return errorPage(c, 429, "Too many attempts.", `Try again in ${retryAfter} seconds.`);
    return errorPage(c, 400, "This consent link is unknown or was already used.", "Start again from Salvo.");
  }
  if (session.expiresAt.getTime() <= now) return answer(c, session, { ok: false, error: "expired", description: "The consent took longer than allowed" }, now);
  const providerError = c.req.query("error");
  if (providerError) {
    const description = c.req.query("error_description")?.slice(0, 500) ?? null;
    const error = providerError === "access_denied" ? "access_denied" : "provider_error";
    return answer(c, session, { ok: false, error, description: error === "provider_error" ? `${providerError}${description ? `: ${description}` : ""}` : (description ?? "The person declined") }, now);
  }
  const code = c.req.query("code");
  if (!code) return answer(c, session, { ok: false, error: "provider_error", description: "The provider sent no code" }, now);
  let outcome: ConsentOutcome;
  try {
    outcome = await completeConsent(c.env, db, session, code, now);
  } catch (error) {
    log("error", "oauth consent failed", { request_id: c.get("requestId"), session_id: session.id, error: (error as Error).message });
    outcome = { ok: false, error: "token_exchange_failed", description: "Salvo could not complete the connection; try again" };
  }
  return answer(c, session, outcome, now);
});
