import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import type { Database } from "../platform/db";
import { setReplyIgnored } from "./store";
import { IdInput, INBOX_TARGET, RecordTarget, targetRecord } from "./target";

// Schemas.

/** §4's body (`stats_id` of the record's reply) or the hosted page's `{id, ignore_reply}` (CONTRACT 21.3). */
const IgnoreBody = z
  .object({
    ...RecordTarget,
    stats_id: IdInput.optional().openapi({ description: "§4's form: a reply of the record named (ignored)" }),
    id: IdInput.optional().openapi({ description: "The hosted form: a reply's stats_id, with ignore_reply" }),
    ignore_reply: z.boolean().optional().openapi({ description: "true ignores the reply, false counts it again (the hosted form)" }),
  })
  .openapi("IgnoreReply");

const HostedAnswer = z.object({ ok: z.boolean(), message: z.string(), data: z.object({ success: z.boolean(), updated: z.number().int() }) });

const FORMS =
  "Two bodies: the hosted `{id (a reply's stats_id), ignore_reply: boolean}` → `{\"ok\":true,\"message\":\"Reply ignored successfully\",\"data\":{\"success\":true,\"updated\":1}}` " +
  "(`false` counts it again, overriding the automatic flags: `\"Reply counted again\"`); an unknown or another tenant's reply → 404 " +
  "`{\"ok\":false,\"error\":\"Email stat not found or access denied\",\"message\":…}`. Or §4's `{email_lead_map_id | lead_id + campaign_id, stats_id}`, " +
  `which ignores that reply of the record (${INBOX_TARGET} Not a reply of it → 404 \`Reply not found\`). Counts (reply_count, analytics) follow at once.`;

const tags = ["Master inbox"];
const security = API_KEY_SECURITY;
const routes = {
  post: createRoute({
    method: "post",
    path: "/api/v1/master-inbox/ignore-reply",
    operationId: "ignoreReply",
    summary: "Ignore one reply (excluded from reply_count), or count it again",
    description: `${FORMS} §4's body answers \`{"ok":true}\`.`,
    "x-salvo-extension": true,
    tags,
    security,
    request: { body: jsonBody(IgnoreBody, { email_lead_map_id: 1, stats_id: "1" }) },
    responses: { 200: json(z.union([z.object({ ok: z.boolean() }), HostedAnswer]), "Done"), ...errorResponses(401, 404, 422, 429) },
  }),
  patch: createRoute({
    method: "patch",
    path: "/api/v1/master-inbox/ignore-reply",
    operationId: "setReplyIgnored",
    summary: "Ignore one reply, or count it again (the hosted form)",
    description: `${FORMS} Either body answers the hosted shape.`,
    tags,
    security,
    request: { body: jsonBody(IgnoreBody, { id: 1, ignore_reply: true }) },
    responses: { 200: json(HostedAnswer, "Done"), ...errorResponses(401, 404, 422, 429) },
  }),
};

const STAT_NOT_FOUND = "Email stat not found or access denied";

type IgnoreInput = z.infer<typeof IgnoreBody>;

/** Applies either form; answers which one it was. */
async function ignore(db: Database, principal: Principal, body: IgnoreInput): Promise<{ hosted: boolean; ignore: boolean }> {
  if (body.id !== undefined) {
    if (body.ignore_reply === undefined) throw ApiError.validation([{ path: "ignore_reply", message: "Required with id" }]);
    if (!(await setReplyIgnored(db, principal, body.id, undefined, body.ignore_reply))) throw ApiError.refused(404, STAT_NOT_FOUND);
    return { hosted: true, ignore: body.ignore_reply };
  }
  if (body.stats_id === undefined) throw ApiError.validation([{ path: "id", message: "Give id (with ignore_reply), or stats_id with the record" }]);
  const record = await targetRecord(db, principal, body);
  if (!(await setReplyIgnored(db, principal, body.stats_id, record.id, true))) throw ApiError.notFound("Reply not found");
  return { hosted: false, ignore: true };
}

const hostedAnswer = (ignored: boolean) => ({ ok: true, message: ignored ? "Reply ignored successfully" : "Reply counted again", data: { success: true, updated: 1 } });

export const ignoreRoutes = createRouter();

ignoreRoutes.openapi(routes.post, async (c) => {
  const done = await ignore(database(c.env.DB), c.get("principal"), c.req.valid("json"));
  return c.json(done.hosted ? hostedAnswer(done.ignore) : { ok: true }, 200);
});

ignoreRoutes.openapi(routes.patch, async (c) => {
  const done = await ignore(database(c.env.DB), c.get("principal"), c.req.valid("json"));
  return c.json(hostedAnswer(done.ignore), 200);
});
