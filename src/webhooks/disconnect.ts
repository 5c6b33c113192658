import { sql, type SQL } from "drizzle-orm";
import type { Database } from "../platform/db";
import { disconnectDeliveries } from "./fanout";
import { insertDeliveries } from "./outbox";
import { campaignlessWebhooks } from "./store";

/** A mailbox as it was before a failure is recorded. */
interface DisconnectingMailbox {
  id: number;
  accountId: number;
  clientId: number | null;
  fromEmail: string;
  isSmtpSuccess: boolean | null;
  isImapSuccess: boolean | null;
  disconnectCode: string | null;
}

/** Why a person must act (CONTRACT 18.5), when the failure is a disconnect rather than a passing fault. */
interface AnnouncedReason {
  code: string;
  message: string;
}

/** The SQL twin of the engine's rule (mailboxes/rules.ts `connectionUsable`): SMTP works and IMAP has not failed. */
const STILL_USABLE = (mailboxId: number) =>
  sql`EXISTS (SELECT 1 FROM email_accounts WHERE id = ${mailboxId} AND disconnect_code IS NULL AND is_smtp_success = 1 AND coalesce(is_imap_success, 1) = 1)`;
/** Connected or failing, and not yet disconnected: what a disconnect announces from. */
const NOT_YET_DISCONNECTED = (mailboxId: number) =>
  sql`EXISTS (SELECT 1 FROM email_accounts WHERE id = ${mailboxId} AND disconnect_code IS NULL AND (is_smtp_success IS NOT NULL OR is_imap_success IS NOT NULL))`;

const usable = (m: DisconnectingMailbox) => m.disconnectCode === null && m.isSmtpSuccess === true && m.isImapSuccess !== false;

/**
 * EMAIL_ACCOUNT_DISCONNECTED for a mailbox about to be marked failing or disconnected: a statement to
 * put BEFORE that update in the same D1 batch (CONTRACT 18.5). A failure announces once when the
 * mailbox leaves `connected`; a disconnect (`reason`) once more when a `failing` mailbox becomes
 * `disconnected`; never again until a check passes. The condition is checked in the statement, so
 * repeats and racing writers that got there first announce nothing. Null when there is nothing to
 * announce or no user/client webhook wants the kind (one read).
 */
export async function disconnectAnnouncement(
  db: Database,
  mailbox: DisconnectingMailbox,
  errors: { smtp: string | null; imap: string | null },
  now: number,
  reason: AnnouncedReason | null = null,
  /** Held at commit too, or nothing is announced (the disconnect's own condition). */
  also: SQL | null = null,
): Promise<SQL | null> {
  const wasChecked = mailbox.isSmtpSuccess !== null || mailbox.isImapSuccess !== null;
  if (reason === null ? !usable(mailbox) : mailbox.disconnectCode !== null || !wasChecked) return null;
  const webhooks = await campaignlessWebhooks(db, mailbox.accountId, mailbox.clientId);
  const deliveries = disconnectDeliveries(webhooks, {
    accountId: mailbox.accountId,
    clientId: mailbox.clientId,
    emailAccountId: mailbox.id,
    fromEmail: mailbox.fromEmail,
    smtpFailureError: errors.smtp,
    imapFailureError: errors.imap,
    disconnectReason: reason === null ? null : { code: reason.code, message: reason.message, at: now },
    occurredAt: now,
  });
  const guard = reason === null ? STILL_USABLE(mailbox.id) : NOT_YET_DISCONNECTED(mailbox.id);
  return deliveries.length === 0 ? null : insertDeliveries(deliveries, also === null ? guard : sql`${guard} AND ${also}`, now);
}
