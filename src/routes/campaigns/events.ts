import { createRoute, z } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import { database, type Database } from "../../db/client";
import { rawBatch } from "../../db/raw-batch";
import { foldText } from "../../db/text-search";
import { recordFlags, type RecordFlagColumns } from "../../db/record-flags";
import { accounts, EVENT_TYPES, type EventType, type RecordState } from "../../db/schema";
import { applyEvents, isIgnoredReply, type IncomingEvent, type RecordSnapshot } from "../../domain/event-effects";
import { normaliseEmail } from "../../domain/lead-upload";
import { onEventsStored, onLeadCategoryChanged, type StoredEventNotice } from "../../events/hooks";
import { findCampaign, type CampaignRow } from "../../http/campaign-access";
import { ApiError, type ValidationIssue } from "../../http/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../../http/openapi";
import { CampaignParams } from "./schemas";

export const MAX_EVENTS_PER_CALL = 1000;

const text = (max: number) => z.string().max(max).nullish();

const EventInput = z
  .object({
    event_id: z.string().min(1).max(255).optional(),
    type: z.enum(EVENT_TYPES),
    email_lead_map_id: z.number().int().positive().optional(),
    lead_email: z.string().max(320).optional(),
    occurred_at: z.iso.datetime({ offset: true }),
    sequence_number: z.number().int().min(1).max(1000).default(1),
    email_account_id: z.number().int().positive().nullish(),
    from_email: text(320),
    to_email: text(320),
    subject: text(998),
    body: text(200_000),
    message_id: text(998),
    link_url: text(2048),
    is_ooo: z.boolean().default(false),
    category_id: z.number().int().positive().nullish(),
  })
  .refine((event) => event.email_lead_map_id !== undefined || event.lead_email !== undefined, {
    message: "email_lead_map_id or lead_email is required",
    path: ["email_lead_map_id"],
  });

type EventBody = z.infer<typeof EventInput>;

const IngestEvents = z
  .object({ events: z.array(EventInput).min(1).max(MAX_EVENTS_PER_CALL) })
  .openapi("IngestEvents");

const Ingested = z
  .object({ ok: z.boolean(), accepted: z.number().int(), duplicates: z.number().int() })
  .openapi("IngestedEvents");

const ingestEvents = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/events",
  tags: ["Events"],
  summary: "Report what the sending engine did (1-1000 events, idempotent by event_id, all or nothing)",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: jsonBody(IngestEvents) },
  responses: { 200: json(Ingested, "Stored events and skipped duplicates"), ...errorResponses(401, 404, 422, 429) },
});

interface RecordRow extends RecordSnapshot {
  id: number;
}

async function loadRecords(db: Database, campaignId: number, events: EventBody[]): Promise<RecordRow[]> {
  const ids = [...new Set(events.flatMap((e) => (e.email_lead_map_id === undefined ? [] : [e.email_lead_map_id])))];
  const emails = [...new Set(events.flatMap((e) => (e.lead_email === undefined ? [] : [normaliseEmail(e.lead_email)])))];
  const rows = await db.all<
    RecordFlagColumns & {
      id: number;
      state: RecordState;
      lead_email: string;
      category_id: number | null;
      email_account_id: number | null;
      last_sent_at: number | null;
      last_reply_at: number | null;
    }
  >(sql`
    SELECT cl.id, cl.state, l.email AS lead_email, cl.category_id, cl.email_account_id, cl.last_sent_at,
           cl.last_reply_at, cl.has_sent, cl.has_opened, cl.has_clicked, cl.has_replied, cl.has_bounced,
           cl.has_unsubscribed
    FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id
    WHERE cl.campaign_id = ${campaignId}
      AND (cl.id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))
           OR l.email IN (SELECT value FROM json_each(${JSON.stringify(emails)})))`);
  return rows.map((row) => ({
    id: row.id,
    state: row.state,
    leadEmail: row.lead_email,
    categoryId: row.category_id,
    emailAccountId: row.email_account_id,
    lastSentAt: row.last_sent_at,
    lastReplyAt: row.last_reply_at,
    ...recordFlags(row),
  }));
}

async function knownCategoryIds(db: Database, accountId: number, events: EventBody[]): Promise<Set<number>> {
  const ids = [...new Set(events.flatMap((e) => (e.category_id == null ? [] : [e.category_id])))];
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ id: number }>(sql`
    SELECT id FROM lead_categories WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))
      AND (account_id IS NULL OR account_id = ${accountId})`);
  return new Set(rows.map((row) => row.id));
}

async function storedEventIds(db: Database, campaignId: number, events: EventBody[]): Promise<Set<string>> {
  const ids = events.flatMap((e) => (e.event_id === undefined ? [] : [e.event_id]));
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ event_id: string }>(sql`
    SELECT event_id FROM events WHERE campaign_id = ${campaignId}
      AND event_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
  return new Set(rows.map((row) => row.event_id));
}

/** Every event must name a record of this campaign and a known category: else the whole call is refused. */
function resolveRecords(events: EventBody[], records: RecordRow[], categories: Set<number>): RecordRow[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const byEmail = new Map(records.map((r) => [r.leadEmail, r]));
  const issues: ValidationIssue[] = [];
  const resolved = events.map((event, index) => {
    const record =
      event.email_lead_map_id !== undefined
        ? byId.get(event.email_lead_map_id)
        : byEmail.get(normaliseEmail(event.lead_email ?? ""));
    if (!record) {
      const field = event.email_lead_map_id !== undefined ? "email_lead_map_id" : "lead_email";
      issues.push({ path: `events.${index}.${field}`, message: "No such lead in this campaign" });
    }
    if (event.category_id != null && !categories.has(event.category_id)) {
      issues.push({ path: `events.${index}.category_id`, message: "Unknown lead category" });
    }
    return record;
  });
  if (issues.length > 0) throw ApiError.validation(issues);
  return resolved as RecordRow[];
}

function toIncoming(event: EventBody): IncomingEvent {
  return {
    type: event.type,
    occurredAt: Date.parse(event.occurred_at),
    sequenceNumber: event.sequence_number,
    emailAccountId: event.email_account_id ?? null,
    fromEmail: event.from_email ?? null,
    isOoo: event.is_ooo,
    categoryId: event.category_id ?? null,
  };
}

export const eventRoutes = createRouter();

eventRoutes.openapi(ingestEvents, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const { events } = c.req.valid("json");

  const [records, categories, stored, account] = await Promise.all([
    loadRecords(db, campaign.id, events),
    knownCategoryIds(db, principal.accountId, events),
    storedEventIds(db, campaign.id, events),
    db.select({ ignoreOoo: accounts.ignoreOooReplies }).from(accounts).where(eq(accounts.id, principal.accountId)).get(),
  ]);
  const owners = resolveRecords(events, records, categories);

  const seen = new Set(stored);
  const fresh: Fresh[] = [];
  events.forEach((event, index) => {
    if (event.event_id !== undefined) {
      if (seen.has(event.event_id)) return;
      seen.add(event.event_id);
    }
    fresh.push({ event, incoming: toIncoming(event), record: owners[index]! });
  });
  if (fresh.length === 0) return c.json({ ok: true, accepted: 0, duplicates: events.length }, 200);

  const outcome = await storeEvents(c.env.DB, campaign, fresh, account?.ignoreOoo ?? false);
  await notify(c.env, campaign, fresh, outcome);
  const accepted = outcome.inserted.length;
  return c.json({ ok: true, accepted, duplicates: events.length - accepted }, 200);
});

interface Fresh {
  event: EventBody;
  incoming: IncomingEvent;
  record: RecordRow;
}

interface InsertedEvent {
  id: number;
  campaign_lead_id: number;
  type: EventType;
  occurred_at: number;
  sequence_number: number;
}

async function storeEvents(d1: D1Database, campaign: CampaignRow, fresh: Fresh[], ignoreOoo: boolean) {
  const now = Date.now();
  const rows = fresh.map(({ event, incoming, record }) => ({
    event_id: event.event_id ?? null,
    campaign_lead_id: record.id,
    type: event.type,
    occurred_at: incoming.occurredAt,
    sequence_number: event.sequence_number,
    email_account_id: event.email_account_id ?? null,
    from_email: event.from_email ?? null,
    to_email: event.to_email ?? null,
    subject: event.subject ?? null,
    body: event.body ?? null,
    body_folded: event.type === "REPLY" && event.body ? foldText(event.body) : null,
    message_id: event.message_id ?? null,
    link_url: event.link_url ?? null,
    is_ooo: event.is_ooo ? 1 : 0,
    category_id: event.category_id ?? null,
    ignored: isIgnoredReply(incoming, record.leadEmail, ignoreOoo) ? 1 : 0,
  }));

  const byRecord = new Map<number, Fresh[]>();
  for (const item of fresh) byRecord.set(item.record.id, [...(byRecord.get(item.record.id) ?? []), item]);
  const updates = [...byRecord.values()].map((items) => {
    const before = items[0]!.record;
    const after = applyEvents(before, items.map((item) => item.incoming));
    return {
      id: before.id,
      state: after.state,
      category_id: after.categoryId !== before.categoryId ? after.categoryId : null,
      email_account_id: after.emailAccountId,
      last_sent_at: after.lastSentAt,
      last_reply_at: after.lastReplyAt,
      has_sent: after.hasSent ? 1 : 0,
      has_opened: after.hasOpened ? 1 : 0,
      has_clicked: after.hasClicked ? 1 : 0,
      has_replied: after.hasReplied ? 1 : 0,
      has_bounced: after.hasBounced ? 1 : 0,
      has_unsubscribed: after.hasUnsubscribed ? 1 : 0,
      unread: after.isUnread ? 1 : 0,
    };
  });

  // Lists travel as one JSON parameter each, so no statement nears D1's 100-parameter cap.
  // Flags and last times only grow (max), so concurrent calls for one record cannot undo each other.
  const [inserted] = await rawBatch(d1, [
    sql`
      INSERT INTO events (account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number,
                          email_account_id, from_email, to_email, subject, body, body_folded, message_id, link_url,
                          is_ooo, category_id, ignored, created_at)
      SELECT ${campaign.accountId}, ${campaign.id}, value ->> '$.campaign_lead_id', value ->> '$.event_id',
             value ->> '$.type', value ->> '$.occurred_at', value ->> '$.sequence_number',
             value ->> '$.email_account_id', value ->> '$.from_email', value ->> '$.to_email', value ->> '$.subject',
             value ->> '$.body', value ->> '$.body_folded', value ->> '$.message_id', value ->> '$.link_url', value ->> '$.is_ooo',
             value ->> '$.category_id', value ->> '$.ignored', ${now}
      FROM json_each(${JSON.stringify(rows)}) WHERE true
      ON CONFLICT (campaign_id, event_id) DO NOTHING
      RETURNING id, campaign_lead_id, type, occurred_at, sequence_number`,
    sql`
      UPDATE campaign_leads SET
        state = u.value ->> '$.state',
        category_id = coalesce(u.value ->> '$.category_id', campaign_leads.category_id),
        email_account_id = coalesce(u.value ->> '$.email_account_id', campaign_leads.email_account_id),
        last_sent_at = nullif(max(coalesce(campaign_leads.last_sent_at, 0), coalesce(u.value ->> '$.last_sent_at', 0)), 0),
        last_reply_at = nullif(max(coalesce(campaign_leads.last_reply_at, 0), coalesce(u.value ->> '$.last_reply_at', 0)), 0),
        has_sent = max(campaign_leads.has_sent, u.value ->> '$.has_sent'),
        has_opened = max(campaign_leads.has_opened, u.value ->> '$.has_opened'),
        has_clicked = max(campaign_leads.has_clicked, u.value ->> '$.has_clicked'),
        has_replied = max(campaign_leads.has_replied, u.value ->> '$.has_replied'),
        has_bounced = max(campaign_leads.has_bounced, u.value ->> '$.has_bounced'),
        has_unsubscribed = max(campaign_leads.has_unsubscribed, u.value ->> '$.has_unsubscribed'),
        is_read = CASE WHEN u.value ->> '$.unread' = 1 THEN 0 ELSE campaign_leads.is_read END,
        updated_at = ${now}
      FROM json_each(${JSON.stringify(updates)}) AS u
      WHERE campaign_leads.id = u.value ->> '$.id'`,
  ]);
  return { inserted: inserted as unknown as InsertedEvent[], updates };
}

async function notify(
  env: Parameters<typeof onEventsStored>[0],
  campaign: CampaignRow,
  fresh: Fresh[],
  { inserted, updates }: Awaited<ReturnType<typeof storeEvents>>,
) {
  const firstSends = new Map<number, number>();
  for (const { incoming, record } of fresh) {
    if (incoming.type !== "SENT" || incoming.sequenceNumber !== 1 || record.hasSent) continue;
    firstSends.set(record.id, Math.min(firstSends.get(record.id) ?? Infinity, incoming.occurredAt));
  }
  const notices: StoredEventNotice[] = inserted.map((row) => ({
    id: row.id,
    campaignLeadId: row.campaign_lead_id,
    type: row.type,
    occurredAt: new Date(row.occurred_at),
    sequenceNumber: row.sequence_number,
    firstSend: row.type === "SENT" && row.sequence_number === 1 && firstSends.get(row.campaign_lead_id) === row.occurred_at,
  }));
  await onEventsStored(env, { accountId: campaign.accountId, campaignId: campaign.id, events: notices });

  const records = new Map(fresh.map(({ record }) => [record.id, record]));
  for (const update of updates) {
    if (update.category_id === null) continue;
    await onLeadCategoryChanged(env, {
      accountId: campaign.accountId,
      campaignId: campaign.id,
      campaignLeadId: update.id,
      oldCategoryId: records.get(update.id)?.categoryId ?? null,
      newCategoryId: update.category_id,
      occurredAt: new Date(),
    });
  }
}
