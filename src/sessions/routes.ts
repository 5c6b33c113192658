import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { presentedKey } from "../keys/auth";
import { KEY_PREFIX, lastFour } from "../keys/rules";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, pathId } from "../platform/openapi";
import { iso } from "../platform/time";
import { deleteVisibleSession, findVisibleSession, insertSession, listSessions, type SessionRow } from "./store";
import { currentShard } from "../platform/shards";
import { ABSOLUTE_MS, clearedSessionCookie, digestToken, IDLE_MS, newToken, sessionCookie, userAgentLabel } from "./rules";

const SESSION_NOT_FOUND = "Session not found";
const NOT_A_SESSION = "This request is not signed in with a session";
const TAGS = ["Web app sessions"];
/** Every session route also takes the session cookie (from the app's own pages); sign-in takes a key only. */
const SESSION_SECURITY = [...API_KEY_SECURITY, { SessionCookie: [] }];

const Session = z
  .object({
    id: z.number().int(),
    kind: z.enum(["account", "client"]).openapi({ description: "The kind of key the session was opened with" }),
    key_hint: z.string().openapi({ description: "That key, masked: its kind prefix and last four characters", example: "slv_cli_…x7Qa" }),
    account_id: z.number().int(),
    client_id: z.number().int().nullable().openapi({ description: "The client a client key's session acts for; null for an account key" }),
    user_agent: z.string().nullable(),
    created_at: z.string(),
    last_seen_at: z.string(),
    expires_at: z.string().openapi({ description: "Slides with use (12 h idle), never past 7 days after sign-in" }),
    current: z.boolean().openapi({ description: "The session this request was made with" }),
  })
  .openapi("WebSession");

const SessionEnvelope = z.object({ ok: z.literal(true), data: Session }).openapi("WebSessionResponse");
const Ended = z.object({ ok: z.literal(true) });

function present(row: SessionRow, currentId: number | undefined): z.infer<typeof Session> {
  return {
    id: row.id,
    kind: row.keyKind,
    key_hint: `${KEY_PREFIX[row.keyKind]}…${row.keyLast4}`,
    account_id: row.accountId,
    client_id: row.clientId,
    user_agent: row.userAgent,
    created_at: iso(row.createdAt),
    last_seen_at: iso(row.lastSeenAt),
    expires_at: iso(row.expiresAt),
    current: row.id === currentId,
  };
}

const signIn = createRoute({
  method: "post",
  path: "/api/v1/sessions",
  operationId: "createSession",
  tags: TAGS,
  summary: "Sign in to the web app with an API key: a session cookie acting as that key",
  description:
    "Present an account or client API key (the `X-API-Key` header, as on every route) and get a session for the web app: " +
    "`Set-Cookie` carries a random token in an HttpOnly, SameSite=Strict cookie (`__Host-salvo_session`, Secure; on plain http " +
    "to a loopback address `salvo_session` without Secure). Only the token's digest is stored. The session acts exactly as the key: " +
    "same account or client, same rate-limit budget, and it stops working the moment the key is deleted, reset or deactivated. " +
    "On `/api/v1/` the cookie counts only on requests the app's own pages make (`Sec-Fetch-Site: same-origin`, and an `Origin`, " +
    "when sent, equal to this origin); elsewhere a request with the cookie and no key is a request without a key. " +
    "A session ends 12 hours after its last use or 7 days after sign-in, on sign-out, or when revoked. The key itself is never kept by the browser.",
  security: API_KEY_SECURITY,
  responses: {
    201: { ...json(SessionEnvelope, "The new session (this one: current is true); the cookie is in Set-Cookie"), headers: { "Set-Cookie": { schema: { type: "string" }, description: "The session cookie" } } },
    ...errorResponses(400, 401, 429),
  },
});

const list = createRoute({
  method: "get",
  path: "/api/v1/sessions",
  operationId: "listSessions",
  tags: TAGS,
  summary: "The live web app sessions the caller may see, most recently used first",
  description:
    "An account key (or its session) sees every live session of the account, its clients' included; a client key sees its client's. " +
    "Tokens are never shown; `key_hint` names the key a session acts as.",
  security: SESSION_SECURITY,
  responses: { 200: json(z.object({ ok: z.literal(true), data: z.array(Session) }).openapi("WebSessionList"), "Live sessions"), ...errorResponses(401, 429) },
});

const current = createRoute({
  method: "get",
  path: "/api/v1/sessions/current",
  operationId: "readCurrentSession",
  tags: TAGS,
  summary: "The session this request was made with (who the web app is signed in as)",
  description: "Answers 404 for a request made with an API key rather than a session.",
  security: SESSION_SECURITY,
  responses: { 200: json(SessionEnvelope, "This request's session"), ...errorResponses(401, 404, 429) },
});

const signOut = createRoute({
  method: "delete",
  path: "/api/v1/sessions/current",
  operationId: "signOut",
  tags: TAGS,
  summary: "Sign out: end this request's session at once and clear its cookie",
  description: "The session's token stops working immediately, in every tab. Answers 404 for a request made with an API key.",
  security: SESSION_SECURITY,
  responses: { 200: json(Ended, "Signed out"), ...errorResponses(401, 404, 429) },
});

const revoke = createRoute({
  method: "delete",
  path: "/api/v1/sessions/{session_id}",
  operationId: "revokeSession",
  tags: TAGS,
  summary: "Revoke a web app session: it stops working at once",
  description: "Any live session the caller may see (listSessions). Revoking the current session also clears its cookie.",
  security: SESSION_SECURITY,
  request: { params: z.object({ session_id: pathId("session_id") }) },
  responses: { 200: json(Ended, "Revoked"), ...errorResponses(401, 404, 422, 429) },
});

export const sessionRoutes = createRouter();

function requireSession(c: Context<AppEnv>): number {
  const id = c.get("sessionId");
  if (id === undefined) throw ApiError.notFound(NOT_A_SESSION);
  return id;
}

sessionRoutes.openapi(signIn, async (c) => {
  const principal = c.get("principal");
  const key = presentedKey(c.req);
  if (c.get("sessionId") !== undefined || !key) throw ApiError.badRequest("Sign in with an API key");
  const now = Date.now();
  const token = newToken(currentShard(c.env));
  const row = await insertSession(c.env.DB, {
    accountId: principal.accountId,
    clientId: principal.clientId,
    tokenHash: await digestToken(token),
    keyKind: principal.kind,
    keyHash: principal.keyHash,
    keyLast4: lastFour(key),
    userAgent: userAgentLabel(c.req.header("User-Agent")),
    now,
    expiresAt: now + IDLE_MS,
  });
  c.header("Set-Cookie", sessionCookie(new URL(c.req.url), token, ABSOLUTE_MS / 1000));
  c.header("Cache-Control", "no-store");
  return c.json({ ok: true as const, data: present(row, row.id) }, 201);
});

sessionRoutes.openapi(list, async (c) => {
  const rows = await listSessions(c.env.DB, c.get("principal"), Date.now());
  return c.json({ ok: true as const, data: rows.map((row) => present(row, c.get("sessionId"))) }, 200);
});

sessionRoutes.openapi(current, async (c) => {
  const id = requireSession(c);
  const row = await findVisibleSession(c.env.DB, c.get("principal"), id, Date.now());
  if (!row) throw ApiError.notFound(NOT_A_SESSION);
  return c.json({ ok: true as const, data: present(row, id) }, 200);
});

sessionRoutes.openapi(signOut, async (c) => {
  const id = requireSession(c);
  await deleteVisibleSession(c.env.DB, c.get("principal"), id);
  c.header("Set-Cookie", clearedSessionCookie(new URL(c.req.url)));
  return c.json({ ok: true as const }, 200);
});

sessionRoutes.openapi(revoke, async (c) => {
  const { session_id: id } = c.req.valid("param");
  if (!(await deleteVisibleSession(c.env.DB, c.get("principal"), id))) throw ApiError.notFound(SESSION_NOT_FOUND);
  if (id === c.get("sessionId")) c.header("Set-Cookie", clearedSessionCookie(new URL(c.req.url)));
  return c.json({ ok: true as const }, 200);
});
