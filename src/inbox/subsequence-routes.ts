import { createRoute, z } from "@hono/zod-openapi";
import { wakeCampaign } from "../mailboxes/wake";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { iso } from "../platform/time";
import { isAttached, pushToSubsequence } from "./subsequence-store";
import { IdInput, LEAD_MAPPING_NOT_FOUND, RecordTarget, given, targetRecord } from "./target";

const NOT_A_SUBSEQUENCE = "sub_sequence_id must be a subsequence of the lead's campaign";

const PushData = z.object({
  email_lead_map_id: z.number().int(),
  parent_campaign_id: z.number().int(),
  sub_sequence_id: z.number().int(),
  new_email_lead_map_id: z.number().int(),
  will_start_at: z.string(),
  stop_on_parent_reply: z.boolean(),
});

const push = createRoute({
  method: "post",
  path: "/api/v1/master-inbox/push-to-subsequence",
  operationId: "pushToSubsequence",
  tags: ["Master inbox"],
  summary: "Move a lead from its campaign into one of the campaign's subsequences",
  description:
    "The record stops here (COMPLETED, `is_pushed_to_sub_sequence`); the subsequence gets the lead as a new record (DRAFTED, due after " +
    "`sub_sequence_delay_time` seconds, on the same mailbox when that mailbox sends for the subsequence). With " +
    "`stop_lead_on_parent_campaign_reply`, a later reply on the parent thread stops the new record.",
  security: API_KEY_SECURITY,
  request: {
    body: jsonBody(
      z.object({
        ...RecordTarget,
        sub_sequence_id: IdInput.optional(),
        subsequence_id: IdInput.optional().describe("Alias of sub_sequence_id"),
        sub_sequence_delay_time: z.number().int().min(0).max(365 * 86_400).default(0),
        stop_lead_on_parent_campaign_reply: z.boolean().default(false),
      }), { email_lead_map_id: 1, sub_sequence_id: 2, sub_sequence_delay_time: 0, stop_lead_on_parent_campaign_reply: true },
    ),
  },
  responses: {
    200: json(z.object({ ok: z.boolean(), success: z.boolean(), message: z.string(), data: PushData }), "Pushed"),
    ...errorResponses(400, 401, 404, 422, 429),
  },
});

export const subsequenceRoutes = createRouter();

subsequenceRoutes.openapi(push, async (c) => {
  const body = c.req.valid("json");
  const subSequenceId = given(body.sub_sequence_id, body.subsequence_id, "sub_sequence_id");
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const record = await targetRecord(db, principal, body, LEAD_MAPPING_NOT_FOUND);
  // Another tenant's campaign, a missing one and one that is no subsequence of this campaign read alike.
  const subsequence = await findCampaign(db, principal, subSequenceId).catch((error: unknown) => {
    if (error instanceof ApiError) return null;
    throw error;
  });
  if (!subsequence || subsequence.parentCampaignId !== record.campaignId) throw ApiError.badRequest(NOT_A_SUBSEQUENCE);
  if (record.subSequenceId !== null) throw ApiError.badRequest("Lead already pushed to a subsequence");
  if (record.state === "STOPPED" || record.state === "BLOCKED") throw ApiError.badRequest(`Lead is ${record.state}`);
  const now = Date.now();
  const startAt = now + body.sub_sequence_delay_time * 1000;
  const keepMailbox = record.emailAccountId !== null && (await isAttached(c.env.DB, subsequence.id, record.emailAccountId));
  const created = await pushToSubsequence(c.env.DB, {
    recordId: record.id,
    accountId: record.accountId,
    leadId: record.leadId,
    subSequenceId: subsequence.id,
    mailboxId: keepMailbox ? record.emailAccountId : null,
    startAt,
    stopOnParentReply: body.stop_lead_on_parent_campaign_reply,
    now,
  });
  if (created === null) throw ApiError.badRequest("Lead already pushed to a subsequence");
  if (subsequence.status === "ACTIVE") await wakeCampaign(c.env, subsequence.id);
  return c.json(
    {
      ok: true,
      success: true,
      message: "Lead pushed to subsequence successfully",
      data: {
        email_lead_map_id: record.id,
        parent_campaign_id: record.campaignId,
        sub_sequence_id: subsequence.id,
        new_email_lead_map_id: created,
        will_start_at: iso(startAt),
        stop_on_parent_reply: body.stop_lead_on_parent_campaign_reply,
      },
    },
    200,
  );
});
