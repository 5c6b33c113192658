import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { threadOf, type HistoryRow } from "../inbox/store";
import { htmlToText } from "../mail/html-text";
import { collapseRecipients } from "../manual-mail/rules";
import { recipientsProblem } from "../manual-mail/store";
import { insertOutsideSend, mailboxUnusable, messageIdFor, RecipientList, sendWithin } from "../manual-mail/outside";
import { connectionUsable } from "../mailboxes/rules";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { rfc5322Date } from "../mail/mime";
import { escapeHtml } from "../sequences/template";
import { threadAnchor, threadMailbox } from "./thread-store";

const StatsId = z.union([z.number().int().positive(), z.string().regex(/^\d{1,15}$/).transform(Number)]);
const Subject = z.string().trim().min(1).max(998);
const Text = z.string().max(200_000);

const ForwardEmail = z
  .object({
    stats_id: StatsId.optional().openapi({ description: "The message to forward: a `stats_id` (SENT or REPLY) of this campaign" }),
    email_stats_id: StatsId.optional().openapi({ description: "Alias of `stats_id`" }),
    to_emails: RecipientList.optional().openapi({ description: "1-10 recipients, comma-separated or an array" }),
    forward_to_email: RecipientList.optional().openapi({ description: "Alias of `to_emails`" }),
    message_id: z.string().max(998).optional().openapi({ description: "When given, must be the Message-ID of that message" }),
    forward_email_body: Text.optional().openapi({ description: "Your text above the forwarded message (HTML or plain text)" }),
    forward_message: Text.optional().openapi({ description: "Alias of `forward_email_body`" }),
    forward_email_subject: Subject.optional().openapi({ description: "Default `Fwd: <the message's subject>`" }),
  })
  .superRefine((body, ctx) => {
    if (body.stats_id === undefined && body.email_stats_id === undefined) ctx.addIssue({ code: "custom", path: ["stats_id"], message: "Required: stats_id (or email_stats_id)" });
    if (!body.to_emails && !body.forward_to_email) ctx.addIssue({ code: "custom", path: ["to_emails"], message: "Required: to_emails (or forward_to_email)" });
  })
  .openapi("ForwardEmail");

const ForwardReplyEmail = z
  .object({
    campaignId: BodyId.optional(),
    campaign_id: BodyId.optional().openapi({ description: "Alias of `campaignId`" }),
    emailStatsId: StatsId.optional(),
    email_stats_id: StatsId.optional().openapi({ description: "Alias of `emailStatsId`" }),
    forwardToEmailIds: RecipientList.optional().openapi({ description: "1-10 recipients, comma-separated or an array" }),
    to: RecipientList.optional().openapi({ description: "Alias of `forwardToEmailIds`" }),
    forwardEmailSubject: Subject.optional(),
    forwardEmailBody: Text.optional(),
    note: Text.optional().openapi({ description: "Alias of `forwardEmailBody`" }),
  })
  .superRefine((body, ctx) => {
    if (body.campaignId === undefined && body.campaign_id === undefined) ctx.addIssue({ code: "custom", path: ["campaignId"], message: "Required: campaignId (or campaign_id)" });
    if (body.emailStatsId === undefined && body.email_stats_id === undefined) ctx.addIssue({ code: "custom", path: ["emailStatsId"], message: "Required: emailStatsId (or email_stats_id)" });
    if (!body.forwardToEmailIds && !body.to) ctx.addIssue({ code: "custom", path: ["forwardToEmailIds"], message: "Required: forwardToEmailIds (or to)" });
  })
  .openapi("ForwardReplyEmail");

const Forwarded = z.object({ ok: z.boolean(), messageId: z.string(), status: z.literal("success") }).openapi("Forwarded");

const RULES =
  "From the thread's mailbox, through its object under the manual-send rule: within its gap (an email it holds back is sent when the gap ends) and its server's hold (sent at the next try after its server refused the mailbox's sending for now), " +
  "never held back by its campaign cap, counted in its `daily_sent_count`. Subject `Fwd: <subject>` unless given; the body is your text, a " +
  "forwarded-message header block, then the thread up to that message (newest first). No tracking, no unsubscribe link, no SENT event or " +
  "analytics; `GET /master-inbox/reply-status?message_id=` follows it. Several recipients: the first in To, the others in Cc. A recipient " +
  "block-listed or unsubscribed → 400 naming it; the mailbox deleted, suspended or failing → 400 `Email account not found!`; unknown stats id → " +
  "404 `Email stats not found`; the mail server refusing → 400 with its words.";

const forwardEmail = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/forward-email",
  operationId: "forwardEmail",
  tags: ["Master inbox"],
  summary: "Forward a message of a lead's thread to other people",
  description: RULES,
  security: API_KEY_SECURITY,
  request: {
    params: z.object({ campaign_id: pathId("campaign_id") }),
    body: jsonBody(ForwardEmail, { stats_id: "41", to_emails: "sales-lead@yourcompany.example", forward_email_body: "Ann is interested: can you take it?" }),
  },
  responses: { 200: json(Forwarded, "Sent, or queued for the mailbox's gap"), ...errorResponses(400, 401, 404, 422, 429) },
});

const forwardReplyEmail = createRoute({
  method: "post",
  path: "/api/v1/email-campaigns/forward-reply-email",
  operationId: "forwardReplyEmail",
  tags: ["Master inbox"],
  summary: "Forward a message of a lead's thread (the campaign-in-body form of forward-email)",
  description: `\`POST /campaigns/{campaign_id}/forward-email\` with the campaign in the body (\`campaignId\` or \`campaign_id\`; \`lead_id\` is ignored). ${RULES}`,
  security: API_KEY_SECURITY,
  request: { body: jsonBody(ForwardReplyEmail, { campaignId: 3, emailStatsId: "41", forwardToEmailIds: ["sales-lead@yourcompany.example"] }) },
  responses: { 200: json(Forwarded, "Sent, or queued for the mailbox's gap"), ...errorResponses(400, 401, 404, 422, 429) },
});

interface ForwardAsk {
  statsId: number;
  to: string[];
  messageId?: string;
  text?: string;
  subject?: string;
}

/** Plain text as HTML (escaped, lines kept); HTML as it is. */
function asHtml(value: string): string {
  return /<[a-z!/][^>]*>/i.test(value) ? value : escapeHtml(value).replace(/\r?\n/g, "<br>\n");
}

/** `Fwd: <subject>` of the forwarded message, whatever prefixes it had. */
function forwardSubject(subject: string | null): string {
  return `Fwd: ${(subject ?? "").replace(/^\s*((re|aw|sv|fwd?|wg)\s*:\s*)+/i, "").trim()}`;
}

/**
 * Your text, the forwarded message's header block and body, then the earlier messages quoted, newest
 * first. A message stored without its addresses (pushed in through the events API) names the lead
 * and the mailbox by its direction.
 */
function forwardBody(text: string | undefined, thread: HistoryRow[], ends: { lead: string; mailbox: string }): string {
  const [forwarded, ...earlier] = [...thread].reverse();
  const from = (m: HistoryRow) => m.from_email ?? (m.type === "REPLY" ? ends.lead : ends.mailbox);
  const to = (m: HistoryRow) => m.to_email ?? (m.type === "REPLY" ? ends.mailbox : ends.lead);
  const line = (name: string, value: string | null) => (value ? `${name}: ${escapeHtml(value)}<br>\n` : "");
  const parts = [
    text ? `<div>${asHtml(text)}</div>\n<br>\n` : "",
    "<div>---------- Forwarded message ---------<br>\n",
    line("From", from(forwarded!)),
    line("Date", rfc5322Date(new Date(forwarded!.occurred_at))),
    line("Subject", forwarded!.subject),
    line("To", to(forwarded!)),
    "</div>\n<br>\n",
    `<div>${asHtml(forwarded!.body ?? "")}</div>\n`,
    ...earlier.map(
      (m) =>
        `<br>\n<div>On ${escapeHtml(rfc5322Date(new Date(m.occurred_at)))}, ${escapeHtml(from(m))} wrote:</div>\n` +
        `<blockquote style="margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex">${asHtml(m.body ?? "")}</blockquote>\n`,
    ),
  ];
  return parts.join("");
}

async function forwardOf(c: Context<AppEnv>, campaignId: number, ask: ForwardAsk) {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, campaignId);
  const anchor = await threadAnchor(c.env.DB, campaign.id, ask.statsId);
  if (!anchor) throw ApiError.notFound("Email stats not found");
  const mailbox = await threadMailbox(db, principal, campaign.id, anchor.mailboxId);
  if (!mailbox || mailbox.isSuspended || !connectionUsable(mailbox)) throw mailboxUnusable();
  if (ask.messageId !== undefined && ask.messageId.trim() !== anchor.messageId) {
    throw ApiError.badRequest("message_id is not the Message-ID of the message stats_id names");
  }
  const scope = { accountId: principal.accountId, clientId: campaign.clientId };
  const [to, ...others] = ask.to;
  const recipients = collapseRecipients({ to: to!, cc: others, bcc: [] });
  const problem = await recipientsProblem(c.env.DB, scope, recipients);
  if (problem !== null) throw ApiError.badRequest(problem);

  const messages = (await threadOf(c.env.DB, anchor.recordId, -1, { bucket: c.env.BODIES, accountId: principal.accountId })).messages;
  const upTo = messages.slice(0, messages.findIndex((m) => m.id === anchor.eventId) + 1);
  const html = forwardBody(ask.text, upTo, { lead: anchor.leadEmail, mailbox: mailbox.fromEmail });
  const messageId = messageIdFor(mailbox.fromEmail);
  const { id } = await insertOutsideSend(db, { accountId: principal.accountId, clientId: campaign.clientId, emailAccountId: mailbox.id, campaignId: campaign.id, kind: "forward", messageId });
  const outcome = await sendWithin(c.env, (work) => c.executionCtx.waitUntil(work), {
    id,
    email: {
      kind: "forward",
      mailboxId: mailbox.id,
      scope,
      message: { to: { email: recipients.to }, subject: ask.subject ?? forwardSubject(upTo.at(-1)!.subject), text: htmlToText(html), html, headers: { "Message-ID": messageId } },
      cc: recipients.cc,
      bcc: [],
      ownBcc: false,
    },
  });
  if (outcome !== null && !outcome.ok && outcome.kind !== "wait") {
    throw outcome.kind === "mailbox" ? mailboxUnusable() : ApiError.badRequest(outcome.message);
  }
  return { ok: true, messageId, status: "success" as const };
}

export const forwardRoutes = createRouter();

forwardRoutes.openapi(forwardEmail, async (c) => {
  const body = c.req.valid("json");
  const answer = await forwardOf(c, c.req.valid("param").campaign_id, {
    statsId: (body.stats_id ?? body.email_stats_id)!,
    to: (body.to_emails ?? body.forward_to_email)!,
    messageId: body.message_id,
    text: body.forward_email_body ?? body.forward_message,
    subject: body.forward_email_subject,
  });
  return c.json(answer, 200);
});

forwardRoutes.openapi(forwardReplyEmail, async (c) => {
  const body = c.req.valid("json");
  const answer = await forwardOf(c, (body.campaignId ?? body.campaign_id)!, {
    statsId: (body.emailStatsId ?? body.email_stats_id)!,
    to: (body.forwardToEmailIds ?? body.to)!,
    text: body.forwardEmailBody ?? body.note,
    subject: body.forwardEmailSubject,
  });
  return c.json(answer, 200);
});
