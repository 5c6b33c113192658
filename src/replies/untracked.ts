import { and, count, desc, eq, sql, type SQL } from "drizzle-orm";
import { emailAccounts, untrackedReplies, type UntrackedAttachment } from "../db/schema";
import { visibleRows } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { jsonList, jsonListChunks, rawBatch } from "../platform/sql";
import { utf8Length } from "../platform/bytes";
import { storeBody, type BodyStore } from "../platform/bodies";
import { containsText } from "../platform/text-search";
import { untrackedReplyDeliveries, type WebhookTarget } from "../webhooks/fanout";
import { deliveryIds, guardValue, insertDeliveries } from "../webhooks/outbox";
import { campaignlessWebhooks } from "../webhooks/store";
import type { ParsedMessage } from "../mail/parsed";

/**
 * Messages a mailbox received that answer none of our emails: kept (`untracked_replies`), announced
 * as UNTRACKED_REPLIES to the account's user-scope webhooks and its client's client-scope ones in
 * the same commit, and listed by `GET master-inbox/untracked-replies`.
 */

interface UntrackedMessage {
  /** The reader's stable id of the message (a message read twice is kept and announced once). */
  key: string;
  message: ParsedMessage;
}

/** The mailbox's client and the webhooks that hear its untracked replies: one round trip. */
export async function loadUntrackedContext(db: Database, mailbox: { id: number; accountId: number }) {
  const mailboxClient = sql`(SELECT client_id FROM email_accounts WHERE id = ${mailbox.id})`;
  const [mailboxes, webhooks] = await db.batch([
    db.select({ clientId: emailAccounts.clientId }).from(emailAccounts).where(eq(emailAccounts.id, mailbox.id)),
    campaignlessWebhooks(db, mailbox.accountId, mailboxClient),
  ]);
  return { clientId: mailboxes[0]?.clientId ?? null, webhooks };
}

/** The attachments listed per message: a stranger's message may have thousands of parts. */
const LISTED_ATTACHMENTS = 100;

function attachmentsOf(message: ParsedMessage): UntrackedAttachment[] {
  return message.parts.slice(0, LISTED_ATTACHMENTS).map((part) => ({
    filename: part.filename,
    content_type: part.mimeType,
    size: part.size,
  }));
}

/**
 * Stores the messages and their deliveries in ONE D1 batch; a delivery is kept only when this
 * batch stored its message (a repeat read inserts nothing, so announces nothing). Each message is
 * bounded when parsed (parsed.ts); the messages, and the deliveries that carry their bodies, go in
 * as many statements as keep each list parameter within JSON_LIST_BYTES (D1 refuses a string over
 * 2,000,000 bytes). Returns the delivery ids to enqueue.
 */
export async function storeUntracked(
  d1: D1Database,
  bodies: BodyStore,
  mailbox: { id: number; accountId: number; fromEmail: string },
  context: { clientId: number | null; webhooks: WebhookTarget[] },
  messages: UntrackedMessage[],
  now: number,
): Promise<number[]> {
  // Large bodies go to R2 first (their references are what the rows and the announcements carry).
  const stored = await Promise.all(
    messages.map(({ message }) => Promise.all([storeBody(bodies, mailbox.accountId, message.text), storeBody(bodies, mailbox.accountId, message.html)])),
  );
  const rows = messages.map(({ key, message }, i) => ({
    message_key: key,
    from_email: message.from,
    from_name: message.fromName,
    subject: message.subject,
    message_id: message.messageId,
    received_at: Math.min(message.date ?? now, now),
    text_body: stored[i]![0]!,
    html_body: stored[i]![1],
    preview: message.text,
    attachments: JSON.stringify(attachmentsOf(message)),
  }));
  const deliveries = rows.flatMap((row) =>
    untrackedReplyDeliveries(
      context.webhooks,
      {
        accountId: mailbox.accountId,
        clientId: context.clientId,
        emailAccountId: mailbox.id,
        fromEmail: row.from_email,
        toEmail: mailbox.fromEmail,
        subject: row.subject,
        messageId: row.message_id,
        receivedAt: row.received_at,
        text: row.text_body,
        html: row.html_body,
        preview: row.preview,
      },
      { untracked_key: row.message_key },
    ),
  );
  const fresh: SQL = sql`EXISTS (SELECT 1 FROM untracked_replies u
      WHERE u.email_account_id = ${mailbox.id} AND u.message_key = ${guardValue("untracked_key")} AND u.created_at = ${now})`;
  const inserts = jsonListChunks(rows.map(({ preview: _, ...row }) => row)).map(
    (chunk) => sql`INSERT INTO untracked_replies (account_id, client_id, email_account_id, message_key, from_email, from_name, to_email, subject,
                                       message_id, received_at, text_body, html_body, attachments, created_at)
        SELECT ${mailbox.accountId}, ${context.clientId}, ${mailbox.id}, value ->> '$.message_key', value ->> '$.from_email',
               value ->> '$.from_name', ${mailbox.fromEmail}, value ->> '$.subject', value ->> '$.message_id', value ->> '$.received_at',
               value ->> '$.text_body', value ->> '$.html_body', value ->> '$.attachments', ${now}
        FROM json_each(${jsonList(chunk)}) WHERE true
        ON CONFLICT (email_account_id, message_key) DO NOTHING`,
  );
  // insertDeliveries writes each payload as a JSON string inside its list: escaped twice.
  const announcements = jsonListChunks(deliveries, undefined, (d) => utf8Length(JSON.stringify(JSON.stringify(d.payload))) + 200).map((chunk) =>
    insertDeliveries(chunk, fresh, now),
  );
  const results = await rawBatch(d1, [...inserts, ...announcements]);
  return results.slice(inserts.length).flatMap((result) => deliveryIds(result));
}

interface UntrackedFilters {
  fromEmail?: string;
  toEmail?: string;
  subjectLine?: string;
}

function untrackedWhere(principal: Principal, filters: UntrackedFilters): SQL {
  return and(
    visibleRows(principal, untrackedReplies),
    filters.fromEmail === undefined ? undefined : eq(untrackedReplies.fromEmail, filters.fromEmail.toLowerCase()),
    filters.toEmail === undefined ? undefined : eq(untrackedReplies.toEmail, filters.toEmail.toLowerCase()),
    filters.subjectLine === undefined ? undefined : containsText(untrackedReplies.subject, filters.subjectLine),
  )!;
}

/** A page of the untracked replies a caller may see, newest first, and how many there are in all. */
export async function listUntracked(db: Database, principal: Principal, filters: UntrackedFilters, page: { limit: number; offset: number }) {
  const where = untrackedWhere(principal, filters);
  const [rows, totals] = await db.batch([
    db.select().from(untrackedReplies).where(where).orderBy(desc(untrackedReplies.receivedAt), desc(untrackedReplies.id)).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(untrackedReplies).where(where),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
}
