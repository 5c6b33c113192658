import { eq, inArray } from "drizzle-orm";
import { campaignLeads, campaigns } from "../db/schema";
import type { Bindings } from "../platform/env";
import { ingest } from "../events/ingest";
import type { PlannedEvent } from "../events/plan";
import type { RecordRow } from "../events/store";
import { database, type Database } from "../platform/db";
import { hitsOf, writeGroups, type TrackedEvent, type TrackingMessage } from "./queue-message";
import { onShard } from "../platform/shards";
import { locateRows } from "../directory/locate";
import { isAccountMoving } from "../platform/db-errors";
import { afterTheMove } from "../platform/moving";

/** The campaign and account of each record (a token names only the record). */
async function recordOwners(db: Database, recordIds: number[]): Promise<Map<number, { campaignId: number; accountId: number }>> {
  const rows = await db
    .select({ id: campaignLeads.id, campaignId: campaignLeads.campaignId, accountId: campaignLeads.accountId })
    .from(campaignLeads)
    .where(inArray(campaignLeads.id, recordIds));
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Records what tracking links saw through the one ingestion path (record flags and state,
 * analytics, inbox, webhooks): one read and one write batch per campaign, whatever the number of
 * hits (halved while too large for one statement). A record deleted since the email went out
 * records nothing. Answers the hits a move's fence refused (their account is being copied to
 * another shard: src/moves/), each campaign's own, so the other accounts' hits of a batch are
 * recorded now.
 */
export async function recordTrackedEvents(env: Bindings, events: TrackedEvent[]): Promise<TrackedEvent[]> {
  // A token names its record, and the record's id its shard (or where its account moved).
  const shards = await locateRows(env, "campaign_leads", [...new Set(events.map((event) => event.payload.recordId))]);
  const byShard = new Map<number, TrackedEvent[]>();
  for (const event of events) {
    const shard = shards.get(event.payload.recordId);
    if (shard !== null && shard !== undefined) byShard.set(shard, [...(byShard.get(shard) ?? []), event]);
  }
  const refused: TrackedEvent[] = [];
  for (const [shard, shardEvents] of byShard) refused.push(...(await recordOnShard(onShard(env, shard), shardEvents)));
  return refused;
}

async function recordOnShard(env: Bindings, events: TrackedEvent[]): Promise<TrackedEvent[]> {
  const db = database(env.DB);
  const owners = await recordOwners(db, [...new Set(events.map((e) => e.payload.recordId))]);
  const byCampaign = new Map<number, { accountId: number; events: TrackedEvent[] }>();
  for (const event of events) {
    const owner = owners.get(event.payload.recordId);
    if (!owner) continue;
    const group = byCampaign.get(owner.campaignId) ?? { accountId: owner.accountId, events: [] };
    group.events.push(event);
    byCampaign.set(owner.campaignId, group);
  }
  const refused: TrackedEvent[] = [];
  for (const [campaignId, group] of byCampaign) refused.push(...(await recordForCampaign(env, db, campaignId, group.accountId, group.events)));
  return refused;
}

/** One campaign's hits in one write, or in halves when their rows would not fit one statement (long click URLs). */
async function recordForCampaign(env: Bindings, db: Database, campaignId: number, accountId: number, events: TrackedEvent[]): Promise<TrackedEvent[]> {
  const scope = {
    visible: eq(campaigns.accountId, accountId),
    accountId,
    campaignId,
    want: { recordIds: [...new Set(events.map((e) => e.payload.recordId))], emails: [], categoryIds: [] },
  };
  try {
    const stored = await ingest(env, db, scope, (context) => plannedHits(events, context.records), Date.now(), { bounded: true });
    if (!stored?.tooLarge) return [];
  } catch (error) {
    if (!isAccountMoving(error)) throw error;
    return events;
  }
  const half = Math.ceil(events.length / 2);
  return [
    ...(await recordForCampaign(env, db, campaignId, accountId, events.slice(0, half))),
    ...(await recordForCampaign(env, db, campaignId, accountId, events.slice(half))),
  ];
}

/** The hits as planned events, each with its record (a record deleted since the email went out: none). */
function plannedHits(events: TrackedEvent[], found: RecordRow[]): PlannedEvent[] {
  const records = new Map(found.map((r) => [r.id, r]));
  return events.flatMap((event): PlannedEvent[] => {
    const record = records.get(event.payload.recordId);
    if (!record) return [];
    return [
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
        unsubscribeSource: "link",
      },
    ];
  });
}

/**
 * The tracking queue's consumer: its messages' opens and clicks recorded a group at a time
 * (`writeGroups`; each hit carries an event id, so a message delivered twice records nothing twice).
 * A failure retries the whole batch; a message with a hit of an account being moved is asked again
 * after the pause (its other hits, recorded now, record nothing more then).
 */
export async function consumeTrackingBatch(batch: MessageBatch<TrackingMessage>, env: Bindings): Promise<void> {
  for (const group of writeGroups(batch.messages)) {
    const refused = new Set((await recordTrackedEvents(env, group.flatMap((message) => hitsOf(message.body)))).map((event) => event.eventId));
    for (const message of group) if (hitsOf(message.body).some((hit) => refused.has(hit.eventId))) message.retry({ delaySeconds: afterTheMove(message.attempts) });
  }
}
