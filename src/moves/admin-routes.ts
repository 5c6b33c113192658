import { createRoute, z } from "@hono/zod-openapi";
import { adminAuth, adminSecurity } from "../accounts/admin-routes";
import { ApiError } from "../platform/errors";
import { createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { shardCount } from "../platform/shards";
import { advanceMove, requestMove } from "./run";
import { findMove, type MoveRow } from "./store";

/** How long one call works on a move before it answers (the operator calls again until `done`). */
const CALL_BUDGET_MS = 10_000;

const MoveBody = z
  .object({ shard: z.number().int().min(0).max(1000).openapi({ description: "The shard to move the account to (0 for DB, k for DB_k)" }) })
  .openapi("AccountMoveRequest");

const MoveStatus = z
  .object({
    account_id: z.number().int(),
    from_shard: z.number().int(),
    to_shard: z.number().int(),
    state: z.enum(["copying", "verifying", "switching", "deleting", "done", "rolling_back", "failed"]),
    copied_rows: z.number().int(),
    deleted_rows: z.number().int(),
    error: z.string().nullable().openapi({ description: "Why the move was undone (state rolling_back or failed)" }),
    started_at: z.string(),
    updated_at: z.string(),
    switched_at: z.string().nullable().openapi({ description: "When the directory named the new shard: the account's writes were refused from started_at to then" }),
    finished_at: z.string().nullable(),
  })
  .openapi("AccountMove");

const MoveParams = z.object({ id: pathId("id") });

const moveAccount = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{id}/move",
  operationId: "adminMoveAccount",
  summary: "Move an account to another shard (call again until its state is done)",
  description:
    "Starts moving the account's rows to `shard`, or goes on with the move already under way to it, works on it for up to 10 seconds and " +
    "answers where it stands; call again until `state` is `done` (the minute cron also goes on with it). While the rows are copied and " +
    "checked (`copying`, `verifying`) the account's writes answer 503 with Retry-After and its mailboxes wait; reads keep working. " +
    "A difference found by the check undoes the move (`rolling_back`, then `failed` with `error`) and the account stays where it was. " +
    "Unbound shard, the account's own shard or a move to another shard under way → 400; unknown account → 404.",
  tags: ["Admin"],
  security: adminSecurity,
  middleware: [adminAuth] as const,
  request: { params: MoveParams, body: jsonBody(MoveBody, { shard: 1 }) },
  responses: { 200: json(MoveStatus, "The move after this call's work"), ...errorResponses(400, 401, 404, 422) },
});

const getMove = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/move",
  operationId: "adminGetAccountMove",
  summary: "Where an account's move stands (the last one, once finished)",
  description: "The account's move under way, or its last one. No move ever → 404.",
  tags: ["Admin"],
  security: adminSecurity,
  middleware: [adminAuth] as const,
  request: { params: MoveParams },
  responses: { 200: json(MoveStatus, "The move"), ...errorResponses(401, 404, 422) },
});

function present(move: MoveRow): z.infer<typeof MoveStatus> {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    account_id: move.accountId,
    from_shard: move.fromShard,
    to_shard: move.toShard,
    state: move.state,
    copied_rows: move.copiedRows,
    deleted_rows: move.deletedRows,
    error: move.error,
    started_at: iso(move.startedAt),
    updated_at: iso(move.updatedAt),
    switched_at: move.switchedAt === null ? null : iso(move.switchedAt),
    finished_at: move.finishedAt === null ? null : iso(move.finishedAt),
  };
}

export const moveAdminRoutes = createRouter();

moveAdminRoutes.openapi(moveAccount, async (c) => {
  const id = c.req.valid("param").id;
  const { shard } = c.req.valid("json");
  const requested = await requestMove(c.env, id, shard, Date.now());
  if (!requested.ok) {
    if (requested.reason === "unknown_shard") throw ApiError.badRequest(`No shard ${shard}: this deployment binds ${shardCount(c.env)}`);
    if (requested.reason === "same_shard") throw ApiError.badRequest(`The account is on shard ${shard} already`);
    if (requested.reason === "busy") throw ApiError.badRequest(`The account is being moved to shard ${requested.move!.toShard} already`);
    throw ApiError.notFound("Account not found");
  }
  const move = (await advanceMove(c.env, id, Date.now() + CALL_BUDGET_MS))!;
  return c.json(present(move), 200);
});

moveAdminRoutes.openapi(getMove, async (c) => {
  const move = await findMove(c.env.DIRECTORY, c.req.valid("param").id);
  if (!move) throw ApiError.notFound("No move of this account");
  return c.json(present(move), 200);
});
