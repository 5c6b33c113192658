import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { campaignLeads, campaigns, leads } from "./campaigns";
import { emailAccounts } from "./mailboxes";
import { createdAt, instant, updatedAt } from "./columns";

export const TASK_PRIORITIES = ["LOW", "MEDIUM", "HIGH"] as const;

export const tasks = sqliteTable(
  "tasks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignLeadId: integer("campaign_lead_id")
      .notNull()
      .references(() => campaignLeads.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    priority: text("priority", { enum: TASK_PRIORITIES }).notNull().default("MEDIUM"),
    dueDate: instant("due_date"),
    createdAt: createdAt(),
  },
  (t) => [index("tasks_record_idx").on(t.campaignLeadId)],
);

/** Notes on a conversation (CONTRACT section 15); read back per lead across its campaigns. */
export const notes = sqliteTable(
  "notes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignLeadId: integer("campaign_lead_id")
      .notNull()
      .references(() => campaignLeads.id, { onDelete: "cascade" }),
    leadId: integer("lead_id")
      .notNull()
      .references(() => leads.id, { onDelete: "cascade" }),
    message: text("message").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("notes_record_idx").on(t.campaignLeadId), index("notes_lead_idx").on(t.leadId)],
);

/** One reminder per conversation: setting another replaces it. Nothing is notified. */
export const reminders = sqliteTable(
  "reminders",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignLeadId: integer("campaign_lead_id")
      .notNull()
      .references(() => campaignLeads.id, { onDelete: "cascade" }),
    remindAt: instant("remind_at").notNull(),
    message: text("message").notNull(),
    emailStatsId: integer("email_stats_id"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("reminders_record_idx").on(t.campaignLeadId), index("reminders_time_idx").on(t.remindAt)],
);

export const OUTBOUND_REPLY_STATUSES = ["SCHEDULED", "QUEUED", "COMPLETED", "FAILED"] as const;
export type OutboundReplyStatus = (typeof OUTBOUND_REPLY_STATUSES)[number];

export interface OutboundAttachment {
  file_url: string;
  file_name?: string;
  file_type?: string;
  file_size?: number;
}

/**
 * A reply written in the inbox (CONTRACT section 12, reply-email-thread), kept whole until its
 * mailbox's object sends it: at once, or at `scheduled_at`. Once sent, `sent_event_id` is the SENT
 * message of the thread. `status` is what `GET /master-inbox/reply-status` answers.
 */
export const outboundReplies = sqliteTable(
  "outbound_replies",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    campaignLeadId: integer("campaign_lead_id")
      .notNull()
      .references(() => campaignLeads.id, { onDelete: "cascade" }),
    emailAccountId: integer("email_account_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    /** The stats id the reply answers (the thread message named by the caller). */
    answersStatsId: integer("answers_stats_id").notNull(),
    messageId: text("message_id").notNull(),
    toEmail: text("to_email").notNull(),
    toName: text("to_name"),
    cc: text("cc", { mode: "json" }).$type<string[]>().notNull(),
    bcc: text("bcc", { mode: "json" }).$type<string[]>().notNull(),
    subject: text("subject").notNull(),
    html: text("html").notNull(),
    inReplyTo: text("in_reply_to"),
    references: text("references"),
    attachments: text("attachments", { mode: "json" }).$type<OutboundAttachment[]>().notNull(),
    /** `schedule_condition` and `seq_type` as sent: stored, not acted on. */
    extra: text("extra", { mode: "json" }).$type<Record<string, unknown>>(),
    status: text("status", { enum: OUTBOUND_REPLY_STATUSES }).notNull(),
    statusMessage: text("status_message"),
    scheduledAt: instant("scheduled_at"),
    /** When it first came due: one its server refused for now is tried again until a day after (migration 0086). */
    firstDueAt: instant("first_due_at"),
    sentEventId: integer("sent_event_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("outbound_replies_message_id_idx").on(t.accountId, t.messageId),
    index("outbound_replies_due_idx").on(t.scheduledAt, t.emailAccountId).where(sql`status = 'SCHEDULED'`),
    index("outbound_replies_record_idx").on(t.campaignLeadId, t.status),
  ],
);

/**
 * The inbox counters (migration 0050, src/inbox/counts.ts): how many records of an account, of a
 * client's campaigns and of a campaign have each combination of the facts the listings test
 * (`flags`), per category and team member (0 for none). Triggers on campaign_leads and campaigns
 * keep them exact; nothing else writes them. The search's FTS5 tables (lead_search,
 * reply_search, migration 0051) are virtual tables drizzle cannot describe; triggers keep them too.
 */
const counterColumns = {
  flags: integer("flags").notNull(),
  categoryId: integer("category_id").notNull(),
  teamMemberId: integer("team_member_id").notNull(),
  n: integer("n").notNull(),
};

export const inboxCounts = sqliteTable(
  "inbox_counts",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    ...counterColumns,
  },
  (t) => [primaryKey({ columns: [t.accountId, t.flags, t.categoryId, t.teamMemberId] })],
);

export const inboxClientCounts = sqliteTable(
  "inbox_client_counts",
  {
    clientId: integer("client_id")
      .notNull()
      .references(() => clients.id, { onDelete: "cascade" }),
    ...counterColumns,
  },
  (t) => [primaryKey({ columns: [t.clientId, t.flags, t.categoryId, t.teamMemberId] })],
);

export const inboxCampaignCounts = sqliteTable(
  "inbox_campaign_counts",
  {
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    ...counterColumns,
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.flags, t.categoryId, t.teamMemberId] })],
);

/** A saved view of the master inbox (CONTRACT 21.3): section 15's view filters as the caller gave them (JSON). */
export const inboxSavedViews = sqliteTable(
  "inbox_saved_views",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    filters: text("filters", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    limitedAccess: integer("limited_access", { mode: "boolean" }).notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("inbox_saved_views_scope_idx").on(t.accountId, t.clientId, t.id)],
);
