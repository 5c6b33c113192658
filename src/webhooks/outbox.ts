import { sql, type SQL } from "drizzle-orm";
import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";
import { jsonList, rawBatch, statement } from "../platform/sql";
import type { DeliveryMessage } from "./queue-message";
import { categorisationJsonText } from "../categories/provenance-sql";
import { notMoving } from "../platform/moving";

/** A webhook delivery to store, plus the condition (over its JSON row `d`) under which it is real. */
export interface NewDelivery {
  accountId: number;
  webhookId: number;
  /** The event's campaign; null for events without one. */
  campaignId: number | null;
  eventType: string;
  payload: Record<string, unknown>;
  /** Values the caller's guard reads from the row (`d.value ->> '$.guard.<name>'`). */
  guard?: Record<string, unknown>;
}

const SEND_BATCH_LIMIT = 100;
/** A pending delivery this long past its due time lost its queue message (or never had one). */
export const OVERDUE_AFTER_MS = 2 * 60_000;
const REQUEUE_LIMIT = 1000;

function newMessageId(): string {
  return `msg_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** `d.value ->> '$.guard.<name>'`: a guard value of the delivery row being inserted. */
export function guardValue(name: string): SQL {
  return sql.raw(`d.value ->> '$.guard.${name}'`);
}

/**
 * One statement that stores every delivery whose guard holds, for the producer's own D1 batch:
 * the deliveries commit with the change that caused them, or not at all. RETURNING gives the
 * ids to enqueue once the batch has committed. A delivery guarded by an event id is completed
 * from that event's row (`eventPayload`; the events were inserted earlier in the batch).
 */
const ISO = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`;

/**
 * The payload of a delivery guarded by an event id, completed from the event's row: its id as
 * `stats_id`, and for a reply the send it answers (`sent_message`), for a bounce that send's
 * time (`time_sent`), from the send the row is credited to (migration 0027).
 */
const eventPayload = sql.raw(`SELECT json_set(d.value ->> '$.payload', '$.stats_id', CAST(e.id AS TEXT),
    CASE d.value ->> '$.event_type' WHEN 'EMAIL_REPLY' THEN '$.sent_message' WHEN 'EMAIL_BOUNCE' THEN '$.time_sent' ELSE '$.stats_id' END,
    CASE d.value ->> '$.event_type'
      WHEN 'EMAIL_REPLY' THEN (SELECT json_object('message_id', s.message_id, 'html', s.body, 'text', s.body, 'time', ${ISO("s.occurred_at")})
                               FROM events s WHERE s.id = e.send_id)
      WHEN 'EMAIL_BOUNCE' THEN (SELECT ${ISO("s.occurred_at")} FROM events s WHERE s.id = e.send_id)
      ELSE CAST(e.id AS TEXT) END)
  FROM events e WHERE e.campaign_id = d.value ->> '$.campaign_id' AND e.event_id = d.value ->> '$.guard.event_id'`);

/**
 * A LEAD_CATEGORY_UPDATED payload (`p`, already completed by `eventPayload`) completed from the
 * record: the lead's own fields under `lead_data` (beside the category the producer put there), and
 * the thread up to the change (`guard.category_at`) as `history`, in message-history's Message shape.
 */
const categoryPayload = sql.raw(`SELECT json_set(p,
    '$.lead_data', json_set(json_object('email', l.email, 'first_name', l.first_name, 'last_name', l.last_name,
        'phone_number', l.phone_number, 'company_name', l.company_name, 'website', l.website, 'location', l.location,
        'company_url', l.company_url, 'linkedin_profile', l.linkedin_profile, 'custom_fields', json(coalesce(l.custom_fields, '{}'))),
      '$.category', p -> '$.lead_data.category'),
    '$.history', (SELECT json_group_array(json_object('stats_id', CAST(e.id AS TEXT), 'message_id', e.message_id, 'type', e.type,
                    'time', ${ISO("e.occurred_at")}, 'from', e.from_email, 'to', e.to_email,
                    'cc', (SELECT group_concat(value, ', ') FROM json_each(coalesce(e.cc_emails, r.cc))),
                    'bcc', (SELECT group_concat(value, ', ') FROM json_each(r.bcc)), 'subject', e.subject,
                    'email_body', e.body, 'email_seq_number', CAST(e.sequence_number AS TEXT),
                    'ignored', json(CASE e.ignored WHEN 1 THEN 'true' ELSE 'false' END),
                    'categorisation', json(${categorisationJsonText("e")})) ORDER BY e.occurred_at, e.id)
                  FROM events e INDEXED BY events_record_time_idx
                  LEFT JOIN outbound_replies r INDEXED BY outbound_replies_record_idx
                    ON e.type = 'SENT' AND r.campaign_lead_id = e.campaign_lead_id AND r.sent_event_id = e.id
                  WHERE e.campaign_lead_id = cl.id AND e.occurred_at <= guard ->> '$.category_at' AND e.type IN ('SENT', 'REPLY')))
  FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id WHERE cl.id = p ->> '$.sl_email_lead_map_id'`);

export function insertDeliveries(deliveries: NewDelivery[], guard: SQL = sql`true`, now = Date.now()): SQL {
  const rows = deliveries.map((d) => ({
    account_id: d.accountId,
    webhook_id: d.webhookId,
    campaign_id: d.campaignId,
    message_id: newMessageId(),
    event_type: d.eventType,
    payload: JSON.stringify(d.payload),
    guard: d.guard ?? {},
  }));
  return sql`
    INSERT INTO webhook_deliveries (account_id, webhook_id, campaign_id, message_id, event_type, payload, next_attempt_at, created_at)
    SELECT account_id, webhook_id, campaign_id, message_id, event_type,
           CASE event_type WHEN 'LEAD_CATEGORY_UPDATED' THEN coalesce((${categoryPayload}), p) ELSE p END,
           ${now}, ${now}
    FROM (SELECT d.value ->> '$.account_id' AS account_id, d.value ->> '$.webhook_id' AS webhook_id,
                 d.value ->> '$.campaign_id' AS campaign_id, d.value ->> '$.message_id' AS message_id,
                 d.value ->> '$.event_type' AS event_type, d.value -> '$.guard' AS guard,
                 CASE WHEN d.value ->> '$.guard.event_id' IS NULL THEN d.value ->> '$.payload'
                      ELSE coalesce((${eventPayload}), json_set(d.value ->> '$.payload', '$.stats_id', NULL)) END AS p
          FROM json_each(${jsonList(rows)}) AS d
          WHERE ${guard})
    RETURNING id`;
}

/** The delivery ids a batch's `insertDeliveries` statement returned. */
export function deliveryIds(rows: Record<string, unknown>[] | undefined): number[] {
  return (rows ?? []).map((row) => Number(row.id));
}

/**
 * Hands committed deliveries to the queue. A failure loses nothing: the rows stay pending with
 * their due time, and the minute cron enqueues them again once they are overdue.
 */
export async function enqueue(env: Bindings, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += SEND_BATCH_LIMIT) {
    const chunk = ids.slice(i, i + SEND_BATCH_LIMIT);
    try {
      await env.WEBHOOK_QUEUE.sendBatch(chunk.map((deliveryId) => ({ body: { deliveryId } satisfies DeliveryMessage })));
    } catch (error) {
      log("warn", "webhook enqueue failed; the cron will retry", { error: String(error), deliveries: chunk.length });
      return;
    }
  }
}

/**
 * Pending deliveries well past their due time: never enqueued (the producer died after its
 * commit) or their message was lost. Their due time moves to now, so the next firing leaves them
 * alone while this message is in flight.
 */
export async function requeueOverdue(env: Bindings, now: number): Promise<number> {
  const [rows] = await rawBatch(env.DB, [
    sql`UPDATE webhook_deliveries SET next_attempt_at = ${now}
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now - OVERDUE_AFTER_MS} AND ${notMoving(sql`account_id`)}
                     ORDER BY next_attempt_at LIMIT ${REQUEUE_LIMIT})
        RETURNING id`,
  ]);
  const ids = deliveryIds(rows);
  await enqueue(env, ids);
  return ids.length;
}

/** Failed deliveries made pending again (same rows, same webhook-id), due now. */
export async function revive(env: Bindings, condition: SQL, now = Date.now()): Promise<number[]> {
  const rows = await statement(
    env.DB,
    sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${now} WHERE status = 'failed' AND ${condition} RETURNING id`,
  ).all<{ id: number }>();
  const ids = rows.results.map((row) => row.id);
  await enqueue(env, ids);
  return ids;
}
