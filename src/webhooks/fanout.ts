import { and, eq, isNull, sql } from "drizzle-orm";
import { database } from "../platform/db";
import { statement } from "../platform/sql";
import { webhooks, type EventType } from "../db/schema";
import { kindsOf, wants, type WebhookEventKind } from "./event-kinds";
import { iso } from "../platform/time";
import type { Bindings } from "../config";
import type { CampaignStatusChanged, EventsStored, LeadCategoryChanged } from "../events/hooks";
import { storeAndEnqueue, type NewDelivery } from "./outbox";

type WebhookRow = typeof webhooks.$inferSelect;

async function activeWebhooks(env: Bindings, campaignId: number): Promise<WebhookRow[]> {
  return database(env.DB)
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.campaignId, campaignId), isNull(webhooks.disabledAt)));
}

function delivery(webhook: WebhookRow, kind: WebhookEventKind, fields: Record<string, unknown>): NewDelivery {
  return {
    accountId: webhook.accountId,
    webhookId: webhook.id,
    campaignId: webhook.campaignId,
    eventType: kind,
    payload: { webhook_id: webhook.id, webhook_name: webhook.name, event_type: kind, ...fields },
  };
}

interface EventDetail {
  id: number;
  type: EventType;
  occurred_at: number;
  sequence_number: number;
  from_email: string | null;
  to_email: string | null;
  subject: string | null;
  body: string | null;
  link_url: string | null;
  record_id: number;
  category_id: number | null;
  lead_email: string;
  campaign_name: string;
  campaign_status: string;
}

/** One queued delivery per (stored event, subscribed webhook). */
export async function fanOutEvents(env: Bindings, change: EventsStored): Promise<void> {
  if (change.events.length === 0) return;
  const hooks = await activeWebhooks(env, change.campaignId);
  if (hooks.length === 0) return;
  const details = await statement(
    env.DB,
    sql`SELECT e.id, e.type, e.occurred_at, e.sequence_number, e.from_email, e.to_email, e.subject, e.body, e.link_url,
               cl.id AS record_id, cl.category_id, l.email AS lead_email, c.name AS campaign_name, c.status AS campaign_status
        FROM events e JOIN campaign_leads cl ON cl.id = e.campaign_lead_id JOIN leads l ON l.id = cl.lead_id
        JOIN campaigns c ON c.id = e.campaign_id
        WHERE e.id IN (SELECT value FROM json_each(${JSON.stringify(change.events.map((e) => e.id))}))`,
  ).all<EventDetail>();
  const byId = new Map(details.results.map((row) => [row.id, row]));

  const deliveries: NewDelivery[] = [];
  for (const notice of change.events) {
    const event = byId.get(notice.id);
    if (!event) continue;
    for (const kind of kindsOf(notice.type, notice.firstSend)) {
      for (const webhook of hooks) {
        if (!wants(webhook, kind, event.category_id)) continue;
        deliveries.push(
          delivery(webhook, kind, {
            event_timestamp: iso(event.occurred_at),
            campaign_id: change.campaignId,
            campaign_name: event.campaign_name,
            campaign_status: event.campaign_status,
            sl_email_lead_map_id: event.record_id,
            sl_lead_email: event.lead_email,
            to_email: event.to_email,
            from_email: event.from_email,
            sequence_number: event.sequence_number,
            ...(event.subject !== null && { subject: event.subject }),
            ...(kind === "EMAIL_REPLY" && { reply_message: event.body }),
            ...(kind === "EMAIL_LINK_CLICK" && { link_clicked: event.link_url }),
          }),
        );
      }
    }
  }
  await storeAndEnqueue(env, deliveries);
}

export async function fanOutCategoryChange(env: Bindings, change: LeadCategoryChanged): Promise<void> {
  const hooks = (await activeWebhooks(env, change.campaignId)).filter((w) =>
    wants(w, "LEAD_CATEGORY_UPDATED", change.newCategoryId),
  );
  if (hooks.length === 0) return;
  const row = await statement(
    env.DB,
    sql`SELECT l.email AS lead_email, c.name AS campaign_name, c.status AS campaign_status, lc.name AS category_name
        FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id JOIN campaigns c ON c.id = cl.campaign_id
        LEFT JOIN lead_categories lc ON lc.id = ${change.newCategoryId}
        WHERE cl.id = ${change.campaignLeadId}`,
  ).first<{ lead_email: string; campaign_name: string; campaign_status: string; category_name: string | null }>();
  if (!row) return;
  await storeAndEnqueue(
    env,
    hooks.map((webhook) =>
      delivery(webhook, "LEAD_CATEGORY_UPDATED", {
        event_timestamp: iso(change.occurredAt),
        campaign_id: change.campaignId,
        campaign_name: row.campaign_name,
        campaign_status: row.campaign_status,
        sl_email_lead_map_id: change.campaignLeadId,
        sl_lead_email: row.lead_email,
        to_email: null,
        from_email: null,
        sequence_number: null,
        lead_category: { old_id: change.oldCategoryId, new_id: change.newCategoryId, new_name: row.category_name },
      }),
    ),
  );
}

export async function fanOutStatusChange(env: Bindings, change: CampaignStatusChanged): Promise<void> {
  const hooks = (await activeWebhooks(env, change.campaignId)).filter((w) => wants(w, "CAMPAIGN_STATUS_CHANGED", null));
  if (hooks.length === 0) return;
  const campaign = await statement(env.DB, sql`SELECT name FROM campaigns WHERE id = ${change.campaignId}`).first<{
    name: string;
  }>();
  await storeAndEnqueue(
    env,
    hooks.map((webhook) =>
      delivery(webhook, "CAMPAIGN_STATUS_CHANGED", {
        event_timestamp: iso(change.occurredAt),
        campaign_id: change.campaignId,
        campaign_name: campaign?.name ?? null,
        campaign_status: change.newStatus,
        old_campaign_status: change.oldStatus,
        sl_email_lead_map_id: null,
        sl_lead_email: null,
        to_email: null,
        from_email: null,
        sequence_number: null,
      }),
    ),
  );
}
