import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { campaignLeads, campaigns } from "./campaigns";
import { createdAt, instant, scopeKey, updatedAt } from "./columns";

const MESSAGE_STATUSES = ["sending", "sent", "deferred", "failed", "bounced", "unconfirmed"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/**
 * One campaign email, written `sending` right BEFORE its SMTP transaction (one at a time per
 * mailbox) and unique per (record, step): a pass that is retried finds the row and never sends the
 * step again. `sending` left behind by a pass that died mid-transaction becomes `unconfirmed` (it
 * may have gone; reported, never sent again), and so does a transaction whose answer was lost after
 * the message was handed over.
 */
export const messages = sqliteTable(
  "messages",
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
    step: integer("step").notNull(),
    sequenceStepId: integer("sequence_step_id"),
    variantId: integer("variant_id"),
    emailAccountId: integer("email_account_id").notNull(),
    /** Our own Message-ID, angle brackets included: replies and follow-ups thread on it. */
    messageId: text("message_id").notNull(),
    status: text("status", { enum: MESSAGE_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    toEmail: text("to_email"),
    subject: text("subject"),
    sentAt: instant("sent_at"),
    /** When the message failed (13.3 and 13.6 count failures by it; migration 0093): updated_at moves with any later write. */
    failedAt: instant("failed_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("messages_record_step_idx").on(t.campaignLeadId, t.step),
    // A campaign's step-1 messages of a local day: the new-leads cap, in-flight sends included.
    index("messages_campaign_step_time_idx").on(t.campaignId, t.step, t.createdAt),
    index("messages_message_id_idx").on(t.messageId),
    // Sends of the day across accounts: the operator's metrics (src/ops/metrics-store.ts).
    index("messages_sent_at_idx").on(t.sentAt).where(sql`sent_at IS NOT NULL`),
    // Analytics: a campaign's messages that failed in a window.
    index("messages_failed_idx").on(t.campaignId, t.failedAt).where(sql`failed_at IS NOT NULL`),
    // Emails in doubt, by mailbox and time: the mailbox's warning and the operator's metric.
    index("messages_unconfirmed_idx").on(t.emailAccountId, t.updatedAt).where(sql`status = 'unconfirmed'`),
  ],
);

/**
 * Addresses and domains nothing is sent to (CONTRACT section 12), account-wide (client NULL) or for
 * one client. The engine checks it before every send; the routes that edit it come with issue 15.
 */
export const blockList = sqliteTable(
  "block_list",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id),
    emailOrDomain: text("email_or_domain").notNull(),
    source: text("source").notNull().default("manual"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("block_list_account_scope_value_idx").on(t.accountId, scopeKey(t.clientId), t.emailOrDomain)],
);

