import type { MailboxType, PortType } from "../db/schema";
import type { Database } from "../platform/db";
import type { ConnectionOutcome, MailboxRow } from "./rules";
import { recordConnectionOutcome, type MailboxSecrets } from "./store";

/**
 * The seam for the connection check (SMTP connect + AUTH, IMAP LOGIN + SELECT INBOX, 10 s each).
 * The save, update and reconnect paths call `checkConnection` with what the check needs; until the
 * socket client exists (with the mail lab) it answers "not checked" and the stored outcome stays
 * null, as the contract shows it before a mailbox's first check.
 */
export interface ConnectionTarget {
  mailboxId: number;
  type: MailboxType;
  smtp: { host: string; port: number; portType: PortType; username: string; password: string | null };
  imap: { host: string; port: number; portType: PortType; username: string; password: string | null };
}

export const NOT_CHECKED: ConnectionOutcome = { smtp: { ok: null, error: null }, imap: { ok: null, error: null } };

export type ConnectionChecker = (target: ConnectionTarget) => Promise<ConnectionOutcome>;

export const checkConnection: ConnectionChecker = () => Promise.resolve(NOT_CHECKED);

/**
 * Runs the check for a mailbox just saved and stores its outcome. `secrets` holds what the save
 * wrote; the socket client will decrypt the stored ones it lacks.
 */
export async function runConnectionCheck(db: Database, row: MailboxRow, secrets: MailboxSecrets, check: ConnectionChecker = checkConnection): Promise<void> {
  const outcome = await check({
    mailboxId: row.id,
    type: row.type,
    smtp: { host: row.smtpHost, port: row.smtpPort, portType: row.smtpPortType, username: row.username, password: secrets.password ?? null },
    imap: {
      host: row.imapHost,
      port: row.imapPort,
      portType: row.imapPortType,
      username: row.imapUsername ?? row.username,
      password: secrets.imapPassword ?? secrets.password ?? null,
    },
  });
  if (outcome.smtp.ok === null && outcome.imap.ok === null) return;
  await recordConnectionOutcome(db, row.id, outcome, Date.now());
}
