import { settingsOf } from "../schedule/settings";
import { composeEmail, stepContent } from "../engine/compose";
import { envelopeOf, outgoing, type SmtpSender } from "../mail/smtp";
import type { Bindings } from "../platform/env";
import { connectionUsable, type MailboxRow } from "../mailboxes/rules";
import { database } from "../platform/db";
import { log } from "../platform/logging";
import { escapeHtml } from "../sequences/template";
import { TEST_ID_HEADER, TEST_RUN_HEADER } from "./placement";
import { claimDueSends, holdTestSends, keepRunMessage, nextTestSendQuery, recordSendError, testStep, type ClaimedSend } from "./test-send-store";
import { holdEnd, holdOver, sendHold, type SendHold } from "../mailboxes/hold";
import { rawBatch } from "../platform/sql";
import type { MailboxLogin, MailboxLogins } from "../mailboxes/login";

/** Test emails sent per mailbox pass; more due ones go on the next pass, at once. */
const SENDS_PER_PASS = 25;

/** The token's line in the body: the checker finds the token here when a provider strips our headers. */
function tokenLine(token: string): string {
  return `Salvo placement test ${token}`;
}

/**
 * Why a test email did not go (null: it went), and the hold its server's refusal puts on the mailbox;
 * `loginRefused`: the server refused the mailbox's login, which no other email of the pass tries again.
 */
type NotSent = { error: string; hold: SendHold | null; loginRefused?: boolean } | null;

/** What one pass's test emails share: one SMTP session (issue 27: a run sends to every seed at once), and each test's step, read once. */
interface PassSends {
  smtp: SmtpSender;
  login: Extract<MailboxLogin, { ok: true }>;
  steps: Map<string, ReturnType<typeof testStep>>;
}

/** Sends `cell`'s email on the pass's session; `nextSeed`, the seed the pass sends to next, has its envelope written behind this email (one round trip an email). */
async function sendOne(env: Bindings, mailbox: MailboxRow, pass: PassSends, logins: MailboxLogins, cell: ClaimedSend, nextSeed: string | null, now: number): Promise<NotSent> {
  const key = `${cell.campaignId}:${cell.sequenceMappingId}`;
  let step = pass.steps.get(key);
  if (!step) pass.steps.set(key, (step = testStep(database(env.DB), cell.campaignId, cell.sequenceMappingId)));
  const content = await step;
  if (content === null) return { error: `The campaign has no live step ${cell.sequenceMappingId} (sequence_mapping_id)`, hold: null };
  const domain = mailbox.fromEmail.split("@")[1] ?? "salvo.invalid";
  const composed = await composeEmail({
    recordId: cell.id,
    step: stepContent(content.step, content.variants),
    lead: { email: cell.seedEmail },
    sender: { fromName: mailbox.fromName, fromEmail: mailbox.fromEmail, signature: mailbox.signature, replyTo: mailbox.differentReplyToAddress },
    settings: { ...settingsOf(content.settings), unsubscribeText: "", addUnsubscribeTag: false },
    thread: [],
    messageId: `<spam-test-${cell.testId}-${cell.runNo}-${cell.id}.${now}@${domain}>`,
    unsubscribeUrl: `mailto:${mailbox.fromEmail}?subject=unsubscribe`,
    track: async (html) => html,
  });
  const message = composed.message;
  message.headers = { ...message.headers, [TEST_ID_HEADER]: cell.trackId, [TEST_RUN_HEADER]: String(cell.runNo) };
  message.text = `${message.text}\n\n${tokenLine(cell.trackId)}`;
  if (message.html !== undefined) message.html = `${message.html}\n<p style="font-size:10px;color:#999">${escapeHtml(tokenLine(cell.trackId))}</p>`;
  const coming = nextSeed === null ? null : envelopeOf(mailbox.fromEmail, nextSeed);
  const result = await pass.smtp.deliver(outgoing(message), coming?.ok ? { next: coming.envelope } : {});
  if (result.ok) {
    // The email went: failing to keep its copy for the content report must not count it as unsent.
    await keepRunMessage(env.DB, cell, { subject: message.subject, text: message.text, html: message.html ?? null, raw: result.raw }, now).catch((error: unknown) =>
      log("warn", "spam test email not kept", { cell_id: cell.id, error: String(error) }),
    );
    return null;
  }
  const loginRefused = result.failure.kind === "auth_failed";
  if (loginRefused) await logins.refused(mailbox, "smtp", pass.login, result.failure.text, now);
  return { error: `The mail server did not take the test email: ${result.failure.text}`, hold: sendHold(result.failure, now), loginRefused };
}

/**
 * The mailbox object's share of spam tests: when the next test email (`next`, as the pass read it)
 * is due, sends the due test emails of `mailbox` (as the pass found it; none: gone), the step
 * rendered as the engine renders it, with no tracking so the link checker sees the real links, the
 * token in a header and in the body; tells when the next one is due (null: none waits). A pass with
 * none due writes nothing.
 */
export async function sendDueTestEmails(env: Bindings, logins: MailboxLogins, mailbox: MailboxRow | undefined, now: number, next: number | null): Promise<number | null> {
  if (!mailbox) return null;
  if (next === null || next > now) return next;
  // Its server refused the mailbox's sending for now: no test email knocks before the next try.
  const heldUntil = holdEnd(mailbox.sendHeldUntil, now);
  if (heldUntil !== null) return heldUntil;
  const due = await claimDueSends(env.DB, mailbox, now, SENDS_PER_PASS);
  const usable = !mailbox.isSuspended && connectionUsable(mailbox);
  const login = due.length > 0 && usable ? await logins.for(mailbox, "smtp", now) : null;
  const pass: PassSends | null = login?.ok ? { smtp: logins.smtpSession(mailbox, login.credential), login, steps: new Map() } : null;
  // The session logs in while the first step is read.
  pass?.smtp.warm(due.length);
  let sent = false;
  /** The login the server refused: the pass's other emails fail with it, no login tried again (a provider may lock a mailbox that keeps trying). */
  let refusedLogin: NotSent = null;
  try {
    for (const [index, cell] of due.entries()) {
      const notSent: NotSent =
        pass === null
          ? { error: "The sender mailbox cannot send (suspended, failing its connection check, disconnected, or no password)", hold: null }
          : (refusedLogin ?? (await sendOne(env, mailbox, pass, logins, cell, due[index + 1]?.seedEmail ?? null, now)));
      if (notSent?.loginRefused) refusedLogin = notSent;
      if (notSent === null) {
        sent = true;
      } else if (notSent.hold !== null) {
        await holdTestSends(env.DB, mailbox.id, due.slice(index).map((c) => c.id), notSent.hold, now);
        log("warn", "spam test emails held: the server refused the mailbox's sending for now", { mailbox_id: mailbox.id, cells: due.length - index, until: notSent.hold.until });
        return notSent.hold.until;
      } else {
        await recordSendError(env.DB, cell.id, notSent.error, Date.now());
        log("warn", "spam test email not sent", { mailbox_id: mailbox.id, cell_id: cell.id, reason: notSent.error });
      }
    }
  } finally {
    await pass?.smtp.close();
  }
  // A send went: a hold that ran out is over, as after a campaign email.
  const over = sent ? holdOver(mailbox, now) : [];
  if (over.length > 0) await rawBatch(env.DB, over);
  return (await nextTestSendQuery(database(env.DB), mailbox.id))[0]?.at ?? null;
}
