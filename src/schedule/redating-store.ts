import { and, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import { campaignLeads, campaigns, leads, sequenceSteps } from "../db/schema";
import type { Database } from "../platform/db";
import { inList, jsonList } from "../platform/sql";
import { hoursChanged, redatingGroup, type RedatingGroup } from "./redating";
import { scheduleOf } from "./settings";
import type { Schedule } from "./window";

/**
 * The statements that re-date due work when the hours it was dated by change, for the batch that
 * makes the change (src/schedule/redating.ts says why and computes each group's instants). Each
 * reads first what its groups need: the lead zones of the records, the campaign's step delays.
 */

/**
 * A campaign's schedule going from `before` to `after`: its records of each lead zone dated by the
 * old hours are dated by the new ones. Nothing when neither schedule sends in each lead's zone (due
 * times are then stored as they are and the pass checks the campaign's window), or when the hours stay.
 * The statement follows the schedule's write at `now` in its batch and applies only if that write did
 * (the campaign's `updated_at` is `now`): a write a concurrent post's hours refused re-dates nothing.
 */
export async function campaignRedating(db: Database, campaignId: number, before: Schedule | null, after: Schedule, now: number): Promise<SQL[]> {
  if (!(before?.send_in_lead_timezone || after.send_in_lead_timezone) || !hoursChanged(before, after)) return [];
  const [zones, steps] = await db.batch([
    // A range of campaign_leads_due_idx, each record's lead by its key.
    db
      .selectDistinct({ zone: leads.timezone })
      .from(campaignLeads)
      .innerJoin(leads, eq(leads.id, campaignLeads.leadId))
      .where(and(eq(campaignLeads.campaignId, campaignId), isNotNull(campaignLeads.dueAt))),
    db.selectDistinct({ days: sequenceSteps.delayInDays }).from(sequenceSteps).where(and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt))),
  ]);
  const delays = steps.map((step) => step.days);
  const groups = zones.flatMap(({ zone }) => redatingGroup({ campaign: campaignId, before, after, zoneBefore: zone, zoneAfter: zone, delays, now }) ?? []);
  const written = sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaignId} AND updated_at = ${now})`;
  return groups.length === 0 ? [] : [redateStatement(sql`campaign_leads.campaign_id = ${campaignId} AND ${written}`, groups, now)];
}

/** A lead's zone going from `before` to `after` (null: none). */
export interface LeadZoneChange {
  leadId: number;
  before: string | null;
  after: string | null;
}

/**
 * Leads' zones changing (one lead's update, or an import filling many leads' empty zones): their
 * records in campaigns that send in each lead's zone, dated by their old zone's hours, are dated by
 * the new zone's. The statements go after the leads' write in its batch: they find the records by
 * the zone written. One statement per old zone, as a statement's groups are told apart by campaign
 * and new zone alone.
 */
export async function leadRedating(db: Database, changes: readonly LeadZoneChange[], now: number): Promise<SQL[]> {
  const moved = changes.filter((change) => change.before !== change.after);
  if (moved.length === 0) return [];
  // Each campaign with a record due of a moved lead, once per old and new zone among those leads.
  const rows = await db
    .selectDistinct({
      id: campaigns.id,
      schedule: campaigns.schedule,
      delays: sql<string>`(SELECT json_group_array(DISTINCT delay_in_days) FROM sequence_steps WHERE campaign_id = ${campaigns.id} AND deleted_at IS NULL)`,
      before: sql<string | null>`ch.value ->> '$.before'`,
      after: sql<string | null>`ch.value ->> '$.after'`,
    })
    .from(sql`json_each(${jsonList(moved)}) AS ch`)
    .innerJoin(campaignLeads, sql`${campaignLeads.leadId} = ch.value ->> '$.leadId'`)
    .innerJoin(campaigns, eq(campaigns.id, campaignLeads.campaignId))
    .where(isNotNull(campaignLeads.dueAt));
  const byBefore = new Map<string | null, RedatingGroup[]>();
  for (const row of rows) {
    const schedule = scheduleOf(row.schedule);
    if (!schedule?.send_in_lead_timezone) continue;
    const delays = JSON.parse(row.delays) as number[];
    const group = redatingGroup({ campaign: row.id, before: schedule, after: schedule, zoneBefore: row.before, zoneAfter: row.after, delays, now });
    if (group) byBefore.set(row.before, [...(byBefore.get(row.before) ?? []), group]);
  }
  return [...byBefore].map(([before, groups]) => {
    const ids = moved.filter((change) => change.before === before).map((change) => change.leadId);
    return redateStatement(sql`campaign_leads.lead_id ${inList(ids)}`, groups, now);
  });
}

/**
 * Re-dates the records of `scope` that have a step due and that no pass holds (a paused one's due
 * time stands for when it resumes), by their group (campaign and lead zone):
 * one due now that the new hours keep closed, due at their opening; one waiting on the old hours'
 * opening, due at the new one if its step's gap is over by then (a first step has none; a follow-up's
 * runs from its record's latest send of an earlier step, the instant the pass counted it from, sender.ts
 * `following`: a sent message's `sent_at`; one in doubt has none, and its `updated_at` is when the pass
 * found it so, never written again), else at the new hours' first instant from the old opening. Any other due time stays: one
 * written by a resume, a retry or a hold keeps its own wait, and the pass re-dates a record it finds
 * outside its lead's window.
 */
function redateStatement(scope: SQL, groups: RedatingGroup[], now: number): SQL {
  const previousSend = sql`(SELECT max(coalesce(m.sent_at, m.updated_at)) FROM messages m
      WHERE m.campaign_lead_id = campaign_leads.id AND m.step < campaign_leads.next_step AND m.status IN ('sent', 'unconfirmed'))`;
  const nextDelay = sql`(SELECT s.delay_in_days FROM sequence_steps s WHERE s.campaign_id = campaign_leads.campaign_id AND s.deleted_at IS NULL
      AND s.seq_number >= campaign_leads.next_step ORDER BY s.seq_number LIMIT 1)`;
  return sql`
    UPDATE campaign_leads SET
      due_at = CASE
        WHEN campaign_leads.due_at <= ${now} OR campaign_leads.next_step = 1 THEN g.open
        WHEN ${previousSend} <= g.cutoffs ->> ('$."' || ${nextDelay} || '"') THEN g.open
        ELSE g.later END,
      updated_at = ${now}
    FROM (SELECT value ->> '$.campaign' AS campaign, coalesce(value ->> '$.zone', '') AS zone, value ->> '$.old' AS old,
                 value ->> '$.open' AS open, value ->> '$.later' AS later, value -> '$.cutoffs' AS cutoffs
          FROM json_each(${jsonList(groups)})) AS g,
         leads AS l
    WHERE ${scope} AND l.id = campaign_leads.lead_id AND g.campaign = campaign_leads.campaign_id AND g.zone = coalesce(l.timezone, '')
      AND campaign_leads.next_step IS NOT NULL AND campaign_leads.claim_token IS NULL
      AND ((campaign_leads.due_at = g.old AND campaign_leads.due_at > ${now}) OR (campaign_leads.due_at <= ${now} AND g.open > ${now}))`;
}
