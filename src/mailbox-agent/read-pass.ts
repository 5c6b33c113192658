import { and, eq, lte } from "drizzle-orm";
import { emailAccounts } from "../db/schema";
import { config } from "../config";
import type { Bindings } from "../platform/env";
import { imapTarget } from "../mailboxes/rules";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { mailPolicy } from "../platform/outbound";
import { rawBatch } from "../platform/sql";
import { disconnectAnnouncement } from "../webhooks/disconnect";
import { deliveryIds, enqueue } from "../webhooks/outbox";
import { recordInbound, type InboundOutcome } from "../replies/inbound";
import { PARSE_LIMIT_BYTES, parseMessage, unparsedMessage, type ParsedMessage } from "../mail/parsed";
import { fetchNewMessages, type ReaderCursor } from "../mail/reader";
import type { MailboxLogins } from "../mailboxes/login";
import { placeWarmupMail, withoutWarmup } from "../warmup/receive";

/** Messages read per pass: a pass stays well inside an alarm's time, and the next one goes on. */
const READ_LIMIT = 100;
/** On a first read, mail from a day before the mailbox was added is read; older mail answers nothing of ours. */
const FIRST_READ_MARGIN_MS = 86_400_000;

export interface ReadResult {
  cursor: ReaderCursor | null;
  more: boolean;
  outcome: InboundOutcome | null;
}

/**
 * One read of a mailbox's INBOX (the sender object runs it on its schedule): new messages since the
 * cursor, parsed, and recorded as replies and bounces. A refused IMAP login marks the mailbox
 * `is_imap_success: false` with the server's words (the engine stops using it until a check passes).
 */
export async function runReaderPass(env: Bindings, logins: MailboxLogins, mailboxId: number, now: number, cursor: ReaderCursor | null, limit = READ_LIMIT): Promise<ReadResult> {
  const db = database(env.DB);
  const mailbox = await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailboxId)).get();
  if (!mailbox) return { cursor, more: false, outcome: null };
  try {
    return await readMailbox(env, logins, mailbox, now, cursor, limit);
  } finally {
    // A live fetch that asked for this read (CONTRACT 21.2) is over, however the read went; a newer request stays.
    const asked = mailbox.liveFetchRequestedAt;
    if (asked !== null) await db.update(emailAccounts).set({ liveFetchRequestedAt: null }).where(and(eq(emailAccounts.id, mailboxId), lte(emailAccounts.liveFetchRequestedAt, asked)));
  }
}

async function readMailbox(env: Bindings, logins: MailboxLogins, mailbox: typeof emailAccounts.$inferSelect, now: number, cursor: ReaderCursor | null, limit: number): Promise<ReadResult> {
  const db = database(env.DB);
  const mailboxId = mailbox.id;
  if (mailbox.isImapSuccess === false) return { cursor, more: false, outcome: null };
  const login = await logins.for(mailbox, "imap", now);
  if (!login.ok) return { cursor, more: false, outcome: null };
  const fetched = await fetchNewMessages(imapTarget(mailbox, login.credential), cursor, mailbox.createdAt.getTime() - FIRST_READ_MARGIN_MS, limit, mailPolicy(config(env)));
  if (!fetched.ok) {
    log("warn", "mailbox read failed", { mailbox_id: mailboxId, kind: fetched.failure.kind });
    if (fetched.failure.kind === "auth_failed" && login.oauth) {
      await logins.refused(mailbox, "imap", login, fetched.failure.text, now);
    } else if (fetched.failure.kind === "auth_failed") {
      const announce = await disconnectAnnouncement(db, mailbox, { smtp: null, imap: fetched.failure.text }, now);
      const update = db
        .update(emailAccounts)
        .set({ isImapSuccess: false, imapFailureError: fetched.failure.text, checkedAt: new Date(now) })
        .where(eq(emailAccounts.id, mailboxId));
      const results = await rawBatch(env.DB, announce === null ? [update] : [announce, update]);
      if (announce !== null) await enqueue(env, deliveryIds(results[0]));
    }
    return { cursor, more: false, outcome: null };
  }
  // Every fetched message is recorded, parsed or not, so the cursor moves past it: one the parser
  // fails on is kept from its header block, marked unparsed (never skipped, never read for ever).
  const parsed: ParsedMessage[] = [];
  for (const message of fetched.batch.messages) {
    try {
      parsed.push(await parseMessage(message.raw, { fetchedPartly: message.size > PARSE_LIMIT_BYTES }));
    } catch (error) {
      log("warn", "unparsed message kept from its headers", { mailbox_id: mailboxId, uid: message.uid, error: String(error) });
      parsed.push(unparsedMessage(message.raw));
    }
  }
  // Warmup mail and its bounces are warmup's alone (CONTRACT 19.5): never replies, bounces or inbox mail.
  const kept = await withoutWarmup(db, mailbox.id, parsed, now);
  const outcome = await recordInbound(env, { id: mailbox.id, accountId: mailbox.accountId, clientId: mailbox.clientId, fromEmail: mailbox.fromEmail }, kept, now);
  await placeWarmupMail(db, mailbox.id, imapTarget(mailbox, login.credential), mailPolicy(config(env)), now);
  return { cursor: fetched.batch.cursor, more: fetched.batch.more, outcome };
}
