import { createRoute, z } from "@hono/zod-openapi";
import { emailAddress } from "../mail/address";
import { htmlToText } from "../mail/html-text";
import type { MimeAttachment } from "../mail/mime";
import { connectionUsable } from "../mailboxes/rules";
import { fromBase64 } from "../platform/bytes";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { collapseRecipients } from "./rules";
import { insertOutsideSend, mailboxUnusable, messageIdFor, RecipientList, sendWithin, visibleMailbox } from "./outside";
import { recipientsProblem } from "./store";

/** CONTRACT 21.5: at most five files, 10 MB together once decoded. */
const MAX_FILES = 5;
const MAX_FILE_BYTES = 10 * 1024 * 1024;

const Attachment = z.object({
  filename: z.string().trim().min(1).max(255),
  content: z.string().min(1).max(14_000_000).openapi({ description: "The file's bytes in base64" }),
  mimeType: z
    .string()
    .regex(/^[\w.+-]+\/[\w.+-]+$/, "Must be a MIME type such as application/pdf")
    .max(255)
    .optional(),
});

const SendSingleEmail = z
  .object({
    to: RecipientList.optional().openapi({ description: "The recipient (an address; several, comma-separated or an array: the first in To, the others in Cc)" }),
    to_email: RecipientList.optional().openapi({ description: "Alias of `to`" }),
    subject: z.string().min(1).max(998),
    body: z.string().min(1).max(500_000).openapi({ description: "HTML (a plain-text part is derived), or plain text when it holds no tag" }),
    fromEmail: emailAddress().optional().openapi({ description: "The sending mailbox, by its address (one of the caller's)" }),
    from_email: emailAddress().optional().openapi({ description: "Alias of `fromEmail`" }),
    from: emailAddress().optional().openapi({ description: "Alias of `fromEmail`" }),
    fromEmailId: BodyId.optional().openapi({ description: "The sending mailbox, by its id (one of the caller's)" }),
    email_account_id: BodyId.optional().openapi({ description: "Alias of `fromEmailId`" }),
    fromName: z.string().trim().min(1).max(255).optional().openapi({ description: "The name shown in From (default the mailbox's)" }),
    replyTo: emailAddress().optional(),
    reply_to: emailAddress().optional().openapi({ description: "Alias of `replyTo`" }),
    cc: RecipientList.optional(),
    bcc: RecipientList.optional(),
    attachments: z.array(Attachment).max(MAX_FILES).optional(),
  })
  .superRefine((body, ctx) => {
    if (!body.to && !body.to_email) ctx.addIssue({ code: "custom", path: ["to"], message: "Required: the recipient (to or to_email)" });
    if (body.fromEmailId === undefined && body.email_account_id === undefined && !body.fromEmail && !body.from_email && !body.from) {
      ctx.addIssue({ code: "custom", path: ["fromEmail"], message: "Required: the sending mailbox (fromEmail, from_email, from, fromEmailId or email_account_id)" });
    }
    let total = 0;
    for (const [i, file] of (body.attachments ?? []).entries()) {
      const bytes = fromBase64(file.content.replace(/\s+/g, ""));
      if (bytes === null) ctx.addIssue({ code: "custom", path: ["attachments", i, "content"], message: "Must be base64" });
      else total += bytes.byteLength;
    }
    if (total > MAX_FILE_BYTES) ctx.addIssue({ code: "custom", path: ["attachments"], message: "The files may hold at most 10 MB together (decoded)" });
  })
  .openapi("SendSingleEmail");

const SingleEmailSent = z
  .object({
    success: z.boolean(),
    ok: z.boolean(),
    data: z.object({ message: z.string(), message_id: z.string(), status: z.enum(["SENT", "QUEUED"]) }),
  })
  .openapi("SingleEmailSent");

const sendSingleEmail = createRoute({
  method: "post",
  path: "/api/v1/send-email/initiate",
  operationId: "sendSingleEmail",
  tags: ["Email accounts"],
  summary: "Send one email from one of your mailboxes, outside any campaign",
  description:
    "Sent by the mailbox's own object under the manual-send rule: within its gap (`time_to_wait_in_mins`; an email it holds back is " +
    "sent when the gap ends) and its server's hold (after its server refused the mailbox's sending for now, the email waits for the next try) and never held back by its campaign cap (as many manual deliveries a UTC day as its cap, one per recipient), " +
    "counted in its `daily_sent_count`. No tracking, no unsubscribe link or header, no SENT event or analytics. To, cc and bcc together: " +
    "at most 10 addresses, none block-listed or unsubscribed (else 400 naming it). Waits up to 25 s for the mail server: `SENT` when it " +
    "took the email, else `QUEUED` (`GET /master-inbox/reply-status?message_id=` follows it); the server refusing → 400 with its words. " +
    "A mailbox that is not the caller's, or cannot send → 400 `Email account not found!`.",
  security: API_KEY_SECURITY,
  request: {
    body: jsonBody(SendSingleEmail, { to: "ann@example.com", subject: "Our call", body: "<p>Hi Ann, the notes from today.</p>", fromEmailId: 12 }),
  },
  responses: { 200: json(SingleEmailSent, "Sent, or queued"), ...errorResponses(400, 401, 422, 429) },
});

/** Plain text when the body holds no tag (a person typing an email), else HTML with its derived text. */
function bodyParts(body: string): { text: string; html?: string } {
  return /<[a-z!/][^>]*>/i.test(body) ? { text: htmlToText(body), html: body } : { text: body };
}

export const singleEmailRoutes = createRouter();

singleEmailRoutes.openapi(sendSingleEmail, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const mailboxId = body.fromEmailId ?? body.email_account_id ?? null;
  const mailbox = await visibleMailbox(db, principal, mailboxId !== null ? { id: mailboxId } : { address: (body.fromEmail ?? body.from_email ?? body.from)! });
  if (!mailbox || mailbox.isSuspended || !connectionUsable(mailbox)) throw mailboxUnusable();
  const scope = { accountId: principal.accountId, clientId: mailbox.clientId };
  const [to, ...others] = (body.to ?? body.to_email)!;
  const recipients = collapseRecipients({ to: to!, cc: [...others, ...(body.cc ?? [])], bcc: body.bcc ?? [] });
  const problem = await recipientsProblem(c.env.DB, scope, recipients);
  if (problem !== null) throw ApiError.badRequest(problem);

  const messageId = messageIdFor(mailbox.fromEmail);
  const replyTo = body.replyTo ?? body.reply_to;
  const attachments: MimeAttachment[] = (body.attachments ?? []).map((file) => ({
    filename: file.filename,
    contentType: file.mimeType ?? "application/octet-stream",
    content: fromBase64(file.content.replace(/\s+/g, ""))!,
  }));
  const { id } = await insertOutsideSend(db, { accountId: principal.accountId, clientId: mailbox.clientId, emailAccountId: mailbox.id, campaignId: null, kind: "single", messageId });
  const outcome = await sendWithin(c.env, (work) => c.executionCtx.waitUntil(work), {
    id,
    email: {
      kind: "single",
      mailboxId: mailbox.id,
      scope,
      message: {
        to: { email: recipients.to },
        subject: body.subject,
        ...bodyParts(body.body),
        headers: { "Message-ID": messageId, ...(replyTo ? { "Reply-To": replyTo } : {}) },
        attachments,
      },
      cc: recipients.cc,
      bcc: recipients.bcc,
      ownBcc: false,
      ...(body.fromName ? { fromName: body.fromName } : {}),
    },
  });
  if (outcome !== null && !outcome.ok && outcome.kind !== "wait") {
    throw outcome.kind === "mailbox" ? mailboxUnusable() : ApiError.badRequest(outcome.message);
  }
  const sent = outcome !== null && outcome.ok;
  return c.json(
    { success: true, ok: true, data: { message: sent ? "Email sent successfully" : "Email queued", message_id: messageId, status: sent ? ("SENT" as const) : ("QUEUED" as const) } },
    200,
  );
});
