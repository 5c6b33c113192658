import type { CampaignStatus, EventType, WebhookScope } from "../db/schema";
import { sentimentOf } from "../categories/rules";
import { iso } from "../platform/time";
import { kindsOf, wants, type WebhookEventKind } from "./event-kinds";
import type { NewDelivery } from "./outbox";

/**
 * Fan-out, pure: the deliveries a change causes, built from what the producing request already
 * holds (no re-reads). The producer stores them in its own D1 batch, each under a guard.
 * Payload keys follow CONTRACT section 14: a common part, then each kind's own keys.
 */

export interface WebhookTarget {
  id: number;
  accountId: number;
  associationType: WebhookScope;
  name: string;
  url: string;
  eventTypes: string[];
  categoryIds: number[];
  createdAt: Date;
}

export interface CampaignFacts {
  id: number;
  name: string;
  status: CampaignStatus;
  clientId?: number | null;
}

export interface EventFacts {
  type: EventType;
  occurredAt: number;
  sequenceNumber: number;
  /** The record's first sequence-1 send (webhook kind FIRST_EMAIL_SENT as well). */
  firstSend: boolean;
  toEmail: string | null;
  fromEmail: string | null;
  subject: string | null;
  body: string | null;
  linkUrl: string | null;
  /** The message's own Message-ID (a sent email's, a reply's), when known. */
  messageId?: string | null;
  /** A reply's Cc addresses. Absent = none. */
  ccEmails?: string[];
  /** An open or click a machine made: the payload's `is_bot`. Absent = false. */
  isMachine?: boolean;
  isOoo?: boolean;
  ignored?: boolean;
  /** How an unsubscribe came: the email's link, the API (the default) or a reply. */
  unsubscribeSource?: "link" | "api" | "reply";
  recordId: number;
  leadId?: number | null;
  leadEmail: string;
  leadName?: string | null;
  /** The lead's category once this request's events are applied (category filters read it). */
  leadCategoryId: number | null;
}

interface CategoryChange {
  /** The reply that set the category, when a reply did (ingestion); a change by hand has none. */
  reply?: { messageId: string | null; body: string | null; at: number; fromEmail: string | null; toEmail: string | null } | null;
  recordId: number;
  leadId?: number | null;
  leadEmail: string;
  leadName?: string | null;
  oldCategoryId: number | null;
  oldCategoryName?: string | null;
  newCategoryId: number | null;
  newCategoryName: string | null;
  occurredAt: number;
  /**
   * Who decided (CONTRACT section 20.5): an automatic categorisation names its source, confidence
   * and prompt version; absent, a change with a reply came with the event, one without is a person's.
   */
  provenance?: { source: string; confidence: number | null; promptVersion: string | null };
}

/** A received message that answers none of our emails (stored in `untracked_replies`). */
interface UntrackedReplyFacts {
  accountId: number;
  clientId: number | null;
  emailAccountId: number;
  fromEmail: string | null;
  toEmail: string;
  subject: string;
  messageId: string | null;
  receivedAt: number;
  /** The bodies as stored (a large one as its reference, src/platform/bodies.ts). */
  text: string;
  html: string | null;
  /** The text body itself, which the preview is cut from, when `text` is a reference. */
  preview?: string;
}

/** A mailbox whose connection check failed after it had worked. */
interface DisconnectFacts {
  accountId: number;
  clientId: number | null;
  emailAccountId: number;
  fromEmail: string;
  smtpFailureError: string | null;
  imapFailureError: string | null;
  /** Set when a person must act (CONTRACT 18.5). */
  disconnectReason: { code: string; message: string; at: number } | null;
  occurredAt: number;
}

const DESCRIPTIONS: Record<WebhookEventKind, string> = {
  EMAIL_SENT: "Email sent",
  FIRST_EMAIL_SENT: "First email of the sequence sent",
  EMAIL_OPEN: "Email opened",
  EMAIL_LINK_CLICK: "Link clicked",
  EMAIL_REPLY: "Reply received",
  EMAIL_BOUNCE: "Email bounced",
  LEAD_UNSUBSCRIBED: "Lead unsubscribed",
  LEAD_CATEGORY_UPDATED: "Lead category updated",
  CAMPAIGN_STATUS_CHANGED: "Campaign status changed",
  UNTRACKED_REPLIES: "Reply received that answers no campaign email",
  MANUAL_STEP_REACHED: "Manual step reached",
  EMAIL_ACCOUNT_DISCONNECTED: "Email account disconnected",
};

const PREVIEW_LENGTH = 200;

interface Subject {
  campaign: CampaignFacts | null;
  clientId: number | null;
  at: number;
  lead: { id: number | null; recordId: number | null; email: string | null };
  toEmail: string | null;
  toName: string | null;
  fromEmail: string | null;
  sequenceNumber: number | null;
}

function delivery(webhook: WebhookTarget, kind: WebhookEventKind, subject: Subject, fields: Record<string, unknown>, guard: Record<string, unknown> | undefined): NewDelivery {
  const { campaign } = subject;
  return {
    accountId: webhook.accountId,
    webhookId: webhook.id,
    campaignId: campaign?.id ?? null,
    eventType: kind,
    payload: {
      webhook_id: webhook.id,
      webhook_name: webhook.name,
      webhook_url: webhook.url,
      event_type: kind,
      event_timestamp: iso(subject.at),
      campaign_id: campaign?.id ?? null,
      campaign_name: campaign?.name ?? null,
      campaign_status: campaign?.status ?? null,
      client_id: subject.clientId,
      sl_email_lead_id: subject.lead.id,
      sl_email_lead_map_id: subject.lead.recordId,
      sl_lead_email: subject.lead.email,
      to_email: subject.toEmail,
      to_name: subject.toName,
      from_email: subject.fromEmail,
      sequence_number: subject.sequenceNumber,
      // An ingested event's id is known only once its row exists: the insert fills it in (outbox.ts).
      stats_id: null,
      description: DESCRIPTIONS[kind],
      metadata: { webhook_created_at: iso(webhook.createdAt.getTime()) },
      ...fields,
    },
    guard,
  };
}

function message(messageId: string | null, html: string | null, text: string | null, at: number) {
  return { message_id: messageId, html, text, time: iso(at) };
}

function domainOf(email: string | null): string | null {
  const at = email?.lastIndexOf("@") ?? -1;
  return at < 0 ? null : email!.slice(at + 1).toLowerCase();
}

/** Whether a reply came from the lead's own company (the hosted `leadCorrespondence`). */
function correspondence(leadEmail: string, from: string | null) {
  const lead = domainOf(leadEmail);
  const sender = domainOf(from);
  const repliedCompanyDomain = lead === null || sender === null ? "Unknown" : lead === sender ? "SameCompany" : "DifferentCompany";
  return { targetLeadEmail: leadEmail, replyReceivedFrom: from, repliedCompanyDomain };
}

/** The keys one kind adds for one ingested event. */
function eventFields(kind: WebhookEventKind, event: EventFacts): Record<string, unknown> {
  const at = iso(event.occurredAt);
  const messageId = event.messageId ?? null;
  switch (kind) {
    case "EMAIL_SENT":
    case "FIRST_EMAIL_SENT":
      return {
        subject: event.subject,
        time_sent: at,
        message_id: messageId,
        custom_subject: event.subject,
        custom_email_message: event.body,
        sent_message: message(messageId, event.body, event.body, event.occurredAt),
      };
    case "EMAIL_OPEN":
      return { time_opened: at, is_bot: event.isMachine ?? false };
    case "EMAIL_LINK_CLICK":
      return { time_clicked: at, link_clicked: event.linkUrl === null ? [] : [event.linkUrl], is_bot: event.isMachine ?? false };
    case "EMAIL_REPLY":
      return {
        subject: event.subject,
        time_replied: at,
        message_id: messageId,
        reply_message: message(messageId, event.body, event.body, event.occurredAt),
        // The send it answers: filled in from the event's credited send as the delivery is stored (outbox.ts).
        sent_message: null,
        reply_body: event.body,
        preview_text: (event.body ?? "").trim().slice(0, PREVIEW_LENGTH),
        cc_emails: event.ccEmails ?? [],
        stats_thread_id: null,
        is_ooo: event.isOoo ?? false,
        ignored: event.ignored ?? false,
        leadCorrespondence: correspondence(event.leadEmail, event.fromEmail),
      };
    case "EMAIL_BOUNCE":
      return {
        subject: event.subject,
        bounce_message: message(messageId, event.body, event.body, event.occurredAt),
        // Filled in from the event's credited send as the delivery is stored (outbox.ts).
        time_sent: null,
        custom_subject: event.subject,
        custom_email_message: null,
        is_bounced: true,
        // Only hard bounces become events (a soft one is retried by the sending server).
        bounce_type: "hard",
      };
    case "LEAD_UNSUBSCRIBED":
      return {
        lead_email: event.leadEmail,
        lead_name: event.leadName ?? null,
        unsubscribed_client_id_map: {},
        time_unsubscribed: at,
        source: event.unsubscribeSource ?? "api",
      };
    default:
      return {};
  }
}

function eventSubject(campaign: CampaignFacts, event: EventFacts): Subject {
  return {
    campaign,
    clientId: campaign.clientId ?? null,
    at: event.occurredAt,
    lead: { id: event.leadId ?? null, recordId: event.recordId, email: event.leadEmail },
    toEmail: event.toEmail,
    // Every kind but a reply is about a message to the lead.
    toName: event.type === "REPLY" ? null : (event.leadName ?? null),
    fromEmail: event.fromEmail,
    sequenceNumber: event.sequenceNumber,
  };
}

/** One delivery per (event, kind it produces, webhook that wants it). */
export function eventDeliveries(
  webhooks: WebhookTarget[],
  campaign: CampaignFacts,
  events: { facts: EventFacts; guard?: Record<string, unknown> }[],
): NewDelivery[] {
  const out: NewDelivery[] = [];
  for (const { facts: event, guard } of events) {
    for (const kind of kindsOf(event.type, event.firstSend)) {
      for (const webhook of webhooks) {
        if (!wants(webhook, kind, event.leadCategoryId)) continue;
        out.push(delivery(webhook, kind, eventSubject(campaign, event), eventFields(kind, event), guard));
      }
    }
  }
  return out;
}

export function categoryDeliveries(
  webhooks: WebhookTarget[],
  campaign: CampaignFacts,
  change: CategoryChange,
  guard?: Record<string, unknown>,
): NewDelivery[] {
  const subject: Subject = {
    campaign,
    clientId: campaign.clientId ?? null,
    at: change.occurredAt,
    lead: { id: change.leadId ?? null, recordId: change.recordId, email: change.leadEmail },
    toEmail: null,
    toName: null,
    fromEmail: null,
    sequenceNumber: null,
  };
  const lastReply = change.reply ? message(change.reply.messageId, change.reply.body, change.reply.body, change.reply.at) : null;
  const fields = {
    lead_id: change.leadId ?? null,
    lead_email: change.leadEmail,
    lead_name: change.leadName ?? null,
    lead_category: {
      old_id: change.oldCategoryId,
      old_name: change.oldCategoryName ?? null,
      new_id: change.newCategoryId,
      new_name: change.newCategoryName,
    },
    category: change.newCategoryName,
    lead_category_id: change.newCategoryId,
    // The lead's own fields and the thread are read from the record as the delivery is stored (outbox.ts).
    lead_data: {
      email: change.leadEmail,
      category: change.newCategoryId === null ? null : { name: change.newCategoryName, sentiment_type: sentimentOf(change.newCategoryId) },
    },
    history: [],
    last_reply: lastReply,
    lastReply,
    from: change.reply?.fromEmail ?? null,
    to: change.reply?.toEmail ?? null,
    category_source: change.provenance?.source ?? (change.reply ? "event" : "human"),
    confidence: change.provenance?.confidence ?? null,
    prompt_version: change.provenance?.promptVersion ?? null,
  };
  return webhooks
    .filter((webhook) => wants(webhook, "LEAD_CATEGORY_UPDATED", change.newCategoryId))
    .map((webhook) => delivery(webhook, "LEAD_CATEGORY_UPDATED", subject, fields, { category_at: change.occurredAt, ...guard }));
}

export function statusDeliveries(
  webhooks: WebhookTarget[],
  campaign: CampaignFacts,
  oldStatus: CampaignStatus,
  occurredAt: number,
): NewDelivery[] {
  const subject: Subject = {
    campaign,
    clientId: campaign.clientId ?? null,
    at: occurredAt,
    lead: { id: null, recordId: null, email: null },
    toEmail: null,
    toName: null,
    fromEmail: null,
    sequenceNumber: null,
  };
  const fields = { old_status: oldStatus, new_status: campaign.status, old_campaign_status: oldStatus };
  return webhooks
    .filter((webhook) => wants(webhook, "CAMPAIGN_STATUS_CHANGED", null))
    .map((webhook) => delivery(webhook, "CAMPAIGN_STATUS_CHANGED", subject, fields, undefined));
}

function campaignlessSubject(facts: { clientId: number | null }, at: number, fromEmail: string | null, toEmail: string | null): Subject {
  return { campaign: null, clientId: facts.clientId, at, lead: { id: null, recordId: null, email: null }, toEmail, toName: null, fromEmail, sequenceNumber: null };
}

/** UNTRACKED_REPLIES to the user- and client-scope webhooks that want it. */
export function untrackedReplyDeliveries(webhooks: WebhookTarget[], reply: UntrackedReplyFacts, guard?: Record<string, unknown>): NewDelivery[] {
  const fields = {
    email_account_id: reply.emailAccountId,
    subject: reply.subject,
    message_id: reply.messageId,
    time_replied: iso(reply.receivedAt),
    reply_body: reply.html ?? reply.text,
    preview_text: (reply.preview ?? reply.text).trim().slice(0, PREVIEW_LENGTH),
  };
  return webhooks
    .filter((webhook) => webhook.associationType !== "campaign" && wants(webhook, "UNTRACKED_REPLIES", null))
    .map((webhook) =>
      delivery(webhook, "UNTRACKED_REPLIES", campaignlessSubject(reply, reply.receivedAt, reply.fromEmail, reply.toEmail), fields, guard),
    );
}

/** EMAIL_ACCOUNT_DISCONNECTED to the user- and client-scope webhooks that want it. */
export function disconnectDeliveries(webhooks: WebhookTarget[], facts: DisconnectFacts): NewDelivery[] {
  const fields = {
    email_account_id: facts.emailAccountId,
    smtp_failure_error: facts.smtpFailureError,
    imap_failure_error: facts.imapFailureError,
    disconnect_reason: facts.disconnectReason === null ? null : { ...facts.disconnectReason, at: iso(facts.disconnectReason.at) },
    needs_reconnect: facts.disconnectReason !== null,
    time: iso(facts.occurredAt),
  };
  return webhooks
    .filter((webhook) => webhook.associationType !== "campaign" && wants(webhook, "EMAIL_ACCOUNT_DISCONNECTED", null))
    .map((webhook) =>
      delivery(webhook, "EMAIL_ACCOUNT_DISCONNECTED", campaignlessSubject(facts, facts.occurredAt, facts.fromEmail, null), fields, undefined),
    );
}
