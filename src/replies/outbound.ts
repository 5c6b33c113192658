import { eq, type SQL } from "drizzle-orm";
import { bodyStore, storeBody, withBodies } from "../platform/bodies";
import { config } from "../config";
import { campaigns, type OutboundAttachment } from "../db/schema";
import type { Bindings } from "../platform/env";
import { htmlToText } from "../mail/html-text";
import type { MimeAttachment } from "../mail/mime";
import { planIngestion } from "../events/plan";
import { PERSON_STEP } from "../events/rules";
import { ingestedDeliveryIds, ingestionStatements, loadIngestContext, type IngestContext, type RecordRow } from "../events/store";
import { deliverManualEmail, type ManualSessions } from "../manual-mail/send";
import { retryAt, retryMessage } from "../manual-mail/rules";
import { mailboxObject } from "../mailboxes/wake";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { urlPolicy } from "../platform/outbound";
import { enqueue, type NewDelivery } from "../webhooks/outbox";
import { AttachmentError, fetchAttachments } from "./attachments";
import { rescheduleReply, settleReply, takeDueReplies, type OutboundReplyRow } from "./outbound-store";
import { eventIdOf } from "./thread-store";
import type { MailboxLogins } from "../mailboxes/login";

export const MAILBOX_UNUSABLE = "Email account not found!";

/**
 * A sent reply gives its stats id and the files as they went (name, type and size as fetched); one
 * the mailbox's gap or its server's hold holds back waits until `until` (the route queues it for then).
 */
export type Delivery =
  | { ok: true; statsId: number; attachments: OutboundAttachment[] }
  | { ok: false; kind: "wait"; until: number }
  | { ok: false; message: string; kind: "mailbox" | "refused" }
  /** `heldUntil`: the server refused the mailbox's sending for now and holds it until then; `transient`: it refused this reply for now; neither: for good. */
  | { ok: false; message: string; kind: "server"; heldUntil: number | null; transient: boolean };

/** A reply to send: a stored scheduled one, or one the route is about to store once it went out. */
export type ReplyToSend = Omit<OutboundReplyRow, "id" | "createdAt" | "updatedAt" | "status" | "statusMessage" | "sentEventId" | "scheduledAt" | "firstDueAt" | "extra">;

/** The mailbox agent's door for inbox replies (src/mailbox-agent/ implements it: the mailbox's one sender). */
export interface ReplyDoor {
  sendInboxReply(reply: ReplyToSend): Promise<Delivery>;
}

export function replyDoor(env: Bindings, mailboxId: number): ReplyDoor {
  return mailboxObject(env, mailboxId) as unknown as ReplyDoor;
}

/**
 * The ingestion of a sent inbox reply, for the batch of its send: a SENT message of the thread that
 * is a person's message (PERSON_STEP), so the record's step, state, flags and last send time do not
 * move, and no campaign figure or webhook counts it (CONTRACT 12, reply in a thread).
 */
export function inboxReplyIngestion(
  context: IngestContext & { campaign: NonNullable<IngestContext["campaign"]> },
  record: RecordRow,
  sent: { eventKey: string; reply: Pick<ReplyToSend, "toEmail" | "subject" | "messageId">; body: string | null; at: number; mailbox: { id: number; fromEmail: string } },
): { statements: SQL[]; deliveries: NewDelivery[] } {
  const { rows, deliveries } = planIngestion(context, context.campaign, [
    {
      eventId: sent.eventKey,
      record,
      incoming: { type: "SENT", occurredAt: sent.at, sequenceNumber: PERSON_STEP, emailAccountId: sent.mailbox.id, fromEmail: sent.mailbox.fromEmail, isOoo: false, categoryId: null },
      toEmail: sent.reply.toEmail,
      subject: sent.reply.subject,
      body: sent.body,
      messageId: sent.reply.messageId,
      linkUrl: null,
      isMachine: false,
    },
  ]);
  return { statements: ingestionStatements(context.campaign, rows, deliveries, sent.at), deliveries };
}

/**
 * Sends one reply written in the inbox from its mailbox, under the manual-send rule
 * (src/manual-mail/rules.ts), on the pass's session when it lends one, and records it as a SENT
 * message of the thread in the batch of the send's row: a person's message (PERSON_STEP), so the
 * record's step, state and flags do not move and no campaign figure or webhook counts it. Runs inside the mailbox's object.
 */
export async function sendReply(env: Bindings, logins: MailboxLogins, reply: ReplyToSend, now: number, sessions?: ManualSessions): Promise<Delivery> {
  const db = database(env.DB);
  const eventKey = `inbox-reply:${reply.messageId}`;
  const context = await loadIngestContext(db, eq(campaigns.accountId, reply.accountId), reply.accountId, reply.campaignId, {
    recordIds: [reply.campaignLeadId],
    emails: [],
    categoryIds: [],
  });
  const record = context.records[0];
  // The SENT message's body as the thread stores it: written to R2 before the send's batch when large.
  const storedHtml = await storeBody(bodyStore(env), reply.accountId, reply.html);
  let deliveries: NewDelivery[] = [];
  let fetched: MimeAttachment[] = [];
  const headers: Record<string, string> = { "Message-ID": reply.messageId };
  if (reply.inReplyTo) headers["In-Reply-To"] = reply.inReplyTo;
  if (reply.references) headers.References = reply.references;
  const outcome = await deliverManualEmail(
    env,
    logins,
    {
      kind: "reply",
      mailboxId: reply.emailAccountId,
      scope: { accountId: reply.accountId, clientId: context.campaign?.clientId ?? null },
      message: { to: { email: reply.toEmail, name: reply.toName ?? undefined }, subject: reply.subject, text: htmlToText(reply.html), html: reply.html, headers },
      cc: reply.cc,
      bcc: reply.bcc,
      ownBcc: true,
    },
    now,
    {
      attachments: async () => {
        try {
          fetched = await fetchAttachments(reply.attachments, urlPolicy(config(env)));
          return fetched;
        } catch (error) {
          if (error instanceof AttachmentError) return error.message;
          throw error;
        }
      },
      record: ({ at, mailbox }) => {
        if (!record || !context.campaign) return [];
        const stored = inboxReplyIngestion({ ...context, campaign: context.campaign }, record, { eventKey, reply, body: storedHtml, at, mailbox });
        deliveries = stored.deliveries;
        return stored.statements;
      },
    },
    sessions,
  );
  if (!outcome.ok) {
    if (outcome.kind === "wait") return { ok: false, kind: "wait", until: outcome.until };
    if (outcome.kind === "server") return { ok: false, kind: "server", message: `The mail server did not take the reply: ${outcome.message}`, heldUntil: outcome.heldUntil, transient: outcome.transient };
    return { ok: false, kind: outcome.kind, message: outcome.kind === "mailbox" ? MAILBOX_UNUSABLE : outcome.message };
  }
  if (outcome.results.length > 0) await enqueue(env, ingestedDeliveryIds(outcome.results, deliveries));
  const sent = reply.attachments.map((file, i) => ({
    file_url: file.file_url,
    file_name: fetched[i]!.filename,
    file_type: fetched[i]!.contentType,
    file_size: fetched[i]!.content.byteLength,
  }));
  return { ok: true, statsId: (await eventIdOf(env.DB, reply.campaignId, eventKey)) ?? reply.answersStatsId, attachments: sent };
}

/**
 * The mailbox object's share of scheduled replies: when the next one (`nextAt`, as the pass read it)
 * is due, takes and sends those due now, on the session its pass lends; tells when the next one is
 * due (null: none waits). A pass with none due writes nothing.
 */
export async function sendDueReplies(env: Bindings, logins: MailboxLogins, mailboxId: number, now: number, nextAt: number | null, sessions: ManualSessions): Promise<number | null> {
  if (nextAt === null || nextAt > now) return nextAt;
  const db = database(env.DB);
  const { due, nextAt: waiting } = await takeDueReplies(db, mailboxId, now);
  let next = waiting;
  for (const reply of due) {
    await withBodies(env.BODIES, reply.accountId, [reply], ["html"]);
    const outcome = await sendReply(env, logins, reply, now, sessions);
    if (outcome.ok) {
      await settleReply(db, reply.id, "COMPLETED", null, outcome.statsId, Date.now(), outcome.attachments);
      continue;
    }
    if (outcome.kind === "wait") {
      // The gap of the mailbox (an earlier reply of this pass, or campaign mail) or its server's hold holds it back: due again at its end.
      await rescheduleReply(db, reply.id, outcome.until, Date.now());
      next = Math.min(next ?? Infinity, outcome.until);
      continue;
    }
    // Its server refused it for now: tried again when the mailbox's other mail is (out of reach, busy, the provider's limit), or after a wait (greylisting, a full mailbox).
    const retry = outcome.kind === "server" ? retryAt(outcome, (reply.firstDueAt ?? reply.scheduledAt ?? new Date(now)).getTime(), now) : null;
    if (retry !== null) {
      await rescheduleReply(db, reply.id, retry, Date.now(), retryMessage(outcome.message, retry));
      next = Math.min(next ?? Infinity, retry);
    } else {
      await settleReply(db, reply.id, "FAILED", outcome.message, null, Date.now());
      log("warn", "scheduled reply not sent", { mailbox_id: mailboxId, reply_id: reply.id, reason: outcome.message });
    }
  }
  return next;
}
