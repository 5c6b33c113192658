import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { campaigns } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";
import { emailAccounts } from "./mailboxes";

const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** What a webhook hears: the whole account, every campaign of one client, or one campaign. */
export const WEBHOOK_SCOPES = ["user", "client", "campaign"] as const;
export type WebhookScope = (typeof WEBHOOK_SCOPES)[number];

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    associationType: text("association_type", { enum: WEBHOOK_SCOPES }).notNull().default("campaign"),
    /** The client of a `client`-scope webhook (null for the other scopes). */
    clientId: integer("client_id").references(() => clients.id),
    /** The campaign of a `campaign`-scope webhook (null for the other scopes). */
    campaignId: integer("campaign_id").references(() => campaigns.id, { onDelete: "cascade" }),
    /** The caller's own label (`webhook_type` of the hosted API), stored and answered as given. */
    webhookType: text("webhook_type"),
    name: text("name").notNull(),
    url: text("url").notNull(),
    eventTypes: text("event_types", { mode: "json" }).$type<string[]>().notNull(),
    categoryIds: text("category_ids", { mode: "json" }).$type<number[]>().notNull(),
    /**
     * The signing secret (`whsec_…`), encrypted (src/platform/crypto.ts, context
     * `webhook-signing-secret:<id>`): kept, because every delivery is signed with it.
     */
    secretCiphertext: text("secret_ciphertext"),
    /** The secret before the last rotation (same context), which still signs until `previousSecretExpiresAt`. */
    previousSecretCiphertext: text("previous_secret_ciphertext"),
    previousSecretExpiresAt: instant("previous_secret_expires_at"),
    /**
     * A signing secret stored in plain text before secrets were encrypted (migration 0009). The minute
     * cron encrypts it into `secretCiphertext` and clears it; until then deliveries sign with it.
     */
    legacySecret: text("legacy_secret"),
    /**
     * The user's own `secret_key`, echoed in every payload (a token the receiver compares), encrypted
     * (context `webhook-secret-key:<id>`); null when unset.
     */
    secretKeyCiphertext: text("secret_key_ciphertext"),
    /** Set when the receiver answered 410 Gone; nothing more is sent. */
    disabledAt: instant("disabled_at"),
    /** Deleted while deliveries of it were pending: hidden, its pending deliveries still tried, then the row goes. */
    deletedAt: instant("deleted_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("webhooks_campaign_idx").on(t.campaignId),
    index("webhooks_account_scope_idx").on(t.accountId, t.associationType, t.clientId),
    index("webhooks_legacy_secret_idx").on(t.id).where(sql`legacy_secret IS NOT NULL`),
    check(
      "webhooks_scope_target",
      sql`(association_type = 'user' AND client_id IS NULL AND campaign_id IS NULL)
        OR (association_type = 'client' AND client_id IS NOT NULL AND campaign_id IS NULL)
        OR (association_type = 'campaign' AND client_id IS NULL AND campaign_id IS NOT NULL)`,
    ),
  ],
);

/** One event for one webhook: an outbox row, so a message never enqueued is found and sent later. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    webhookId: integer("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** The event's campaign; null for events without one (UNTRACKED_REPLIES, EMAIL_ACCOUNT_DISCONNECTED). */
    campaignId: integer("campaign_id"),
    /** The `webhook-id` header: the same on every attempt, so receivers can drop repeats. */
    messageId: text("message_id").notNull(),
    eventType: text("event_type").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastAttemptAt: instant("last_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    /**
     * When the next attempt is due: creation time for a new delivery, the retry's time after a
     * failed attempt, null once settled. A pending delivery well past it lost its queue message
     * (or never got one), and the minute cron enqueues it again.
     */
    nextAttemptAt: instant("next_attempt_at"),
    deliveredAt: instant("delivered_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_message_idx").on(t.messageId),
    index("webhook_deliveries_campaign_time_idx").on(t.campaignId, t.createdAt),
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.id),
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`status = 'pending'`),
    // The retention pass's range (src/webhooks/retention.ts): delivered ones only, oldest first.
    index("webhook_deliveries_delivered_idx").on(t.deliveredAt).where(sql`status = 'delivered'`),
  ],
);

export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deliveryId: integer("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attemptedAt: instant("attempted_at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    outcome: text("outcome", { enum: ["delivered", "retry", "failed", "disabled"] }).notNull(),
    durationMs: integer("duration_ms").notNull(),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId)],
);

/**
 * A message a mailbox received that answers none of our emails (the UNTRACKED_REPLIES event), kept
 * for `GET master-inbox/untracked-replies`. `message_key` is the reader's stable id of the message,
 * so a message read twice is stored (and announced) once.
 */
export const untrackedReplies = sqliteTable(
  "untracked_replies",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The mailbox's client when it was received (null = the account's own mailbox). */
    clientId: integer("client_id").references(() => clients.id),
    emailAccountId: integer("email_account_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    messageKey: text("message_key").notNull(),
    fromEmail: text("from_email"),
    fromName: text("from_name"),
    toEmail: text("to_email").notNull(),
    subject: text("subject").notNull(),
    messageId: text("message_id"),
    receivedAt: instant("received_at").notNull(),
    textBody: text("text_body").notNull(),
    htmlBody: text("html_body"),
    /** `[{filename, content_type, size}]` of the message's non-body parts (their content is not kept). */
    attachments: text("attachments", { mode: "json" }).$type<UntrackedAttachment[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("untracked_replies_message_idx").on(t.emailAccountId, t.messageKey),
    index("untracked_replies_account_time_idx").on(t.accountId, t.receivedAt),
  ],
);

export interface UntrackedAttachment {
  filename: string | null;
  content_type: string;
  size: number;
}
