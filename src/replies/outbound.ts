import { eq } from "drizzle-orm";
import { config } from "../config";
import { campaigns, type OutboundAttachment } from "../db/schema";
import type { Bindings } from "../platform/env";
import { htmlToText } from "../mail/html-text";
import { sendMail } from "../mail/smtp";
import { planIngestion } from "../events/plan";
import { loadIngestContext, storeIngestion } from "../events/store";
import { connectionUsable, smtpTarget } from "../mailboxes/rules";
import { storedPassword } from "../mailboxes/store";
import { loadKeyring } from "../platform/crypto";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { mailPolicy, urlPolicy } from "../platform/outbound";
import { enqueue } from "../webhooks/outbox";
import { AttachmentError, fetchAttachments } from "./attachments";
import { mailboxOfReply, settleReply, takeDueReplies, type OutboundReplyRow } from "./outbound-store";
import { eventIdOf, stepOfEvent } from "./thread-store";

export const MAILBOX_UNUSABLE = "Email account not found!";

/** A sent reply gives its stats id and the files as they went (name, type and size as fetched). */
export type Delivery =
  | { ok: true; statsId: number; attachments: OutboundAttachment[] }
  | { ok: false; message: string; kind: "mailbox" | "attachment" | "server" };

/** A reply to send: a stored scheduled one, or one the route is about to store once it went out. */
export type ReplyToSend = Omit<OutboundReplyRow, "id" | "createdAt" | "updatedAt" | "status" | "statusMessage" | "sentEventId" | "scheduledAt" | "extra">;

/**
 * Sends one reply written in the inbox from its mailbox and records it as a SENT message of the
 * thread (its step and the record's state do not move).
 */
export async function sendReply(env: Bindings, reply: ReplyToSend, now: number): Promise<Delivery> {
  const db = database(env.DB);
  const mailbox = await mailboxOfReply(db, reply.emailAccountId);
  if (!mailbox || mailbox.isSuspended || !connectionUsable(mailbox)) return { ok: false, kind: "mailbox", message: MAILBOX_UNUSABLE };
  const password = await storedPassword(await loadKeyring(config(env).secretsKey), mailbox, "smtp");
  if (password === null) return { ok: false, kind: "mailbox", message: MAILBOX_UNUSABLE };
  let attachments;
  try {
    attachments = await fetchAttachments(reply.attachments, urlPolicy(config(env)));
  } catch (error) {
    if (error instanceof AttachmentError) return { ok: false, kind: "attachment", message: error.message };
    throw error;
  }
  const headers: Record<string, string> = { "Message-ID": reply.messageId };
  if (reply.inReplyTo) headers["In-Reply-To"] = reply.inReplyTo;
  if (reply.references) headers.References = reply.references;
  if (reply.cc.length) headers.Cc = reply.cc.join(", ");
  if (mailbox.differentReplyToAddress) headers["Reply-To"] = mailbox.differentReplyToAddress;
  const result = await sendMail(
    smtpTarget(mailbox, password),
    {
      from: { email: mailbox.fromEmail, name: mailbox.fromName },
      to: { email: reply.toEmail, name: reply.toName ?? undefined },
      subject: reply.subject,
      text: htmlToText(reply.html),
      html: reply.html,
      headers,
      attachments,
    },
    { allowPlain: false, outbound: mailPolicy(config(env)), bcc: [...reply.cc, ...reply.bcc, ...(mailbox.bccEmail ? [mailbox.bccEmail] : [])] },
  );
  if (!result.ok) return { ok: false, kind: "server", message: `The mail server did not take the reply: ${result.failure.text}` };
  const sent = reply.attachments.map((file, i) => ({
    file_url: file.file_url,
    file_name: attachments[i]!.filename,
    file_type: attachments[i]!.contentType,
    file_size: attachments[i]!.content.byteLength,
  }));
  return { ok: true, statsId: await recordSent(env, reply, mailbox.fromEmail, now), attachments: sent };
}

/** The reply as a SENT message of its thread, through the one event path (webhooks included). */
async function recordSent(env: Bindings, reply: ReplyToSend, fromEmail: string, now: number): Promise<number> {
  const db = database(env.DB);
  const eventKey = `inbox-reply:${reply.messageId}`;
  const context = await loadIngestContext(db, eq(campaigns.accountId, reply.accountId), reply.accountId, reply.campaignId, {
    recordIds: [reply.campaignLeadId],
    emails: [],
    categoryIds: [],
  });
  const record = context.records[0];
  const step = (await stepOfEvent(env.DB, reply.answersStatsId)) ?? 1;
  if (record && context.campaign) {
    const { rows, deliveries } = planIngestion(context, context.campaign, [
      {
        eventId: eventKey,
        record,
        incoming: { type: "SENT", occurredAt: now, sequenceNumber: step, emailAccountId: reply.emailAccountId, fromEmail, isOoo: false, categoryId: null },
        toEmail: reply.toEmail,
        subject: reply.subject,
        body: reply.html,
        messageId: reply.messageId,
        linkUrl: null,
        isMachine: false,
      },
    ]);
    const stored = await storeIngestion(env.DB, context.campaign, rows, deliveries, now);
    await enqueue(env, stored.deliveryIds);
  }
  return (await eventIdOf(env.DB, reply.campaignId, eventKey)) ?? reply.answersStatsId;
}

/**
 * The mailbox object's share of scheduled replies: sends those due now and tells when the next one
 * is due (null: none waits).
 */
export async function sendDueReplies(env: Bindings, mailboxId: number, now: number): Promise<number | null> {
  const db = database(env.DB);
  const { due, nextAt } = await takeDueReplies(db, mailboxId, now);
  for (const reply of due) {
    const outcome = await sendReply(env, reply, now);
    if (outcome.ok) {
      await settleReply(db, reply.id, "COMPLETED", null, outcome.statsId, Date.now(), outcome.attachments);
    } else {
      await settleReply(db, reply.id, "FAILED", outcome.message, null, Date.now());
      log("warn", "scheduled reply not sent", { mailbox_id: mailboxId, reply_id: reply.id, reason: outcome.message });
    }
  }
  return nextAt;
}
