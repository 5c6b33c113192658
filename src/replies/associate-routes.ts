import { createRoute, z } from "@hono/zod-openapi";
import { withBodies } from "../platform/bodies";
import { and, desc, eq } from "drizzle-orm";
import { events, untrackedReplies } from "../db/schema";
import { ingest } from "../events/ingest";
import { visibleCampaigns, visibleRows } from "../platform/access";
import { utf8Prefix } from "../platform/bytes";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { REPLY_BODY_BYTES } from "./inbound";
import { replyText } from "./reply-text";

// Schemas.

const Associate = z
  .object({
    emailCampaignId: BodyId,
    leadMapId: BodyId.openapi({ description: "The campaign's record (email_lead_map_id)" }),
    untrackedReplyId: BodyId.openapi({ description: "An id of GET /master-inbox/untracked-replies (number or decimal string)" }),
  })
  .openapi("AssociateUntrackedReply");

const Associated = z.object({
  sucess: z.boolean().openapi({ description: "The hosted page's spelling, kept" }),
  success: z.boolean(),
  ok: z.boolean(),
  message: z.string(),
  data: z.object({ leadMapId: z.number().int(), swMessageId: z.number().int().openapi({ description: "The reply's stats_id in the record's thread" }) }),
});

const route = createRoute({
  method: "post",
  path: "/api/v1/master-inbox/untracked-replies/associate-to-lead",
  operationId: "associateUntrackedReply",
  summary: "Make an untracked reply a reply of a campaign's lead",
  description:
    "The untracked reply becomes a REPLY of the record `leadMapId` of campaign `emailCampaignId`, on its latest sent email, leaves the untracked list and acts as any reply: the record's state and stop-on-reply, categorisation, counts and EMAIL_REPLY webhooks. Campaign, record or untracked reply not found (or another tenant's) → 404; the record has no sent email → 400 `No sent email found for this lead in the campaign`.",
  tags: ["Master inbox"],
  security: API_KEY_SECURITY,
  request: { body: jsonBody(Associate, { emailCampaignId: 1, leadMapId: 10, untrackedReplyId: "42" }) },
  responses: { 200: json(Associated, "Associated"), ...errorResponses(400, 401, 404, 422, 429) },
});

// Loading.

const CAMPAIGN_NOT_FOUND = "Campaign not found";
const RECORD_NOT_FOUND = "Lead not found in campaign";
const REPLY_NOT_FOUND = "Untracked reply not found";

function visibleUntracked(db: Database, principal: Principal, id: number) {
  return db
    .select()
    .from(untrackedReplies)
    .where(and(eq(untrackedReplies.id, id), visibleRows(principal, untrackedReplies)))
    .get();
}

/** The record's latest sent email (its step and mailbox), the one a reply answers. */
function latestSend(db: Database, recordId: number) {
  return db
    .select({ sequenceNumber: events.sequenceNumber })
    .from(events)
    .where(and(eq(events.campaignLeadId, recordId), eq(events.type, "SENT")))
    .orderBy(desc(events.occurredAt), desc(events.id))
    .limit(1)
    .get();
}

function replyStatsId(db: Database, campaignId: number, eventId: string) {
  return db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.campaignId, campaignId), eq(events.eventId, eventId)))
    .get();
}

export const associateRoutes = createRouter();

associateRoutes.openapi(route, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const now = Date.now();
  let reply: Awaited<ReturnType<typeof visibleUntracked>>;
  const stored = await ingest(
    c.env,
    db,
    { visible: visibleCampaigns(principal), accountId: principal.accountId, campaignId: body.emailCampaignId, want: { recordIds: [body.leadMapId], emails: [], categoryIds: [] } },
    async (context) => {
      const record = context.records.find((row) => row.id === body.leadMapId);
      if (!record) throw ApiError.refused(404, RECORD_NOT_FOUND);
      reply = await visibleUntracked(db, principal, body.untrackedReplyId);
      if (!reply) throw ApiError.refused(404, REPLY_NOT_FOUND);
      await withBodies(c.env.BODIES, principal.accountId, [reply], ["textBody", "htmlBody"]);
      const sent = await latestSend(db, record.id);
      if (!sent) throw ApiError.refused(400, "No sent email found for this lead in the campaign");
      return [
        {
          // The reader's own id of the message: a repeat (or a retry after a failed delete below) adds nothing twice.
          eventId: reply.messageKey,
          record,
          incoming: {
            type: "REPLY",
            occurredAt: Math.min(reply.receivedAt.getTime(), now),
            sequenceNumber: sent.sequenceNumber,
            emailAccountId: reply.emailAccountId,
            fromEmail: reply.fromEmail,
            isOoo: false,
            categoryId: null,
          },
          toEmail: reply.toEmail,
          subject: reply.subject,
          body: utf8Prefix(replyText({ text: reply.textBody, html: reply.htmlBody }), REPLY_BODY_BYTES),
          messageId: reply.messageId,
          linkUrl: null,
          isMachine: false,
        },
      ];
    },
    now,
  );
  if (!stored) throw ApiError.refused(404, CAMPAIGN_NOT_FOUND);
  const associated = reply!;
  const stat = await replyStatsId(db, body.emailCampaignId, associated.messageKey);
  // Only once the reply is stored does it leave the untracked list.
  await db.delete(untrackedReplies).where(eq(untrackedReplies.id, associated.id));
  return c.json({ sucess: true, success: true, ok: true, message: "Untracked reply associated to lead successfully", data: { leadMapId: body.leadMapId, swMessageId: stat!.id } }, 200);
});
