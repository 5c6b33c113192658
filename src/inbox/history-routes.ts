import { createRoute, z } from "@hono/zod-openapi";
import { htmlToText } from "../engine/html-text";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, pathId, queryBoolean } from "../platform/openapi";
import { iso } from "../platform/time";
import { recordOfLead, threadOf } from "./store";

const HistoryMessage = z
  .object({
    stats_id: z.string(),
    message_id: z.string().nullable(),
    type: z.enum(["SENT", "REPLY"]),
    time: z.string(),
    from: z.string().nullable(),
    to: z.string().nullable(),
    cc: z.string().nullable(),
    bcc: z.string().nullable(),
    subject: z.string().nullable(),
    email_body: z.string().nullable(),
    email_seq_number: z.string(),
    open_count: z.number().int().optional(),
    click_count: z.number().int().optional(),
    click_details: z.record(z.string(), z.boolean()).optional(),
    attachments: z.array(z.object({ file_name: z.string(), file_url: z.string(), file_type: z.string(), file_size: z.number() })),
    ignored: z.boolean(),
  })
  .openapi("HistoryMessage");

const MessageHistory = z.object({ history: z.array(HistoryMessage), from: z.string().nullable(), to: z.string() }).openapi("MessageHistory");

const messageHistory = createRoute({
  method: "get",
  path: "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/message-history",
  tags: ["Master inbox"],
  summary: "A lead's thread in a campaign: every email sent and every reply, oldest first",
  security: API_KEY_SECURITY,
  request: {
    params: z.object({ campaign_id: pathId("campaign_id"), lead_id: pathId("lead_id") }),
    query: z.object({ event_time_gt: z.iso.datetime({ offset: true }).optional(), show_plain_text_response: queryBoolean.optional() }),
  },
  responses: { 200: json(MessageHistory, "The thread (CONTRACT section 12)"), ...errorResponses(401, 404, 422, 429) },
});

export const historyRoutes = createRouter();

historyRoutes.openapi(messageHistory, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const query = c.req.valid("query");
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), campaign_id);
  const record = await recordOfLead(c.env.DB, campaign.id, lead_id);
  if (!record) throw ApiError.notFound("Lead not found in campaign");
  const { messages, opens, clicks } = await threadOf(c.env.DB, record.id, query.event_time_gt ? Date.parse(query.event_time_gt) : -1);
  const plain = query.show_plain_text_response ?? false;
  const history = messages.map((m) => ({
    stats_id: String(m.id),
    message_id: m.message_id,
    type: m.type,
    time: iso(new Date(m.occurred_at)),
    from: m.from_email,
    to: m.to_email,
    cc: null,
    bcc: null,
    subject: m.subject,
    email_body: m.body === null || !plain ? m.body : htmlToText(m.body),
    email_seq_number: String(m.sequence_number),
    ...(m.type === "SENT" && {
      open_count: opens.get(m.sequence_number) ?? 0,
      click_count: clicks.get(m.sequence_number)?.length ?? 0,
      click_details: Object.fromEntries((clicks.get(m.sequence_number) ?? []).map((url) => [url, true])),
    }),
    attachments: [] as { file_name: string; file_url: string; file_type: string; file_size: number }[],
    ignored: m.ignored === 1,
  }));
  return c.json({ history, from: record.mailbox_email ?? history.find((m) => m.type === "SENT")?.from ?? null, to: record.lead_email }, 200);
});
