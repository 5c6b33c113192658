import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { campaigns } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";

const SPAM_TEST_TYPES = ["manual", "automated"] as const;
const SPAM_TEST_STATUSES = ["active", "completed", "stopped"] as const;
export const PLACEMENT_FOLDERS = ["inbox", "tab", "spam", "not_received"] as const;
export const TIME_UNITS = ["minutes", "hours", "days"] as const;

/** One rule a spam filter matched on a test message. */
export interface SpamSymbol {
  name: string;
  score: number;
  description?: string;
}

/** What following one link of a test message found. */
export interface LinkCheck {
  url: string;
  status: number | null;
  final_url: string | null;
  redirects: number;
  ok: boolean;
  error?: string;
}

/** The mailbox providers tests place seed inboxes with (seeded by a migration). */
export const spamProviders = sqliteTable(
  "spam_providers",
  {
    id: text("id").primaryKey(),
    /**
     * Salvo's stable integer for the provider (compat rule C2): 1-25 in the order of migration 0006, a
     * new provider takes the next number, and numbers are never reused.
     */
    providerNum: integer("provider_num"),
    name: text("name").notNull(),
    groupId: text("group_id").notNull(),
    groupName: text("group_name").notNull(),
    regionId: text("region_id").notNull(),
    regionName: text("region_name").notNull(),
    seedEmail: text("seed_email").notNull(),
  },
  (t) => [uniqueIndex("spam_providers_num_idx").on(t.providerNum)],
);

export const spamTestFolders = sqliteTable(
  "spam_test_folders",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("spam_test_folders_account_idx").on(t.accountId)],
);

export const spamTests = sqliteTable(
  "spam_tests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "set null" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    folderId: integer("folder_id").references(() => spamTestFolders.id, { onDelete: "set null" }),
    testName: text("test_name").notNull(),
    description: text("description"),
    testType: text("test_type", { enum: SPAM_TEST_TYPES }).notNull(),
    spamFilters: integer("spam_filters", { mode: "boolean" }).notNull(),
    spamFilterNames: text("spam_filter_names", { mode: "json" }).$type<string[]>().notNull(),
    linkChecker: integer("link_checker", { mode: "boolean" }).notNull(),
    sequenceMappingId: text("sequence_mapping_id").notNull(),
    providerIds: text("provider_ids", { mode: "json" }).$type<string[]>().notNull(),
    allEmailSentWithoutTimeGap: integer("all_email_sent_without_time_gap", { mode: "boolean" }).notNull(),
    minTimeBtwnEmails: integer("min_time_btwn_emails").notNull(),
    minTimeUnit: text("min_time_unit", { enum: TIME_UNITS }).notNull(),
    isWarmup: integer("is_warmup", { mode: "boolean" }).notNull(),
    status: text("status", { enum: SPAM_TEST_STATUSES }).notNull().default("active"),
    emailTrackId: text("email_track_id").notNull(),
    scheduleStartTime: instant("schedule_start_time"),
    testEndDate: instant("test_end_date"),
    everyDays: integer("every_days"),
    schedulerCronValue: text("scheduler_cron_value"),
    timeZone: text("time_zone"),
    /** The next slot the scheduler will start; null when none is due (manual, stopped, completed). */
    nextRunAt: instant("next_run_at"),
    testRunNo: integer("test_run_no").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("spam_tests_account_idx").on(t.accountId, t.testType, t.id),
    index("spam_tests_due_idx").on(t.nextRunAt).where(sql`status = 'active' AND test_type = 'automated'`),
    uniqueIndex("spam_tests_track_idx").on(t.emailTrackId),
  ],
);

export const spamTestSenders = sqliteTable(
  "spam_test_senders",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    spamTestId: integer("spam_test_id")
      .notNull()
      .references(() => spamTests.id, { onDelete: "cascade" }),
    fromEmail: text("from_email").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("spam_test_senders_test_email_idx").on(t.spamTestId, t.fromEmail)],
);

/** One run of a test; the unique slot makes overlapping cron firings start it once. */
export const spamTestRuns = sqliteTable(
  "spam_test_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    spamTestId: integer("spam_test_id")
      .notNull()
      .references(() => spamTests.id, { onDelete: "cascade" }),
    runNo: integer("run_no").notNull(),
    slotAt: instant("slot_at").notNull(),
    startedAt: instant("started_at").notNull(),
  },
  (t) => [
    uniqueIndex("spam_test_runs_slot_idx").on(t.spamTestId, t.slotAt),
    uniqueIndex("spam_test_runs_no_idx").on(t.spamTestId, t.runNo),
  ],
);

/** Where one sender's email landed at one provider in one run (`pending` until recorded). */
export const spamTestResults = sqliteTable(
  "spam_test_results",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    spamTestId: integer("spam_test_id")
      .notNull()
      .references(() => spamTests.id, { onDelete: "cascade" }),
    runNo: integer("run_no").notNull(),
    providerId: text("provider_id").notNull(),
    senderEmail: text("sender_email").notNull(),
    seedEmail: text("seed_email").notNull(),
    folder: text("folder", { enum: [...PLACEMENT_FOLDERS, "pending"] }).notNull().default("pending"),
    receivedAt: instant("received_at"),
    /** The folder's own name in the seed mailbox (e.g. "[Gmail]/Spam"), as the checker found it. */
    mailboxFolder: text("mailbox_folder"),
    /** The received message's Message-ID, so a report can point at the exact copy. */
    messageId: text("message_id"),
    /** Spam filter verdict (Rspamd's /checkv2 when configured): score, required score, action, symbols. */
    spamScore: real("spam_score"),
    spamRequired: real("spam_required"),
    spamAction: text("spam_action"),
    /** JSON array of {name, score, description?} as the filter reported them. */
    spamSymbols: text("spam_symbols", { mode: "json" }).$type<SpamSymbol[]>(),
    /** Authentication-Results verdicts of the seed's copy (pass, fail, softfail, neutral, none, temperror, permerror). */
    spf: text("spf"),
    dkim: text("dkim"),
    dmarc: text("dmarc"),
    /** The connecting IP and HELO/host of the first hop outside the sender, from Received headers. */
    senderIp: text("sender_ip"),
    senderHost: text("sender_host"),
    /** JSON array of {url, status, final_url, redirects, ok, error?} from the link checker. */
    linkReport: text("link_report", { mode: "json" }).$type<LinkCheck[]>(),
    /** The seed copy's header block as it arrived (at most 64 KB), for the headers and rDNS reports; null when not kept. */
    rawHeaders: text("raw_headers"),
    /** When Salvo sends this cell's email (automated runs); null for manual tests, which the user sends. */
    sendAt: instant("send_at"),
    /** When the sending mailbox took the cell (claimed, then sent or failed). */
    sentAt: instant("sent_at"),
    /** Why Salvo could not send the cell's email (the mail server's words, or a missing mailbox or step). */
    sendError: text("send_error"),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("spam_test_results_cell_idx").on(t.spamTestId, t.runNo, t.providerId, t.senderEmail, t.seedEmail),
    index("spam_test_results_send_idx").on(t.senderEmail, t.sendAt).where(sql`sent_at IS NULL AND send_at IS NOT NULL`),
    index("spam_test_results_pending_idx").on(t.seedEmail, t.spamTestId).where(sql`folder = 'pending'`),
  ],
);

/**
 * The email a run sent (the first of its cells Salvo sent), as handed to the SMTP server (CONTRACT
 * 21.6's email-content report); `raw` is null when it was larger than a row may hold.
 */
export const spamTestMessages = sqliteTable(
  "spam_test_messages",
  {
    spamTestId: integer("spam_test_id")
      .notNull()
      .references(() => spamTests.id, { onDelete: "cascade" }),
    runNo: integer("run_no").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    html: text("html"),
    raw: text("raw"),
    sentAt: instant("sent_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.spamTestId, t.runNo] })],
);

/** A result's findings on the seed's copy (null: not found, or not checked). */
export type ResultFindings = Pick<
  typeof spamTestResults.$inferSelect,
  "mailboxFolder" | "messageId" | "spamScore" | "spamRequired" | "spamAction" | "spamSymbols" | "spf" | "dkim" | "dmarc" | "senderIp" | "senderHost" | "linkReport"
>;

const IMAP_SECURITY = ["tls", "starttls", "plain"] as const;

/** Where one seed mailbox's folder cursor stands (UIDVALIDITY and the last UID read). */
export type SeedCursor = Record<string, { uidValidity: number; lastUid: number }>;

/**
 * A provider's test inbox. With IMAP settings the placement checker reads it; without (the
 * catalogue's defaults) its results come from an external checker through the results route.
 */
export const seedMailboxes = sqliteTable(
  "seed_mailboxes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    providerId: text("provider_id")
      .notNull()
      .references(() => spamProviders.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    imapHost: text("imap_host"),
    imapPort: integer("imap_port"),
    imapSecurity: text("imap_security", { enum: IMAP_SECURITY }),
    imapUsername: text("imap_username"),
    /** Encrypted with the secrets keyring (context `seed-mailbox:<email>`); never returned. */
    imapPassword: text("imap_password"),
    inboxFolders: text("inbox_folders", { mode: "json" }).$type<string[]>().notNull().default(["INBOX"]),
    tabFolders: text("tab_folders", { mode: "json" }).$type<string[]>().notNull().default([]),
    spamFolders: text("spam_folders", { mode: "json" }).$type<string[]>().notNull().default([]),
    cursor: text("cursor", { mode: "json" }).$type<SeedCursor>(),
    checkedAt: instant("checked_at"),
    checkError: text("check_error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("seed_mailboxes_email_idx").on(t.email), index("seed_mailboxes_provider_idx").on(t.providerId, t.id)],
);

export const savedSearches = sqliteTable(
  "saved_searches",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "cascade" }),
    searchString: text("search_string").notNull(),
    filterDetails: text("filter_details", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("saved_searches_account_idx").on(t.accountId, t.clientId, t.id)],
);
