import { sql, type SQL } from "drizzle-orm";
import type { CategorisationSource } from "../db/schema";
import { planIngestion, type PlannedEvent } from "../events/plan";
import { unsubscribeStatements, unsubscribedDeliveryIds, type RecordRow } from "../events/store";
import type { Database } from "../platform/db";
import { jsonList } from "../platform/sql";
import { parseReturnDate } from "../replies/return-date";
import { scheduleOf, settingsOf } from "../schedule/settings";
import { stepDueAt } from "../schedule/window";
import { categoryDeliveries } from "../webhooks/fanout";
import { guardValue, insertDeliveries, type NewDelivery } from "../webhooks/outbox";
import { DO_NOT_CONTACT_CATEGORY_ID } from "./categoriser";
import { LIVE, optOutRecords, type CampaignContext, type ReplyRow } from "./store";

/**
 * What a categorisation writes, as statements for ONE D1 batch (CONTRACT section 20.4, step 3):
 * the reply's categorisation row, its category, the record's category when this reply is its
 * latest categorised one, the LEAD_CATEGORY_UPDATED deliveries through the same fan-out as a
 * change by hand (category filters included), and for Do Not Contact the lead's unsubscribe
 * everywhere through the ingestion path (UNSUBSCRIBE events, source `reply`).
 *
 * Guards, in SQL inside the batch (docs/ARCHITECTURE.md, "the outbox"): each categorisation row
 * carries the batch's nonce and is inserted only when the reply has none yet, and every other
 * statement of that reply holds only if the row with this nonce exists, so a redelivered message
 * or a second consumer writes nothing twice. A record takes the category only when the reply is
 * later than whatever set its current one (a person's choice counts as set when it was made), and
 * a delivery is stored only when the record ends up holding that category from that reply.
 */

export interface StoredCategorisation {
  categoryId: number | null;
  categoryName: string | null;
  source: CategorisationSource;
  ruleId: string | null;
  model: string | null;
  promptTemplateId: number | null;
  promptVersion: string | null;
  confidence: number | null;
  needsReview: boolean;
  reason: string | null;
}

export interface Outcome {
  reply: ReplyRow;
  context: CampaignContext;
  stored: StoredCategorisation;
  /** The rules recognised an out-of-office answer the event did not flag. */
  markOoo: boolean;
}

/** Outcomes that give the reply a category it does not have yet (an event's own category is already in place). */
const assigning = (outcome: Outcome) => outcome.stored.categoryId !== null && outcome.reply.category_id === null;

/** The row's own nonce guard: this batch wrote the reply's categorisation. */
const written = (eventId: SQL | number, nonce: string) => sql`EXISTS (SELECT 1 FROM reply_categorisations WHERE event_id = ${eventId} AND nonce = ${nonce})`;

export function insertCategorisations(outcomes: Outcome[], nonce: string, now: number): SQL {
  const rows = outcomes.map(({ reply, stored }) => ({
    event_id: reply.id,
    account_id: reply.account_id,
    campaign_id: reply.campaign_id,
    campaign_lead_id: reply.campaign_lead_id,
    category_id: stored.categoryId,
    category_name: stored.categoryName,
    source: stored.source,
    rule_id: stored.ruleId,
    model: stored.model,
    prompt_template_id: stored.promptTemplateId,
    prompt_version: stored.promptVersion,
    confidence: stored.confidence,
    needs_review: stored.needsReview ? 1 : 0,
    reason: stored.reason,
  }));
  return sql`INSERT INTO reply_categorisations (event_id, account_id, campaign_id, campaign_lead_id, category_id, category_name, source, rule_id,
      model, prompt_template_id, prompt_version, confidence, needs_review, reason, categorised_at, nonce)
    SELECT value ->> '$.event_id', value ->> '$.account_id', value ->> '$.campaign_id', value ->> '$.campaign_lead_id', value ->> '$.category_id',
      value ->> '$.category_name', value ->> '$.source', value ->> '$.rule_id', value ->> '$.model', value ->> '$.prompt_template_id',
      value ->> '$.prompt_version', value ->> '$.confidence', value ->> '$.needs_review', value ->> '$.reason', ${now}, ${nonce}
    FROM json_each(${jsonList(rows)}) WHERE true
    ON CONFLICT (event_id) DO NOTHING`;
}

/** The record's new category: its latest assigned reply, when later than what set the current one. */
interface RecordWinner {
  outcome: Outcome;
  recordId: number;
}

function winners(outcomes: Outcome[]): RecordWinner[] {
  const byRecord = new Map<number, Outcome>();
  for (const outcome of outcomes.filter(assigning)) {
    const { reply } = outcome;
    const current = byRecord.get(reply.campaign_lead_id);
    if (!current || reply.occurred_at > current.reply.occurred_at) byRecord.set(reply.campaign_lead_id, outcome);
  }
  return [...byRecord].flatMap(([recordId, outcome]) =>
    outcome.reply.occurred_at > (outcome.reply.record_category_set_at ?? -1) ? [{ recordId, outcome }] : [],
  );
}

/**
 * The reply's category, the out-of-office flag the rules found, the records that flag reopens
 * (`reopen`, from oooReopenStatement: before the records' categories, whose write it would read as a
 * later change), and the records' categories.
 */
export function categoryStatements(outcomes: Outcome[], nonce: string, now: number, reopen: SQL | null = null): SQL[] {
  const statements: SQL[] = [];
  const assigned = outcomes.filter(assigning).map((o) => ({ id: o.reply.id, category_id: o.stored.categoryId }));
  if (assigned.length > 0) {
    statements.push(sql`UPDATE events SET category_id = v.value ->> '$.category_id'
      FROM json_each(${jsonList(assigned)}) v
      WHERE events.id = v.value ->> '$.id' AND events.category_id IS NULL AND ${written(sql`events.id`, nonce)}`);
  }
  // Section 11's ignore rule reads the flag: an out-of-office reply is ignored when the account or campaign says so.
  const ooo = outcomes
    .filter((o) => o.markOoo)
    .map((o) => ({ id: o.reply.id, ignore: o.context.ignoreOooReplies ? 1 : 0 }));
  if (ooo.length > 0) {
    statements.push(sql`UPDATE events SET is_ooo = 1, ignored = max(ignored, v.value ->> '$.ignore')
      FROM json_each(${jsonList(ooo)}) v
      WHERE events.id = v.value ->> '$.id' AND ${written(sql`events.id`, nonce)}`);
  }
  if (reopen) statements.push(reopen);
  const records = winners(outcomes).map(({ recordId, outcome }) => ({
    id: recordId,
    reply: outcome.reply.id,
    category_id: outcome.stored.categoryId,
    at: outcome.reply.occurred_at,
  }));
  if (records.length > 0) {
    statements.push(sql`UPDATE campaign_leads SET category_id = v.value ->> '$.category_id', category_set_at = v.value ->> '$.at', updated_at = ${now}
      FROM json_each(${jsonList(records)}) v
      WHERE campaign_leads.id = v.value ->> '$.id' AND (v.value ->> '$.at') > coalesce(campaign_leads.category_set_at, -1)
        AND ${written(sql`v.value ->> '$.reply'`, nonce)}`);
  }
  return statements;
}

/**
 * CONTRACT 20.3: an out-of-office answer only the rules recognised (a pushed reply without
 * `is_ooo`, a notice without responder headers) follows section 11 like one flagged on arrival.
 * Its ingestion counted it as a reply and ended the record's sequence; where section 11 says such
 * a reply does not end it, the record is reopened, in the categorisation's batch and after the
 * reply's flag is set: ignored (account toggle or ignoreOOOasReply) → INPROGRESS, due when its next
 * step would have been (last send plus the step's delay, as the engine dates it); counted with
 * autoReactivateOOO → PAUSED until the return date the answer states, else the set delay, with that
 * due time kept for the resume (src/replies/resume.ts), as the ingestion pauses a flagged one.
 * Only a record this reply ended: COMPLETED with a step left, untouched since the reply was stored
 * (a person's or a later event's change wins), with no other counted reply that is not out of
 * office, and no human click or open the campaign's stop setting names.
 */
export function oooReopenStatement(outcomes: Outcome[], nonce: string, now: number): SQL | null {
  const rows = outcomes.flatMap(({ reply, context, markOoo }) => {
    if (!markOoo || reply.record_state !== "COMPLETED" || reply.next_delay_days === null || reply.record_last_sent_at === null) return [];
    const settings = settingsOf(context.campaign.settings);
    const ignored = context.ignoreOooReplies;
    if (!ignored && !settings.outOfOffice.autoReactivateOOO) return [];
    const zone = scheduleOf(context.campaign.schedule)?.timezone ?? "UTC";
    const dueAt = stepDueAt(reply.record_last_sent_at, reply.next_delay_days, zone);
    const returnsAt = parseReturnDate(`${reply.subject ?? ""}\n\n${reply.body ?? ""}`, reply.occurred_at);
    const stop = settings.stopLeadSettings;
    return [
      {
        record: reply.campaign_lead_id,
        reply: reply.id,
        state: ignored ? "INPROGRESS" : "PAUSED",
        due_at: dueAt,
        resume_at: ignored ? null : (returnsAt ?? reply.occurred_at + settings.outOfOffice.reactivateOOOwithDelay * DAY_MS),
        stop_type: stop === "CLICK_ON_A_LINK" ? "CLICK" : stop === "OPEN_AN_EMAIL" ? "OPEN" : null,
      },
    ];
  });
  if (rows.length === 0) return null;
  return sql`UPDATE campaign_leads SET state = v.value ->> '$.state', due_at = v.value ->> '$.due_at', resume_at = v.value ->> '$.resume_at', updated_at = ${now}
    FROM json_each(${jsonList(rows)}) v
    WHERE campaign_leads.id = v.value ->> '$.record' AND campaign_leads.state = 'COMPLETED'
      AND campaign_leads.updated_at <= (SELECT e.created_at FROM events e WHERE e.id = v.value ->> '$.reply')
      AND NOT EXISTS (SELECT 1 FROM events r WHERE r.campaign_lead_id = campaign_leads.id AND r.type = 'REPLY' AND r.ignored = 0 AND r.is_ooo = 0)
      AND NOT EXISTS (SELECT 1 FROM events r WHERE r.campaign_lead_id = campaign_leads.id AND r.type = v.value ->> '$.stop_type' AND r.is_machine = 0)
      AND ${written(sql`v.value ->> '$.reply'`, nonce)}
    RETURNING campaign_leads.campaign_id`;
}

/** LEAD_CATEGORY_UPDATED for each record whose category this batch changes, as a change by hand would send it. */
export function categoryChangeDeliveries(outcomes: Outcome[], nonce: string): NewDelivery[] {
  return winners(outcomes).flatMap(({ recordId, outcome }) => {
    const { reply, context, stored } = outcome;
    if (reply.record_category_id === stored.categoryId) return [];
    const names = context.triage.names;
    return categoryDeliveries(
      context.webhooks,
      { id: context.campaign.id, name: context.campaign.name, status: context.campaign.status, clientId: context.campaign.clientId },
      {
        reply: { messageId: reply.message_id, body: reply.stored_body, at: reply.occurred_at, fromEmail: reply.from_email, toEmail: reply.to_email },
        recordId,
        leadId: reply.lead_id,
        leadEmail: reply.lead_email,
        leadName: reply.lead_name,
        oldCategoryId: reply.record_category_id,
        oldCategoryName: reply.record_category_id === null ? null : (names.get(reply.record_category_id) ?? null),
        newCategoryId: stored.categoryId,
        newCategoryName: stored.categoryName,
        occurredAt: reply.occurred_at,
        provenance: { source: stored.source, confidence: stored.confidence, promptVersion: stored.promptVersion },
      },
      { event_id: reply.event_id, record_id: recordId, category_id: stored.categoryId, reply_row: reply.id, nonce },
    );
  });
}

/** The guard of categoryChangeDeliveries: the record holds the category from that reply, and this batch categorised the reply. */
const CATEGORY_DELIVERY_GUARD = sql`EXISTS (SELECT 1 FROM campaign_leads cl WHERE cl.id = ${guardValue("record_id")}
    AND cl.category_id IS ${guardValue("category_id")} AND cl.category_set_at = ${guardValue("category_at")})
  AND EXISTS (SELECT 1 FROM reply_categorisations p WHERE p.event_id = ${guardValue("reply_row")} AND p.nonce = ${guardValue("nonce")})`;

export function deliveryStatement(deliveries: NewDelivery[], now: number): SQL {
  return insertDeliveries(deliveries, CATEGORY_DELIVERY_GUARD, now);
}

const DAY_MS = 86_400_000;

interface OptOut {
  statements: SQL[];
  /** Where each outcome's unsubscribe statements start in `statements`, with its deliveries (to read their ids back). */
  ingestions: { start: number; deliveries: NewDelivery[] }[];
}

/**
 * Do Not Contact assigned automatically (the reply sets its record's category): the lead is unsubscribed everywhere (CONTRACT section 12),
 * through the ingestion path: one UNSUBSCRIBE (source `reply`, dated the reply) on the replying
 * record and on every live record of the lead in the account's other campaigns, so STOPPED,
 * `unsubscribed_count` and LEAD_UNSUBSCRIBED follow; the lead's own flag keeps it out of later
 * campaigns. Event ids name the reply, so a second run inserts and delivers nothing. One read for
 * every outcome, and a number of statements per outcome that does not grow with the lead's campaigns.
 */
export async function optOutStatements(db: Database, dnc: Outcome[], nonce: string, now: number): Promise<OptOut> {
  const out: OptOut = { statements: [], ingestions: [] };
  if (dnc.length === 0) return out;
  const loaded = await optOutRecords(db, dnc.map((o) => o.reply));
  for (const outcome of dnc) {
    const { reply } = outcome;
    // Only if, at commit, this batch categorised the reply and that made its record Do Not Contact:
    // a person's category for the reply (or the record) since it was read has the last word.
    const decided = sql`${written(reply.id, nonce)} AND EXISTS (SELECT 1 FROM campaign_leads WHERE id = ${reply.campaign_lead_id}
      AND category_id = ${DO_NOT_CONTACT_CATEGORY_ID} AND category_set_at = ${reply.occurred_at})`;
    // optOutRecords' rule for this reply alone: the read holds every outcome's records.
    const isTarget = (r: RecordRow) => r.leadId === reply.lead_id && (LIVE.includes(r.state) || (r.id === reply.campaign_lead_id && r.state !== "STOPPED"));
    const ingestions = loaded.flatMap(({ campaign, records, webhooks }) => {
      if (campaign.accountId !== reply.account_id) return [];
      const planned: PlannedEvent[] = records.filter(isTarget).map((record) => ({
        eventId: `salvo-unsubscribe-reply:${reply.id}:${record.id}`,
        record,
        incoming: { type: "UNSUBSCRIBE", occurredAt: reply.occurred_at, sequenceNumber: 1, emailAccountId: record.emailAccountId, fromEmail: null, isOoo: false, categoryId: null },
        toEmail: null,
        subject: null,
        body: null,
        messageId: null,
        linkUrl: null,
        unsubscribeSource: "reply",
      }));
      // No reply to ignore and no category to change: an UNSUBSCRIBE's planning reads neither.
      return planned.length > 0 ? [{ campaign, ...planIngestion({ ignoreOooReplies: false, categories: new Map(), webhooks }, campaign, planned) }] : [];
    });
    if (ingestions.length > 0) {
      out.ingestions.push({ start: out.statements.length, deliveries: ingestions.flatMap((ingestion) => ingestion.deliveries) });
      out.statements.push(...unsubscribeStatements(ingestions, now, decided));
    }
    out.statements.push(sql`UPDATE leads SET is_unsubscribed = 1, unsubscribed_at = coalesce(unsubscribed_at, ${now}) WHERE id = ${reply.lead_id} AND ${decided}`);
  }
  return out;
}

/**
 * The outcomes that put their lead in Do Not Contact: replies that set their record's category to
 * it (a later reply, or a person's choice since, has the last word).
 */
export function doNotContactWinners(outcomes: Outcome[]): Outcome[] {
  return winners(outcomes)
    .map((winner) => winner.outcome)
    .filter((o) => o.stored.categoryId === DO_NOT_CONTACT_CATEGORY_ID);
}

/** The delivery ids of the opt-out ingestions, from the results of the batch (offset where their statements began). */
export function optOutDeliveryIds(results: Record<string, unknown>[][], optOut: OptOut, offset: number): number[] {
  return optOut.ingestions.flatMap(({ start, deliveries }) => unsubscribedDeliveryIds(results.slice(offset + start), deliveries));
}
