import { sql, type SQL } from "drizzle-orm";
import { campaignMailboxes } from "../platform/access";
import type { Principal } from "../platform/principal";
import { inList, jsonList, rawBatch } from "../platform/sql";
import { PERSON_STEP } from "../events/rules";
import { POSITIVE_CATEGORY_IDS } from "../categories/rules";
import { OUTCOME_TYPES } from "../db/schema";
import { LIFETIME, readCategoryReplies, repliesFromCategoriesQuery, splitWindow, totalsQuery, type Window } from "./counters";

type Row = Record<string, unknown>;

/** 13.1's extras: client, live steps, tags with colours, and the records by state and sentiment. */
export async function lifetimeExtras(d1: D1Database, campaign: { id: number; clientId: number | null }) {
  const [clientRows, stepRows, tagRows, stateRows] = await rawBatch(d1, [
    sql`SELECT name, email FROM clients WHERE id = ${campaign.clientId}`,
    sql`SELECT count(*) AS n FROM sequence_steps WHERE campaign_id = ${campaign.id} AND deleted_at IS NULL`,
    sql`SELECT t.id, t.name, t.color FROM campaign_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.campaign_id = ${campaign.id} ORDER BY t.name`,
    sql`SELECT count(*) AS total,
          coalesce(sum(state = 'BLOCKED'), 0) AS blocked, coalesce(sum(state = 'STOPPED'), 0) AS stopped,
          coalesce(sum(state = 'COMPLETED'), 0) AS completed, coalesce(sum(state IN ('STARTED', 'INPROGRESS')), 0) AS inprogress,
          coalesce(sum(state = 'DRAFTED'), 0) AS notStarted, coalesce(sum(state = 'PAUSED'), 0) AS paused,
          coalesce(sum(category_id ${inList(POSITIVE_CATEGORY_IDS)}), 0) AS interested,
          coalesce(sum(revenue_cents), 0) / 100.0 AS revenue
        FROM campaign_leads WHERE campaign_id = ${campaign.id}`,
  ]);
  return {
    client: (clientRows![0] as { name: string; email: string } | undefined) ?? null,
    sequenceCount: Number(stepRows![0]!.n),
    tags: tagRows!.map((row) => ({ id: Number(row.id), name: String(row.name), color: String(row.color) })),
    leadStats: Object.fromEntries(Object.entries(stateRows![0]!).map(([key, value]) => [key, Number(value)])),
  };
}

/**
 * 13.3's extras: positive replies in the window, sends refused at SMTP (by `failed_at`), records that
 * turned STOPPED in it (by `stopped_at`, their last stop): later writes to a failed message or a
 * stopped record do not move them.
 */
export async function windowExtras(d1: D1Database, campaignId: number, window: Window) {
  const [positive, failed, stopped] = await rawBatch(d1, [
    repliesFromCategoriesQuery([campaignId], window, POSITIVE_CATEGORY_IDS),
    sql`SELECT count(*) AS n FROM messages INDEXED BY messages_failed_idx
          WHERE campaign_id = ${campaignId} AND failed_at >= ${window.start} AND failed_at < ${window.end}`,
    sql`SELECT count(*) AS n FROM campaign_leads INDEXED BY campaign_leads_stopped_idx
          WHERE campaign_id = ${campaignId} AND stopped_at >= ${window.start} AND stopped_at < ${window.end}`,
  ]);
  return {
    positive_reply_count: readCategoryReplies(positive!).get(campaignId)?.counted ?? 0,
    failed_count: Number(failed![0]!.n),
    stopped_count: Number(stopped![0]!.n),
  };
}

/**
 * 13.6: per sequence step (the live steps, and any step number events, failures or stops name) the window's
 * figures by the events' sequence_number (from the hour counters), its messages that failed in the
 * window (by `failed_at`) and the records that stopped at it; per variant, the sends its messages
 * made and the outcomes credited to them.
 */
export async function sequenceFigures(d1: D1Database, campaignId: number, window: Window) {
  const inWindow = sql`e.campaign_id = ${campaignId} AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end}`;
  const [stepRows, figureRows, positiveRows, failedRows, stoppedRows, variantRows] = await rawBatch(d1, [
    sql`SELECT id, seq_number FROM sequence_steps WHERE campaign_id = ${campaignId} AND deleted_at IS NULL ORDER BY seq_number`,
    totalsQuery([campaignId], window, true),
    sql`SELECT e.sequence_number AS seq, count(*) AS n
        FROM campaign_leads cl INDEXED BY campaign_leads_campaign_category_idx
        JOIN events e INDEXED BY events_record_time_idx ON e.campaign_lead_id = cl.id
        WHERE cl.campaign_id = ${campaignId} AND cl.category_id ${inList(POSITIVE_CATEGORY_IDS)} AND e.type = 'REPLY' AND e.ignored = 0
          AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end}
        GROUP BY e.sequence_number`,
    sql`SELECT step AS seq, count(*) AS n FROM messages INDEXED BY messages_failed_idx
        WHERE campaign_id = ${campaignId} AND failed_at >= ${window.start} AND failed_at < ${window.end}
        GROUP BY step`,
    // A stop belongs to the step of the record's last send at or before it (ties to the later id,
    // as send credit), to step 1 when nothing was sent to it yet.
    sql`SELECT coalesce((SELECT e.sequence_number FROM events e INDEXED BY events_record_time_idx
              WHERE e.campaign_lead_id = cl.id AND e.type = 'SENT' AND e.sequence_number <> ${PERSON_STEP} AND e.occurred_at <= cl.stopped_at
              ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1), 1) AS seq, count(*) AS n
        FROM campaign_leads cl INDEXED BY campaign_leads_stopped_idx
        WHERE cl.campaign_id = ${campaignId} AND cl.stopped_at >= ${window.start} AND cl.stopped_at < ${window.end}
        GROUP BY seq`,
    // Driven by the campaign's variant messages (CROSS JOIN keeps that order): a campaign the
    // engine never sent for reads none of its events here.
    sql`SELECT m.step AS seq, m.variant_id, v.label, e.type, count(*) AS total, coalesce(sum(e.ignored = 0), 0) AS counted,
          coalesce(sum(e.type = 'REPLY' AND e.ignored = 0 AND cl.category_id ${inList(POSITIVE_CATEGORY_IDS)}), 0) AS positive
        FROM messages m
        CROSS JOIN events e INDEXED BY events_record_time_idx
        JOIN campaign_leads cl ON cl.id = e.campaign_lead_id
        LEFT JOIN sequence_variants v ON v.id = m.variant_id
        WHERE m.campaign_id = ${campaignId} AND m.variant_id IS NOT NULL
          AND m.id = (SELECT max(id) FROM messages WHERE campaign_lead_id = m.campaign_lead_id AND step = m.step)
          AND e.campaign_lead_id = m.campaign_lead_id AND ${inWindow} AND e.type IN ('SENT', 'OPEN', 'CLICK', 'REPLY')
          AND (SELECT sequence_number FROM events WHERE id = e.send_id) = m.step
        GROUP BY m.step, m.variant_id, e.type`,
  ]);
  return { stepRows: stepRows!, figureRows: figureRows!, positiveRows: positiveRows!, failedRows: failedRows!, stoppedRows: stoppedRows!, variantRows: variantRows! };
}

/**
 * 13.5 and the global mailbox reports: per sending mailbox, the window's sends and the outcomes
 * credited to the send they answer (by the event's time), from the credit counters of migration
 * 0027 over the window's whole hours plus its edges' events; distinct records from credit_spans
 * the way distinctQuery reads event_spans (only when `uniques`: the health reports need none).
 * `campaignIds` limits the campaigns.
 */
export function mailboxFiguresQuery(campaignIds: number[], window: Window | null, options: { uniques: boolean } = { uniques: true }): SQL {
  const { start, end } = window ?? LIFETIME;
  const { hours, edges } = splitWindow({ start, end });
  const ids = inList(campaignIds);
  const types = inList(["SENT", ...OUTCOME_TYPES]);
  const parts: SQL[] = [];
  if (hours) {
    parts.push(sql`SELECT mailbox_id, type, total, counted FROM credit_mailbox_hours
      WHERE campaign_id ${ids} AND type ${types} AND hour >= ${hours.start} AND hour < ${hours.end}`);
  }
  for (const edge of edges) {
    parts.push(sql`SELECT send_mailbox_id AS mailbox_id, type, 1 AS total, ignored = 0 AS counted FROM events INDEXED BY events_campaign_type_time_idx
      WHERE campaign_id ${ids} AND type ${types} AND occurred_at >= ${edge.start} AND occurred_at < ${edge.end} AND send_mailbox_id IS NOT NULL`);
  }
  const sum = (type: string, column = "total") => sql.raw(`coalesce(sum(CASE WHEN type = '${type}' THEN ${column} END), 0)`);
  const uniques = options.uniques
    ? sql`SELECT mailbox_id, ${sum("SENT", "n")} AS unique_sent, ${sum("OPEN", "n")} AS unique_opened, ${sum("CLICK", "n")} AS unique_clicked
      FROM (
        SELECT sp.type, sp.mailbox_id, count(*) AS n
        FROM credit_spans sp INDEXED BY credit_spans_mailbox_idx
        WHERE sp.campaign_id ${ids} AND sp.type IN ('SENT', 'OPEN', 'CLICK') AND sp.mailbox_id IN (SELECT mailbox_id FROM totals)
          AND sp.last_at >= ${start} AND sp.first_at < ${end}
          AND (sp.first_at >= ${start} OR EXISTS (
            SELECT 1 FROM events e INDEXED BY events_record_time_idx
            WHERE e.campaign_lead_id = sp.campaign_lead_id AND e.occurred_at >= ${start} AND e.occurred_at < ${end}
              AND e.type = sp.type AND e.send_mailbox_id = sp.mailbox_id))
        GROUP BY sp.type, sp.mailbox_id)
      GROUP BY mailbox_id`
    : sql`SELECT NULL AS mailbox_id, 0 AS unique_sent, 0 AS unique_opened, 0 AS unique_clicked WHERE false`;
  return sql`WITH totals AS (
        SELECT mailbox_id, ${sum("SENT")} AS sent, ${sum("OPEN")} AS opened, ${sum("CLICK")} AS clicked,
               ${sum("REPLY", "counted")} AS replied, ${sum("BOUNCE")} AS bounced, ${sum("UNSUBSCRIBE")} AS unsubscribed
        FROM (${sql.join(parts, sql` UNION ALL `)})
        GROUP BY mailbox_id HAVING sum(total) > 0),
      uniques AS (${uniques})
    SELECT t.*, coalesce(u.unique_sent, 0) AS unique_sent, coalesce(u.unique_opened, 0) AS unique_opened,
           coalesce(u.unique_clicked, 0) AS unique_clicked
    FROM totals t LEFT JOIN uniques u ON u.mailbox_id = t.mailbox_id`;
}

/**
 * The senders of mailboxFiguresQuery's rows, one row per id: the mailbox's name, address and
 * provider type when the caller may name it for these campaigns (src/platform/access.ts), else
 * nulls and `sent_from`, the address the campaigns' own SENT events give (a deleted mailbox). An id
 * another account's mailbox holds, named by events stored before ingestion checked them, so reveals
 * nothing of that mailbox.
 */
export function mailboxesQuery(principal: Principal, campaignIds: number[], ids: number[]): SQL {
  return sql`SELECT v.value AS id, email_accounts.from_email, email_accounts.from_name, email_accounts.type,
      CASE WHEN email_accounts.id IS NULL THEN (
        SELECT e.from_email FROM events e INDEXED BY events_mailbox_type_time_idx
        WHERE e.email_account_id = v.value AND e.type = 'SENT' AND e.account_id = ${principal.accountId} AND e.campaign_id ${inList(campaignIds)}
          AND e.from_email IS NOT NULL
        LIMIT 1) END AS sent_from
    FROM json_each(${jsonList(ids)}) v
    LEFT JOIN email_accounts ON email_accounts.id = v.value AND ${campaignMailboxes(principal, campaignIds)}`;
}

interface StatisticsFilter {
  sequenceNumber?: number;
  emailStatus?: "opened" | "clicked" | "replied" | "unsubscribed" | "bounced";
  sentFrom?: number;
  sentTo?: number;
}

const STATUS_OUTCOME: Record<NonNullable<StatisticsFilter["emailStatus"]>, (typeof OUTCOME_TYPES)[number]> = {
  opened: "OPEN",
  clicked: "CLICK",
  replied: "REPLY",
  unsubscribed: "UNSUBSCRIBE",
  bounced: "BOUNCE",
};

/**
 * 13.2: one row per email the campaign sent (a SENT of a step, not a person's inbox reply), by send time, each with the outcomes credited to
 * it (events whose send_id is the send), its lead and its step. The page of sends is taken first,
 * so only its rows read their outcomes; an outcome filter is a probe of events_campaign_send_idx per send.
 */
export async function statisticsPage(d1: D1Database, campaignId: number, filter: StatisticsFilter, page: { offset: number; limit: number }) {
  const conditions: SQL[] = [sql`e.campaign_id = ${campaignId}`, sql`e.type = 'SENT'`, sql`e.sequence_number <> ${PERSON_STEP}`];
  if (filter.sequenceNumber !== undefined) conditions.push(sql`e.sequence_number = ${filter.sequenceNumber}`);
  if (filter.sentFrom !== undefined) conditions.push(sql`e.occurred_at >= ${filter.sentFrom}`);
  if (filter.sentTo !== undefined) conditions.push(sql`e.occurred_at <= ${filter.sentTo}`);
  const outcome = filter.emailStatus && STATUS_OUTCOME[filter.emailStatus];
  if (outcome) {
    conditions.push(sql`EXISTS (SELECT 1 FROM events o INDEXED BY events_campaign_send_idx
      WHERE o.campaign_id = ${campaignId} AND o.type = ${outcome} AND o.send_id = e.id)`);
  }
  const where = sql.join(conditions, sql` AND `);
  const [totalRows, rows] = await rawBatch(d1, [
    // With an outcome filter and no step filter, the sends that have one are the distinct send ids
    // of that outcome's range of events_campaign_send_idx (send times are on the index too).
    outcome && filter.sequenceNumber === undefined
      ? sql`SELECT count(DISTINCT send_id) AS total FROM events INDEXED BY events_campaign_send_idx
          WHERE campaign_id = ${campaignId} AND type = ${outcome} AND send_id IS NOT NULL
            ${filter.sentFrom === undefined ? sql`` : sql`AND send_at >= ${filter.sentFrom}`}
            ${filter.sentTo === undefined ? sql`` : sql`AND send_at <= ${filter.sentTo}`}`
      : sql`SELECT count(*) AS total FROM events e INDEXED BY events_campaign_type_time_idx WHERE ${where}`,
    sql`WITH sends AS (
          SELECT e.id, e.campaign_lead_id, e.occurred_at, e.sequence_number, e.subject, e.body
          FROM events e INDEXED BY events_campaign_type_time_idx WHERE ${where}
          ORDER BY e.occurred_at, e.id LIMIT ${page.limit} OFFSET ${page.offset}),
        rows AS (
          SELECT s.*,
                 min(CASE WHEN o.type = 'OPEN' THEN o.occurred_at END) AS open_time,
                 min(CASE WHEN o.type = 'CLICK' THEN o.occurred_at END) AS click_time,
                 min(CASE WHEN o.type = 'REPLY' THEN o.occurred_at END) AS reply_time,
                 coalesce(sum(o.type = 'OPEN'), 0) AS open_count, coalesce(sum(o.type = 'CLICK'), 0) AS click_count,
                 coalesce(max(o.type = 'UNSUBSCRIBE'), 0) AS is_unsubscribed, coalesce(max(o.type = 'BOUNCE'), 0) AS is_bounced,
                 coalesce(min(CASE WHEN o.type = 'REPLY' THEN o.ignored END), 0) AS ignore_reply
          FROM sends s
          LEFT JOIN events o INDEXED BY events_campaign_send_idx
            ON o.campaign_id = ${campaignId} AND o.type ${inList([...OUTCOME_TYPES])} AND o.send_id = s.id
          GROUP BY s.id)
        SELECT r.*, l.id AS lead_id, l.email AS lead_email, l.first_name, l.last_name, lc.name AS lead_category,
               (SELECT st.id FROM sequence_steps st WHERE st.campaign_id = ${campaignId} AND st.seq_number = r.sequence_number
                ORDER BY st.deleted_at IS NOT NULL, st.id DESC LIMIT 1) AS step_id,
               (SELECT m.variant_id FROM messages m WHERE m.campaign_lead_id = r.campaign_lead_id AND m.step = r.sequence_number
                ORDER BY m.id DESC LIMIT 1) AS variant_id
        FROM rows r
        JOIN campaign_leads cl ON cl.id = r.campaign_lead_id
        JOIN leads l ON l.id = cl.lead_id
        LEFT JOIN lead_categories lc ON lc.id = cl.category_id
        ORDER BY r.occurred_at, r.id`,
  ]);
  return { total: Number(totalRows![0]!.total), rows: rows! };
}

/**
 * 13.4: a page of the campaign's records (by id) with their counts and history; with `after`,
 * only records whose newest event is later.
 */
export async function leadStatisticsPage(d1: D1Database, campaignId: number, after: number | undefined, page: { offset: number; limit: number }) {
  const newer = after === undefined ? sql`` : sql`AND (SELECT max(occurred_at) FROM events WHERE campaign_lead_id = cl.id) > ${after}`;
  const [records] = await rawBatch(d1, [
    sql`SELECT cl.id, cl.state, cl.category_id, l.id AS lead_id, l.email, l.first_name, l.last_name
        FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id
        WHERE cl.campaign_id = ${campaignId} ${newer}
        ORDER BY cl.id LIMIT ${page.limit + 1} OFFSET ${page.offset}`,
  ]);
  const shown = records!.slice(0, page.limit);
  const ids = shown.map((row) => Number(row.id));
  const [history] = ids.length
    ? await rawBatch(d1, [
        sql`SELECT campaign_lead_id, type, occurred_at, sequence_number, subject, body, ignored FROM events INDEXED BY events_record_time_idx
            WHERE campaign_lead_id ${inList(ids)} ORDER BY campaign_lead_id, occurred_at, id`,
      ])
    : [[]];
  return { records: shown, history: history!, hasMore: records!.length > page.limit };
}

export type { Row };
