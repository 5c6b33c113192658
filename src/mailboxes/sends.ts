import { sql, type SQL } from "drizzle-orm";

const DAY_MS = 86_400_000;

/**
 * What a mailbox sent, as correlated subqueries (`mailboxId` and `accountId` may be columns of the
 * outer query): the one definition of "sent today by this mailbox" that its `daily_sent_count`, the
 * engine's cap and gap, `sending_status` and the manual-send rule all read.
 *
 * - `sentToday`: emails of the UTC day starting at `dayStart`: the SENT events of the mailbox's own
 *   account naming it (campaign emails, inbox replies, an engine's reports; another account's events
 *   naming its id count for nothing), plus its manual sends that are no event (test emails, later
 *   forwards and one-off sends). One email each, whatever its recipients.
 * - `lastSentAt`: its latest send of any kind, warmup mail included (the gap runs from it).
 * - `manualToday`: recipients its manual sends reached that day (their own daily allowance).
 * - `capToday`: what the cap counts: `sentToday`, plus the day's warmup mail when the mailbox's
 *   `auto_adjust_warmup` is on (CONTRACT 19.4: campaign and warmup mail then share the cap). Warmup
 *   mail is never part of `sentToday` (19.5: not in `daily_sent_count`).
 *
 * Each is a seek of `events_mailbox_type_time_idx` or `manual_sends_mailbox_time_idx`.
 */
export function mailboxSends(mailboxId: SQL, accountId: SQL, dayStart: number) {
  const dayEnd = dayStart + DAY_MS;
  const events = sql`FROM events WHERE email_account_id = ${mailboxId} AND type = 'SENT' AND account_id = ${accountId}`;
  const manual = sql`FROM manual_sends WHERE email_account_id = ${mailboxId}`;
  const warmup = sql`FROM warmup_messages WHERE sender_id = ${mailboxId} AND status = 'sent'`;
  const sentToday = sql<number>`((SELECT count(*) ${events} AND occurred_at >= ${dayStart} AND occurred_at < ${dayEnd})
      + (SELECT count(*) ${manual} AND sent_at >= ${dayStart} AND sent_at < ${dayEnd} AND in_events = 0))`;
  return {
    sentToday,
    capToday: sql<number>`(${sentToday} + CASE WHEN (SELECT auto_adjust_warmup FROM email_accounts WHERE id = ${mailboxId}) = 1
      THEN (SELECT count(*) ${warmup} AND sent_at >= ${dayStart} AND sent_at < ${dayEnd}) ELSE 0 END)`,
    lastSentAt: sql<number | null>`nullif(max(coalesce((SELECT max(occurred_at) ${events}), -1), coalesce((SELECT max(sent_at) ${manual}), -1),
      coalesce((SELECT max(sent_at) ${warmup}), -1)), -1)`,
    manualToday: sql<number>`(SELECT coalesce(sum(recipients), 0) ${manual} AND sent_at >= ${dayStart} AND sent_at < ${dayEnd})`,
  };
}
