import type { NewDelivery } from "../webhooks/outbox";
import { categoryDeliveries, eventDeliveries, statusDeliveries, type CampaignFacts } from "../webhooks/fanout";
import { settingsOf } from "../schedule/settings";
import { foldText } from "../platform/text-search";
import { applyEvents, isIgnoredReply, isStepSend, type IncomingEvent } from "./rules";
import type { EventRow, IngestContext, RecordRow } from "./store";

/** An event of the call, with the record it names (resolved) and its effect-relevant facts. */
export interface PlannedEvent {
  eventId: string | null;
  incoming: IncomingEvent;
  record: RecordRow;
  toEmail: string | null;
  subject: string | null;
  body: string | null;
  messageId: string | null;
  linkUrl: string | null;
  /** A reply's Cc addresses. */
  cc?: string[];
  /** An open or click made by a machine (src/tracking/machine.ts); absent = not known to be one. */
  isMachine?: boolean;
  /** An out-of-office reply's stated return date (ms), when one was read from it. */
  resumeAt?: number | null;
  /** Where an UNSUBSCRIBE came from (the payload's `source`); absent = the API. */
  unsubscribeSource?: "link" | "api" | "reply";
}

/**
 * Decides what one ingestion writes: the event rows and every webhook delivery they may cause
 * (each under a guard the store checks in SQL, so duplicates and lost races deliver nothing).
 */
export function planIngestion(
  context: Pick<IngestContext, "ignoreOooReplies" | "categories" | "webhooks">,
  campaign: CampaignFacts & { settings?: Record<string, unknown> | null },
  planned: PlannedEvent[],
): { rows: EventRow[]; deliveries: NewDelivery[] } {
  const rows: EventRow[] = planned.map(({ eventId, incoming, record, isMachine, resumeAt, unsubscribeSource, ...text }) => ({
    event_id: eventId,
    campaign_lead_id: record.id,
    type: incoming.type,
    occurred_at: incoming.occurredAt,
    sequence_number: incoming.sequenceNumber,
    email_account_id: incoming.emailAccountId,
    from_email: incoming.fromEmail,
    to_email: text.toEmail,
    subject: text.subject,
    body: text.body,
    body_folded: incoming.type === "REPLY" && text.body ? foldText(text.body) : null,
    message_id: text.messageId,
    link_url: text.linkUrl,
    cc_emails: incoming.type === "REPLY" && text.cc?.length ? text.cc : null,
    is_ooo: incoming.isOoo ? 1 : 0,
    category_id: incoming.categoryId,
    ignored: isIgnoredReply(incoming, record.leadEmail, context.ignoreOooReplies) ? 1 : 0,
    is_machine: isMachine ? 1 : 0,
    resume_at: resumeAt ?? null,
    opts_out_lead: incoming.type === "UNSUBSCRIBE" && unsubscribeSource !== "api" ? 1 : 0,
  }));
  if (context.webhooks.length === 0) return { rows, deliveries: [] };

  const byRecord = new Map<number, PlannedEvent[]>();
  for (const item of planned) byRecord.set(item.record.id, [...(byRecord.get(item.record.id) ?? []), item]);
  const after = new Map([...byRecord].map(([id, items]) => [id, applyEvents(items[0]!.record, items.map((i) => i.incoming))]));

  const firstSends = new Map<number, PlannedEvent>();
  for (const item of planned) {
    const { incoming, record } = item;
    if (!isStepSend(incoming) || incoming.sequenceNumber !== 1 || record.hasSent) continue;
    const earlier = firstSends.get(record.id);
    if (!earlier || incoming.occurredAt < earlier.incoming.occurredAt) firstSends.set(record.id, item);
  }

  // A person's message in the thread (an inbox reply) is no campaign send: EMAIL_SENT reports the campaign's steps.
  const personal = (item: PlannedEvent) => item.incoming.type === "SENT" && !isStepSend(item.incoming);
  const deliveries = eventDeliveries(
    context.webhooks,
    campaign,
    planned.filter((item) => !personal(item)).map((item) => ({
      facts: {
        type: item.incoming.type,
        occurredAt: item.incoming.occurredAt,
        sequenceNumber: item.incoming.sequenceNumber,
        firstSend: firstSends.get(item.record.id) === item,
        toEmail: item.toEmail,
        fromEmail: item.incoming.fromEmail,
        subject: item.subject,
        body: item.body,
        linkUrl: item.linkUrl,
        messageId: item.messageId,
        ccEmails: item.cc ?? [],
        isMachine: item.isMachine ?? false,
        isOoo: item.incoming.isOoo,
        ignored: isIgnoredReply(item.incoming, item.record.leadEmail, context.ignoreOooReplies),
        unsubscribeSource: item.unsubscribeSource,
        recordId: item.record.id,
        leadId: item.record.leadId ?? null,
        leadEmail: item.record.leadEmail,
        leadName: item.record.leadName ?? null,
        leadCategoryId: after.get(item.record.id)!.categoryId,
      },
      guard: { event_id: item.eventId },
    })),
  );

  for (const [recordId, items] of byRecord) {
    const before = items[0]!.record;
    const setter = latestCategorisedReply(items);
    if (!setter || setter.incoming.categoryId === before.categoryId) continue;
    const newCategoryId = setter.incoming.categoryId;
    deliveries.push(
      ...categoryDeliveries(
        context.webhooks,
        campaign,
        {
          recordId,
          leadId: before.leadId ?? null,
          leadEmail: before.leadEmail,
          leadName: before.leadName ?? null,
          oldCategoryId: before.categoryId,
          oldCategoryName: before.categoryId === null ? null : (context.categories.get(before.categoryId) ?? null),
          newCategoryId,
          newCategoryName: newCategoryId === null ? null : (context.categories.get(newCategoryId) ?? null),
          occurredAt: setter.incoming.occurredAt,
          reply: {
            messageId: setter.messageId,
            body: setter.body,
            at: setter.incoming.occurredAt,
            fromEmail: setter.incoming.fromEmail,
            toEmail: setter.toEmail,
          },
        },
        { event_id: setter.eventId, record_id: recordId, category_id: newCategoryId, category_at: setter.incoming.occurredAt },
      ),
    );
  }
  // The campaign's bounce auto-pause: planned here, stored only if the batch's SQL pauses it.
  const threshold = campaign.settings === undefined ? null : settingsOf(campaign.settings).bounceAutopauseThreshold;
  if (threshold !== null && campaign.status === "ACTIVE" && planned.some((item) => item.incoming.type === "BOUNCE")) {
    const at = Math.max(...planned.map((item) => item.incoming.occurredAt));
    deliveries.push(
      ...statusDeliveries(context.webhooks, { ...campaign, status: "PAUSED" }, "ACTIVE", at).map((d) => ({ ...d, guard: { paused_campaign: campaign.id } })),
    );
  }
  return { rows, deliveries };
}

/** The categorised reply whose category a record keeps: the latest by occurred_at. */
function latestCategorisedReply(items: PlannedEvent[]): PlannedEvent | null {
  let latest: PlannedEvent | null = null;
  for (const item of items) {
    if (item.incoming.type !== "REPLY" || item.incoming.categoryId === null) continue;
    if (!latest || item.incoming.occurredAt > latest.incoming.occurredAt) latest = item;
  }
  return latest;
}
