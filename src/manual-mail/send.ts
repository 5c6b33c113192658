import type { SQL } from "drizzle-orm";
import type { ManualSendKind } from "../db/schema";
import { mailbox as addressOf, type MimeAttachment, type MimeMessage } from "../mail/mime";
import type { MailCredential } from "../mail/sasl";
import type { SendResult, SmtpSender } from "../mail/smtp";
import { connectionUsable, type MailboxRow } from "../mailboxes/rules";
import { mailboxById } from "../mailboxes/store";
import { mailboxObject } from "../mailboxes/wake";
import { holdOver, holdStatement, sendHold } from "../mailboxes/hold";
import type { Scope } from "../platform/access";
import { database } from "../platform/db";
import type { Bindings } from "../platform/env";
import { rawBatch } from "../platform/sql";
import { allRecipients, collapseRecipients, manualPace, recipientProblem } from "./rules";
import { manualFacts, manualSendStatement } from "./store";
import type { MailboxLogins } from "../mailboxes/login";

/** An email a person has a mailbox send outside its campaigns. */
export interface ManualEmail {
  kind: ManualSendKind;
  mailboxId: number;
  /** Whose block list and opt-outs hold: the account, and the client of the campaign the email belongs to. */
  scope: Scope;
  /** The email: `to` is its one To recipient; it always goes out from the mailbox's own identity. */
  message: Omit<MimeMessage, "from">;
  cc: string[];
  bcc: string[];
  /** Add the mailbox's own `bcc` copy (CONTRACT 10: every campaign email and manual reply). */
  ownBcc: boolean;
  /** The display name in From, when not the mailbox's own (a one-off email's `fromName`); the address is always the mailbox's. */
  fromName?: string;
}

export type ManualOutcome =
  /** `results`: those of the `record` statements, in order. */
  | { ok: true; sentAt: number; results: Record<string, unknown>[][] }
  | { ok: false; kind: "mailbox" | "refused"; message: string }
  /**
   * `heldUntil`: the server refused the mailbox's sending for now (out of reach, busy, its limit) and
   * holds the mailbox until then; `transient`: it refused this message for now (a 4xx for its
   * recipient: greylisting, a full mailbox), the mailbox not held; neither: for good.
   */
  | { ok: false; kind: "server"; message: string; heldUntil: number | null; transient: boolean }
  /** The mailbox's gap runs until `until`: nothing was sent. */
  | { ok: false; kind: "wait"; until: number; message: string };

interface ManualHooks {
  /** Files fetched once the rule allows the send (a reply's attachments, fetched at send time); a string refuses it. */
  attachments?: () => Promise<MimeAttachment[] | string>;
  /**
   * Statements committed in the same batch as the send's row: a reply's SENT event of its thread
   * (so the day's count takes the reply from the events, src/mailboxes/sends.ts).
   */
  record?: (sent: { at: number; mailbox: MailboxRow }) => SQL[];
}

/**
 * The mailbox agent's door for manual sends (src/mailbox-agent/ implements it): features send
 * through the mailbox's one object, never on their own, so its gap and allowance hold.
 */
export interface ManualMailDoor {
  sendManualEmail(email: ManualEmail): Promise<ManualOutcome>;
}

export function manualMailDoor(env: Bindings, mailboxId: number): ManualMailDoor {
  return mailboxObject(env, mailboxId) as unknown as ManualMailDoor;
}

/**
 * The SMTP session a mailbox pass lends its manual sends (scheduled replies, held emails): the first
 * one due logs in and the others go on the same session (issue 27), where each used to log in for
 * itself. A login the server refused is not tried again with the same credential in that pass
 * (`SmtpSender`); an OAuth mailbox's refreshed token is a new credential, so a new sender that gets
 * its try. A send outside a pass (a route's) has a session of its own.
 */
export class ManualSessions {
  private open: { credential: MailCredential; sender: SmtpSender } | null = null;
  private attempted = false;

  constructor(private readonly logins: MailboxLogins) {}

  /** A send was tried: the server may have held the mailbox, or a send ended a hold that ran out. */
  get tried(): boolean {
    return this.attempted;
  }

  async send(mailbox: MailboxRow, credential: MailCredential, message: MimeMessage, bcc: readonly string[]): Promise<SendResult> {
    this.attempted = true;
    if (this.open === null || !sameCredential(this.open.credential, credential)) {
      await this.close();
      this.open = { credential, sender: this.logins.smtpSession(mailbox, credential) };
    }
    return this.open.sender.send(message, bcc);
  }

  async close(): Promise<void> {
    const open = this.open;
    this.open = null;
    await open?.sender.close();
  }
}

function sameCredential(a: MailCredential, b: MailCredential): boolean {
  return a.password === b.password && a.accessToken === b.accessToken;
}

const UNUSABLE = "The mailbox cannot send: it is deleted, suspended, failing its connection check, or has no password";

/**
 * Sends one manual email after the rule of src/manual-mail/rules.ts (recipients, gap, allowance),
 * on the session a pass lends (`sessions`) or on one of its own, then stores its row (and
 * `hooks.record`) in one batch. Runs inside the mailbox's object only.
 */
export async function deliverManualEmail(
  env: Bindings,
  logins: MailboxLogins,
  email: ManualEmail,
  now: number,
  hooks: ManualHooks = {},
  sessions?: ManualSessions,
): Promise<ManualOutcome> {
  const mailbox = await mailboxById(database(env.DB), email.mailboxId);
  if (!mailbox || mailbox.accountId !== email.scope.accountId || mailbox.isSuspended || !connectionUsable(mailbox)) {
    return { ok: false, kind: "mailbox", message: UNUSABLE };
  }
  const login = await logins.for(mailbox, "smtp", now);
  if (!login.ok) return { ok: false, kind: "mailbox", message: `${UNUSABLE} (${login.message})` };

  const to = addressOf(email.message.to);
  const recipients = collapseRecipients({ to: to.email, cc: email.cc, bcc: email.bcc });
  const { refusals, day } = await manualFacts(env.DB, email.scope, recipients, mailbox, now);
  const problem = recipientProblem(recipients, refusals);
  if (problem !== null) return { ok: false, kind: "refused", message: problem };
  const deliveries = allRecipients(recipients).length;
  const pace = manualPace(day, deliveries);
  if (pace.kind !== "now") return pace.kind === "wait" ? { ok: false, ...pace } : { ok: false, kind: "refused", message: pace.message };

  const attachments = hooks.attachments ? await hooks.attachments() : email.message.attachments;
  if (typeof attachments === "string") return { ok: false, kind: "refused", message: attachments };
  const headers = { ...email.message.headers };
  if (recipients.cc.length > 0) headers.Cc = recipients.cc.join(", ");
  if (mailbox.differentReplyToAddress && headers["Reply-To"] === undefined) headers["Reply-To"] = mailbox.differentReplyToAddress;
  const copies = [...recipients.cc, ...recipients.bcc, ...(email.ownBcc && mailbox.bccEmail ? [mailbox.bccEmail] : [])];
  const message = { ...email.message, from: { email: mailbox.fromEmail, name: email.fromName ?? mailbox.fromName }, to: { ...to, email: recipients.to }, headers, attachments };
  const smtp = sessions ?? new ManualSessions(logins);
  let result: SendResult;
  try {
    result = await smtp.send(mailbox, login.credential, message, copies);
  } finally {
    if (smtp !== sessions) await smtp.close();
  }
  if (!result.ok) {
    if (result.failure.kind === "auth_failed") await logins.refused(mailbox, "smtp", login, result.failure.text, now);
    // Its server refused the mailbox's sending for now: its campaign and warmup mail wait for the next try too.
    const hold = sendHold(result.failure, now);
    if (hold !== null) await rawBatch(env.DB, [holdStatement(mailbox.id, hold, now)]);
    return { ok: false, kind: "server", message: result.failure.text, heldUntil: hold?.until ?? null, transient: result.failure.kind === "transient" };
  }

  const statements = hooks.record?.({ at: now, mailbox }) ?? [];
  const row = manualSendStatement({
    accountId: mailbox.accountId,
    mailboxId: mailbox.id,
    kind: email.kind,
    recipients: deliveries,
    inEvents: hooks.record !== undefined,
    messageId: result.messageId,
    sentAt: now,
  });
  // A send went: a hold that ran out is over, as after a campaign email.
  const results = await rawBatch(env.DB, [...statements, row, ...holdOver(mailbox, now)]);
  return { ok: true, sentAt: now, results: results.slice(0, statements.length) };
}
