import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { campaigns, events } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";

/** Where a reply's categorisation came from (CONTRACT section 20.5); `off`: automatic categorisation was off (shown as none). */
const CATEGORISATION_SOURCES = ["rule", "model", "human", "event", "off"] as const;
export type CategorisationSource = (typeof CATEGORISATION_SOURCES)[number];

/** A campaign's prompt for the model and the categories it may choose from (CONTRACT section 20.2). */
export const promptTemplates = sqliteTable(
  "prompt_templates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    promptContent: text("prompt_content").notNull(),
    categories: text("categories", { mode: "json" }).$type<number[]>().notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    /** +1 whenever the prompt or the categories change: provenance names `<id>.<version>`. */
    version: integer("version").notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("prompt_templates_campaign_idx").on(t.campaignId, t.id), index("prompt_templates_account_idx").on(t.accountId)],
);

/**
 * How one REPLY was categorised, and by what (CONTRACT section 20.5). One row per reply; a person's
 * choice replaces an automatic one, never the other way round. `category_name` keeps the name at the
 * time, so a category deleted later still reads. `nonce` names the batch that wrote the row, which
 * guards the rest of that batch (a redelivered queue message changes nothing).
 */
export const replyCategorisations = sqliteTable(
  "reply_categorisations",
  {
    eventId: integer("event_id")
      .primaryKey()
      .references(() => events.id, { onDelete: "cascade" }),
    accountId: integer("account_id").notNull(),
    campaignId: integer("campaign_id").notNull(),
    campaignLeadId: integer("campaign_lead_id").notNull(),
    categoryId: integer("category_id"),
    categoryName: text("category_name"),
    source: text("source", { enum: CATEGORISATION_SOURCES }).notNull(),
    ruleId: text("rule_id"),
    model: text("model"),
    promptTemplateId: integer("prompt_template_id"),
    promptVersion: text("prompt_version"),
    confidence: real("confidence"),
    needsReview: integer("needs_review", { mode: "boolean" }).notNull().default(false),
    reason: text("reason"),
    categorisedAt: integer("categorised_at").notNull(),
    nonce: text("nonce"),
  },
  (t) => [index("reply_categorisations_record_idx").on(t.campaignLeadId)],
);

const REPLAY_STATUSES = ["queued", "running", "completed", "failed"] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];

/** A replay of a campaign's past replies (CONTRACT section 20.7), advanced in chunks by the triage queue and the minute cron. */
export const triageReplays = sqliteTable(
  "triage_replays",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    dryRun: integer("dry_run", { mode: "boolean" }).notNull(),
    status: text("status", { enum: REPLAY_STATUSES }).notNull().default("queued"),
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** The lowest reply id processed so far (replies are taken newest first); null before the first chunk. */
    cursor: integer("cursor"),
    total: integer("total").notNull().default(0),
    processed: integer("processed").notNull().default(0),
    changed: integer("changed").notNull().default(0),
    unchanged: integer("unchanged").notNull().default(0),
    keptHuman: integer("kept_human").notNull().default(0),
    needsReview: integer("needs_review").notNull().default(0),
    leaseToken: text("lease_token"),
    leaseUntil: integer("lease_until"),
    appliedAt: instant("applied_at"),
    error: text("error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("triage_replays_live_idx").on(t.campaignId).where(sql`status IN ('queued', 'running')`),
    index("triage_replays_status_idx").on(t.status, t.leaseUntil).where(sql`status IN ('queued', 'running')`),
  ],
);

/** A reply whose category a replay changes (the diff), with what applying it writes. */
export const triageReplayRows = sqliteTable(
  "triage_replay_rows",
  {
    replayId: integer("replay_id")
      .notNull()
      .references(() => triageReplays.id, { onDelete: "cascade" }),
    eventId: integer("event_id").notNull(),
    campaignLeadId: integer("campaign_lead_id").notNull(),
    leadEmail: text("lead_email").notNull(),
    replyTime: integer("reply_time").notNull(),
    oldCategoryId: integer("old_category_id"),
    oldSource: text("old_source"),
    /** The reply's categorisation time when the diff was made: apply skips a reply categorised since. */
    oldCategorisedAt: integer("old_categorised_at"),
    newCategoryId: integer("new_category_id"),
    newSource: text("new_source").notNull(),
    newConfidence: real("new_confidence"),
    newNeedsReview: integer("new_needs_review", { mode: "boolean" }).notNull(),
    /** The new categorisation whole (JSON), as applying it stores it. */
    provenance: text("provenance").notNull(),
    applied: integer("applied", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.replayId, t.eventId] })],
);

/** The test route's calls per account and UTC day (CATEGORISER_TEST_PER_DAY). */
export const triageTestUsage = sqliteTable(
  "triage_test_usage",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day] })],
);
