import { sql } from "drizzle-orm";
import {
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
  type AnySQLiteColumn,
} from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { createdAt, instant, scopeKey, updatedAt } from "./columns";

export const CAMPAIGN_STATUSES = ["DRAFTED", "ACTIVE", "PAUSED", "STOPPED", "COMPLETED", "ARCHIVED"] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** A lead's email verification status (CONTRACT 22). */
export const VERIFICATION_STATUSES = ["valid", "invalid", "risky", "unknown"] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];
/** A recipient's or a mailbox's email provider (CONTRACT 23.3; src/esp/rules.ts decides it). */
export const EMAIL_PROVIDERS = ["google", "microsoft", "other"] as const;

export const RECORD_STATES = ["DRAFTED", "STARTED", "INPROGRESS", "COMPLETED", "PAUSED", "STOPPED", "BLOCKED"] as const;
export type RecordState = (typeof RECORD_STATES)[number];

export const EVENT_TYPES = ["SENT", "OPEN", "CLICK", "REPLY", "BOUNCE", "BLOCK", "UNSUBSCRIBE"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The built-in category that marks out-of-office replies (analytics rules 2-6). */
export const OUT_OF_OFFICE_CATEGORY_ID = 6;

export const campaigns = sqliteTable(
  "campaigns",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    status: text("status", { enum: CAMPAIGN_STATUSES }).notNull().default("DRAFTED"),
    /** The sending window (src/engine/window.ts `Schedule`); null until one is set. */
    schedule: text("schedule", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Sending settings (src/campaigns/settings.ts); null = every default. */
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Set on a subsequence: the campaign its leads are pushed from. A deleted parent leaves it standalone. */
    parentCampaignId: integer("parent_campaign_id").references((): AnySQLiteColumn => campaigns.id, { onDelete: "set null" }),
    /** The team member the campaign is assigned to (section 11); keys carry no user, so it is a bare number. */
    teamMemberId: integer("team_member_id"),
    /** The folder it is filed in (CONTRACT 21.1); a deleted folder leaves it unfiled. */
    folderId: integer("folder_id").references((): AnySQLiteColumn => campaignFolders.id, { onDelete: "set null" }),
    /** Records ever added: the next record's `spintax_modulo_index` (trigger of migration 0071). */
    spintaxRecords: integer("spintax_records").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("campaigns_account_client_idx").on(t.accountId, t.clientId),
    index("campaigns_folder_idx").on(t.folderId).where(sql`folder_id IS NOT NULL`),
    index("campaigns_parent_idx").on(t.parentCampaignId).where(sql`parent_campaign_id IS NOT NULL`),
  ],
);

/** A campaign folder (CONTRACT 21.1, extension) belongs to the account and, optionally, one client. */
export const campaignFolders = sqliteTable(
  "campaign_folders",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("campaign_folders_account_client_idx").on(t.accountId, t.clientId)],
);

/** A tag belongs to the account and, optionally, one client; names are unique within that scope. */
export const tags = sqliteTable(
  "tags",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id),
    name: text("name").notNull(),
    color: text("color").notNull().default("#9E9E9E"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("tags_account_scope_name_idx").on(t.accountId, scopeKey(t.clientId), t.name)],
);

export const campaignTags = sqliteTable(
  "campaign_tags",
  {
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.tagId] }), index("campaign_tags_tag_idx").on(t.tagId)],
);

/** Built-in categories (ids 1-7) have no account; an account's own start at 1001 (CONTRACT section 20.1). */
export const leadCategories = sqliteTable(
  "lead_categories",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id").references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** A custom category's "positive" or "negative"; null = neutral (built-ins take theirs from the contract). */
    sentimentType: text("sentiment_type", { enum: ["positive", "negative"] }),
    colourCode: text("colour_code"),
    /** The name case-folded in code (foldText): unique per account and compared with the built-in names. */
    nameFolded: text("name_folded"),
    createdAt: createdAt(),
    updatedAt: instant("updated_at"),
  },
  (t) => [uniqueIndex("lead_categories_account_name_idx").on(t.accountId, t.nameFolded).where(sql`account_id IS NOT NULL`)],
);

/**
 * One person per account and client scope, identified by lower-cased email: the leads of two
 * clients never share a row (nor its fields), while an account without clients keeps one lead
 * per person. A lead's scope is the client of the campaigns it is uploaded into.
 */
export const leads = sqliteTable(
  "leads",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id),
    email: text("email").notNull(),
    firstName: text("first_name"),
    lastName: text("last_name"),
    companyName: text("company_name"),
    phoneNumber: text("phone_number"),
    website: text("website"),
    location: text("location"),
    linkedinProfile: text("linkedin_profile"),
    companyUrl: text("company_url"),
    customFields: text("custom_fields", { mode: "json" }).$type<Record<string, unknown>>(),
    /** The lead's IANA zone (CONTRACT 23.1); null = none given or not a known name. */
    timezone: text("timezone"),
    /** Email, first and last name, case-folded in code (see foldText), for inbox search. */
    searchFolded: text("search_folded"),
    /** Unsubscribed from everything: later uploads skip the lead unless told to ignore the list. */
    isUnsubscribed: integer("is_unsubscribed", { mode: "boolean" }).notNull().default(false),
    unsubscribedAt: instant("unsubscribed_at"),
    /** The latest email verification (CONTRACT 22): status (null = never checked), reason code, when. */
    verificationStatus: text("verification_status", { enum: VERIFICATION_STATUSES }),
    verificationReason: text("verification_reason"),
    verifiedAt: instant("verified_at"),
    /** The recipient's provider from its domain's MX (CONTRACT 23.3, migration 0079); null = not known (yet). */
    emailProvider: text("email_provider", { enum: EMAIL_PROVIDERS }),
    /** When the provider was last looked up (0 = never): a lead with none is looked up again after a day. */
    espCheckedAt: integer("esp_checked_at").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("leads_account_scope_email_idx").on(t.accountId, scopeKey(t.clientId), t.email),
    index("leads_verification_idx").on(t.accountId, t.verificationStatus),
    index("leads_esp_pending_idx").on(t.espCheckedAt).where(sql`email_provider IS NULL`),
  ],
);

function inboxFilterColumns(t: {
  snoozedUntil: AnySQLiteColumn;
  campaignId: AnySQLiteColumn;
  leadId: AnySQLiteColumn;
  categoryId: AnySQLiteColumn;
  emailAccountId: AnySQLiteColumn;
  teamMemberId: AnySQLiteColumn;
  hasSent: AnySQLiteColumn;
  hasOpened: AnySQLiteColumn;
  hasClicked: AnySQLiteColumn;
  hasBounced: AnySQLiteColumn;
  hasUnsubscribed: AnySQLiteColumn;
}) {
  return [
    t.snoozedUntil,
    t.campaignId,
    t.leadId,
    t.categoryId,
    t.emailAccountId,
    t.teamMemberId,
    t.hasSent,
    t.hasOpened,
    t.hasClicked,
    t.hasBounced,
    t.hasUnsubscribed,
  ] as const;
}

/**
 * A lead in one campaign: the campaign record (`email_lead_map_id` = `campaign_lead_map_id`).
 * It is also the inbox conversation once it has a reply, so it carries the inbox state and the
 * denormalised facts the inbox filters and sorts on (kept current by event ingestion).
 */
export const campaignLeads = sqliteTable(
  "campaign_leads",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    leadId: integer("lead_id")
      .notNull()
      .references(() => leads.id, { onDelete: "cascade" }),
    state: text("state", { enum: RECORD_STATES }).notNull().default("DRAFTED"),
    categoryId: integer("category_id").references(() => leadCategories.id, { onDelete: "set null" }),
    /** When the category was set (a categorised reply's time, or an inbox action's): the latest wins. */
    categorySetAt: instant("category_set_at"),
    teamMemberId: integer("team_member_id"),
    emailAccountId: integer("email_account_id"),
    isRead: integer("is_read", { mode: "boolean" }).notNull().default(false),
    isImportant: integer("is_important", { mode: "boolean" }).notNull().default(false),
    isArchived: integer("is_archived", { mode: "boolean" }).notNull().default(false),
    snoozedUntil: instant("snoozed_until"),
    lastSentAt: instant("last_sent_at"),
    lastReplyAt: instant("last_reply_at"),
    hasSent: integer("has_sent", { mode: "boolean" }).notNull().default(false),
    hasOpened: integer("has_opened", { mode: "boolean" }).notNull().default(false),
    hasClicked: integer("has_clicked", { mode: "boolean" }).notNull().default(false),
    hasReplied: integer("has_replied", { mode: "boolean" }).notNull().default(false),
    hasBounced: integer("has_bounced", { mode: "boolean" }).notNull().default(false),
    hasUnsubscribed: integer("has_unsubscribed", { mode: "boolean" }).notNull().default(false),
    /** The sequence step the engine sends next (null: nothing more to send). */
    nextStep: integer("next_step").default(1),
    /** When that step is due (null: nothing due); a claimed record holds its lease's end here. */
    dueAt: instant("due_at"),
    /** The engine pass that holds the record while it sends (src/engine/store.ts). */
    claimToken: text("claim_token"),
    /** The claim took the record from rotation (it was unpinned): a pass that dies gives it back (migration 0092). */
    claimFromRotation: integer("claim_from_rotation", { mode: "boolean" }).notNull().default(false),
    /** Why the engine made the record BLOCKED without sending (`invalid_email`); null otherwise. */
    blockedReason: text("blocked_reason"),
    /** A record PAUSED by an out-of-office answer goes on from then (the minute cron resumes it). */
    resumeAt: instant("resume_at"),
    /** The reminder's time (reminders.remind_at), copied by triggers (migration 0050) for the reminders view. */
    reminderAt: instant("reminder_at"),
    /** The first SCHEDULED reply's time (outbound_replies), copied by triggers for the scheduled view. */
    scheduledReplyAt: instant("scheduled_reply_at"),
    /** Revenue set from the inbox, in cents (answers show two decimals). */
    revenueCents: integer("revenue_cents").notNull().default(0),
    /** The subsequence campaign this record was pushed to (it then stops here, COMPLETED). */
    subSequenceId: integer("sub_sequence_id"),
    /** In a subsequence: the parent campaign's record this one was pushed from. */
    parentRecordId: integer("parent_record_id"),
    /** A reply on the parent record's thread STOPs this (subsequence) record. */
    stopOnParentReply: integer("stop_on_parent_reply", { mode: "boolean" }).notNull().default(false),
    /** A record paused by hand: the state it resumes to, and when it was paused (the resume's delay counts from it). */
    pausedFrom: text("paused_from", { enum: RECORD_STATES }),
    pausedAt: instant("paused_at"),
    /** This record's k among its campaign's records, 0-based (migration 0071): incremental spintax takes option k mod n. */
    spintaxModuloIndex: integer("spintax_modulo_index"),
    /** The lead's provider, copied by triggers (migration 0079) so ESP matching reads a range of its own index. */
    espProvider: text("esp_provider", { enum: EMAIL_PROVIDERS }),
    /**
     * When the record last turned STOPPED (13.3 and 13.6 count stops by it): an event's stop is dated by
     * the event, any other by a trigger (migration 0091); it stays when the record leaves STOPPED.
     */
    stoppedAt: instant("stopped_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // Finding due work: a campaign's records pinned to one mailbox, or not pinned yet (NULL), by
    // due time, so a pass reads a range and never scans.
    index("campaign_leads_due_idx").on(t.campaignId, t.emailAccountId, t.dueAt).where(sql`due_at IS NOT NULL`),
    // ESP matching (CONTRACT 23.3): a campaign's unpinned due records of one recipient provider, by due time.
    index("campaign_leads_esp_due_idx").on(t.campaignId, t.espProvider, t.dueAt).where(sql`email_account_id IS NULL AND due_at IS NOT NULL`),
    index("campaign_leads_claim_idx").on(t.claimToken).where(sql`claim_token IS NOT NULL`),
    // A mailbox's claims still held, which its next pass releases when their pass died.
    index("campaign_leads_claimed_idx").on(t.emailAccountId).where(sql`claim_token IS NOT NULL`),
    index("campaign_leads_resume_idx").on(t.resumeAt).where(sql`resume_at IS NOT NULL`),
    uniqueIndex("campaign_leads_campaign_lead_idx").on(t.campaignId, t.leadId),
    index("campaign_leads_campaign_state_idx").on(t.campaignId, t.state),
    // Analytics: a campaign's records that stopped in a window.
    index("campaign_leads_stopped_idx").on(t.campaignId, t.stoppedAt).where(sql`stopped_at IS NOT NULL`),
    index("campaign_leads_blocked_idx").on(t.campaignId, t.blockedReason).where(sql`state = 'BLOCKED'`),
    index("campaign_leads_lead_idx").on(t.leadId),
    // Analytics: a campaign's records in one category (its out-of-office or positive replies).
    index("campaign_leads_campaign_category_idx").on(t.campaignId, t.categoryId),
    // Inbox listings walk one account's conversations (records with a reply) in either sort
    // order. These partial indexes hold exactly those rows and every column the filters test,
    // so a page and its total_count are answered from the index alone.
    index("campaign_leads_inbox_reply_idx")
      .on(t.accountId, t.isArchived, t.lastReplyAt, t.id, ...inboxFilterColumns(t))
      .where(sql`has_replied = 1`),
    index("campaign_leads_inbox_sent_idx")
      .on(t.accountId, t.isArchived, t.lastSentAt, t.id, t.lastReplyAt, ...inboxFilterColumns(t))
      .where(sql`has_replied = 1`),
    // The sent view: every record one of the account's emails went to, newest send first.
    index("campaign_leads_sent_view_idx").on(t.accountId, t.lastSentAt, t.id).where(sql`has_sent = 1`),
    index("campaign_leads_parent_idx").on(t.parentRecordId).where(sql`parent_record_id IS NOT NULL`),
    index("campaign_leads_snoozed_idx").on(t.snoozedUntil).where(sql`snoozed_until IS NOT NULL`),
    // The inbox listings' other ranges (migration 0052; src/inbox/listing-plan.ts names them): a
    // view's few records in its own order, and the ordered ranges a page merges per campaign,
    // category or mailbox (covering, so a count over them reads the index alone).
    index("campaign_leads_inbox_snoozed_idx")
      .on(t.accountId, t.lastReplyAt, t.id)
      .where(sql`has_replied = 1 AND is_archived = 0 AND snoozed_until IS NOT NULL`),
    index("campaign_leads_inbox_snoozed_sent_idx")
      .on(t.accountId, t.lastSentAt, t.id)
      .where(sql`has_replied = 1 AND is_archived = 0 AND snoozed_until IS NOT NULL`),
    index("campaign_leads_important_idx").on(t.accountId, t.lastReplyAt, t.id).where(sql`is_important = 1 AND is_archived = 0`),
    index("campaign_leads_important_sent_idx").on(t.accountId, t.lastSentAt, t.id).where(sql`is_important = 1 AND is_archived = 0`),
    index("campaign_leads_scheduled_idx")
      .on(t.accountId, t.scheduledReplyAt, t.id, t.lastReplyAt, t.lastSentAt)
      .where(sql`scheduled_reply_at IS NOT NULL`),
    index("campaign_leads_reminder_idx").on(t.accountId, t.reminderAt, t.id, t.lastReplyAt, t.lastSentAt).where(sql`reminder_at IS NOT NULL`),
    index("campaign_leads_sent_replied_idx")
      .on(t.accountId, t.lastReplyAt, t.lastSentAt, t.id)
      .where(sql`has_sent = 1 AND last_reply_at IS NOT NULL`),
    index("campaign_leads_sent_campaign_idx").on(t.campaignId, t.lastSentAt, t.id).where(sql`has_sent = 1`),
    index("campaign_leads_inbox_campaign_idx")
      .on(t.campaignId, t.isArchived, t.lastReplyAt, t.id, t.accountId, t.snoozedUntil, t.isRead, t.leadId, t.categoryId, t.emailAccountId,
        t.teamMemberId, t.hasSent, t.hasOpened, t.hasClicked, t.hasBounced, t.hasUnsubscribed, t.lastSentAt)
      .where(sql`has_replied = 1`),
    index("campaign_leads_inbox_category_idx")
      .on(t.accountId, t.categoryId, t.isArchived, t.lastReplyAt, t.id, t.snoozedUntil, t.isRead, t.campaignId, t.leadId, t.emailAccountId,
        t.teamMemberId, t.hasSent, t.hasOpened, t.hasClicked, t.hasBounced, t.hasUnsubscribed, t.lastSentAt)
      .where(sql`has_replied = 1`),
    index("campaign_leads_inbox_mailbox_idx")
      .on(t.emailAccountId, t.isArchived, t.lastReplyAt, t.id, t.accountId, t.snoozedUntil, t.isRead, t.campaignId, t.leadId, t.categoryId,
        t.teamMemberId, t.hasSent, t.hasOpened, t.hasClicked, t.hasBounced, t.hasUnsubscribed, t.lastSentAt)
      .where(sql`has_replied = 1`),
  ],
);

/**
 * What the sending engine reported. SENT and REPLY rows are also the messages of the inbox
 * thread (`stats_id` = id). `ignored` is set on replies by the rules of analytics rule 3.
 */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    /** Not a foreign key: a record deleted from its campaign leaves its events to the windowed counts. */
    campaignLeadId: integer("campaign_lead_id").notNull(),
    eventId: text("event_id"),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    occurredAt: instant("occurred_at").notNull(),
    sequenceNumber: integer("sequence_number").notNull().default(1),
    emailAccountId: integer("email_account_id"),
    fromEmail: text("from_email"),
    toEmail: text("to_email"),
    subject: text("subject"),
    body: text("body"),
    /** A reply's body case-folded in code (see foldText), for inbox search. */
    bodyFolded: text("body_folded"),
    messageId: text("message_id"),
    linkUrl: text("link_url"),
    /** A reply's Cc addresses, lower-cased. */
    ccEmails: text("cc_emails", { mode: "json" }).$type<string[]>(),
    isOoo: integer("is_ooo", { mode: "boolean" }).notNull().default(false),
    categoryId: integer("category_id"),
    ignored: integer("ignored", { mode: "boolean" }).notNull().default(false),
    ignoredByHand: integer("ignored_by_hand", { mode: "boolean" }).notNull().default(false),
    /** An out-of-office reply's stated return date, when one was read from it. */
    resumeAt: instant("resume_at"),
    /** An open or click a machine made (proxy prefetch, link scanner, HEAD): src/tracking/machine.ts. */
    isMachine: integer("is_machine", { mode: "boolean" }).notNull().default(false),
    /**
     * The send this event is credited to (a SENT to itself; an open, click, reply, bounce or
     * unsubscribe to the record's latest send at or before it), with that send's time and mailbox.
     * Kept by the triggers of migration 0027 whatever path writes events, late sends included.
     */
    sendId: integer("send_id"),
    sendAt: integer("send_at"),
    sendMailboxId: integer("send_mailbox_id"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("events_campaign_event_id_idx").on(t.campaignId, t.eventId),
    // Covers analytics: each event type's window of a campaign is one contiguous range of this
    // index, counted without touching the table.
    index("events_campaign_type_time_idx").on(
      t.campaignId,
      t.type,
      t.occurredAt,
      t.sequenceNumber,
      t.campaignLeadId,
      t.ignored,
      t.isMachine,
    ),
    index("events_record_time_idx").on(t.campaignLeadId, t.occurredAt),
    // A record's sends: the send an outcome is credited to, by one seek however many hits the record had (migration 0084).
    index("events_record_sent_idx").on(t.campaignLeadId, t.occurredAt).where(sql`type = 'SENT'`),
    // A mailbox's sends of a day within its own account (src/mailboxes/sends.ts) as one range.
    index("events_mailbox_type_time_idx").on(t.emailAccountId, t.type, t.accountId, t.occurredAt),
    // A send's outcomes (statistics rows) by seek, and the sends with an outcome of a type
    // (statistics' outcome filter) counted as one range, without a search per record.
    index("events_campaign_send_idx").on(t.campaignId, t.type, t.sendId, t.sendAt).where(sql`send_id IS NOT NULL`),
    // Replies not categorised yet, by creation time (sweepUntriaged, src/triage/queue.ts).
    index("events_reply_created_idx").on(t.createdAt).where(sql`type = 'REPLY'`),
    // A record's replies, for the inbox search tested record by record (src/inbox/query.ts).
    index("events_record_reply_idx").on(t.campaignLeadId).where(sql`type = 'REPLY'`),
  ],
);

/**
 * One row per ingestion batch while it runs: the highest event id before the batch, so later
 * statements of the same D1 batch can tell the events this batch inserted (ids above it) from
 * duplicates it skipped. Each batch deletes its own row before it commits.
 */
export const ingestMarks = sqliteTable("ingest_marks", {
  nonce: text("nonce").primaryKey(),
  eventsBefore: integer("events_before").notNull(),
});
