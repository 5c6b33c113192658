import { sql, type SQL } from "drizzle-orm";
import type { ManualSendKind } from "../db/schema";
import { blockListed } from "../leads/block-list";
import { optedOut } from "../leads/opt-out";
import { heldNow } from "../mailboxes/hold";
import { utcDayStart } from "../mailboxes/rules";
import { mailboxSends } from "../mailboxes/sends";
import type { Scope } from "../platform/access";
import { jsonList, rawBatch } from "../platform/sql";
import { allRecipients, recipientProblem, type AddressRefusal, type MailboxDay, type Recipients } from "./rules";

const DAY_MS = 86_400_000;

/**
 * Per address, whether the scope may not reach it: on the block list (the account's entries and
 * the client's, `blockListed`), or a lead of that scope with that address opted out (`optedOut`:
 * unsubscribed or hard-bounced). One seek of each index per address.
 */
function refusalsQuery(scope: Scope, addresses: string[]): SQL {
  return sql`SELECT v.value AS address, CASE
      WHEN ${blockListed(scope.accountId, scope.clientId, sql`v.value`)} THEN 'blocked'
      WHEN EXISTS (SELECT 1 FROM leads l WHERE l.account_id = ${scope.accountId} AND coalesce(l.client_id, 0) IN (0, ${scope.clientId ?? 0})
        AND l.email = v.value AND ${optedOut(sql`l.id`)}) THEN 'opted_out'
      WHEN EXISTS (SELECT 1 FROM leads l WHERE l.account_id = ${scope.accountId} AND coalesce(l.client_id, 0) IN (0, ${scope.clientId ?? 0})
        AND l.email = v.value AND l.verification_status = 'invalid') THEN 'invalid_email'
    END AS refusal
    FROM json_each(${jsonList(addresses)}) v`;
}

function readRefusals(rows: Record<string, unknown>[]): Map<string, AddressRefusal> {
  return new Map(rows.flatMap((row) => (row.refusal === null ? [] : [[String(row.address), row.refusal as AddressRefusal]])));
}

/** What is wrong with these (collapsed) recipients for this scope, or null (src/manual-mail/rules.ts). */
export async function recipientsProblem(d1: D1Database, scope: Scope, recipients: Recipients): Promise<string | null> {
  const [rows] = await rawBatch(d1, [refusalsQuery(scope, allRecipients(recipients))]);
  return recipientProblem(recipients, readRefusals(rows!));
}

/** The facts of one manual send, in one round trip: who may not be reached, and the mailbox's day. */
export async function manualFacts(
  d1: D1Database,
  scope: Scope,
  recipients: Recipients,
  mailbox: { id: number; accountId: number; maxEmailPerDay: number; timeToWaitInMins: number; sendHeldUntil: Date | null; sendHeldReason: string | null },
  now: number,
): Promise<{ refusals: Map<string, AddressRefusal>; day: MailboxDay }> {
  const dayStart = utcDayStart(now);
  const sends = mailboxSends(sql`${mailbox.id}`, sql`${mailbox.accountId}`, dayStart);
  const [refusals, counts] = await rawBatch(d1, [
    refusalsQuery(scope, allRecipients(recipients)),
    sql`SELECT ${sends.manualToday} AS manual_today, ${sends.lastSentAt} AS last_sent_at`,
  ]);
  const row = counts![0]!;
  return {
    refusals: readRefusals(refusals!),
    day: {
      now,
      dayEnd: dayStart + DAY_MS,
      maxEmailPerDay: mailbox.maxEmailPerDay,
      gapMinutes: mailbox.timeToWaitInMins,
      manualToday: Number(row.manual_today),
      lastSentAt: row.last_sent_at === null ? null : Number(row.last_sent_at),
      hold: heldNow(mailbox, now),
    },
  };
}

/** The row of one manual send (src/db/schema/mailboxes.ts `manual_sends`). */
export function manualSendStatement(row: {
  accountId: number;
  mailboxId: number;
  kind: ManualSendKind;
  recipients: number;
  inEvents: boolean;
  messageId: string | null;
  sentAt: number;
}): SQL {
  return sql`INSERT INTO manual_sends (account_id, email_account_id, kind, recipients, in_events, message_id, sent_at)
    VALUES (${row.accountId}, ${row.mailboxId}, ${row.kind}, ${row.recipients}, ${row.inEvents ? 1 : 0}, ${row.messageId}, ${row.sentAt})`;
}
