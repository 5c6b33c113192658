import { and, eq, sql } from "drizzle-orm";
import { settingsOf } from "../schedule/settings";
import { campaigns, messages, OUT_OF_OFFICE_CATEGORY_ID } from "../db/schema";
import type { Bindings } from "../platform/env";
import { ingest, type FoundContext } from "../events/ingest";
import type { PlannedEvent } from "../events/plan";
import { database, type Database } from "../platform/db";
import { log } from "../platform/logging";
import { inList } from "../platform/sql";
import { enqueue } from "../webhooks/outbox";
import { classifyAutoReply } from "./auto-reply";
import { classifyBounce } from "./bounce";
import type { ParsedMessage } from "../mail/parsed";
import { replyText } from "./reply-text";
import { loadUntrackedContext, storeUntracked } from "./untracked";

/**
 * What a mailbox received, turned into events: a reply to one of our emails (its In-Reply-To or
 * References names a Message-ID we sent) becomes a REPLY of that lead's record, a delivery report
 * for one of them a BOUNCE (hard ones only: a soft bounce is retried by the sender's server), both
 * through the one ingestion path (inbox, analytics, stop rules, webhooks). Matching is by our own
 * Message-IDs within the mailbox's account only.
 */

export interface InboundMailbox {
  id: number;
  accountId: number;
  fromEmail: string;
}

export interface InboundOutcome {
  replies: number;
  bounces: number;
  /** Messages that answer nothing we sent (kept, and announced as UNTRACKED_REPLIES; a stray bounce is only counted). */
  untracked: number;
  /** D1 write batches the pass committed (one per campaign with news). */
  writeBatches: number;
}

interface SentMessage {
  messageId: string;
  recordId: number;
  campaignId: number;
  step: number;
}

async function sentMessages(db: Database, accountId: number, ids: string[]): Promise<Map<string, SentMessage>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ messageId: messages.messageId, recordId: messages.campaignLeadId, campaignId: messages.campaignId, step: messages.step })
    .from(messages)
    .where(and(eq(messages.accountId, accountId), sql`${messages.messageId} ${inList(ids)}`));
  return new Map(rows.map((row) => [row.messageId, row]));
}

interface Classified {
  message: ParsedMessage;
  kind: "reply" | "bounce";
  /** The latest of our emails it answers or reports on. */
  thread: SentMessage;
  bounceDiagnostic: string | null;
  outOfOffice: boolean;
  /** An out-of-office answer's stated return date. */
  returnsAt: number | null;
}

/** A stable id per received message: its Message-ID, else a digest of what identifies it. */
async function inboundId(mailboxId: number, message: ParsedMessage): Promise<string> {
  const key = message.messageId ?? `${message.from}|${message.date}|${message.subject}|${message.text.slice(0, 200)}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `imap:${mailboxId}:${[...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A campaign's classified messages as planned events, each with its record (a record deleted since: none). */
async function plannedInbound(mailbox: InboundMailbox, items: Classified[], context: FoundContext, now: number): Promise<PlannedEvent[]> {
  const categorise = settingsOf(context.campaign.settings).outOfOffice.autoCategorizeOOO;
  const records = new Map(context.records.map((record) => [record.id, record]));
  const planned: PlannedEvent[] = [];
  for (const item of items) {
    const record = records.get(item.thread.recordId);
    if (!record) continue;
    const { message } = item;
    const occurredAt = Math.min(message.date ?? now, now);
    const isReply = item.kind === "reply";
    planned.push({
      eventId: `${isReply ? "" : "bounce-"}${await inboundId(mailbox.id, message)}`,
      record,
      incoming: {
        type: isReply ? "REPLY" : "BOUNCE",
        occurredAt,
        sequenceNumber: item.thread.step,
        emailAccountId: mailbox.id,
        fromEmail: isReply ? message.from : null,
        isOoo: item.outOfOffice,
        categoryId: isReply && item.outOfOffice && categorise ? OUT_OF_OFFICE_CATEGORY_ID : null,
      },
      toEmail: mailbox.fromEmail,
      subject: message.subject,
      body: isReply ? replyText(message) : item.bounceDiagnostic,
      messageId: message.messageId,
      cc: isReply ? message.cc : undefined,
      linkUrl: null,
      isMachine: false,
      resumeAt: item.returnsAt,
    });
  }
  return planned;
}

export async function recordInbound(env: Bindings, mailbox: InboundMailbox, received: ParsedMessage[], now: number): Promise<InboundOutcome> {
  const db = database(env.DB);
  const outcome: InboundOutcome = { replies: 0, bounces: 0, untracked: 0, writeBatches: 0 };
  const bounces = received.map((message) => classifyBounce(message));
  const candidates = received.flatMap((message, i) => [message.inReplyTo, ...message.references, bounces[i]?.originalMessageId].filter((id): id is string => !!id));
  const sent = await sentMessages(db, mailbox.accountId, [...new Set(candidates)]);

  const classified: Classified[] = [];
  const untracked: ParsedMessage[] = [];
  received.forEach((message, i) => {
    const bounce = bounces[i];
    const ids = bounce ? [bounce.originalMessageId, message.inReplyTo, ...message.references] : [message.inReplyTo, ...message.references];
    const threads = ids.map((id) => (id ? sent.get(id) : undefined)).filter((t): t is SentMessage => t !== undefined);
    const thread = threads.sort((a, b) => b.step - a.step)[0];
    if (!thread) {
      outcome.untracked += 1;
      if (!bounce) untracked.push(message);
      return;
    }
    if (bounce) {
      if (bounce.kind === "hard") classified.push({ message, kind: "bounce", thread, bounceDiagnostic: bounce.diagnostic ?? bounce.status, outOfOffice: false, returnsAt: null });
      return;
    }
    const verdict = classifyAutoReply(message, now);
    classified.push({ message, kind: "reply", thread, bounceDiagnostic: null, outOfOffice: verdict.outOfOffice, returnsAt: verdict.returnsAt });
  });

  const byCampaign = new Map<number, Classified[]>();
  for (const item of classified) byCampaign.set(item.thread.campaignId, [...(byCampaign.get(item.thread.campaignId) ?? []), item]);
  for (const [campaignId, items] of byCampaign) {
    const scope = {
      visible: eq(campaigns.accountId, mailbox.accountId),
      accountId: mailbox.accountId,
      campaignId,
      want: { recordIds: [...new Set(items.map((item) => item.thread.recordId))], emails: [], categoryIds: [OUT_OF_OFFICE_CATEGORY_ID] },
    };
    const stored = await ingest(
      env,
      db,
      scope,
      async (context) => {
        const planned = await plannedInbound(mailbox, items, context, now);
        for (const event of planned) outcome[event.incoming.type === "REPLY" ? "replies" : "bounces"] += 1;
        return planned;
      },
      now,
    );
    if (stored) outcome.writeBatches += 1;
  }
  if (untracked.length > 0) {
    const context = await loadUntrackedContext(db, mailbox);
    const keyed = await Promise.all(untracked.map(async (message) => ({ key: await inboundId(mailbox.id, message), message })));
    await enqueue(env, await storeUntracked(env.DB, mailbox, context, keyed, now));
    outcome.writeBatches += 1;
  }
  if (outcome.untracked > 0) log("info", "received messages that answer no campaign email", { mailbox_id: mailbox.id, count: outcome.untracked });
  return outcome;
}
