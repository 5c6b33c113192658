import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { leads, tags } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";

/**
 * A named set of the account's leads (CONTRACT section 16), account-wide (client NULL) or one
 * client's. A lead may be in several lists; deleting a list keeps its leads.
 */
export const leadLists = sqliteTable(
  "lead_lists",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id),
    name: text("name").notNull(),
    /** The `customFields` the latest import declared (the hosted import's column mapping), kept as sent. */
    customFields: text("custom_fields", { mode: "json" }).$type<unknown>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("lead_lists_account_client_idx").on(t.accountId, t.clientId, t.id)],
);

export const leadListMembers = sqliteTable(
  "lead_list_members",
  {
    listId: integer("list_id")
      .notNull()
      .references(() => leadLists.id, { onDelete: "cascade" }),
    leadId: integer("lead_id")
      .notNull()
      .references(() => leads.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.listId, t.leadId] }), index("lead_list_members_lead_idx").on(t.leadId)],
);

/** A list's tags, from the account's one tag catalogue. */
export const leadListTags = sqliteTable(
  "lead_list_tags",
  {
    listId: integer("list_id")
      .notNull()
      .references(() => leadLists.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.listId, t.tagId] }), index("lead_list_tags_tag_idx").on(t.tagId)],
);

const IMPORT_STATES = ["queued", "running", "done", "failed"] as const;

/**
 * A CSV import into a list, worked through in chunks in the background (src/lead-lists/csv-import.ts).
 * The CSV stays here until the import ends; `cursor` is the character offset of the next row, saved
 * in the same batch as each chunk's leads and counters, so a rerun never counts a row twice.
 */
export const leadListImports = sqliteTable(
  "lead_list_imports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    listId: integer("list_id")
      .notNull()
      .references(() => leadLists.id, { onDelete: "cascade" }),
    fileName: text("file_name").notNull(),
    state: text("state", { enum: IMPORT_STATES }).notNull().default("queued"),
    csv: text("csv"),
    /** The header row's column names, as read once at upload. */
    columns: text("columns", { mode: "json" }).$type<string[]>().notNull(),
    settings: text("settings", { mode: "json" }).$type<{ ignoreGlobalBlockList: boolean; ignoreUnsubscribeList: boolean }>().notNull(),
    cursor: integer("cursor").notNull().default(0),
    total: integer("total").notNull(),
    processed: integer("processed").notNull().default(0),
    imported: integer("imported").notNull().default(0),
    duplicates: integer("duplicates").notNull().default(0),
    blocked: integer("blocked").notNull().default(0),
    invalid: integer("invalid").notNull().default(0),
    /** Rows stored whose zone was not a known IANA name (CONTRACT 23.1). */
    invalidTimezone: integer("invalid_timezone").notNull().default(0),
    error: text("error"),
    /** Passes that ended in an error; at the cap the import is given up as failed. */
    failedPasses: integer("failed_passes").notNull().default(0),
    /** While a worker holds the import: until when (another may take it over after). */
    leaseUntil: instant("lease_until"),
    finishedAt: instant("finished_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("lead_list_imports_list_idx").on(t.listId, t.id),
    index("lead_list_imports_pending_idx").on(t.state, t.leaseUntil),
  ],
);

/** CRM lead tags: a tag of the catalogue on one lead; the row id is the `tag_mapping_id`. */
export const leadTagMappings = sqliteTable(
  "lead_tag_mappings",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    leadId: integer("lead_id")
      .notNull()
      .references(() => leads.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("lead_tag_mappings_lead_tag_idx").on(t.leadId, t.tagId), index("lead_tag_mappings_tag_idx").on(t.tagId)],
);
