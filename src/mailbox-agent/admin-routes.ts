import { createRoute, z } from "@hono/zod-openapi";
import { adminAuth, adminSecurity } from "../accounts/admin-routes";
import { locateRow } from "../directory/locate";
import { ApiError } from "../platform/errors";
import { createRouter, errorResponses, json, pathId, queryCount } from "../platform/openapi";
import { senderStub } from "./stub";

const SenderPass = z
  .object({
    ok: z.boolean(),
    sent: z.number().int(),
    next_wake_at: z.string().nullable(),
    timings: z.object({ find_ms: z.number(), claim_ms: z.number(), send_ms: z.number() }),
  })
  .openapi("SenderPass");

const runPass = createRoute({
  method: "post",
  path: "/admin/v1/email-accounts/{id}/sender-pass",
  operationId: "adminRunSenderPass",
  description: "Runs the mailbox's sender now and waits for it (`max_sends` 0–50; 0 only looks). Answers what was sent, when it wakes next and the " +
    "time spent, to see why a mailbox does not send. Unknown mailbox → 404.",
  tags: ["Admin"],
  summary: "Run a mailbox's sender pass now and wait for it (operators: see why a mailbox does not send; benchmarks)",
  security: adminSecurity,
  middleware: [adminAuth] as const,
  request: {
    params: z.object({ id: pathId("id") }),
    query: z.object({ max_sends: queryCount(0, 50).optional().openapi({ description: "Send at most this many (0 = only look)" }) }),
  },
  responses: { 200: json(SenderPass, "What the pass sent and when the sender wakes next"), ...errorResponses(401, 404, 429) },
});

const ReadPass = z
  .object({
    ok: z.boolean(),
    fetched_to_uid: z.number().int().nullable(),
    more: z.boolean(),
    replies: z.number().int(),
    bounces: z.number().int(),
    untracked: z.number().int(),
    d1_write_batches: z.number().int(),
  })
  .openapi("ReadPass");

const runRead = createRoute({
  method: "post",
  path: "/admin/v1/email-accounts/{id}/read-pass",
  operationId: "adminRunReadPass",
  description: "Reads the mailbox's INBOX now (up to 100 new messages): replies, bounces and untracked messages are recorded as the scheduled " +
    "reader would. Unknown mailbox → 404. Wrong admin tokens count as failed authentications of the caller's IP (429 past the limit).",
  tags: ["Admin"],
  summary: "Read a mailbox's INBOX now (up to 100 new messages) and record what answers our emails",
  security: adminSecurity,
  middleware: [adminAuth] as const,
  request: { params: z.object({ id: pathId("id") }) },
  responses: { 200: json(ReadPass, "What the read found"), ...errorResponses(401, 404, 429) },
});

export const engineAdminRoutes = createRouter();

engineAdminRoutes.openapi(runRead, async (c) => {
  const id = c.req.valid("param").id;
  if ((await locateRow(c.env, "email_accounts", id)) === null) throw ApiError.notFound("Email account not found");
  const result = await senderStub(c.env, id).runRead(Date.now(), id);
  const outcome = result.outcome ?? { replies: 0, bounces: 0, untracked: 0, writeBatches: 0 };
  return c.json(
    {
      ok: true,
      fetched_to_uid: result.cursor?.lastUid ?? null,
      more: result.more,
      replies: outcome.replies,
      bounces: outcome.bounces,
      untracked: outcome.untracked,
      d1_write_batches: outcome.writeBatches,
    },
    200,
  );
});

engineAdminRoutes.openapi(runPass, async (c) => {
  const id = c.req.valid("param").id;
  if ((await locateRow(c.env, "email_accounts", id)) === null) throw ApiError.notFound("Email account not found");
  const result = await senderStub(c.env, id).runPass(Date.now(), { mailboxId: id, maxSends: c.req.valid("query").max_sends, read: false });
  const timings = result.timings ?? { findMs: 0, claimMs: 0, sendMs: 0 };
  return c.json(
    {
      ok: true,
      sent: result.sent,
      next_wake_at: result.nextWakeAt === null ? null : new Date(result.nextWakeAt).toISOString(),
      timings: { find_ms: timings.findMs, claim_ms: timings.claimMs, send_ms: timings.sendMs },
    },
    200,
  );
});
