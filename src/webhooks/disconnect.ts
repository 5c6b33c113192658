import { sql, type SQL } from "drizzle-orm";
import type { Database } from "../platform/db";
import { disconnectDeliveries } from "./fanout";
import { insertDeliveries } from "./outbox";
import { campaignlessWebhooks } from "./store";

/** A mailbox as it was before a failure is recorded. */
export interface DisconnectingMailbox {
  id: number;
  accountId: number;
  clientId: number | null;
  fromEmail: string;
  isSmtpSuccess: boolean | null;
  isImapSuccess: boolean | null;
}

/** The SQL twin of the engine's rule (mailboxes/rules.ts `connectionUsable`): SMTP works and IMAP has not failed. */
const STILL_USABLE = (mailboxId: number) =>
  sql`EXISTS (SELECT 1 FROM email_accounts WHERE id = ${mailboxId} AND is_smtp_success = 1 AND coalesce(is_imap_success, 1) = 1)`;

/**
 * EMAIL_ACCOUNT_DISCONNECTED for a working mailbox about to be marked failing: a statement to put
 * BEFORE that update in the same D1 batch. It stores the deliveries only while the mailbox is still
 * usable, so the first failure announces and repeats (or a racing writer that got there first) do
 * not. Null when the mailbox was not working or no user/client webhook wants the kind (one read).
 */
export async function disconnectAnnouncement(
  db: Database,
  mailbox: DisconnectingMailbox,
  errors: { smtp: string | null; imap: string | null },
  now: number,
): Promise<SQL | null> {
  if (mailbox.isSmtpSuccess !== true || mailbox.isImapSuccess === false) return null;
  const webhooks = await campaignlessWebhooks(db, mailbox.accountId, mailbox.clientId);
  const deliveries = disconnectDeliveries(webhooks, {
    accountId: mailbox.accountId,
    clientId: mailbox.clientId,
    emailAccountId: mailbox.id,
    fromEmail: mailbox.fromEmail,
    smtpFailureError: errors.smtp,
    imapFailureError: errors.imap,
    occurredAt: now,
  });
  return deliveries.length === 0 ? null : insertDeliveries(deliveries, STILL_USABLE(mailbox.id), now);
}
