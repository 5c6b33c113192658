import { sql, type SQL } from "drizzle-orm";
import type { SmtpFailure } from "../mail/smtp-replies";
import { iso } from "../platform/time";

/**
 * A mailbox's send hold: its server refused its sending for now (a 421, its provider's limit) or
 * could not be reached, so nothing of the mailbox (campaign passes, warmup and its unblock code, a
 * person's sends, placement tests) knocks on that server again before the next try, which such a
 * server counts against the mailbox.
 */

/** A mailbox whose server cannot be reached is tried again after this long. */
export const CONNECTION_RETRY_MS = 5 * 60_000;
/**
 * A mailbox its server refused for its own volume or store (a 5xx `unavailable`: a daily limit, its
 * mailbox full) is tried again after this long: each try costs a login, and Microsoft 365 throttles
 * senders whose submissions keep failing.
 */
const SENDING_LIMIT_RETRY_MS = 60 * 60_000;

/** A mailbox's sending held by its server: until the engine's next try, and the server's words (or what went wrong). */
export interface SendHold {
  until: number;
  reason: string;
}

/** When a mailbox's hold ends, if it still holds at `now` (a hold ending at `now` is over); null when not held. */
export function holdEnd(until: Date | number | null, now: number): number | null {
  const end = until instanceof Date ? until.getTime() : until;
  return end !== null && end > now ? end : null;
}

/** The mailbox's hold if it still holds at `now`, with the server's words; null when not held. */
export function heldNow(mailbox: { sendHeldUntil: Date | null; sendHeldReason: string | null }, now: number): SendHold | null {
  const until = holdEnd(mailbox.sendHeldUntil, now);
  return until === null ? null : { until, reason: mailbox.sendHeldReason ?? "" };
}

/**
 * The mailbox's sending held after this failure, whoever met it (a campaign's pass, warmup, a
 * person's send, a placement test): the server out of reach or closing, busy or limiting the mailbox
 * (`unavailable`). A 5xx there is the provider refusing the mailbox's own volume, tried again only
 * after SENDING_LIMIT_RETRY_MS.
 */
export function sendHold(failure: SmtpFailure, now: number): SendHold | null {
  if (failure.kind !== "connection" && failure.kind !== "unavailable") return null;
  const until = now + (failure.code !== null && failure.code >= 500 ? SENDING_LIMIT_RETRY_MS : CONNECTION_RETRY_MS);
  return { until, reason: failure.text };
}

/** What a send refused while the mailbox is held is told: the server's words and when it may send again. */
export function heldMessage(hold: SendHold, until = hold.until): string {
  return `The mailbox's mail server refused its sending for now (${hold.reason}): it may send again at ${iso(until)}`;
}

/**
 * Marks the mailbox's sending held until `until` with the server's words (its server refused it for
 * now, or could not be reached), or clears the mark (`hold` null, after a sent email): what the
 * mailbox's `sending_status` warns of. Clearing writes only a mailbox that holds one.
 */
export function holdStatement(mailboxId: number, hold: SendHold | null, now: number): SQL {
  if (hold === null) return sql`UPDATE email_accounts SET send_held_until = NULL, send_held_reason = NULL, updated_at = ${now} WHERE id = ${mailboxId} AND send_held_until IS NOT NULL`;
  return sql`UPDATE email_accounts SET send_held_until = ${hold.until}, send_held_reason = ${hold.reason}, updated_at = ${now} WHERE id = ${mailboxId}`;
}

/** After a send went: the statement ending a hold the mailbox still carries (one that ran out); none when it carries none. */
export function holdOver(mailbox: { id: number; sendHeldUntil: Date | null }, now: number): SQL[] {
  return mailbox.sendHeldUntil === null ? [] : [holdStatement(mailbox.id, null, now)];
}
