import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { campaigns } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
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
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("webhooks_campaign_idx").on(t.campaignId),
    index("webhooks_legacy_secret_idx").on(t.id).where(sql`legacy_secret IS NOT NULL`),
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
    campaignId: integer("campaign_id").notNull(),
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
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`status = 'pending'`),
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
