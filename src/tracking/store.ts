import { eq } from "drizzle-orm";
import { campaignLeads, campaigns, type EventType } from "../db/schema";
import type { Bindings } from "../env";
import { planIngestion } from "../events/plan";
import { loadIngestContext, storeIngestion } from "../events/store";
import { database, type Database } from "../platform/db";
import { enqueue } from "../webhooks/outbox";
import type { TrackPayload } from "./tokens";

/** The campaign and account a campaign record belongs to (a token names only the record). */
export async function recordOwner(db: Database, recordId: number): Promise<{ campaignId: number; accountId: number } | undefined> {
  const [row] = await db
    .select({ campaignId: campaignLeads.campaignId, accountId: campaignLeads.accountId })
    .from(campaignLeads)
    .where(eq(campaignLeads.id, recordId));
  return row;
}

export interface TrackedEvent {
  type: Extract<EventType, "OPEN" | "CLICK" | "UNSUBSCRIBE">;
  payload: TrackPayload;
  occurredAt: number;
  isMachine: boolean;
  /** Set for events that must be recorded once however often the link is used (unsubscribe). */
  eventId: string | null;
}

/**
 * Records what a tracking link saw through the one ingestion path (record flags and state,
 * analytics, inbox, webhooks). A record deleted since the email went out records nothing.
 */
export async function recordTrackedEvent(env: Bindings, event: TrackedEvent): Promise<void> {
  const db = database(env.DB);
  const owner = await recordOwner(db, event.payload.recordId);
  if (!owner) return;
  const context = await loadIngestContext(db, eq(campaigns.accountId, owner.accountId), owner.accountId, owner.campaignId, {
    recordIds: [event.payload.recordId],
    emails: [],
    categoryIds: [],
  });
  const record = context.records[0];
  if (!context.campaign || !record) return;
  const { rows, deliveries } = planIngestion(context, context.campaign, [
    {
      eventId: event.eventId,
      record,
      incoming: {
        type: event.type,
        occurredAt: event.occurredAt,
        sequenceNumber: event.payload.step,
        emailAccountId: event.payload.mailboxId,
        fromEmail: null,
        isOoo: false,
        categoryId: null,
      },
      toEmail: record.leadEmail,
      subject: null,
      body: null,
      messageId: null,
      linkUrl: event.payload.url ?? null,
      isMachine: event.isMachine,
    },
  ]);
  const { deliveryIds } = await storeIngestion(env.DB, context.campaign, rows, deliveries, Date.now());
  await enqueue(env, deliveryIds);
}
