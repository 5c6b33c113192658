import { and, eq, or, sql } from "drizzle-orm";
import { bodyStore } from "../platform/bodies";
import { settingsOf } from "../schedule/settings";
import { campaigns, messages, OUT_OF_OFFICE_CATEGORY_ID } from "../db/schema";
import type { Bindings } from "../platform/env";
import { ingest, type FoundContext } from "../events/ingest";
import type { PlannedEvent } from "../events/plan";
import { visibleCampaigns } from "../platform/access";
import { database, type Database } from "../platform/db";
import { log } from "../platform/logging";
import { inList } from "../platform/sql";
import { enqueue } from "../webhooks/outbox";
import { classifyAutoReply } from "./auto-reply";
import { classifyBounce } from "./bounce";
import type { ParsedMessage } from "../mail/parsed";
import { replyText } from "./reply-text";
import { loadUntrackedContext, storeUntracked } from "./untracked";
import { toHex, utf8Prefix } from "../platform/bytes";

/**
 * What a mailbox received, turned into events: a reply to one of our emails (its In-Reply-To or
 * References names a Message-ID we sent) becomes a REPLY of that lead's record, a delivery report
 * for one of them a BOUNCE (hard ones only: a soft bounce is retried by the sender's server), both
 * through the one ingestion path (inbox, analytics, stop rules, webhooks). Matching is by our own
 * Message-IDs (sentMessages says which).
 */

interface InboundMailbox {
  id: number;
  accountId: number;
  /** The client the mailbox belongs to; null: the account's own. */
  clientId: number | null;
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
  sentAt: Date | null;
}

/**
 * Our emails among these Message-IDs that mail received by `mailbox` may answer: those the mailbox
 * sent itself, and those of campaigns within its scope (the one tenancy rule, the mailbox reading as
 * its client would: an account-wide mailbox any campaign of the account, a client's mailbox only that
 * client's). So mail that reached client Y's mailbox never joins client X's thread, while a reply to
 * another mailbox of the same scope (a shared Reply-To, a re-pinned record) and a mailbox the owner
 * attached to another scope's campaign still thread.
 */
async function sentMessages(db: Database, mailbox: InboundMailbox, ids: string[]): Promise<Map<string, SentMessage>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ messageId: messages.messageId, recordId: messages.campaignLeadId, campaignId: messages.campaignId, step: messages.step, sentAt: messages.sentAt })
    .from(messages)
    .innerJoin(campaigns, eq(campaigns.id, messages.campaignId))
    .where(
      and(
        eq(messages.accountId, mailbox.accountId),
        sql`${messages.messageId} ${inList(ids)}`,
        or(eq(messages.emailAccountId, mailbox.id), visibleCampaigns(mailbox)),
      ),
    );
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
  return `imap:${mailboxId}:${toHex(digest.subarray(0, 12))}`;
}

/** What is stored of a reply's own words (and of a bounce's diagnostic): the rest stays in the mailbox. */
export const REPLY_BODY_BYTES = 64 * 1024;

/**
 * Records one campaign's replies and bounces through the one ingestion path, in ONE D1 batch when its
 * list parameters fit (D1 refuses a string over 2,000,000 bytes; each body is written in the event
 * twice and in every webhook delivery again); else in halves, each planned on freshly loaded records,
 * as many batches as needed.
 */
async function storeCampaignNews(env: Bindings, db: Database, mailbox: InboundMailbox, campaignId: number, items: Classified[], now: number, outcome: InboundOutcome): Promise<void> {
  const scope = {
    visible: eq(campaigns.accountId, mailbox.accountId),
    accountId: mailbox.accountId,
    campaignId,
    want: { recordIds: [...new Set(items.map((item) => item.thread.recordId))], emails: [], categoryIds: [OUT_OF_OFFICE_CATEGORY_ID] },
  };
  let replies = 0;
  let planned = 0;
  const build = async (context: FoundContext) => {
    const events = await plannedInbound(mailbox, items, context, now);
    replies = events.filter((event) => event.incoming.type === "REPLY").length;
    planned = events.length;
    return events;
  };
  const stored = await ingest(env, db, scope, build, now, { bounded: true });
  if (!stored || planned === 0) return;
  if (stored.tooLarge) {
    const half = Math.ceil(items.length / 2);
    await storeCampaignNews(env, db, mailbox, campaignId, items.slice(0, half), now, outcome);
    await storeCampaignNews(env, db, mailbox, campaignId, items.slice(half), now, outcome);
    return;
  }
  outcome.replies += replies;
  outcome.bounces += planned - replies;
  outcome.writeBatches += 1;
}

/**
 * When a reply or bounce is dated: by its Date header, never before the email it answers, and never in
 * the future. A Date header has whole seconds (and the sender's clock), so a reply read within the
 * second of our send would otherwise sort before it, and the thread would answer the wrong message.
 */
function receivedAt(date: number | null, answeredAt: Date | null, now: number): number {
  return Math.min(Math.max(date ?? now, answeredAt === null ? -Infinity : answeredAt.getTime() + 1), now);
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
    const occurredAt = receivedAt(message.date, item.thread.sentAt, now);
    const isReply = item.kind === "reply";
    const body = isReply ? replyText(message) : item.bounceDiagnostic;
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
      body: body === null ? null : utf8Prefix(body, REPLY_BODY_BYTES),
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
  const sent = await sentMessages(db, mailbox, [...new Set(candidates)]);

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
  for (const [campaignId, items] of byCampaign) await storeCampaignNews(env, db, mailbox, campaignId, items, now, outcome);
  if (untracked.length > 0) {
    const context = await loadUntrackedContext(db, mailbox);
    const keyed = await Promise.all(untracked.map(async (message) => ({ key: await inboundId(mailbox.id, message), message })));
    await enqueue(env, await storeUntracked(env.DB, bodyStore(env), mailbox, context, keyed, now));
    outcome.writeBatches += 1;
  }
  if (outcome.untracked > 0) log("info", "received messages that answer no campaign email", { mailbox_id: mailbox.id, count: outcome.untracked });
  return outcome;
}
