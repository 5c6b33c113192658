import { createRoute, z } from "@hono/zod-openapi";
import { htmlToText } from "../mail/html-text";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, pathId, queryBoolean } from "../platform/openapi";
import { iso } from "../platform/time";
import type { OutboundAttachment } from "../db/schema";
import { recordOfLead, recordsOfLeads, threadOf, threadsOf, type Thread } from "./store";
import { Categorisation, parseCategorisation } from "../triage/present";

export const HistoryMessage = z
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
    categorisation: Categorisation.nullable().optional().openapi({ description: "On a REPLY: how it was categorised (CONTRACT section 20.5)" }),
  })
  .openapi("HistoryMessage");

const MessageHistory = z.object({ history: z.array(HistoryMessage), from: z.string().nullable(), to: z.string() }).openapi("MessageHistory");

const messageHistory = createRoute({
  method: "get",
  path: "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/message-history",
  operationId: "getLeadMessageHistory",
  description: "The lead's thread in the campaign, oldest first: every email sent (with open and click counts) and every reply. `event_time_gt` " +
    "keeps later messages; `show_plain_text_response` gives bodies as text. Answers `{history, from, to}`.",
  tags: ["Master inbox"],
  summary: "A lead's thread in a campaign: every email sent and every reply, oldest first",
  security: API_KEY_SECURITY,
  request: {
    params: z.object({ campaign_id: pathId("campaign_id"), lead_id: pathId("lead_id") }),
    query: z.object({ event_time_gt: instant().optional(), show_plain_text_response: queryBoolean.optional() }),
  },
  responses: { 200: json(MessageHistory, "The thread (CONTRACT section 12)"), ...errorResponses(401, 404, 422, 429) },
});

/** Without lead_ids the whole campaign is read, up to this many leads (contract section 12, inferred cap). */
const MAX_WHOLE_CAMPAIGN = 500;
const MAX_LEAD_IDS = 100;

const bulkHistory = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/message-history-for-leads/{token}",
  operationId: "getLeadsMessageHistory",
  description: "Several leads' threads keyed by lead id. `{token}` is any segment. `lead_ids` 1–100; null or absent = every lead of the campaign " +
    "up to 500 (more → 400 asking for ids).",
  tags: ["Master inbox"],
  summary: "Several leads' threads in a campaign, keyed by lead id (leads not in the campaign are left out)",
  security: API_KEY_SECURITY,
  request: {
    params: z.object({
      campaign_id: pathId("campaign_id"),
      token: z.string().max(200).openapi({ param: { name: "token", in: "path" }, description: "Any segment (the hosted docs put a fixed string here)" }),
    }),
    query: z.object({ event_time_gt: instant().optional() }),
    body: {
      required: false,
      content: {
        "application/json": {
          schema: z
            .object({
              lead_ids: z
                .array(z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d{0,15}$/).transform(Number)]))
                .min(1)
                .max(MAX_LEAD_IDS)
                .nullable()
                .optional()
                .openapi({ description: `null or absent: every lead of the campaign (at most ${MAX_WHOLE_CAMPAIGN})` }),
            })
            .openapi("BulkMessageHistoryRequest"),
          example: { lead_ids: [1, 2] },
        },
      },
    },
  },
  responses: {
    200: json(z.record(z.string(), z.object({ history: z.array(HistoryMessage) })), "Each lead's thread, by lead id"),
    ...errorResponses(400, 401, 404, 422, 429),
  },
});

export const historyRoutes = createRouter();

historyRoutes.openapi(messageHistory, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const query = c.req.valid("query");
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), campaign_id);
  const record = await recordOfLead(c.env.DB, campaign.id, lead_id);
  if (!record) throw ApiError.notFound("Lead not found in campaign");
  const reader = { bucket: c.env.BODIES, accountId: campaign.accountId };
  const thread = await threadOf(c.env.DB, record.id, query.event_time_gt ? Date.parse(query.event_time_gt) : -1, reader);
  const history = presentHistory(thread, query.show_plain_text_response ?? false);
  return c.json({ history, from: record.mailbox_email ?? history.find((m) => m.type === "SENT")?.from ?? null, to: record.lead_email }, 200);
});

historyRoutes.openapi(bulkHistory, async (c) => {
  const { campaign_id } = c.req.valid("param");
  const after = c.req.valid("query").event_time_gt;
  const leadIds = c.req.valid("json").lead_ids ?? null;
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), campaign_id);
  const records = await recordsOfLeads(c.env.DB, campaign.id, leadIds === null ? null : [...new Set(leadIds)], MAX_WHOLE_CAMPAIGN + 1);
  if (records.length > MAX_WHOLE_CAMPAIGN) {
    throw ApiError.badRequest(`The campaign has more than ${MAX_WHOLE_CAMPAIGN} leads: send lead_ids (at most ${MAX_LEAD_IDS})`);
  }
  const threads = await threadsOf(
    c.env.DB,
    records.map((record) => record.id),
    after ? Date.parse(after) : -1,
    { bucket: c.env.BODIES, accountId: campaign.accountId },
  );
  const answer = Object.fromEntries(records.map((record) => [String(record.lead_id), { history: presentHistory(threads.get(record.id)!, false) }]));
  return c.json(answer, 200);
});

/** The files a reply sent from the inbox carried, as the writer gave them (name from the URL when not given). */
function attachmentsOf(json: string | null): { file_name: string; file_url: string; file_type: string; file_size: number }[] {
  const files = json === null ? [] : (JSON.parse(json) as OutboundAttachment[]);
  return files.map((file) => ({
    file_name: file.file_name ?? decodeURIComponent(new URL(file.file_url).pathname.split("/").pop() ?? ""),
    file_url: file.file_url,
    file_type: file.file_type ?? "",
    file_size: file.file_size ?? 0,
  }));
}

/** A stored address list (JSON array) as the history's comma-separated string; null when empty. */
function addressList(json: string | null): string | null {
  const addresses = json === null ? [] : (JSON.parse(json) as string[]);
  return addresses.length === 0 ? null : addresses.join(", ");
}

/** A thread's messages as the history shows them (contract section 12's Message). */
export function presentHistory({ messages, opens, clicks }: Thread, plain: boolean) {
  return messages.map((m) => ({
    stats_id: String(m.id),
    message_id: m.message_id,
    type: m.type,
    time: iso(new Date(m.occurred_at)),
    from: m.from_email,
    to: m.to_email,
    cc: addressList(m.cc),
    bcc: addressList(m.bcc),
    subject: m.subject,
    email_body: m.body === null || !plain ? m.body : htmlToText(m.body),
    email_seq_number: String(m.sequence_number),
    ...(m.type === "SENT" && {
      open_count: opens.get(m.sequence_number) ?? 0,
      click_count: clicks.get(m.sequence_number)?.length ?? 0,
      click_details: Object.fromEntries((clicks.get(m.sequence_number) ?? []).map((url) => [url, true])),
    }),
    attachments: attachmentsOf(m.attachments),
    ignored: m.ignored === 1,
    ...(m.type === "REPLY" && { categorisation: parseCategorisation(m.categorisation) }),
  }));
}
