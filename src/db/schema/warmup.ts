import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { instant } from "./columns";
import { emailAccounts } from "./mailboxes";

/**
 * One warmup email (a first message or a reply), written by its sender's object at send; the
 * receiver's reader fills where it landed (CONTRACT 19.4). Salvo knows its warmup mail by this
 * Message-ID only, never by a marker header.
 */
export const warmupMessages = sqliteTable(
  "warmup_messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    senderId: integer("sender_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    receiverId: integer("receiver_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["warmup", "reply"] }).notNull(),
    replyToId: integer("reply_to_id").references((): AnySQLiteColumn => warmupMessages.id, { onDelete: "cascade" }),
    messageId: text("message_id").notNull(),
    subject: text("subject").notNull(),
    sentAt: instant("sent_at").notNull(),
    status: text("status", { enum: ["sent", "refused"] }).notNull().default("sent"),
    error: text("error"),
    errorKind: text("error_kind"),
    landed: text("landed", { enum: ["inbox", "spam", "not_found"] }),
    landedAt: instant("landed_at"),
    rescuedAt: instant("rescued_at"),
    openedAt: instant("opened_at"),
    repliedAt: instant("replied_at"),
  },
  (t) => [
    uniqueIndex("warmup_messages_message_id_idx").on(t.messageId),
    index("warmup_messages_sender_time_idx").on(t.senderId, t.sentAt),
    index("warmup_messages_receiver_open_idx").on(t.receiverId, t.sentAt).where(sql`landed IS NULL AND status = 'sent'`),
    index("warmup_messages_receiver_time_idx").on(t.receiverId, t.sentAt),
  ],
);

/** A mailbox's warmup unblock code (CONTRACT 19.4): its digest, valid 10 minutes, single use, 5 tries. */
export const warmupOtps = sqliteTable("warmup_otps", {
  emailAccountId: integer("email_account_id")
    .primaryKey()
    .references(() => emailAccounts.id, { onDelete: "cascade" }),
  codeDigest: text("code_digest").notNull(),
  expiresAt: instant("expires_at").notNull(),
  tries: integer("tries").notNull().default(0),
  /** The code's email, which the mailbox's reader keeps out of everything it records. */
  messageId: text("message_id"),
});
