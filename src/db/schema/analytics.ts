import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { EVENT_TYPES } from "./campaigns";

/**
 * Per campaign, event type, UTC hour and sequence step: how many events, how many a human made (is_machine = 0)
 * and how many count (ignored = 0). Kept exact by the triggers of migration 0020 on every insert,
 * update and delete of `events` (whatever path writes them, in the same statement), so a window's
 * totals are a sum over its hours instead of a scan of its events. No foreign keys: the triggers
 * follow the events (a cascade that deletes events updates these rows too).
 */
export const eventHourCounts = sqliteTable(
  "event_hour_counts",
  {
    campaignId: integer("campaign_id").notNull(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    hour: integer("hour").notNull(),
    sequenceNumber: integer("sequence_number").notNull(),
    total: integer("total").notNull().default(0),
    human: integer("human").notNull().default(0),
    counted: integer("counted").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.type, t.hour, t.sequenceNumber] })],
);

/** The kinds of event whose distinct leads analytics count (SENT1: a sequence-1 send). */
export const SPAN_KINDS = ["SENT", "SENT1", "OPEN", "OPEN_HUMAN", "CLICK", "CLICK_HUMAN", "REPLY"] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];

/**
 * What each span kind holds: events of `type`, only sequence-1 ones when `seq1`, only those a
 * human made when `human` (seeded by migration 0020; the triggers and the queries read it).
 */
export const eventSpanKinds = sqliteTable("event_span_kinds", {
  kind: text("kind", { enum: SPAN_KINDS }).primaryKey(),
  type: text("type", { enum: EVENT_TYPES }).notNull(),
  seq1: integer("seq1", { mode: "boolean" }).notNull(),
  human: integer("human", { mode: "boolean" }).notNull(),
});

/**
 * Per campaign record and kind: the first and last time it had such an event (triggers of
 * migration 0020). A record whose first event falls in a window is in that window's distinct
 * count without reading its events; only records active on both sides of the window's start are
 * checked against their events. `lead_id` is the record's lead while the record exists (migration
 * 0090's triggers on events and campaign_leads), so a group of campaigns counts its distinct leads
 * from the spans alone; a record deleted since leaves NULL there and counts as a lead of its own.
 */
export const eventSpans = sqliteTable(
  "event_spans",
  {
    campaignLeadId: integer("campaign_lead_id").notNull(),
    kind: text("kind", { enum: SPAN_KINDS }).notNull(),
    campaignId: integer("campaign_id").notNull(),
    firstAt: integer("first_at").notNull(),
    lastAt: integer("last_at").notNull(),
    leadId: integer("lead_id"),
  },
  (t) => [
    primaryKey({ columns: [t.campaignLeadId, t.kind] }),
    // Covers the distinct counts: the records active since a window's start are one range of it.
    index("event_spans_last_idx").on(t.campaignId, t.kind, t.lastAt, t.firstAt, t.campaignLeadId),
    // Covers the distinct leads of several campaigns: each campaign's spans of a kind in lead order.
    index("event_spans_lead_idx").on(t.campaignId, t.kind, t.leadId, t.lastAt, t.firstAt, t.campaignLeadId),
  ],
);

/** Event types credited to a send (besides the send itself). */
export const OUTCOME_TYPES = ["OPEN", "CLICK", "REPLY", "BOUNCE", "UNSUBSCRIBE"] as const;

/**
 * Per campaign, event type, UTC hour of the event and the mailbox of the send it is credited to:
 * how many events, how many count (ignored = 0). Migration 0027's triggers keep it exact, also when
 * a late send takes over outcomes or a send is deleted, so per-mailbox figures are sums over hours.
 */
export const creditMailboxHours = sqliteTable(
  "credit_mailbox_hours",
  {
    campaignId: integer("campaign_id").notNull(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    hour: integer("hour").notNull(),
    mailboxId: integer("mailbox_id").notNull(),
    total: integer("total").notNull().default(0),
    counted: integer("counted").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.type, t.hour, t.mailboxId] })],
);

/**
 * Per campaign, event type and UTC quarter-hour of the send an event is credited to: every zone's
 * offset is whole quarter-hours, so the by-sent-time days are sums over these (migration 0027).
 */
export const creditSendQuarters = sqliteTable(
  "credit_send_quarters",
  {
    campaignId: integer("campaign_id").notNull(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    quarter: integer("quarter").notNull(),
    total: integer("total").notNull().default(0),
    counted: integer("counted").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.type, t.quarter] })],
);

/**
 * Per record, sending mailbox and type (SENT, OPEN, CLICK): the first and last such event credited
 * to that mailbox, for per-mailbox distinct counts the way event_spans serves per-campaign ones.
 */
export const creditSpans = sqliteTable(
  "credit_spans",
  {
    campaignLeadId: integer("campaign_lead_id").notNull(),
    mailboxId: integer("mailbox_id").notNull(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    campaignId: integer("campaign_id").notNull(),
    firstAt: integer("first_at").notNull(),
    lastAt: integer("last_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.campaignLeadId, t.mailboxId, t.type] }),
    // Per mailbox, the records active since a window's start are one range: the count for the
    // mailboxes a window has comes out grouped, without sorting the spans.
    index("credit_spans_mailbox_idx").on(t.campaignId, t.type, t.mailboxId, t.lastAt, t.firstAt, t.campaignLeadId),
  ],
);
