import { sql, type SQL } from "drizzle-orm";
import { EVENT_TYPES, OUT_OF_OFFICE_CATEGORY_ID, SPAN_KINDS, type EventType, type SpanKind } from "../db/schema";
import { PERSON_STEP } from "../events/rules";
import { inList, jsonList } from "../platform/sql";

/** [start, end) in epoch ms. */
export interface Window {
  start: number;
  end: number;
}

/** Beyond any stored instant: a lifetime window. */
export const LIFETIME: Window = { start: -8.64e15, end: 8.64e15 };

const HOUR_MS = 3_600_000;

/**
 * A window as whole UTC hours (answered from event_hour_counts) and the parts outside them
 * (answered from events): the parts are empty for windows on whole hours and under an hour each
 * for zones 30 or 45 minutes off UTC, so counts stay exact whatever the offset.
 */
export function splitWindow(window: Window): { hours: Window | null; edges: Window[] } {
  const hours = { start: Math.ceil(window.start / HOUR_MS) * HOUR_MS, end: Math.floor(window.end / HOUR_MS) * HOUR_MS };
  if (hours.start >= hours.end) return { hours: null, edges: [window] };
  const edges = [
    { start: window.start, end: hours.start },
    { start: hours.end, end: window.end },
  ].filter((edge) => edge.start < edge.end);
  return { hours, edges };
}

interface TypeTotals {
  /** Every event of the type. */
  total: number;
  /** Events not made by a machine (opens and clicks). */
  human: number;
  /** Events not flagged ignored (replies). */
  counted: number;
}

export type CampaignTotals = Record<EventType, TypeTotals>;

function emptyTotals(): CampaignTotals {
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, { total: 0, human: 0, counted: 0 }])) as CampaignTotals;
}

/** Whether a row of events or event_hour_counts (`table`: its name or alias) is the campaign's: anything but a person's SENT. */
export function campaignEvent(table: string): SQL {
  const t = sql.identifier(table);
  return sql`(${t}.type <> 'SENT' OR ${t}.sequence_number <> ${PERSON_STEP})`;
}

/**
 * Per campaign and event type, the window's totals: the hour counters for its whole hours plus a
 * range scan of events for the rest. `type IN (...)` makes each type's hours one index range. A
 * person's SENT (an inbox reply, PERSON_STEP) is no email of the campaign and counts in none.
 */

export function totalsQuery(campaignIds: number[], window: Window, bySequence = false): SQL {
  const { hours, edges } = splitWindow(window);
  const types = inList([...EVENT_TYPES]);
  const parts: SQL[] = [];
  if (hours) {
    parts.push(sql`SELECT campaign_id, type, sequence_number, total, human, counted FROM event_hour_counts
      WHERE campaign_id ${inList(campaignIds)} AND type ${types} AND hour >= ${hours.start} AND hour < ${hours.end} AND ${campaignEvent("event_hour_counts")}`);
  }
  for (const edge of edges) {
    parts.push(sql`SELECT campaign_id, type, sequence_number, 1, is_machine = 0, ignored = 0 FROM events INDEXED BY events_campaign_type_time_idx
      WHERE campaign_id ${inList(campaignIds)} AND type ${types} AND occurred_at >= ${edge.start} AND occurred_at < ${edge.end} AND ${campaignEvent("events")}`);
  }
  const keys = bySequence ? sql`campaign_id, type, sequence_number` : sql`campaign_id, type`;
  return sql`SELECT ${keys}, sum(total) AS total, sum(human) AS human, sum(counted) AS counted
    FROM (${sql.join(parts, sql` UNION ALL `)}) GROUP BY ${keys}`;
}

/** The rows of totalsQuery by campaign id (campaigns without events get zeros). */
export function readTotals(rows: Record<string, unknown>[], campaignIds: number[]): Map<number, CampaignTotals> {
  const byCampaign = new Map(campaignIds.map((id) => [id, emptyTotals()]));
  for (const row of rows) {
    const totals = byCampaign.get(Number(row.campaign_id));
    if (!totals) continue;
    totals[row.type as EventType] = { total: Number(row.total), human: Number(row.human), counted: Number(row.counted) };
  }
  return byCampaign;
}

/** Whether event `e` is of the span kind `sp.kind` (event_span_kinds `k` says what the kind holds; a person's SENT is of none, migration 0095). */
const KIND_MATCH = sql`k.kind = sp.kind AND e.type = k.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
  AND ${campaignEvent("e")}`;

/**
 * Per campaign and kind, the records with such an event in the window, exactly: a record whose
 * first one is in the window counts from its span alone; one whose span starts before the window
 * and reaches into it is checked against its own events (a seek on events_record_time_idx). Only
 * records active since the window's start are read, never the window's events.
 */
export function distinctQuery(campaignIds: number[], window: Window, kinds: readonly SpanKind[] = SPAN_KINDS): SQL {
  return sql`SELECT sp.campaign_id, sp.kind, count(*) AS n
    FROM event_spans sp INDEXED BY event_spans_last_idx
    WHERE ${spansInWindow(inList(campaignIds), window, kinds)}
    GROUP BY sp.campaign_id, sp.kind`;
}

/**
 * Per group of campaigns (`grp`: its index) and kind (a column each), the leads with such an event
 * in the window over the group's campaigns together: a lead several of them reached is one lead
 * (CONTRACT 13.7). A lead has one record in a campaign, so while at most one of the group's
 * campaigns has spans of the kind since the window's start, its records in the window are the
 * leads, counted as distinctQuery does. Otherwise the spans are counted by the lead they name (a
 * record deleted since names none and is a lead of its own) from event_spans_lead_idx, which hands
 * each campaign's spans over in lead order: the set of leads seen grows at its end, where in
 * last_at order it grew at random places (x5 on the count at 1M events).
 */
export function distinctLeadsQuery(groups: number[][], window: Window, kinds: readonly SpanKind[]): SQL {
  const own = sql`IN (SELECT value FROM json_each(g.value))`;
  const columns = kinds.map((kind) => {
    const several = sql`(SELECT count(*) FROM (SELECT 1 FROM json_each(g.value) c WHERE EXISTS (
      SELECT 1 FROM event_spans x INDEXED BY event_spans_last_idx WHERE x.campaign_id = c.value AND x.kind = ${kind} AND x.last_at >= ${window.start}) LIMIT 2)) > 1`;
    return sql`CASE WHEN ${several}
      THEN (SELECT count(DISTINCT coalesce(sp.lead_id, -sp.campaign_lead_id)) FROM event_spans sp INDEXED BY event_spans_lead_idx
        WHERE ${spansInWindow(own, window, [kind])})
      ELSE (SELECT count(*) FROM event_spans sp INDEXED BY event_spans_last_idx WHERE ${spansInWindow(own, window, [kind])})
      END AS ${sql.identifier(kind)}`;
  });
  return sql`SELECT g.key AS grp, ${sql.join(columns, sql`, `)} FROM json_each(${jsonList(groups)}) g`;
}

/** The spans `sp` of the campaigns (`campaigns`: an IN clause) with an event of their kind in the window (see distinctQuery). */
function spansInWindow(campaigns: SQL, window: Window, kinds: readonly SpanKind[]): SQL {
  return sql`sp.campaign_id ${campaigns} AND sp.kind ${inList([...kinds])}
      AND sp.last_at >= ${window.start} AND sp.first_at < ${window.end}
      AND (sp.first_at >= ${window.start} OR EXISTS (
        SELECT 1 FROM event_span_kinds k JOIN events e INDEXED BY events_record_time_idx
        WHERE e.campaign_lead_id = sp.campaign_lead_id AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end}
          AND ${KIND_MATCH}))`;
}

type CampaignDistinct = Record<SpanKind, number>;

/** The rows of distinctQuery by campaign id. */
export function readDistinct(rows: Record<string, unknown>[], campaignIds: number[]): Map<number, CampaignDistinct> {
  const byCampaign = new Map(
    campaignIds.map((id) => [id, Object.fromEntries(SPAN_KINDS.map((kind) => [kind, 0])) as CampaignDistinct]),
  );
  for (const row of rows) {
    const distinct = byCampaign.get(Number(row.campaign_id));
    if (distinct) distinct[row.kind as SpanKind] = Number(row.n);
  }
  return byCampaign;
}

/**
 * Per campaign, the window's replies from records whose current category is one of `categoryIds`
 * (found by campaign_leads_campaign_category_idx, then each record's events in the window).
 */
export function repliesFromCategoriesQuery(campaignIds: number[], window: Window, categoryIds: number[]): SQL {
  return sql`SELECT cl.campaign_id, count(*) AS n, coalesce(sum(e.ignored = 0), 0) AS counted
    FROM campaign_leads cl INDEXED BY campaign_leads_campaign_category_idx
    JOIN events e INDEXED BY events_record_time_idx ON e.campaign_lead_id = cl.id
    WHERE cl.campaign_id ${inList(campaignIds)} AND cl.category_id ${inList(categoryIds)}
      AND e.occurred_at >= ${window.start} AND e.occurred_at < ${window.end} AND e.type = 'REPLY'
    GROUP BY cl.campaign_id`;
}

/** Per campaign, the replies of repliesFromCategoriesQuery (all of them, and those not ignored). */
export function readCategoryReplies(rows: Record<string, unknown>[]): Map<number, { n: number; counted: number }> {
  return new Map(rows.map((row) => [Number(row.campaign_id), { n: Number(row.n), counted: Number(row.counted) }]));
}

export const OUT_OF_OFFICE = [OUT_OF_OFFICE_CATEGORY_ID];
