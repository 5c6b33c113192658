import { heldMessage, type SendHold } from "../mailboxes/hold";
import { iso } from "../platform/time";

/**
 * What a manual send may reach, and how many (issue 23): the one rule of every email a person has a
 * mailbox send outside its campaigns (inbox replies and test emails; forwards and one-off sends
 * reuse it). Pure: src/manual-mail/send.ts gathers the facts inside the mailbox's object, the one
 * sender of the mailbox, and acts on the verdict.
 *
 * - Recipients: To, Cc and Bcc lower-cased, each address once (To first, then Cc, then Bcc), at most
 *   MANUAL_RECIPIENT_LIMIT together; none block-listed (the account's entries and those of the
 *   thread's client) nor opted out (a lead of that scope who unsubscribed or hard-bounced), in any
 *   of the three. A refusal names the first address at fault.
 * - Pace: the mailbox's gap (`time_to_wait_in_mins`, from its last send of any kind) holds: a send
 *   before its end waits for it (a reply is queued, a test email refused). So does its server's hold
 *   (src/mailboxes/hold.ts): a person's send does not knock on a server that refused the mailbox's
 *   sending for now before the next try, as no campaign or warmup send does. Manual sends never wait
 *   for the campaign cap (CONTRACT 10 and 21.5: a person's reply goes even when campaign mail spent
 *   the day's cap); they have their own daily allowance of deliveries (one per recipient) equal to
 *   the cap, so a mailbox capped at N sends at most N campaign emails and N manual deliveries a UTC
 *   day. The mailbox's own `bcc` copy is the owner's and counts for neither.
 *
 * Every manual send counts in the mailbox's `daily_sent_count` (one per email) and moves its last
 * send, so campaign mail keeps the gap after it (src/mailboxes/sends.ts).
 */

/** At most this many recipients per manual email: forward's 1-10 (CONTRACT 21.5), and no mass mail by hand. */
export const MANUAL_RECIPIENT_LIMIT = 10;

export interface Recipients {
  to: string;
  cc: string[];
  bcc: string[];
}

/** Why an address may not be reached: on the block list, or its person opted out (unsubscribed, hard-bounced). */
export type AddressRefusal = "blocked" | "opted_out" | "invalid_email";

/** Lower-cased and trimmed, each address once: To keeps it, then Cc, then Bcc. */
export function collapseRecipients(recipients: Recipients): Recipients {
  const to = recipients.to.trim().toLowerCase();
  const seen = new Set([to]);
  const keep = (address: string) => {
    const value = address.trim().toLowerCase();
    if (value === "" || seen.has(value)) return [];
    seen.add(value);
    return [value];
  };
  return { to, cc: recipients.cc.flatMap(keep), bcc: recipients.bcc.flatMap(keep) };
}

export function allRecipients(recipients: Recipients): string[] {
  return [recipients.to, ...recipients.cc, ...recipients.bcc];
}

/** What is wrong with these (collapsed) recipients, or null: too many, or one that may not be reached. */
export function recipientProblem(recipients: Recipients, refusals: ReadonlyMap<string, AddressRefusal>): string | null {
  const all = allRecipients(recipients);
  if (all.length > MANUAL_RECIPIENT_LIMIT) {
    return `A manual email may go to at most ${MANUAL_RECIPIENT_LIMIT} recipients (to, cc and bcc together); this one has ${all.length}`;
  }
  for (const address of all) {
    const refusal = refusals.get(address);
    if (refusal === "blocked") return `The recipient ${address} is on the block list`;
    if (refusal === "opted_out") return `The recipient ${address} has unsubscribed or bounced`;
    if (refusal === "invalid_email") return `The recipient ${address} was verified invalid`;
  }
  return null;
}

export interface MailboxDay {
  now: number;
  /** The end of the UTC day (the allowance renews then). */
  dayEnd: number;
  maxEmailPerDay: number;
  gapMinutes: number;
  /** Recipients its manual sends reached this UTC day. */
  manualToday: number;
  /** Its last send of any kind. */
  lastSentAt: number | null;
  /** Its server's hold, while it lasts. */
  hold: SendHold | null;
}

type Pace = { kind: "now" } | { kind: "refused"; message: string } | { kind: "wait"; until: number; message: string };

/** Whether a manual email to `deliveries` recipients may go now, must wait for the gap or the hold, or exceeds the day's allowance. */
export function manualPace(day: MailboxDay, deliveries: number): Pace {
  const allowance = day.maxEmailPerDay;
  if (day.manualToday + deliveries > allowance) {
    return {
      kind: "refused",
      message:
        `The mailbox has made ${day.manualToday} of its ${allowance} manual deliveries for today (UTC, one per recipient); ` +
        `this email needs ${deliveries}: the allowance renews at ${iso(day.dayEnd)}`,
    };
  }
  const gapEnd = day.lastSentAt === null || day.gapMinutes === 0 ? null : day.lastSentAt + day.gapMinutes * 60_000;
  if (day.hold !== null) {
    const until = Math.max(day.hold.until, gapEnd ?? 0);
    return { kind: "wait", until, message: heldMessage(day.hold, until) };
  }
  if (gapEnd !== null && gapEnd > day.now) {
    // The words are for a send that cannot be queued (a test email); a reply is queued for `until`.
    const minutes = `${day.gapMinutes} minute${day.gapMinutes === 1 ? "" : "s"}`;
    return { kind: "wait", until: gapEnd, message: `The mailbox waits ${minutes} between sends: it may send again at ${iso(gapEnd)}` };
  }
  return { kind: "now" };
}

/**
 * How long after it first came due a send nobody waits on (a scheduled reply, a held forward or
 * one-off email) is tried again once its server refused it for now: a day rides out a provider's
 * daily sending limit, and a reply never goes out days late. A person's send now is told the refusal.
 */
const RETRY_WINDOW_MS = 24 * 3_600_000;

/** The first wait after a message's server refused it for now (a greylisting server asks for a few minutes). */
const TRANSIENT_RETRY_MS = 5 * 60_000;

/**
 * When such a send goes again after its server refused it for now, if within RETRY_WINDOW_MS of
 * `firstDueAt`; null: it fails (a refusal for good, or the window spent). A refusal of the mailbox's
 * sending waits for the hold's end (`heldUntil`); one of the message (`transient`: greylisting, the
 * recipient's mailbox full) waits as long as the send has waited so far, at least 5 minutes, so the
 * tries thin out (about ten in the window) as they do for campaign emails.
 */
export function retryAt(refusal: { heldUntil: number | null; transient: boolean }, firstDueAt: number, now: number): number | null {
  const at = refusal.heldUntil ?? (refusal.transient ? now + Math.max(TRANSIENT_RETRY_MS, now - firstDueAt) : null);
  return at !== null && at <= firstDueAt + RETRY_WINDOW_MS ? at : null;
}

/** What a send waiting to be tried again says: the server's words and when. */
export function retryMessage(refusal: string, at: number): string {
  return `${refusal} (tried again at ${iso(at)})`;
}
