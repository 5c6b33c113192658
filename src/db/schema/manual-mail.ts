import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { campaigns } from "./campaigns";
import { emailAccounts } from "./mailboxes";
import { OUTBOUND_REPLY_STATUSES } from "./inbox";
import { createdAt, instant, updatedAt } from "./columns";

export const OUTSIDE_SEND_KINDS = ["forward", "single"] as const;

/**
 * An email sent outside sequences (CONTRACT 21.5): a forward of a thread's message, or a one-off
 * email. Only its progress lives here (what `GET /master-inbox/reply-status` answers); the email
 * itself goes out through the mailbox's object, which keeps one held back by the mailbox's gap in
 * its own storage until it is sent. `client_id` is the scope it was sent under (the campaign's
 * client for a forward, the mailbox's for a one-off), so a client key sees its own.
 */
export const outsideSends = sqliteTable(
  "outside_sends",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id, { onDelete: "set null" }),
    emailAccountId: integer("email_account_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    /** The forwarded message's campaign (null for a one-off email). */
    campaignId: integer("campaign_id").references(() => campaigns.id, { onDelete: "set null" }),
    kind: text("kind", { enum: OUTSIDE_SEND_KINDS }).notNull(),
    messageId: text("message_id").notNull(),
    /** QUEUED while the mailbox's object sends it, SCHEDULED while the gap holds it back, then COMPLETED or FAILED. */
    status: text("status", { enum: OUTBOUND_REPLY_STATUSES }).notNull(),
    statusMessage: text("status_message"),
    scheduledAt: instant("scheduled_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("outside_sends_message_id_idx").on(t.accountId, t.messageId), index("outside_sends_mailbox_idx").on(t.emailAccountId)],
);
