import { and, eq, gt, isNotNull, sql } from "drizzle-orm";
import { emailAccounts, emailAccountTags } from "../db/schema";
import { foreignTagsDropped, visibleRows } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { inList, jsonList, rawBatch } from "../platform/sql";
import type { MailboxRow } from "./rules";
import type { MailboxChanges } from "./store";

/** The caller's mailbox with this address (compared lower-cased, as stored). */
export function visibleMailboxOfAddress(db: Database, principal: Principal, address: string): Promise<MailboxRow | undefined> {
  return db
    .select()
    .from(emailAccounts)
    .where(and(visibleRows(principal, emailAccounts), eq(emailAccounts.fromEmail, address.toLowerCase())))
    .get();
}

/** The visible mailboxes among these ids, with what turning their warmup on and its daily range depend on. */
export function visibleWarmupStates(
  db: Database,
  principal: Principal,
  ids: number[],
): Promise<{ id: number; warmupEnabled: boolean; warmupKeyId: string | null; warmupBlockedReason: string | null; totalWarmupPerDay: number; warmupMinCount: number | null }[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select({
      id: emailAccounts.id,
      warmupEnabled: emailAccounts.warmupEnabled,
      warmupKeyId: emailAccounts.warmupKeyId,
      warmupBlockedReason: emailAccounts.warmupBlockedReason,
      totalWarmupPerDay: emailAccounts.totalWarmupPerDay,
      warmupMinCount: emailAccounts.warmupMinCount,
    })
    .from(emailAccounts)
    .where(and(visibleRows(principal, emailAccounts), sql`${emailAccounts.id} ${inList(ids)}`));
}

/**
 * Applies one change to these mailboxes (already the caller's), each mailbox's own changes of
 * `each` (warmup turned on: its ramp, its identifier), and with `tagIds` replaces their tags, in one
 * batch: all or nothing. Given a client, they leave their old scope's tags in that batch.
 */
export async function updateMailboxes(
  db: Database,
  d1: D1Database,
  ids: number[],
  changes: MailboxChanges,
  tagIds: number[] | undefined,
  each: { id: number; changes: MailboxChanges }[] = [],
): Promise<void> {
  const within = sql`${emailAccounts.id} ${inList(ids)}`;
  const tags =
    tagIds === undefined
      ? []
      : [
          db.delete(emailAccountTags).where(sql`${emailAccountTags.emailAccountId} ${inList(ids)}`),
          sql`INSERT OR IGNORE INTO email_account_tags (email_account_id, tag_id)
        SELECT m.value, t.value FROM json_each(${jsonList(ids)}) m, json_each(${jsonList(tagIds)}) t`,
        ];
  await rawBatch(d1, [
    db.update(emailAccounts).set(changes).where(within),
    ...(changes.clientId === undefined ? [] : [foreignTagsDropped(db, emailAccounts, inList(ids))]),
    ...each.map((one) => db.update(emailAccounts).set(one.changes).where(eq(emailAccounts.id, one.id))),
    ...tags,
  ]);
}

/**
 * Starts a live fetch over the caller's mailboxes whose IMAP check passed, unless one started after
 * `since` still waits for a read: one statement, so two callers at once cannot both start one. The
 * mailboxes marked (their readers clear the mark), or null when one is still running.
 */
export async function startLiveFetch(db: Database, principal: Principal, since: number, now: number): Promise<number[] | null> {
  const client = principal.clientId === null ? sql`` : sql` AND running.client_id = ${principal.clientId}`;
  const marked = await db
    .update(emailAccounts)
    .set({ liveFetchRequestedAt: new Date(now) })
    .where(
      and(
        visibleRows(principal, emailAccounts),
        eq(emailAccounts.isImapSuccess, true),
        sql`NOT EXISTS (SELECT 1 FROM email_accounts running WHERE running.account_id = ${principal.accountId}${client} AND running.live_fetch_requested_at > ${since})`,
      ),
    )
    .returning({ id: emailAccounts.id });
  if (marked.length) return marked.map((row) => row.id).sort((a, b) => a - b);
  const running = await db
    .select({ id: emailAccounts.id })
    .from(emailAccounts)
    .where(and(visibleRows(principal, emailAccounts), isNotNull(emailAccounts.liveFetchRequestedAt), gt(emailAccounts.liveFetchRequestedAt, new Date(since))))
    .limit(1)
    .get();
  return running ? null : [];
}
