import type { CampaignStatus, EventType } from "../db/schema";
import { iso } from "../platform/time";
import { kindsOf, wants, type WebhookEventKind } from "./event-kinds";
import type { NewDelivery } from "./outbox";

/**
 * Fan-out, pure: the deliveries a change causes, built from what the producing request already
 * holds (no re-reads). The producer stores them in its own D1 batch, each under a guard.
 */

export interface WebhookTarget {
  id: number;
  accountId: number;
  campaignId: number;
  name: string;
  eventTypes: string[];
  categoryIds: number[];
}

export interface CampaignFacts {
  id: number;
  name: string;
  status: CampaignStatus;
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
  /** An open or click a machine made: the payload's `is_bot`. Absent = false. */
  isMachine?: boolean;
  recordId: number;
  leadEmail: string;
  /** The lead's category once this request's events are applied (category filters read it). */
  leadCategoryId: number | null;
}

export interface CategoryChange {
  recordId: number;
  leadEmail: string;
  oldCategoryId: number | null;
  newCategoryId: number | null;
  newCategoryName: string | null;
  occurredAt: number;
}

function delivery(
  webhook: WebhookTarget,
  kind: WebhookEventKind,
  fields: Record<string, unknown>,
  guard: Record<string, unknown> | undefined,
): NewDelivery {
  return {
    accountId: webhook.accountId,
    webhookId: webhook.id,
    campaignId: webhook.campaignId,
    eventType: kind,
    payload: {
      webhook_id: webhook.id,
      webhook_name: webhook.name,
      event_type: kind,
      ...fields,
    },
    guard,
  };
}

function campaignFields(campaign: CampaignFacts) {
  return { campaign_id: campaign.id, campaign_name: campaign.name, campaign_status: campaign.status };
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
        out.push(
          delivery(
            webhook,
            kind,
            {
              event_timestamp: iso(event.occurredAt),
              ...campaignFields(campaign),
              sl_email_lead_map_id: event.recordId,
              sl_lead_email: event.leadEmail,
              to_email: event.toEmail,
              from_email: event.fromEmail,
              sequence_number: event.sequenceNumber,
              ...(event.subject !== null && { subject: event.subject }),
              ...(kind === "EMAIL_REPLY" && { reply_message: event.body }),
              ...(kind === "EMAIL_LINK_CLICK" && { link_clicked: event.linkUrl }),
              ...((kind === "EMAIL_OPEN" || kind === "EMAIL_LINK_CLICK") && { is_bot: event.isMachine ?? false }),
            },
            guard,
          ),
        );
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
  return webhooks
    .filter((webhook) => wants(webhook, "LEAD_CATEGORY_UPDATED", change.newCategoryId))
    .map((webhook) =>
      delivery(
        webhook,
        "LEAD_CATEGORY_UPDATED",
        {
          event_timestamp: iso(change.occurredAt),
          ...campaignFields(campaign),
          sl_email_lead_map_id: change.recordId,
          sl_lead_email: change.leadEmail,
          to_email: null,
          from_email: null,
          sequence_number: null,
          lead_category: { old_id: change.oldCategoryId, new_id: change.newCategoryId, new_name: change.newCategoryName },
        },
        guard,
      ),
    );
}

export function statusDeliveries(
  webhooks: WebhookTarget[],
  campaign: CampaignFacts,
  oldStatus: CampaignStatus,
  occurredAt: number,
): NewDelivery[] {
  return webhooks
    .filter((webhook) => wants(webhook, "CAMPAIGN_STATUS_CHANGED", null))
    .map((webhook) =>
      delivery(
        webhook,
        "CAMPAIGN_STATUS_CHANGED",
        {
          event_timestamp: iso(occurredAt),
          ...campaignFields(campaign),
          old_campaign_status: oldStatus,
          sl_email_lead_map_id: null,
          sl_lead_email: null,
          to_email: null,
          from_email: null,
          sequence_number: null,
        },
        undefined,
      ),
    );
}
