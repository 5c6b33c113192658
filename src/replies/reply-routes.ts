import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { config } from "../config";
import { campaigns } from "../db/schema";
import { htmlToText } from "../engine/html-text";
import { sendMail } from "../engine/smtp";
import { planIngestion } from "../events/plan";
import { loadIngestContext, storeIngestion } from "../events/store";
import { connectionUsable, smtpTarget } from "../mailboxes/rules";
import { storedPassword } from "../mailboxes/store";
import { findCampaign } from "../platform/access";
import { loadKeyring } from "../platform/crypto";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { enqueue } from "../webhooks/outbox";
import { threadOf } from "../inbox/store";
import { eventIdOf, isBlocked, threadAnchor, threadMailbox } from "./thread-store";

const Addresses = z
  .union([z.string().max(2000), z.array(z.email().max(320)).max(20)])
  .transform((value) => (Array.isArray(value) ? value : value.split(",").map((a) => a.trim()).filter(Boolean)))
  .pipe(z.array(z.email().max(320)).max(20));

const ReplyInThread = z
  .object({
    email_stats_id: z.union([z.number().int().positive(), z.string().regex(/^\d{1,15}$/).transform(Number)]),
    email_body: z.string().min(1).max(200_000),
    reply_message_id: z.string().max(998).optional(),
    reply_email_time: z.string().max(64).optional(),
    reply_email_body: z.string().max(200_000).optional(),
    to_email: z.email().max(320).optional(),
    to_first_name: z.string().max(255).optional(),
    to_last_name: z.string().max(255).optional(),
    cc: Addresses.optional(),
    bcc: Addresses.optional(),
    add_signature: z.boolean().default(false),
    scheduled_time: z.iso.datetime({ offset: true }).optional(),
    schedule_condition: z.unknown().optional(),
    seq_type: z.unknown().optional(),
    attachments: z.array(z.object({ file_url: z.url().max(2048) }).passthrough()).max(5).optional(),
  })
  .openapi("ReplyInThread");

const ReplySent = z
  .object({ ok: z.boolean(), data: z.string(), message: z.string(), message_id: z.string(), email_stats_id: z.string() })
  .openapi("ReplySent");

const replyInThread = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/reply-email-thread",
  tags: ["Master inbox"],
  summary: "Reply in a lead's thread from the mailbox that wrote to it (threaded, recorded in the thread)",
  security: API_KEY_SECURITY,
  request: { params: z.object({ campaign_id: pathId("campaign_id") }), body: jsonBody(ReplyInThread) },
  responses: { 200: json(ReplySent, "Sent"), ...errorResponses(400, 401, 404, 422, 429, 502) },
});

/** `Re: <subject>` of the thread's first email, whatever prefixes it had. */
function replySubject(subject: string | null): string {
  const bare = (subject ?? "").replace(/^\s*((re|aw|sv|fwd?|wg)\s*:\s*)+/i, "").trim();
  return `Re: ${bare}`;
}

export const replyRoutes = createRouter();

replyRoutes.openapi(replyInThread, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const anchor = await threadAnchor(c.env.DB, campaign.id, body.email_stats_id);
  if (!anchor) throw ApiError.notFound("Email stats not found");
  if (body.attachments?.length) throw ApiError.badRequest("Attachments are not supported yet");
  const now = Date.now();
  if (body.scheduled_time && Date.parse(body.scheduled_time) > now + 60_000) throw ApiError.badRequest("Scheduled replies are not supported yet: send it now");
  const mailbox = await threadMailbox(db, principal, anchor.mailboxId);
  if (!mailbox || mailbox.isSuspended || !connectionUsable(mailbox)) throw ApiError.badRequest("Email account not found!");
  const to = (body.to_email ?? anchor.leadEmail).toLowerCase();
  if (await isBlocked(c.env.DB, principal.accountId, campaign.clientId, to)) throw ApiError.badRequest("The recipient is on the block list");
  const password = await storedPassword(await loadKeyring(config(c.env).secretsKey), mailbox, "smtp");
  if (password === null) throw ApiError.badRequest("Email account not found!");

  const thread = (await threadOf(c.env.DB, anchor.recordId, -1)).messages.flatMap((m) => (m.message_id ? [{ type: m.type, messageId: m.message_id, subject: m.subject }] : []));
  // The message the stats id names is the one answered, unless the caller names another.
  const answered = body.reply_message_id ?? anchor.messageId ?? thread.at(-1)?.messageId;
  const messageId = `<${crypto.randomUUID().replaceAll("-", "")}@${mailbox.fromEmail.split("@")[1]}>`;
  const html = body.add_signature && mailbox.signature ? `${body.email_body}\n${mailbox.signature}` : body.email_body;
  const subject = replySubject(thread.find((m) => m.type === "SENT")?.subject ?? thread[0]?.subject ?? null);
  const headers: Record<string, string> = { "Message-ID": messageId };
  if (answered) {
    headers["In-Reply-To"] = answered;
    headers.References = [...new Set(thread.map((m) => m.messageId).filter((id) => id !== answered)), answered].join(" ");
  }
  if (body.cc?.length) headers.Cc = body.cc.join(", ");
  if (mailbox.differentReplyToAddress) headers["Reply-To"] = mailbox.differentReplyToAddress;
  const name = [body.to_first_name ?? anchor.leadFirstName, body.to_last_name ?? anchor.leadLastName].filter(Boolean).join(" ").replace(/[\r\n]+/g, " ");
  const result = await sendMail(
    smtpTarget(mailbox, password),
    { from: { email: mailbox.fromEmail, name: mailbox.fromName }, to: { email: to, name: name || undefined }, subject, text: htmlToText(html), html, headers },
    { allowPlain: false, bcc: [...(body.cc ?? []), ...(body.bcc ?? []), ...(mailbox.bccEmail ? [mailbox.bccEmail] : [])] },
  );
  if (!result.ok) throw new ApiError(502, { error: `The mail server did not take the reply: ${result.failure.text}` });

  // Recorded as a SENT message of the thread (its step and the record's state do not move).
  const eventKey = `inbox-reply:${messageId}`;
  const context = await loadIngestContext(db, eq(campaigns.accountId, principal.accountId), principal.accountId, campaign.id, { recordIds: [anchor.recordId], emails: [], categoryIds: [] });
  const record = context.records[0]!;
  const { rows, deliveries } = planIngestion(context, context.campaign!, [
    {
      eventId: eventKey,
      record,
      incoming: { type: "SENT", occurredAt: now, sequenceNumber: anchor.step, emailAccountId: mailbox.id, fromEmail: mailbox.fromEmail, isOoo: false, categoryId: null },
      toEmail: to,
      subject,
      body: html,
      messageId,
      linkUrl: null,
      isMachine: false,
    },
  ]);
  const stored = await storeIngestion(c.env.DB, context.campaign!, rows, deliveries, now);
  await enqueue(c.env, stored.deliveryIds);
  const statsId = await eventIdOf(c.env.DB, campaign.id, eventKey);
  return c.json({ ok: true, data: "success", message: "Email added to the queue, will be sent out soon!", message_id: messageId, email_stats_id: String(statsId) }, 200);
});
