import { createRoute, z } from "@hono/zod-openapi";
import { withBodies } from "../platform/bodies";
import { database } from "../platform/db";
import { API_KEY_SECURITY, createRouter, errorResponses, json, queryBoolean, queryCount } from "../platform/openapi";
import { iso } from "../platform/time";
import { listUntracked } from "./untracked";
import { associateRoutes } from "./associate-routes";

const DEFAULT_LIMIT = 20;

const Attachment = z.object({ filename: z.string().nullable(), content_type: z.string(), size: z.number().int() });
const UntrackedReply = z
  .object({
    id: z.number().int(),
    email_account_id: z.number().int(),
    from_email: z.string().nullable(),
    to_email: z.string(),
    subject: z.string(),
    received_at: z.string(),
    has_attachments: z.boolean(),
    body: z.string().optional().openapi({ description: "With fetchBody: the HTML body, or the text one when the message has no HTML" }),
    attachments: z.array(Attachment).optional().openapi({ description: "With fetchAttachments: name, type and size of each attachment (content is not kept)" }),
  })
  .openapi("UntrackedReply");

const route = createRoute({
  method: "get",
  path: "/api/v1/master-inbox/untracked-replies",
  operationId: "listUntrackedReplies",
  description: "Messages the mailbox reader found that answer no campaign email, newest first: `limit` (1–100), `offset`, `from_email`, " +
    "`to_email`, `subject_line`; `fetchBody`/`fetchAttachments` add bodies and attachment metadata.",
  tags: ["Master inbox"],
  summary: "Replies the mailbox reader found that answer no campaign email, newest first",
  security: API_KEY_SECURITY,
  request: {
    query: z.object({
      limit: queryCount(1, 100).optional(),
      offset: queryCount(0).optional(),
      fetchBody: queryBoolean.optional(),
      fetchAttachments: queryBoolean.optional(),
      from_email: z.string().max(320).optional(),
      to_email: z.string().max(320).optional(),
      subject_line: z.string().min(1).max(200).optional().openapi({ description: "Substring of the subject (ASCII case-insensitive)" }),
    }),
  },
  responses: {
    200: json(
      z.object({
        ok: z.boolean(),
        data: z.object({
          success: z.boolean(),
          message: z.string(),
          data: z.object({ replies: z.array(UntrackedReply), total_count: z.number().int() }),
        }),
      }),
      "A page of untracked replies",
    ),
    ...errorResponses(401, 422, 429),
  },
});

export const untrackedReplyRoutes = createRouter().route("/", associateRoutes);

untrackedReplyRoutes.openapi(route, async (c) => {
  const query = c.req.valid("query");
  const { rows, total } = await listUntracked(
    database(c.env.DB),
    c.get("principal"),
    { fromEmail: query.from_email, toEmail: query.to_email, subjectLine: query.subject_line },
    { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 },
  );
  if (query.fetchBody) await withBodies(c.env.BODIES, c.get("principal").accountId, rows, ["textBody", "htmlBody"]);
  const replies = rows.map((row) => ({
    id: row.id,
    email_account_id: row.emailAccountId,
    from_email: row.fromEmail,
    to_email: row.toEmail,
    subject: row.subject,
    received_at: iso(row.receivedAt.getTime()),
    has_attachments: row.attachments.length > 0,
    ...(query.fetchBody && { body: row.htmlBody ?? row.textBody }),
    ...(query.fetchAttachments && { attachments: row.attachments }),
  }));
  return c.json({ ok: true, data: { success: true, message: "Untracked replies fetched", data: { replies, total_count: total } } }, 200);
});
