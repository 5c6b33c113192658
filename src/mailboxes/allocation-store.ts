import { and, asc, eq, sql } from "drizzle-orm";
import { campaignEmailAccounts, emailAccounts, tags } from "../db/schema";
import { visibleRows } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { inList, jsonList, rawBatch } from "../platform/sql";

/** The tags (of these ids) the caller may see, by id. */
export function visibleTagsOf(db: Database, principal: Principal, ids: number[]) {
  return db
    .select({ id: tags.id, name: tags.name })
    .from(tags)
    .where(and(visibleRows(principal, tags), sql`${tags.id} ${inList(ids)}`))
    .orderBy(asc(tags.id));
}

/** The caller's mailboxes carrying any of these tags, with what decides whether they are connected. */
export function mailboxesTagged(db: Database, principal: Principal, tagIds: number[]) {
  return db
    .select({ id: emailAccounts.id, isSmtpSuccess: emailAccounts.isSmtpSuccess, isImapSuccess: emailAccounts.isImapSuccess, disconnectCode: emailAccounts.disconnectCode })
    .from(emailAccounts)
    .where(
      and(
        visibleRows(principal, emailAccounts),
        sql`${emailAccounts.id} IN (SELECT email_account_id FROM email_account_tags WHERE tag_id ${inList(tagIds)})`,
      ),
    )
    .orderBy(asc(emailAccounts.id));
}

/** How many mailboxes the campaign sends through, and which of these ids are among them. */
export async function attachedAmong(db: Database, campaignId: number, ids: number[]): Promise<{ total: number; among: Set<number> }> {
  const [total, among] = await db.batch([
    db.select({ n: sql<number>`count(*)` }).from(campaignEmailAccounts).where(eq(campaignEmailAccounts.campaignId, campaignId)),
    db
      .select({ id: campaignEmailAccounts.emailAccountId })
      .from(campaignEmailAccounts)
      .where(and(eq(campaignEmailAccounts.campaignId, campaignId), sql`${campaignEmailAccounts.emailAccountId} ${inList(ids)}`)),
  ]);
  return { total: Number(total[0]?.n ?? 0), among: new Set(among.map((row) => row.id)) };
}

/**
 * Attaches these mailboxes, all or none: the insert happens only while the campaign would stay within
 * `cap` mailboxes, so two requests at once cannot pass it together. Answers the links made (the link's
 * rowid is its `id`), none when the cap would be passed.
 */
export async function attachWithinCap(d1: D1Database, campaignId: number, ids: number[], cap: number, now: number) {
  const [rows] = await rawBatch(d1, [
    sql`INSERT INTO campaign_email_accounts (campaign_id, email_account_id, created_at)
        SELECT ${campaignId}, value, ${now} FROM json_each(${jsonList(ids)})
        WHERE (SELECT count(*) FROM campaign_email_accounts WHERE campaign_id = ${campaignId}) + ${ids.length} <= ${cap}
        ON CONFLICT DO NOTHING
        RETURNING rowid AS id, campaign_id, email_account_id`,
  ]);
  return (rows ?? []).map((row) => ({ id: Number(row.id), email_campaign_id: Number(row.campaign_id), email_account_id: Number(row.email_account_id) }));
}

/** The campaign's attached mailboxes, with what decides whether the engine may send from them. */
export function attachedWithState(db: Database, campaignId: number) {
  return db
    .select({ id: emailAccounts.id, isSmtpSuccess: emailAccounts.isSmtpSuccess, isImapSuccess: emailAccounts.isImapSuccess, disconnectCode: emailAccounts.disconnectCode, isSuspended: emailAccounts.isSuspended })
    .from(campaignEmailAccounts)
    .innerJoin(emailAccounts, eq(emailAccounts.id, campaignEmailAccounts.emailAccountId))
    .where(eq(campaignEmailAccounts.campaignId, campaignId))
    .orderBy(asc(emailAccounts.id));
}

/** The record states reallocation moves: those with sending left, but STARTED (CONTRACT 21.1). */
const REALLOCATED_STATES = ["DRAFTED", "INPROGRESS", "PAUSED"] as const;

/**
 * Gives each record of the campaign pinned to no attached mailboxes (or to none; with `from`, pinned
 * to one of those) one of `to`, at random, in one statement. A record a sending pass holds is left
 * alone. Answers the mailbox each moved record got.
 */
export async function reallocateRecords(d1: D1Database, campaignId: number, from: number[] | undefined, to: number[], now: number): Promise<number[]> {
  const pinned =
    from === undefined
      ? sql`(email_account_id IS NULL OR email_account_id NOT IN (SELECT email_account_id FROM campaign_email_accounts WHERE campaign_id = ${campaignId}))`
      : sql`email_account_id ${inList(from)}`;
  const [rows] = await rawBatch(d1, [
    sql`UPDATE campaign_leads SET email_account_id = json_extract(${jsonList(to)}, '$[' || CAST(abs(random()) % ${to.length} AS INTEGER) || ']'), updated_at = ${now}
        WHERE campaign_id = ${campaignId} AND state ${inList(REALLOCATED_STATES)} AND claim_token IS NULL AND ${pinned}
        RETURNING email_account_id`,
  ]);
  return (rows ?? []).map((row) => Number(row.email_account_id));
}
