import { createRoute, z } from "@hono/zod-openapi";
import { bodyStore } from "../platform/bodies";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { config } from "../config";
import { threadOf } from "../inbox/store";
import { emailAddress } from "../mail/address";
import { connectionUsable } from "../mailboxes/rules";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import type { Bindings } from "../platform/env";
import { ApiError } from "../platform/errors";
import { checkUrl, urlPolicy } from "../platform/outbound";
import { iso } from "../platform/time";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, instant, json, jsonBody, pathId } from "../platform/openapi";
import { collapseRecipients } from "../manual-mail/rules";
import { recipientsProblem } from "../manual-mail/store";
import { outsideSendByMessageId } from "../manual-mail/outside";
import { MAILBOX_UNUSABLE, replyDoor, type ReplyToSend } from "./outbound";
import { insertOutboundReply, replyByMessageId } from "./outbound-store";
import { threadAnchor, threadMailbox } from "./thread-store";

const Addresses = z
  .union([z.string().max(2000), z.array(emailAddress()).max(20)])
  .transform((value) => (Array.isArray(value) ? value : value.split(",").map((a) => a.trim()).filter(Boolean)))
  .pipe(z.array(emailAddress()).max(20));

const StatsId = z.union([z.number().int().positive(), z.string().regex(/^\d{1,15}$/).transform(Number)]);

const ReplyInThread = z
  .object({
    email_stats_id: StatsId,
    email_body: z.string().min(1).max(200_000),
    reply_message_id: z.string().max(998).optional().openapi({ description: "Message-ID of the message answered; default: the thread's newest message" }),
    reply_email_time: z.string().max(64).optional(),
    reply_email_body: z.string().max(200_000).optional(),
    to_email: emailAddress().optional(),
    to_first_name: z.string().max(255).optional(),
    to_last_name: z.string().max(255).optional(),
    cc: Addresses.optional(),
    bcc: Addresses.optional(),
    add_signature: z.boolean().default(false),
    scheduled_time: instant().optional(),
    schedule_condition: z.unknown().optional(),
    seq_type: z.unknown().optional(),
    attachments: z
      .array(
        z.object({
          // https to a public host (the outbound rule, checked in the handler and again when fetched).
          file_url: z.url({ protocol: /^https?$/, error: "file_url must be an https URL" }).max(2048),
          file_name: z.string().trim().min(1).max(255).optional(),
          file_type: z.string().max(255).optional(),
          file_size: z.number().int().min(0).optional(),
        }),
      )
      .max(5)
      .optional(),
  })
  .openapi("ReplyInThread");

const ReplySent = z
  .object({ ok: z.boolean(), data: z.string(), message: z.string(), message_id: z.string(), email_stats_id: z.string() })
  .openapi("ReplySent");

const replyInThread = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/reply-email-thread",
  operationId: "replyEmailThread",
  tags: ["Master inbox"],
  summary: "Reply in a lead's thread from the mailbox that wrote to it (threaded, recorded in the thread)",
  description:
    "Sent at once, or at `scheduled_time` when that is in the future (the mailbox's object sends it; `GET /master-inbox/reply-status` follows it). " +
    "A reply the mailbox's gap (`time_to_wait_in_mins`) holds back is queued for the gap's end, and one its server's hold holds back " +
    "(its server refused the mailbox's sending for now: a 421, its provider's limit) for the next try. To, cc and bcc together: at most 10 addresses (a repeat counts once), " +
    "none block-listed or unsubscribed (else 400 naming it); the mailbox makes as many manual deliveries a UTC day as its daily cap (one per recipient), " +
    "apart from its campaign emails. " +
    "Attachments are fetched at send time (https to a public host, redirects judged hop by hop; at most 10 MB each); a private or loopback address answers 422. " +
    "A scheduled reply's `email_stats_id` is the message it answers until it is sent.",
  security: API_KEY_SECURITY,
  request: { params: z.object({ campaign_id: pathId("campaign_id") }), body: jsonBody(ReplyInThread, { email_stats_id: "1", email_body: "<p>Thanks Ann, does Tuesday work?</p>", add_signature: true }) },
  responses: { 200: json(ReplySent, "Sent, or queued for its time"), ...errorResponses(400, 401, 404, 422, 429, 502) },
});

const SendEmailThread = z
  .object({
    campaignId: BodyId,
    emailStatsId: StatsId,
    emailBody: z.string().min(1).max(200_000),
    toEmail: emailAddress().optional(),
    cc: Addresses.optional(),
    bcc: Addresses.optional(),
    addSignature: z.boolean().default(false),
    scheduledTime: instant().optional(),
  })
  .openapi("SendEmailThread");

const sendEmailThread = createRoute({
  method: "post",
  path: "/api/v1/email-campaigns/send-email-thread",
  operationId: "sendEmailThread",
  tags: ["Master inbox"],
  summary: "Reply in a lead's thread (the camelCase form of reply-email-thread)",
  description:
    "`POST /campaigns/{campaign_id}/reply-email-thread` with the campaign in the body and camelCase fields (`campaignId`, `emailStatsId`, " +
    "`emailBody`, `toEmail`, `cc`, `bcc`, `addSignature`, `scheduledTime`): the same rules, answers and errors.",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(SendEmailThread, { campaignId: 3, emailStatsId: "41", emailBody: "<p>Thanks Ann, does Tuesday work?</p>" }) },
  responses: { 200: json(ReplySent, "Sent, or queued for its time"), ...errorResponses(400, 401, 404, 422, 429, 502) },
});

const ReplyStatus = z
  .object({
    ok: z.boolean(),
    data: z.object({
      message_id: z.string(),
      status: z.enum(["SCHEDULED", "QUEUED", "COMPLETED", "FAILED"]),
      status_message: z.string().nullable(),
      event_time: z.string(),
      scheduled_time: z.string().nullable(),
      email_stats_id: z.string().nullable(),
    }),
  })
  .openapi("ReplyStatus");

const replyStatus = createRoute({
  method: "get",
  path: "/api/v1/master-inbox/reply-status",
  operationId: "getReplyStatus",
  description:
    "Where a reply sent through `reply-email-thread` stands (`SCHEDULED`, `QUEUED`, `COMPLETED`, `FAILED`), by its `message_id`; also a forward " +
    "(`forward-email`) or a one-off email (`send-email/initiate`), whose `email_stats_id` is null (they are no message of a thread). One its " +
    "server refused for now stays `SCHEDULED` for the next try, `status_message` saying the server's words and when, for up to a day after it came due. Unknown → 404.",
  tags: ["Master inbox"],
  summary: "Where a reply sent through reply-email-thread stands",
  security: API_KEY_SECURITY,
  request: { query: z.object({ message_id: z.string().min(1).max(998) }) },
  responses: { 200: json(ReplyStatus, "The reply's status"), ...errorResponses(401, 404, 422, 429) },
});

/** `Re: <subject>` of the thread's first email, whatever prefixes it had. */
function replySubject(subject: string | null): string {
  const bare = (subject ?? "").replace(/^\s*((re|aw|sv|fwd?|wg)\s*:\s*)+/i, "").trim();
  return `Re: ${bare}`;
}

/** Replies due within this margin go out at once rather than through the schedule. */
const SCHEDULE_MARGIN_MS = 60_000;

export const replyRoutes = createRouter();

/** Each file's URL under the outbound rule now (422), so a reply is never stored with one Salvo will not fetch. */
async function refuseAttachmentUrls(env: Bindings, files: { file_url: string }[]): Promise<void> {
  const policy = urlPolicy(config(env));
  const problems = await Promise.all(files.map((file) => checkUrl(file.file_url, policy)));
  const issues = problems.flatMap((problem, i) => (problem ? [{ path: `attachments.${i}.file_url`, message: `file_url ${problem}` }] : []));
  if (issues.length) throw ApiError.validation(issues);
}

type ReplyBody = z.output<typeof ReplyInThread>;

/** Reply-in-thread, whichever path and field names the caller used. */
async function replyInThreadOf(c: Context<AppEnv>, campaignId: number, body: ReplyBody) {
  const principal = c.get("principal");
  await refuseAttachmentUrls(c.env, body.attachments ?? []);
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, campaignId);
  const anchor = await threadAnchor(c.env.DB, campaign.id, body.email_stats_id);
  if (!anchor) throw ApiError.notFound("Email stats not found");
  const mailbox = await threadMailbox(db, principal, campaign.id, anchor.mailboxId);
  if (!mailbox || mailbox.isSuspended || !connectionUsable(mailbox)) throw ApiError.badRequest(MAILBOX_UNUSABLE);
  // The manual-send rule (src/manual-mail/rules.ts), checked now so a refusal answers at once; the
  // mailbox's object checks it again when it sends (the block list may change meanwhile).
  const recipients = collapseRecipients({ to: body.to_email ?? anchor.leadEmail, cc: body.cc ?? [], bcc: body.bcc ?? [] });
  const problem = await recipientsProblem(c.env.DB, { accountId: principal.accountId, clientId: campaign.clientId }, recipients);
  if (problem !== null) throw ApiError.badRequest(problem);

  const now = Date.now();
  const scheduledAt = body.scheduled_time ? Date.parse(body.scheduled_time) : null;
  const later = scheduledAt !== null && scheduledAt > now + SCHEDULE_MARGIN_MS;
  const thread = (await threadOf(c.env.DB, anchor.recordId, -1, null)).messages.flatMap((m) => (m.message_id ? [{ type: m.type, messageId: m.message_id, subject: m.subject }] : []));
  // CONTRACT 12: the stats id names the thread; its newest message is the one answered unless the caller names another.
  const answered = body.reply_message_id ?? thread.at(-1)?.messageId ?? anchor.messageId ?? null;
  const name = [body.to_first_name ?? anchor.leadFirstName, body.to_last_name ?? anchor.leadLastName].filter(Boolean).join(" ").replace(/[\r\n]+/g, " ");
  const reply: ReplyToSend = {
    accountId: principal.accountId,
    campaignId: campaign.id,
    campaignLeadId: anchor.recordId,
    emailAccountId: mailbox.id,
    answersStatsId: anchor.eventId,
    messageId: `<${crypto.randomUUID().replaceAll("-", "")}@${mailbox.fromEmail.split("@")[1]}>`,
    toEmail: recipients.to,
    toName: name || null,
    cc: recipients.cc,
    bcc: recipients.bcc,
    subject: replySubject(thread.find((m) => m.type === "SENT")?.subject ?? thread[0]?.subject ?? null),
    html: body.add_signature && mailbox.signature ? `${body.email_body}\n${mailbox.signature}` : body.email_body,
    inReplyTo: answered,
    references: answered ? [...new Set(thread.map((m) => m.messageId).filter((id) => id !== answered)), answered].join(" ") : null,
    attachments: body.attachments ?? [],
  };
  const extra = body.schedule_condition !== undefined || body.seq_type !== undefined ? { schedule_condition: body.schedule_condition, seq_type: body.seq_type } : null;
  let statsId = anchor.eventId;
  if (later) {
    await insertOutboundReply(db, bodyStore(c.env), { ...reply, extra, status: "SCHEDULED", scheduledAt: new Date(scheduledAt) });
  } else {
    // Sent by the mailbox's object (its one sender); stored once it went out, so a refused send
    // leaves nothing behind but its error. One the mailbox's gap or its server's hold holds back is queued for its end.
    const outcome = await replyDoor(c.env, mailbox.id).sendInboxReply(reply);
    if (outcome.ok) {
      statsId = outcome.statsId;
      await insertOutboundReply(db, bodyStore(c.env), { ...reply, attachments: outcome.attachments, extra, status: "COMPLETED", sentEventId: statsId, scheduledAt: null });
    } else if (outcome.kind === "wait") {
      await insertOutboundReply(db, bodyStore(c.env), { ...reply, extra, status: "SCHEDULED", scheduledAt: new Date(outcome.until) });
    } else {
      throw outcome.kind === "server" ? new ApiError(502, { error: outcome.message }) : ApiError.badRequest(outcome.message);
    }
  }
  return { ok: true, data: "success", message: "Email added to the queue, will be sent out soon!", message_id: reply.messageId, email_stats_id: String(statsId) };
}

replyRoutes.openapi(replyInThread, async (c) => c.json(await replyInThreadOf(c, c.req.valid("param").campaign_id, c.req.valid("json")), 200));

replyRoutes.openapi(sendEmailThread, async (c) => {
  const body = c.req.valid("json");
  const reply: ReplyBody = {
    email_stats_id: body.emailStatsId,
    email_body: body.emailBody,
    to_email: body.toEmail,
    cc: body.cc,
    bcc: body.bcc,
    add_signature: body.addSignature,
    scheduled_time: body.scheduledTime,
  };
  return c.json(await replyInThreadOf(c, body.campaignId, reply), 200);
});

replyRoutes.openapi(replyStatus, async (c) => {
  const db = database(c.env.DB);
  const messageId = c.req.valid("query").message_id;
  const found = await replyByMessageId(db, c.get("principal"), messageId);
  if (!found) {
    // A forward or a one-off email (CONTRACT 21.5): its progress, without a thread message.
    const outside = await outsideSendByMessageId(db, c.get("principal"), messageId);
    if (!outside) throw ApiError.notFound("Reply not found");
    return c.json(
      {
        ok: true,
        data: {
          message_id: outside.messageId,
          status: outside.status,
          status_message: outside.statusMessage,
          event_time: iso(outside.updatedAt),
          scheduled_time: outside.scheduledAt ? iso(outside.scheduledAt) : null,
          email_stats_id: null,
        },
      },
      200,
    );
  }
  const { reply } = found;
  return c.json(
    {
      ok: true,
      data: {
        message_id: reply.messageId,
        status: reply.status,
        status_message: reply.statusMessage,
        event_time: iso(reply.updatedAt),
        scheduled_time: reply.scheduledAt ? iso(reply.scheduledAt) : null,
        email_stats_id: reply.sentEventId === null ? null : String(reply.sentEventId),
      },
    },
    200,
  );
});
