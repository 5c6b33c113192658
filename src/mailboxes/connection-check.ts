import type { MailboxType, PortType } from "../db/schema";
import { checkImap } from "../mail/imap";
import type { MailCredential } from "../mail/sasl";
import { checkSmtp } from "../mail/smtp";
import { config } from "../config";
import { loadKeyring } from "../platform/crypto";
import { database } from "../platform/db";
import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";
import { mailPolicy, type OutboundPolicy } from "../platform/outbound";
import { disconnectAnnouncement } from "../webhooks/disconnect";
import { loginRefusal, type DisconnectReason } from "./disconnect";
import { MailboxLogins, type MailboxLogin, type Side } from "./login";
import { transportSecurity, type ConnectionOutcome, type MailboxRow, type ProtocolOutcome } from "./rules";
import { recordConnectionOutcome, type MailboxSecrets } from "./store";
import { agentTokens } from "./wake";

/**
 * The connection check: SMTP (connect, EHLO, STARTTLS or implicit TLS, AUTH) and IMAP (connect,
 * STARTTLS or implicit TLS, LOGIN or AUTHENTICATE, SELECT INBOX) side by side, each step bounded, over
 * `cloudflare:sockets` (src/mail/). The save, update, consent and reconnect paths and the daily
 * re-check (recheck.ts) run it; `is_*_success`/`*_failure_error` record the outcome with the server's
 * own text, and a refused login disconnects the mailbox with its reason (CONTRACT 18.5). A side with
 * nothing to log in with stays "not checked" (null).
 */
export interface ConnectionTarget {
  mailboxId: number;
  type: MailboxType;
  smtp: { host: string; port: number; portType: PortType; username: string; credential: MailCredential | null };
  imap: { host: string; port: number; portType: PortType; username: string; credential: MailCredential | null };
}

const NOT_CHECKED: ConnectionOutcome = { smtp: { ok: null, error: null }, imap: { ok: null, error: null } };

export type ConnectionChecker = (target: ConnectionTarget) => Promise<ConnectionOutcome>;

const outcome = (result: { ok: true } | { ok: false; failure: { kind: string; text: string } }): ProtocolOutcome =>
  result.ok ? { ok: true, error: null } : { ok: false, error: result.failure.text, refused: result.failure.kind === "auth_failed" };

/**
 * The check for this deployment: unencrypted SMTP or IMAP is never used, whatever the config, and
 * the servers' hosts pass the outbound rule (`mailPolicy`) before any connection.
 */
export const connectionChecker = (outbound: OutboundPolicy): ConnectionChecker => async ({ smtp, imap }) => {
  const secure = { allowPlain: false, outbound };
  const [smtpOutcome, imapOutcome] = await Promise.all([
    smtp.credential === null
      ? NOT_CHECKED.smtp
      : checkSmtp({ host: smtp.host, port: smtp.port, security: transportSecurity(smtp.portType), username: smtp.username, ...smtp.credential }, secure).then(outcome),
    imap.credential === null
      ? NOT_CHECKED.imap
      : checkImap({ host: imap.host, port: imap.port, security: transportSecurity(imap.portType), username: imap.username, ...imap.credential }, secure).then(outcome),
  ]);
  return { smtp: smtpOutcome, imap: imapOutcome };
};

/** A login for one side: what the save just gave (a password, or the consent's fresh access token), else the stored one or the agent's token. */
async function loginFor(logins: MailboxLogins, row: MailboxRow, side: Side, secrets: MailboxSecrets, now: number): Promise<MailboxLogin> {
  if (secrets.accessToken !== undefined && row.authType === "OAUTH") return { ok: true, credential: { accessToken: secrets.accessToken }, oauth: true, fresh: true };
  // A new SMTP password stands in for IMAP's only when IMAP has no password of its own stored.
  const given = side === "smtp" ? secrets.password : (secrets.imapPassword ?? (row.imapPasswordCiphertext === null ? secrets.password : undefined));
  if (typeof given === "string" && row.authType === "PASSWORD") return { ok: true, credential: { password: given }, oauth: false, fresh: true };
  return logins.for(row, side, now, true);
}

/** The first refused side's reason, in CONTRACT 18.5's words; null when no login was refused. */
function refusalOf(row: MailboxRow, result: ConnectionOutcome): { side: Side; reason: DisconnectReason } | null {
  for (const side of ["smtp", "imap"] as const) {
    const protocol = result[side];
    if (protocol.refused && protocol.error !== null) return { side, reason: loginRefusal(side, protocol.error, row.authType === "OAUTH") };
  }
  return null;
}

/**
 * Runs the check for a mailbox and stores its outcome. `secrets` holds what a save just wrote; what it
 * lacks is the stored password (IMAP's own when one is stored, else the SMTP one) or, for an OAuth
 * mailbox, the access token its agent holds. An OAuth token refused though it was not fresh is
 * forgotten and the check runs once more with a refreshed one, so only a fresh token's refusal
 * disconnects (CONTRACT 18.5).
 */
export async function runConnectionCheck(env: Bindings, row: MailboxRow, secrets: MailboxSecrets, check: ConnectionChecker = connectionChecker(mailPolicy(config(env)))): Promise<void> {
  const db = database(env.DB);
  const tokens = agentTokens(env);
  const logins = new MailboxLogins(env, db, await loadKeyring(config(env).secretsKey), tokens);
  const now = Date.now();
  const run = async (): Promise<{ result: ConnectionOutcome; fresh: boolean } | null> => {
    const [smtp, imap] = await Promise.all([loginFor(logins, row, "smtp", secrets, now), loginFor(logins, row, "imap", secrets, now)]);
    if (!smtp.ok && smtp.kind === "unavailable") {
      log("warn", "mailbox check postponed: the OAuth provider could not be reached", { mailbox_id: row.id });
      return null;
    }
    const result = await check({
      mailboxId: row.id,
      type: row.type,
      smtp: { host: row.smtpHost, port: row.smtpPort, portType: row.smtpPortType, username: row.username, credential: smtp.ok ? smtp.credential : null },
      imap: { host: row.imapHost, port: row.imapPort, portType: row.imapPortType, username: row.imapUsername ?? row.username, credential: imap.ok ? imap.credential : null },
    });
    return { result, fresh: (!smtp.ok || smtp.fresh) && (!imap.ok || imap.fresh) };
  };
  let first = await run();
  if (first === null) return;
  if (row.authType === "OAUTH" && !first.fresh && refusalOf(row, first.result)?.reason.code === "auth_rejected") {
    await tokens.forget(row);
    first = await run();
    if (first === null) return;
  }
  const { result } = first;
  if (result.smtp.ok === null && result.imap.ok === null) return;
  const refusal = refusalOf(row, result);
  const failing = result.smtp.ok === false || result.imap.ok === false;
  const announce = failing ? await disconnectAnnouncement(db, row, { smtp: result.smtp.error, imap: result.imap.error }, now, refusal?.reason ?? null) : null;
  await recordConnectionOutcome(db, row.id, result, now, announce, refusal?.reason ?? null);
}
