import type { MailboxType, PortType } from "../db/schema";
import { checkImap } from "../mail/imap";
import { checkSmtp } from "../mail/smtp";
import { loadKeyring } from "../platform/crypto";
import type { Database } from "../platform/db";
import { transportSecurity, type ConnectionOutcome, type MailboxRow, type ProtocolOutcome } from "./rules";
import { recordConnectionOutcome, storedPassword, type MailboxSecrets } from "./store";
import { disconnectAnnouncement } from "../webhooks/disconnect";

/**
 * The connection check: SMTP (connect, EHLO, STARTTLS or implicit TLS, AUTH; src/engine/smtp.ts) and
 * IMAP (connect, STARTTLS or implicit TLS, LOGIN, SELECT INBOX; src/engine/imap.ts) side by side, each
 * step bounded by 10 s, over `cloudflare:sockets`. The save, update and reconnect paths and the daily
 * re-check (recheck.ts) run it; `is_*_success`/`*_failure_error` record the outcome with the server's
 * own text. A side without a password (OAuth mailboxes) stays "not checked" (null).
 */
export interface ConnectionTarget {
  mailboxId: number;
  type: MailboxType;
  smtp: { host: string; port: number; portType: PortType; username: string; password: string | null };
  imap: { host: string; port: number; portType: PortType; username: string; password: string | null };
}

export const NOT_CHECKED: ConnectionOutcome = { smtp: { ok: null, error: null }, imap: { ok: null, error: null } };

export type ConnectionChecker = (target: ConnectionTarget) => Promise<ConnectionOutcome>;

const outcome = (result: { ok: true } | { ok: false; failure: { text: string } }): ProtocolOutcome =>
  result.ok ? { ok: true, error: null } : { ok: false, error: result.failure.text };

/** The check for this deployment: unencrypted SMTP or IMAP is never used, whatever the config. */
export const checkConnection: ConnectionChecker = async ({ smtp, imap }) => {
  const secure = { allowPlain: false };
  const [smtpOutcome, imapOutcome] = await Promise.all([
    smtp.password === null
      ? NOT_CHECKED.smtp
      : checkSmtp({ host: smtp.host, port: smtp.port, security: transportSecurity(smtp.portType), username: smtp.username, password: smtp.password }, secure).then(outcome),
    imap.password === null
      ? NOT_CHECKED.imap
      : checkImap({ host: imap.host, port: imap.port, security: transportSecurity(imap.portType), username: imap.username, password: imap.password }, secure).then(outcome),
  ]);
  return { smtp: smtpOutcome, imap: imapOutcome };
};

/**
 * Runs the check for a mailbox and stores its outcome. `secrets` holds what a save just wrote; a
 * password it lacks is the stored one, decrypted under `secretsKey` (a host-only change, or the daily
 * re-check with none). IMAP logs in with its own password when one is stored, else the SMTP one.
 */
export async function runConnectionCheck(
  db: Database,
  row: MailboxRow,
  secrets: MailboxSecrets,
  secretsKey: string | undefined,
  check: ConnectionChecker = checkConnection,
): Promise<void> {
  const needsStored = (secrets.password === undefined && row.passwordCiphertext !== null) || (secrets.imapPassword === undefined && row.imapPasswordCiphertext !== null);
  const keyring = needsStored ? await loadKeyring(secretsKey) : null;
  const password = secrets.password ?? (keyring ? await storedPassword(keyring, row, "smtp") : null);
  const imapPassword = secrets.imapPassword ?? (keyring ? await storedPassword(keyring, row, "imap") : null) ?? password;
  const outcome = await check({
    mailboxId: row.id,
    type: row.type,
    smtp: { host: row.smtpHost, port: row.smtpPort, portType: row.smtpPortType, username: row.username, password },
    imap: { host: row.imapHost, port: row.imapPort, portType: row.imapPortType, username: row.imapUsername ?? row.username, password: imapPassword },
  });
  if (outcome.smtp.ok === null && outcome.imap.ok === null) return;
  const now = Date.now();
  const failing = outcome.smtp.ok === false || outcome.imap.ok === false;
  const announce = failing ? await disconnectAnnouncement(db, row, { smtp: outcome.smtp.error, imap: outcome.imap.error }, now) : null;
  await recordConnectionOutcome(db, row.id, outcome, now, announce);
}
