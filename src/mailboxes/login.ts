/**
 * What a mailbox logs in with, for every use of its servers (sending, reading, test emails, the
 * connection check): its stored password, or for an OAuth mailbox an access token held by its agent
 * (CONTRACT 18.4). And what a refused login means (18.5): a password mailbox's refusal is the
 * caller's to record; an OAuth one forgets the held token so the next use refreshes, and a token
 * refused right after its refresh (or a refusal no new token can cure) disconnects the mailbox.
 */
import { config } from "../config";
import type { MailCredential } from "../mail/sasl";
import { SmtpSender } from "../mail/smtp";
import type { Keyring } from "../platform/crypto";
import type { Database } from "../platform/db";
import type { Bindings } from "../platform/env";
import { mailPolicy } from "../platform/outbound";
import { grantGone, loginRefusal, type DisconnectReason } from "./disconnect";
import { smtpTarget, type MailboxRow } from "./rules";
import { disconnectMailbox, storedPassword } from "./store";

export type AccessResult =
  /** `fresh`: refreshed for this call (a refusal of it is not cured by another refresh). */
  | { ok: true; accessToken: string; fresh: boolean }
  /** `disconnected`: a person must act (the mailbox is now marked). `unavailable`: the provider could not be reached; try later. */
  | { ok: false; kind: "disconnected"; reason: DisconnectReason }
  | { ok: false; kind: "unavailable"; message: string };

/** Where an OAuth mailbox's access token comes from: the keeper in its agent, or the agent itself over RPC. */
export interface TokenSource {
  accessToken(mailbox: MailboxRow, now: number): Promise<AccessResult>;
  /** A server refused the held token: the next use refreshes. */
  forget(mailbox: MailboxRow): Promise<void>;
}

export type Side = "smtp" | "imap";

export type MailboxLogin =
  | { ok: true; credential: MailCredential; oauth: boolean; fresh: boolean }
  /** `none`: nothing to log in with (no password stored, or the mailbox is disconnected); `unavailable`: try again later. */
  | { ok: false; kind: "none" | "unavailable"; message: string };

const NO_SECRET = "The mailbox has no password stored";

export class MailboxLogins {
  constructor(
    private readonly env: Bindings,
    private readonly db: Database,
    private readonly keyring: Keyring,
    private readonly tokens: TokenSource,
  ) {}

  /**
   * The credential for one side: IMAP logs in with its own password when one is stored, else the SMTP
   * one. A disconnected OAuth mailbox gets a token only for a connection check (`check`), and only
   * when its grant still stands (a server refused it, such as SMTP AUTH turned off): a check that
   * passes once the admin fixes the server ends the disconnect (CONTRACT 18.5).
   */
  async for(mailbox: MailboxRow, side: Side, now: number, check = false): Promise<MailboxLogin> {
    if (mailbox.authType === "OAUTH") {
      if (mailbox.disconnectCode !== null && (!check || grantGone(mailbox.disconnectCode))) {
        return { ok: false, kind: "none", message: mailbox.disconnectMessage ?? "The mailbox is disconnected" };
      }
      const access = await this.tokens.accessToken(mailbox, now);
      if (access.ok) return { ok: true, credential: { accessToken: access.accessToken }, oauth: true, fresh: access.fresh };
      return access.kind === "unavailable" ? { ok: false, kind: "unavailable", message: access.message } : { ok: false, kind: "none", message: access.reason.message };
    }
    const password = (await storedPassword(this.keyring, mailbox, side)) ?? (side === "imap" ? await storedPassword(this.keyring, mailbox, "smtp") : null);
    return password === null ? { ok: false, kind: "none", message: NO_SECRET } : { ok: true, credential: { password }, oauth: false, fresh: true };
  }

  /** A sender of the mailbox's mail over its SMTP server with `credential` (one session for the messages it is given), never in clear. */
  smtpSession(mailbox: MailboxRow, credential: MailCredential): SmtpSender {
    return new SmtpSender(smtpTarget(mailbox, credential), { allowPlain: false, outbound: mailPolicy(config(this.env)) });
  }

  /**
   * The server refused an OAuth login: true when the mailbox is now disconnected (a fresh token
   * refused, or a refusal such as SMTP AUTH turned off that no token cures), false when only the
   * held token was forgotten and the next use refreshes. Password refusals are the caller's.
   */
  async refused(mailbox: MailboxRow, side: Side, login: { oauth: boolean; fresh: boolean }, serverText: string, now: number): Promise<boolean> {
    if (!login.oauth) return false;
    await this.tokens.forget(mailbox);
    const reason = loginRefusal(side, serverText, true);
    if (!login.fresh && reason.code === "auth_rejected") return false;
    await disconnectMailbox(this.env, this.db, mailbox, side, reason, now);
    return true;
  }
}
