import type { SmtpFailure } from "../mail/smtp-replies";
import { CONNECTION_RETRY_MS, sendHold, type SendHold } from "../mailboxes/hold";

/**
 * What became of a claimed record, and what an SMTP failure makes of it. Pure: the sender decides
 * with these, `outcomeStatements` (store.ts) writes them.
 */

/** Back-off of a recipient's temporary refusal, by attempt; after the last, the email fails. */
export const RETRY_DELAYS_MS = [5, 15, 60, 240, 720].map((m) => m * 60_000);
/** After a held OAuth token was refused, the next pass (with a refreshed one) comes this soon. */
export const TOKEN_RETRY_MS = 5_000;

/** The step after the one just done: the record's next step and its due time (null: the sequence ends). */
export interface NextStep {
  nextStep: number | null;
  nextDueAt: number | null;
}

/** What became of one claimed record, as the outcome batch writes it. */
export type RecordOutcome =
  | ({ kind: "sent"; recordId: number; messageRowId: number; subject: string; sentAt: number } & NextStep)
  /** The step was already sent (or may have been): move on without sending it again. */
  | ({ kind: "skipped"; recordId: number } & NextStep)
  /** The transaction was attempted and its end is unknown (the server may have taken it): never sent again, move on. */
  | ({ kind: "unconfirmed"; recordId: number; messageRowId: number; error: string } & NextStep)
  | { kind: "deferred"; recordId: number; messageRowId: number; error: string; retryAt: number; unpin: boolean; countAttempt: boolean }
  | { kind: "failed"; recordId: number; messageRowId: number; error: string }
  | { kind: "bounced"; recordId: number; messageRowId: number; error: string }
  /** Not sent and never will be: block-listed or verified invalid (BLOCKED, with `blocked_reason`), or opted out (STOPPED). */
  | { kind: "refused"; recordId: number; state: "BLOCKED" | "STOPPED"; reason?: "invalid_email" }
  /** Not attempted: back to the due records (its message row, if any, untouched). */
  | { kind: "released"; recordId: number; dueAt: number; unpin: boolean }
  /**
   * Opened (`sending`) but never handed to the server: its row goes back to what it was before the
   * opening (none, or `deferred` with that attempt uncounted), and the record back to the due ones.
   */
  | { kind: "withdrawn"; recordId: number; step: number; prior: "deferred" | null; dueAt: number; unpin: boolean };

/**
 * Where a record goes that a stopped pass did not send (its mailbox held, suspended or its token
 * refused): a first step the claim took from rotation goes back to it, due at once, so another
 * mailbox of its campaign sends it while this one waits; a follow-up, or a first step pinned to the
 * mailbox before its claim (a subsequence's record on its parent's mailbox, a re-pin), stays with it
 * (another would break the thread), due when that mailbox tries again (`retryAt`; null: at once, it
 * waits for its mailbox to be usable).
 */
export function afterStop(record: { step: number; pinned: boolean }, retryAt: number | null, now: number): { dueAt: number; unpin: boolean } {
  return record.step === 1 && !record.pinned ? { dueAt: now, unpin: true } : { dueAt: retryAt ?? now, unpin: false };
}

/** The attempt an SMTP failure ended. */
export interface Attempt {
  recordId: number;
  messageRowId: number;
  step: number;
  /** Pinned to the mailbox before its claim (store.ts `ClaimedRecord.pinned`). */
  pinned: boolean;
  /** This attempt's number for the message: 1 for its first. */
  attempt: number;
  now: number;
  /** Where the record goes when this step counts as done. */
  next: NextStep;
  /** The mailbox logged in with an OAuth token: a refused login is the token's, not a suspension (CONTRACT 18.5). */
  oauth: boolean;
}

interface FailureVerdict {
  outcome: RecordOutcome;
  /** Record a BOUNCE event for the lead. */
  bounce: boolean;
  /** Suspend the mailbox with this reason (its server refused the login). */
  suspend: string | null;
  /** Its server refused the OAuth token, with these words: the agent forgets it, or disconnects the mailbox (mailboxes/login.ts). */
  oauthRefusal: string | null;
  /** Send nothing more in this pass: the rest of the claim is released. */
  stop: boolean;
  /** With `stop`: when the released records are due and the pass should wake (null: only when woken, the mailbox is suspended). */
  retryAt: number | null;
  /** The mailbox's server refused its sending for now or could not be reached: held until the retry, with its words. */
  hold: SendHold | null;
}

/**
 * What one failed SMTP transaction makes of its record: a refused login suspends the mailbox (the
 * message waits, the attempt not counted, a first step back to rotation); a server unreachable,
 * closing the channel or refusing the session for now (a 421, or a 4xx before the recipient) is tried
 * again in 5 minutes, one refusing the mailbox's own volume or store (its daily limit) in an hour, the
 * pass stopped (same: a lead's attempts count only its own refusals); a 4xx for the recipient backs
 * off by attempt, then fails; a 5xx for the recipient is a BOUNCE; any other 5xx fails the email; an
 * answer lost after the message was handed over leaves it in doubt, never sent again.
 */
export function failureOutcome(failure: SmtpFailure, attempt: Attempt): FailureVerdict {
  const { recordId, messageRowId, now } = attempt;
  const verdict = (outcome: RecordOutcome, more: Partial<FailureVerdict> = {}): FailureVerdict => ({
    outcome,
    bounce: false,
    suspend: null,
    oauthRefusal: null,
    stop: false,
    retryAt: null,
    hold: null,
    ...more,
  });
  // The mailbox, not the lead, stopped it: no attempt counted, and it waits as `afterStop` says.
  const waiting = (retryAt: number | null): RecordOutcome => {
    const { dueAt, unpin } = afterStop(attempt, retryAt, now);
    return { kind: "deferred", recordId, messageRowId, error: failure.text, retryAt: dueAt, unpin, countAttempt: false };
  };
  switch (failure.kind) {
    case "auth_failed":
      if (attempt.oauth) {
        const retryAt = now + TOKEN_RETRY_MS;
        return verdict(waiting(retryAt), { oauthRefusal: failure.text, stop: true, retryAt });
      }
      return verdict(waiting(null), { suspend: failure.text, stop: true });
    case "connection":
    case "unavailable": {
      const hold = sendHold(failure, now)!;
      return verdict(waiting(hold.until), { stop: true, retryAt: hold.until, hold });
    }
    case "unconfirmed":
      return verdict({ kind: "unconfirmed", recordId, messageRowId, error: failure.text, ...attempt.next }, { stop: true, retryAt: now + CONNECTION_RETRY_MS });
    case "transient": {
      const delay = RETRY_DELAYS_MS[attempt.attempt - 1];
      return verdict(
        delay === undefined
          ? { kind: "failed", recordId, messageRowId, error: failure.text }
          : { kind: "deferred", recordId, messageRowId, error: failure.text, retryAt: now + delay, unpin: false, countAttempt: true },
      );
    }
    case "recipient_rejected":
      return verdict({ kind: "bounced", recordId, messageRowId, error: failure.text }, { bounce: true });
    case "permanent":
      return verdict({ kind: "failed", recordId, messageRowId, error: failure.text });
  }
}
