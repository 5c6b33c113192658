import type { MailboxType, PortType } from "../db/schema";
import { checkSmtp, type SmtpSettings } from "../engine/smtp";
import type { Database } from "../platform/db";
import type { ConnectionOutcome, MailboxRow } from "./rules";
import { recordConnectionOutcome, type MailboxSecrets } from "./store";

/**
 * The connection check (SMTP connect + AUTH, IMAP LOGIN + SELECT INBOX, 10 s each). The save,
 * update and reconnect paths call it with what the check needs. SMTP is checked for real over
 * `cloudflare:sockets` (src/engine/smtp.ts); IMAP stays "not checked" (null) until the IMAP client
 * exists, as the contract shows a mailbox before its first check.
 */
export interface ConnectionTarget {
  mailboxId: number;
  type: MailboxType;
  smtp: { host: string; port: number; portType: PortType; username: string; password: string | null };
  imap: { host: string; port: number; portType: PortType; username: string; password: string | null };
}

export const NOT_CHECKED: ConnectionOutcome = { smtp: { ok: null, error: null }, imap: { ok: null, error: null } };

export type ConnectionChecker = (target: ConnectionTarget) => Promise<ConnectionOutcome>;

/** SSL is implicit TLS; TLS and STARTTLS both mean an upgrade on the submission port, required. */
function security(portType: PortType): SmtpSettings["security"] {
  return portType === "SSL" ? "tls" : "starttls";
}

/** A checker for this deployment: plain SMTP is never used, whatever the config. */
export function smtpChecker(): ConnectionChecker {
  return async (target) => {
    const { smtp } = target;
    // OAuth mailboxes hold no password: their check waits for the provider's OAuth client.
    if (smtp.password === null) return NOT_CHECKED;
    const result = await checkSmtp(
      { host: smtp.host, port: smtp.port, security: security(smtp.portType), username: smtp.username, password: smtp.password },
      { allowPlain: false },
    );
    return {
      smtp: result.ok ? { ok: true, error: null } : { ok: false, error: result.failure.text },
      imap: NOT_CHECKED.imap,
    };
  };
}

export const checkConnection: ConnectionChecker = smtpChecker();

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
