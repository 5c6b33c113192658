import { WEBHOOK_EVENT_KINDS, type WebhookEventKind } from "../webhooks/event-kinds";
import {
  categoryDeliveries,
  disconnectDeliveries,
  eventDeliveries,
  statusDeliveries,
  untrackedReplyDeliveries,
  type EventFacts,
  type WebhookTarget,
} from "../webhooks/fanout";
import type { JsonSchema } from "./schema-example";

/**
 * The webhook payloads as OpenAPI 3.1 `webhooks`, one per event kind. The payloads themselves are
 * built in src/webhooks/fanout.ts (and `secret_key` added at delivery, src/webhooks/consumer.ts);
 * test/openapi-docs.test.ts builds one of each and holds these schemas to exactly its members.
 * The examples are made by those same builders from sample facts, so they show what is really sent.
 */

const string: JsonSchema = { type: "string" };
const nullableString: JsonSchema = { type: ["string", "null"] };
const nullableInteger: JsonSchema = { type: ["integer", "null"] };
const timestamp: JsonSchema = { type: "string", format: "date-time", description: "ISO 8601, UTC, milliseconds" };
const nullableTimestamp: JsonSchema = { type: ["string", "null"], format: "date-time" };

const messageSchema: JsonSchema = {
  type: ["object", "null"],
  properties: { message_id: nullableString, html: nullableString, text: nullableString, time: timestamp },
  required: ["message_id", "html", "text", "time"],
};

/** Members every payload has; campaign and lead members are null on events without them. */
const COMMON: Record<string, JsonSchema> = {
  webhook_id: { type: "integer" },
  webhook_name: string,
  webhook_url: string,
  event_type: { type: "string", enum: [...WEBHOOK_EVENT_KINDS] },
  event_timestamp: timestamp,
  campaign_id: nullableInteger,
  campaign_name: nullableString,
  campaign_status: nullableString,
  client_id: nullableInteger,
  sl_email_lead_id: { ...nullableInteger, description: "The lead's id" },
  sl_email_lead_map_id: { ...nullableInteger, description: "The lead's record in the campaign (email_lead_map_id)" },
  sl_lead_email: nullableString,
  to_email: nullableString,
  to_name: nullableString,
  from_email: nullableString,
  sequence_number: nullableInteger,
  stats_id: { type: ["integer", "string", "null"], description: "The stored event's id, when the delivery comes from an event" },
  description: { type: "string", description: "The kind in words" },
  metadata: { type: "object", properties: { webhook_created_at: timestamp }, required: ["webhook_created_at"] },
  secret_key: { type: ["string", "null"], description: "The webhook's own `secret_key` as the user set it (null when unset); never the signing secret" },
};

const PER_KIND: Record<WebhookEventKind, { summary: string; description: string; members: Record<string, JsonSchema> }> = {
  EMAIL_SENT: {
    summary: "An email of a campaign was sent",
    description: "One delivery per email sent to a lead (every step).",
    members: {
      subject: nullableString,
      time_sent: timestamp,
      message_id: nullableString,
      custom_subject: nullableString,
      custom_email_message: { ...nullableString, description: "The rendered body" },
      sent_message: messageSchema,
    },
  },
  FIRST_EMAIL_SENT: {
    summary: "The first email of a lead's sequence was sent",
    description: "Sent beside EMAIL_SENT for a record's first step-1 send only; same members.",
    members: {},
  },
  EMAIL_OPEN: {
    summary: "A lead opened an email",
    description: "`is_bot` is true when the open came from a machine (a security scanner or an image proxy prefetch).",
    members: { time_opened: timestamp, is_bot: { type: "boolean" } },
  },
  EMAIL_LINK_CLICK: {
    summary: "A lead clicked a tracked link",
    description: "`link_clicked` holds the original URL; `is_bot` marks a machine's click.",
    members: { time_clicked: timestamp, link_clicked: { type: "array", items: string }, is_bot: { type: "boolean" } },
  },
  EMAIL_REPLY: {
    summary: "A lead replied",
    description:
      "A webhook with a category filter gets replies of leads in those categories only. `ignored` is true when the reply does not count " +
      "(from another address, or out of office while the account ignores those); `leadCorrespondence.repliedCompanyDomain` is " +
      "`SameCompany`, `DifferentCompany` or `Unknown`.",
    members: {
      subject: nullableString,
      time_replied: timestamp,
      message_id: nullableString,
      reply_message: messageSchema,
      sent_message: messageSchema,
      reply_body: { ...nullableString, description: "HTML (or text) of the reply" },
      preview_text: { type: "string", maxLength: 200 },
      cc_emails: { type: "array", items: string, description: "The Cc addresses of the reply, lower-cased" },
      stats_thread_id: nullableString,
      is_ooo: { type: "boolean" },
      ignored: { type: "boolean" },
      leadCorrespondence: {
        type: "object",
        properties: {
          targetLeadEmail: string,
          replyReceivedFrom: nullableString,
          repliedCompanyDomain: { type: "string", enum: ["SameCompany", "DifferentCompany", "Unknown"] },
        },
        required: ["targetLeadEmail", "replyReceivedFrom", "repliedCompanyDomain"],
      },
    },
  },
  EMAIL_BOUNCE: {
    summary: "An email bounced",
    description: "Only hard bounces become events (a soft bounce is retried by the sending server), so `bounce_type` is `hard`.",
    members: {
      subject: nullableString,
      bounce_message: messageSchema,
      time_sent: nullableTimestamp,
      custom_subject: nullableString,
      custom_email_message: nullableString,
      is_bounced: { type: "boolean", const: true },
      bounce_type: { type: "string", enum: ["hard", "soft"] },
    },
  },
  LEAD_UNSUBSCRIBED: {
    summary: "A lead unsubscribed",
    description: "`source` tells how: the email's unsubscribe `link`, the `api`, or a `reply`.",
    members: {
      lead_email: string,
      lead_name: nullableString,
      unsubscribed_client_id_map: { type: "object" },
      time_unsubscribed: timestamp,
      source: { type: "string", enum: ["link", "api", "reply"] },
    },
  },
  LEAD_CATEGORY_UPDATED: {
    summary: "A lead's category changed",
    description: "Old and new category; a webhook with a category filter hears only changes into those categories.",
    members: {
      lead_id: nullableInteger,
      lead_email: string,
      lead_name: nullableString,
      lead_category: {
        type: "object",
        properties: { old_id: nullableInteger, old_name: nullableString, new_id: nullableInteger, new_name: nullableString },
        required: ["old_id", "old_name", "new_id", "new_name"],
      },
      category: nullableString,
      lead_category_id: nullableInteger,
      lead_data: {
        type: "object",
        description: "The lead's own fields as they are when the category changes",
        properties: {
          email: string,
          first_name: nullableString,
          last_name: nullableString,
          phone_number: nullableString,
          company_name: nullableString,
          website: nullableString,
          location: nullableString,
          company_url: nullableString,
          linkedin_profile: nullableString,
          custom_fields: { type: "object" },
          category: {
            type: ["object", "null"],
            properties: { name: string, sentiment_type: { type: "string", enum: ["positive", "negative", "neutral"] } },
            required: ["name", "sentiment_type"],
          },
        },
        required: ["email", "category"],
      },
      history: {
        type: "array",
        description: "The thread up to the change, oldest first: every email sent and every reply, as message-history gives them (without the per-send open and click counts and the attachments)",
        items: {
          type: "object",
          properties: {
            stats_id: string,
            message_id: nullableString,
            type: { type: "string", enum: ["SENT", "REPLY"] },
            time: timestamp,
            from: nullableString,
            to: nullableString,
            cc: nullableString,
            bcc: nullableString,
            subject: nullableString,
            email_body: nullableString,
            email_seq_number: string,
            ignored: { type: "boolean" },
            categorisation: {
              type: ["object", "null"],
              description: "On a REPLY: how it was categorised (CONTRACT section 20.5): category, source (rule, model, human, event), rule id, model, prompt version, confidence, needs_review, reason",
            },
          },
          required: ["stats_id", "message_id", "type", "time", "from", "to", "cc", "bcc", "subject", "email_body", "email_seq_number", "ignored", "categorisation"],
        },
      },
      last_reply: { type: ["object", "null"] },
      lastReply: { type: ["object", "null"] },
      from: nullableString,
      to: nullableString,
      category_source: { type: "string", enum: ["rule", "model", "human", "event"], description: "Who set the new category: the rules, the model, a person, or the event that carried it" },
      confidence: { type: ["number", "null"], description: "The rules' or the model's confidence (null for a person's or an event's choice)" },
      prompt_version: { ...nullableString, description: "`<template id>.<version>` or `default.<n>` when the model decided" },
    },
  },
  CAMPAIGN_STATUS_CHANGED: {
    summary: "A campaign's status changed",
    description: "Lead members are null.",
    members: { old_status: string, new_status: string, old_campaign_status: string },
  },
  UNTRACKED_REPLIES: {
    summary: "A mailbox received a message that answers no campaign email",
    description: "Campaign and lead members are null; only `user`- and `client`-scope webhooks hear it.",
    members: {
      email_account_id: { type: "integer" },
      subject: string,
      message_id: nullableString,
      time_replied: timestamp,
      reply_body: string,
      preview_text: { type: "string", maxLength: 200 },
    },
  },
  MANUAL_STEP_REACHED: {
    summary: "Accepted in a subscription, never sent",
    description: "Salvo has no manual steps, so no delivery of this kind is ever made; subscribing to it is allowed for compatibility.",
    members: {},
  },
  EMAIL_ACCOUNT_DISCONNECTED: {
    summary: "A mailbox that worked failed, or a failing one became disconnected",
    description:
      "Only `user`- and `client`-scope webhooks hear it. Campaign and lead members are null. Sent once when a mailbox leaves `connected`, and once more when a `failing` mailbox becomes `disconnected` (a person must act: `needs_reconnect` true, `disconnect_reason` says why); never again until a check passes.",
    members: {
      email_account_id: { type: "integer" },
      smtp_failure_error: nullableString,
      imap_failure_error: nullableString,
      disconnect_reason: {
        type: ["object", "null"],
        properties: { code: string, message: string, at: timestamp },
        required: ["code", "message", "at"],
      },
      needs_reconnect: { type: "boolean" },
      time: timestamp,
    },
  },
};

function membersOf(kind: WebhookEventKind): Record<string, JsonSchema> {
  return kind === "FIRST_EMAIL_SENT" ? PER_KIND.EMAIL_SENT.members : PER_KIND[kind].members;
}

function componentName(kind: WebhookEventKind): string {
  return `Webhook${kind
    .toLowerCase()
    .split("_")
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join("")}Payload`;
}

/** Every member one kind's payload carries (the common ones and its own). */
export function payloadMembers(kind: WebhookEventKind): string[] {
  return [...Object.keys(COMMON), ...Object.keys(membersOf(kind))];
}

export function webhookComponents(): Record<string, JsonSchema> {
  return Object.fromEntries(
    WEBHOOK_EVENT_KINDS.map((kind) => {
      const properties = { ...COMMON, event_type: { type: "string", const: kind }, ...membersOf(kind) };
      return [componentName(kind), { type: "object", properties, required: Object.keys(properties) }];
    }),
  );
}

const SAMPLE_AT = Date.parse("2026-01-25T09:00:00.000Z");

const SAMPLE_WEBHOOK: WebhookTarget = {
  id: 12,
  accountId: 1,
  associationType: "campaign",
  name: "CRM sync",
  url: "https://hooks.example.com/salvo",
  eventTypes: [...WEBHOOK_EVENT_KINDS],
  categoryIds: [],
  createdAt: new Date("2026-01-20T08:00:00.000Z"),
};

const SAMPLE_CAMPAIGN = { id: 3, name: "Q1 outreach", status: "ACTIVE" as const, clientId: null };

function sampleEvent(type: EventFacts["type"], minutes: number, fields: Partial<EventFacts> = {}): { facts: EventFacts } {
  return {
    facts: {
      type,
      occurredAt: SAMPLE_AT + minutes * 60_000,
      sequenceNumber: 1,
      firstSend: type === "SENT",
      toEmail: "ann@acme.example",
      fromEmail: "sales@yourdomain.example",
      subject: "Quick question, Ann",
      body: "<p>Hi Ann, ...</p>",
      linkUrl: null,
      messageId: "<c3f1@yourdomain.example>",
      recordId: 41,
      leadId: 17,
      leadEmail: "ann@acme.example",
      leadCategoryId: null,
      ...fields,
    },
  };
}

/** One payload of each kind, as the builders make it and the consumer completes it (`secret_key`). */
function samplePayloads(): Map<string, Record<string, unknown>> {
  const reply = { fromEmail: "ann@acme.example", toEmail: "sales@yourdomain.example", subject: "Re: Quick question, Ann", body: "Sounds good, call me Tuesday.", messageId: "<9a2e@acme.example>" };
  const deliveries = [
    ...eventDeliveries([SAMPLE_WEBHOOK], SAMPLE_CAMPAIGN, [
      sampleEvent("SENT", 0),
      sampleEvent("OPEN", 30, { isMachine: false }),
      sampleEvent("CLICK", 31, { linkUrl: "https://yourdomain.example/pricing" }),
      sampleEvent("REPLY", 90, reply),
      sampleEvent("BOUNCE", 1, { body: "550 5.1.1 user unknown" }),
      sampleEvent("UNSUBSCRIBE", 120, { unsubscribeSource: "link" }),
    ]),
    ...categoryDeliveries([SAMPLE_WEBHOOK], SAMPLE_CAMPAIGN, {
      recordId: 41, leadId: 17, leadEmail: "ann@acme.example", oldCategoryId: null, newCategoryId: 1, newCategoryName: "Interested", occurredAt: SAMPLE_AT + 95 * 60_000,
    }),
    ...statusDeliveries([SAMPLE_WEBHOOK], SAMPLE_CAMPAIGN, "PAUSED", SAMPLE_AT),
    ...untrackedReplyDeliveries([{ ...SAMPLE_WEBHOOK, associationType: "user" }], {
      accountId: 1, clientId: null, emailAccountId: 5, fromEmail: "someone@elsewhere.example", toEmail: "sales@yourdomain.example",
      subject: "Partnership", messageId: "<77b0@elsewhere.example>", receivedAt: SAMPLE_AT, text: "Hello, are you open to a partnership?", html: null,
    }),
    ...disconnectDeliveries([{ ...SAMPLE_WEBHOOK, associationType: "user" }], {
      accountId: 1, clientId: null, emailAccountId: 5, fromEmail: "sales@yourdomain.example", smtpFailureError: "535 5.7.8 authentication failed", imapFailureError: null,
      disconnectReason: { code: "auth_rejected", message: "535 5.7.8 authentication failed", at: SAMPLE_AT }, occurredAt: SAMPLE_AT,
    }),
  ];
  return new Map(
    deliveries.map((delivery) => [
      delivery.eventType,
      { ...delivery.payload, ...storedFields(delivery.payload), stats_id: delivery.campaignId === null ? null : 1001, secret_key: null },
    ]),
  );
}

/** What the outbox reads from the record as it stores a category delivery (src/webhooks/outbox.ts), for the sample. */
function storedFields(payload: Record<string, unknown>): Record<string, unknown> {
  if (payload.event_type !== "LEAD_CATEGORY_UPDATED") return {};
  const message = (statsId: string, type: "SENT" | "REPLY", minutes: number, from: string, to: string, subject: string, body: string) => ({
    stats_id: statsId,
    message_id: `<${statsId}@${from.split("@")[1]}>`,
    type,
    time: new Date(SAMPLE_AT + minutes * 60_000).toISOString(),
    from,
    to,
    cc: null,
    bcc: null,
    subject,
    email_body: body,
    email_seq_number: "1",
    ignored: false,
    categorisation: null,
  });
  return {
    lead_data: {
      email: "ann@acme.example",
      first_name: "Ann",
      last_name: "Lee",
      phone_number: null,
      company_name: "Acme",
      website: "acme.example",
      location: null,
      company_url: null,
      linkedin_profile: null,
      custom_fields: { role: "CTO" },
      ...(payload.lead_data as Record<string, unknown>),
    },
    history: [
      message("1000", "SENT", 0, "sales@yourdomain.example", "ann@acme.example", "Quick question, Ann", "<p>Hi Ann, ...</p>"),
      message("1004", "REPLY", 90, "ann@acme.example", "sales@yourdomain.example", "Re: Quick question, Ann", "Sounds good, call me Tuesday."),
    ],
  };
}

const DELIVERY_RULES =
  "Delivered as a POST of JSON with Standard Webhooks headers (`webhook-id`, stable across retries; `webhook-timestamp`; " +
  "`webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body keyed by the base64-decoded whsec_ secret>`, two signatures " +
  "for 24 h after a rotation), plus `X-Webhook-Level`, `X-Request-Id` and `X-Smartlead-Signature: sha256=<hex>`. Timeout 10 s, " +
  "redirects not followed. 2xx = delivered; 410 disables the webhook; other 4xx except 408/429 fail without retry; 5xx, 408, 429, " +
  "network errors and timeouts retry after 30 s, 2 m, 10 m, 1 h, 6 h, 12 h (honouring `Retry-After`), then fail.";

function headerParameter(name: string, description: string) {
  return { in: "header", name, required: true, description, schema: { type: "string" } };
}

export function webhookOperations(): Record<string, unknown> {
  const samples = samplePayloads();
  return Object.fromEntries(
    WEBHOOK_EVENT_KINDS.map((kind) => {
      const own = PER_KIND[kind];
      const example = samples.get(kind);
      return [
        kind,
        {
          post: {
            operationId: `webhook${componentName(kind).replace(/^Webhook|Payload$/g, "")}`,
            summary: own.summary,
            description: `${own.description}\n\n${DELIVERY_RULES}`,
            tags: ["Webhook payloads"],
            parameters: [
              headerParameter("webhook-id", "The delivery's id, the same on every retry"),
              headerParameter("webhook-timestamp", "Unix seconds of this attempt"),
              headerParameter("webhook-signature", "`v1,<base64 signature>`; space-separated when two secrets are valid"),
              headerParameter("X-Webhook-Level", "The webhook's scope: user, client or campaign"),
              headerParameter("X-Smartlead-Signature", "`sha256=<hex HMAC-SHA256 of the raw body>`"),
            ],
            requestBody: {
              required: true,
              content: {
                "application/json": { schema: { $ref: `#/components/schemas/${componentName(kind)}` }, ...(example && { example }) },
              },
            },
            responses: {
              "2XX": { description: "Delivered" },
              "410": { description: "Gone: the webhook is disabled" },
            },
          },
        },
      ];
    }),
  );
}
