import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, instant, updatedAt } from "./columns";

export const accounts = sqliteTable("accounts", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  deliverabilityEnabled: integer("deliverability_enabled", { mode: "boolean" }).notNull().default(true),
  ignoreOooReplies: integer("ignore_ooo_replies", { mode: "boolean" }).notNull().default(false),
  rateLimitPerMinute: integer("rate_limit_per_minute"),
  rateLimitBurst: integer("rate_limit_burst"),
  /** Set by the operator: every key of the account (account and client keys) is refused. */
  disabledAt: instant("disabled_at"),
  /** Set by the operator: with WARMUP_POOL_SCOPE=deployment, the account's mailboxes share one warmup pool with other such accounts. */
  warmupSharedPool: integer("warmup_shared_pool", { mode: "boolean" }).notNull().default(false),
  createdAt: createdAt(),
});

/** Account owners' keys. Only the SHA-256 digest and the last four characters are kept. */
export const accountKeys = sqliteTable(
  "account_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    keyHash: text("key_hash").notNull(),
    last4: text("last4").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("account_keys_hash_idx").on(t.keyHash), index("account_keys_account_idx").on(t.accountId)],
);

export const clients = sqliteTable(
  "clients",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    email: text("email").notNull(),
    /** A stable random UUID (CONTRACT 21.4); rows written by raw SQL get theirs when first read by id. */
    uuid: text("uuid").$defaultFn(() => crypto.randomUUID()),
    createdAt: createdAt(),
  },
  (t) => [index("clients_account_idx").on(t.accountId), uniqueIndex("clients_uuid_idx").on(t.uuid)],
);

/** A client's code snippets (CONTRACT 21.4): stored and listed only; nothing runs them. */
export const clientCodeIntegrations = sqliteTable(
  "client_code_integrations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id")
      .notNull()
      .references(() => clients.id, { onDelete: "cascade" }),
    snippetName: text("snippet_name").notNull(),
    snippetCode: text("snippet_code").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("client_code_integrations_client_idx").on(t.clientId, t.id)],
);

export const clientKeys = sqliteTable(
  "client_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id")
      .notNull()
      .references(() => clients.id, { onDelete: "cascade" }),
    keyName: text("key_name").notNull(),
    keyHash: text("key_hash").notNull(),
    last4: text("last4").notNull(),
    status: text("status", { enum: ["active", "inactive"] }).notNull().default("active"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("client_keys_hash_idx").on(t.keyHash),
    index("client_keys_account_client_idx").on(t.accountId, t.clientId),
  ],
);
