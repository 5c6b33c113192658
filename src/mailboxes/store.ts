import { and, asc, count, eq, inArray, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import { campaignEmailAccounts, campaignLeads, campaigns, emailAccounts, emailAccountTags, tags } from "../db/schema";
import { foreignTagsDropped, visibleCampaigns, visibleRows } from "../platform/access";
import { decryptSecret, encryptSecret, type Keyring } from "../platform/crypto";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Principal } from "../platform/principal";
import { inList, jsonList, rawBatch } from "../platform/sql";
import type { ConnectionOutcome, MailboxRow, MailboxUsage, TagRow } from "./rules";
import type { DisconnectReason } from "./disconnect";
import type { Bindings } from "../platform/env";
import { disconnectAnnouncement } from "../webhooks/disconnect";
import { deliveryIds, enqueue } from "../webhooks/outbox";
import { mailboxSends } from "./sends";
import type { WarmupConfig } from "../config";
import { warmupViews } from "../warmup/view";
import { notMoving } from "../platform/moving";

export const MAILBOX_NOT_FOUND = "Email account not found";

export type NewMailbox = Omit<typeof emailAccounts.$inferInsert, "id" | "passwordCiphertext" | "imapPasswordCiphertext" | "oauthTokenCiphertext">;
export type MailboxChanges = Partial<Omit<NewMailbox, "accountId">>;

/** Secrets to store: a value replaces the stored one; undefined keeps it; null (passwords) removes it. */
export interface MailboxSecrets {
  password?: string | null;
  imapPassword?: string | null;
  /** OAuth material as JSON (`{refresh_token}`). */
  oauthToken?: string;
  /** An OAuth access token the caller holds (a consent just gave it): the check logs in with it. Never stored here. */
  accessToken?: string;
}

const smtpContext = (id: number) => `mailbox-smtp-password:${id}`;
const imapContext = (id: number) => `mailbox-imap-password:${id}`;
const oauthContext = (id: number) => `mailbox-oauth-token:${id}`;

const within = (values: readonly unknown[]) => sql`${emailAccounts.id} ${inList(values)}`;

/** The mailbox's row as a query (for a batch: its one row, or none), for its own agent as `mailboxById`. */
export function mailboxQuery(db: Database, id: number) {
  return db.select().from(emailAccounts).where(eq(emailAccounts.id, id));
}

/** A mailbox by id, for its own agent (named by that id, so no caller's tenancy applies). */
export function mailboxById(db: Database, id: number): Promise<MailboxRow | undefined> {
  return mailboxQuery(db, id).get();
}

/** A mailbox the caller may see, or the contract's 404 (another tenant's looks the same as none). */
export async function findMailbox(db: Database, principal: Principal, id: number): Promise<MailboxRow> {
  const row = await db
    .select()
    .from(emailAccounts)
    .where(and(eq(emailAccounts.id, id), visibleRows(principal, emailAccounts)))
    .get();
  if (!row) throw ApiError.notFound(MAILBOX_NOT_FOUND);
  return row;
}

/** A mailbox of the account, whichever client holds it (paths without a caller: the OAuth callback). */
export async function findMailboxOfAccount(db: Database, accountId: number, id: number): Promise<MailboxRow | undefined> {
  return db
    .select()
    .from(emailAccounts)
    .where(and(eq(emailAccounts.id, id), eq(emailAccounts.accountId, accountId)))
    .get();
}

/** The account's mailbox with this (lower-cased) address, whichever client holds it. */
export async function mailboxOfAddress(db: Database, accountId: number, fromEmail: string) {
  return db
    .select({ id: emailAccounts.id, clientId: emailAccounts.clientId })
    .from(emailAccounts)
    .where(and(eq(emailAccounts.accountId, accountId), eq(emailAccounts.fromEmail, fromEmail)))
    .get();
}

/** The visible mailboxes among these ids. */
export async function visibleMailboxIds(db: Database, principal: Principal, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: emailAccounts.id })
    .from(emailAccounts)
    .where(and(visibleRows(principal, emailAccounts), within(ids)));
  return rows.map((row) => row.id);
}

/** The visible mailboxes with these (lower-cased) addresses. */
export async function mailboxesOfAddresses(db: Database, principal: Principal, addresses: string[]) {
  if (addresses.length === 0) return [];
  return db
    .select({ id: emailAccounts.id, fromEmail: emailAccounts.fromEmail })
    .from(emailAccounts)
    .where(and(visibleRows(principal, emailAccounts), sql`${emailAccounts.fromEmail} ${inList(addresses)}`))
    .orderBy(asc(emailAccounts.id));
}

async function sealSecrets(keyring: Keyring, id: number, secrets: MailboxSecrets) {
  const seal = async (value: string | null, context: string) => (value === null ? null : encryptSecret(keyring, value, context));
  return {
    ...(secrets.password === undefined ? {} : { passwordCiphertext: await seal(secrets.password, smtpContext(id)) }),
    ...(secrets.imapPassword === undefined ? {} : { imapPasswordCiphertext: await seal(secrets.imapPassword, imapContext(id)) }),
    ...(secrets.oauthToken === undefined ? {} : { oauthTokenCiphertext: await encryptSecret(keyring, secrets.oauthToken, oauthContext(id)) }),
  };
}

/**
 * Takes the id the next mailbox gets, as AUTOINCREMENT would give it (above its counter, which holds
 * the shard's id range, src/directory/id-ranges.ts, and above every row), and moves the counter to it
 * so no other insert takes it. An id taken by a create that then fails (its address refused) is a
 * gap, like the id of a deleted mailbox.
 */
async function reserveMailboxId(db: Database): Promise<number> {
  const [, reserved] = await rawBatch(db.$client, [
    sql`INSERT INTO sqlite_sequence (name, seq) SELECT 'email_accounts', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'email_accounts')`,
    sql`UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(id), 0) FROM email_accounts)) + 1 WHERE name = 'email_accounts' RETURNING seq`,
  ]);
  return Number(reserved![0]!.seq);
}

/**
 * Creates a mailbox. Its secrets are sealed under its id, so the id is reserved first and the row
 * is written with them in one statement: no mailbox is ever stored without its secrets.
 */
export async function insertMailbox(db: Database, keyring: Keyring, values: NewMailbox, secrets: MailboxSecrets): Promise<MailboxRow> {
  const id = await reserveMailboxId(db);
  const sealed = await sealSecrets(keyring, id, secrets);
  return db
    .insert(emailAccounts)
    .values({ ...values, ...sealed, id })
    .returning()
    .get();
}

/**
 * Applies changes (and new secrets, sealed under `keyring`) to a mailbox; given a client, it leaves
 * the tags of its old scope in the same batch.
 */
export async function updateMailbox(db: Database, keyring: Keyring | null, id: number, changes: MailboxChanges, secrets: MailboxSecrets): Promise<MailboxRow> {
  const sealed = keyring ? await sealSecrets(keyring, id, secrets) : {};
  const update = db
    .update(emailAccounts)
    .set({ ...changes, ...sealed })
    .where(eq(emailAccounts.id, id))
    .returning();
  if (changes.clientId === undefined) return update.get();
  const [rows] = await db.batch([update, foreignTagsDropped(db, emailAccounts, sql`= ${id}`)]);
  return rows[0]!;
}

/** The refresh token an OAuth mailbox holds (its sealed material is JSON `{refresh_token}`), or null. */
export async function storedRefreshToken(keyring: Keyring, row: { id: number; oauthTokenCiphertext: string | null }): Promise<string | null> {
  if (row.oauthTokenCiphertext === null) return null;
  try {
    const material = JSON.parse(await decryptSecret(keyring, row.oauthTokenCiphertext, oauthContext(row.id))) as { refresh_token?: unknown };
    return typeof material.refresh_token === "string" ? material.refresh_token : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

/** The sealed form of a refresh token, for the same statement that uses it (a rotation is stored before its access token is used). */
export function sealRefreshToken(keyring: Keyring, mailboxId: number, refreshToken: string): Promise<string> {
  return encryptSecret(keyring, JSON.stringify({ refresh_token: refreshToken }), oauthContext(mailboxId));
}

/** A stored password, decrypted (null when none is stored): what a check logs in with when the save gave none. */
export async function storedPassword(keyring: Keyring, row: MailboxRow, which: "smtp" | "imap"): Promise<string | null> {
  const ciphertext = which === "smtp" ? row.passwordCiphertext : row.imapPasswordCiphertext;
  if (ciphertext === null) return null;
  return decryptSecret(keyring, ciphertext, which === "smtp" ? smtpContext(row.id) : imapContext(row.id));
}

/**
 * When a mailbox was last checked: its check, or (never checked: saved while checks were off, or
 * reset by a change) its last change. Indexed as `email_accounts_recheck_idx`, over mailboxes with a
 * password or a refresh token, so the expression and the condition here must stay those of the index.
 */
const lastChecked = sql`coalesce(${emailAccounts.checkedAt}, ${emailAccounts.updatedAt})`;
const hasSecret = or(isNotNull(emailAccounts.passwordCiphertext), isNotNull(emailAccounts.imapPasswordCiphertext), isNotNull(emailAccounts.oauthTokenCiphertext));

/** The ids of up to `limit` mailboxes with a password or refresh token last checked before `before`, oldest first. */
export function mailboxesDueForRecheck(db: Database, before: number, limit: number) {
  return db
    .select({ id: emailAccounts.id })
    .from(emailAccounts)
    .where(and(hasSecret, sql`${lastChecked} < ${before}`, notMoving(sql`${emailAccounts.accountId}`)))
    .orderBy(lastChecked)
    .limit(limit);
}

/**
 * Claims the mailboxes due for a re-check by stamping their `checked_at` with `now`: a second run
 * in the same minute (a cron fired twice) finds them taken, and a mailbox whose check then fails for
 * our own reasons waits a day rather than blocking the queue.
 */
export async function claimMailboxesToRecheck(db: Database, before: number, now: number, limit: number): Promise<MailboxRow[]> {
  const due = mailboxesDueForRecheck(db, before, limit);
  return db
    .update(emailAccounts)
    .set({ checkedAt: new Date(now) })
    .where(and(inArray(emailAccounts.id, due), sql`${lastChecked} < ${before}`))
    .returning();
}

/** Puts mailboxes first in line for the re-check job (a reconnect): as if last checked at the epoch. */
export async function queueRecheck(db: Database, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.update(emailAccounts).set({ checkedAt: new Date(0) }).where(within(ids));
}

/**
 * Stores a connection check's outcome, after `announce` (webhook deliveries a failure causes) in the
 * same D1 batch. Their ids are left to the minute cron to enqueue.
 */
export async function recordConnectionOutcome(
  db: Database,
  id: number,
  outcome: ConnectionOutcome,
  now: number,
  announce: SQL | null = null,
  refusal: DisconnectReason | null = null,
): Promise<void> {
  const passed = outcome.smtp.ok !== false && outcome.imap.ok !== false;
  // A refused login disconnects (a person must act); a passing check ends a disconnect; a passing fault changes neither.
  const disconnect = refusal
    ? { disconnectCode: refusal.code, disconnectMessage: refusal.message, disconnectedAt: sql`coalesce(${emailAccounts.disconnectedAt}, ${now})` }
    : passed
      ? { disconnectCode: null, disconnectMessage: null, disconnectedAt: null }
      : {};
  const update = db
    .update(emailAccounts)
    .set({
      isSmtpSuccess: outcome.smtp.ok,
      smtpFailureError: outcome.smtp.error,
      isImapSuccess: outcome.imap.ok,
      imapFailureError: outcome.imap.error,
      checkedAt: new Date(now),
      ...disconnect,
    })
    .where(eq(emailAccounts.id, id));
  await rawBatch(db.$client, announce === null ? [update] : [announce, update]);
}

/** Deletes a mailbox: it leaves its campaigns and tags (cascade) and records pinned to it go back to rotation. */
export async function deleteMailbox(db: Database, accountId: number, id: number): Promise<void> {
  await db.batch([
    db
      .update(campaignLeads)
      .set({ emailAccountId: null })
      .where(and(eq(campaignLeads.accountId, accountId), eq(campaignLeads.emailAccountId, id))),
    db.delete(emailAccounts).where(eq(emailAccounts.id, id)),
  ]);
}

interface MailboxFilters {
  isInUse?: boolean;
  warmupEnabled?: boolean;
  isSmtpSuccess?: boolean;
  isWarmupBlocked?: boolean;
  type?: string;
  username?: string;
  clientId?: number;
  connectionState?: "unchecked" | "connected" | "failing" | "disconnected";
  needsReconnect?: boolean;
}

/** rules.ts `connectionStateOf` in SQL, for the list filter. */
const CONNECTION_STATE = sql`CASE
  WHEN ${emailAccounts.disconnectCode} IS NOT NULL THEN 'disconnected'
  WHEN ${emailAccounts.isSmtpSuccess} = 0 OR ${emailAccounts.isImapSuccess} = 0 THEN 'failing'
  WHEN ${emailAccounts.isSmtpSuccess} = 1 AND ${emailAccounts.isImapSuccess} IS NOT NULL THEN 'connected'
  ELSE 'unchecked' END`;

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One page of the visible mailboxes that pass the filters, by id. */
export async function listMailboxes(db: Database, principal: Principal, filters: MailboxFilters, offset: number, limit: number): Promise<MailboxRow[]> {
  const conditions: (SQL | undefined)[] = [visibleRows(principal, emailAccounts)];
  // In use: attached to a campaign the caller may see (an owner may attach a client's mailbox to its own).
  const attached = sql`EXISTS (SELECT 1 FROM ${campaignEmailAccounts} INNER JOIN ${campaigns} ON ${campaigns.id} = ${campaignEmailAccounts.campaignId}
    WHERE ${campaignEmailAccounts.emailAccountId} = ${emailAccounts.id} AND ${visibleCampaigns(principal)})`;
  if (filters.isInUse !== undefined) conditions.push(filters.isInUse ? attached : sql`NOT ${attached}`);
  if (filters.warmupEnabled !== undefined) conditions.push(eq(emailAccounts.warmupEnabled, filters.warmupEnabled));
  if (filters.isSmtpSuccess !== undefined) conditions.push(eq(emailAccounts.isSmtpSuccess, filters.isSmtpSuccess));
  if (filters.isWarmupBlocked !== undefined) conditions.push(filters.isWarmupBlocked ? isNotNull(emailAccounts.warmupBlockedReason) : isNull(emailAccounts.warmupBlockedReason));
  if (filters.type !== undefined) conditions.push(eq(emailAccounts.type, filters.type as MailboxRow["type"]));
  if (filters.clientId !== undefined) conditions.push(eq(emailAccounts.clientId, filters.clientId));
  if (filters.connectionState !== undefined) conditions.push(sql`${CONNECTION_STATE} = ${filters.connectionState}`);
  if (filters.needsReconnect !== undefined) conditions.push(filters.needsReconnect ? isNotNull(emailAccounts.disconnectCode) : isNull(emailAccounts.disconnectCode));
  if (filters.username !== undefined) {
    // Addresses and logins are ASCII in practice; SQLite's LIKE folds ASCII case.
    const pattern = `%${escapeLike(filters.username)}%`;
    conditions.push(or(sql`${emailAccounts.username} LIKE ${pattern} ESCAPE '\\'`, sql`${emailAccounts.fromEmail} LIKE ${pattern} ESCAPE '\\'`));
  }
  return db
    .select()
    .from(emailAccounts)
    .where(and(...conditions))
    .orderBy(asc(emailAccounts.id))
    .limit(limit)
    .offset(offset);
}

/**
 * Each mailbox's campaigns (those the caller may see, as `campaign_ids` by id), its sends of the UTC day
 * from `dayStart` (src/mailboxes/sends.ts) and its warmup (src/warmup/view.ts).
 */
export async function mailboxUsage(db: Database, principal: Principal, rows: MailboxRow[], dayStart: number, warmup: WarmupConfig, now: number): Promise<Map<number, MailboxUsage>> {
  const accountId = principal.accountId;
  const ids = rows.map((row) => row.id);
  const usage = new Map<number, Omit<MailboxUsage, "warmup">>(ids.map((id) => [id, { dailySentCount: 0, campaignCount: 0 }]));
  if (ids.length === 0) return new Map();
  const [campaignsPer, sentPer] = await db.batch([
    db
      .select({ mailboxId: campaignEmailAccounts.emailAccountId, n: count() })
      .from(campaignEmailAccounts)
      .innerJoin(campaigns, eq(campaigns.id, campaignEmailAccounts.campaignId))
      .where(and(sql`${campaignEmailAccounts.emailAccountId} ${inList(ids)}`, visibleCampaigns(principal)))
      .groupBy(campaignEmailAccounts.emailAccountId),
    db
      .select({ mailboxId: emailAccounts.id, n: mailboxSends(sql`${emailAccounts.id}`, sql`${emailAccounts.accountId}`, dayStart).sentToday })
      .from(emailAccounts)
      .where(and(sql`${emailAccounts.id} ${inList(ids)}`, eq(emailAccounts.accountId, accountId))),
  ]);
  for (const row of campaignsPer) usage.get(row.mailboxId)!.campaignCount = row.n;
  for (const row of sentPer) usage.get(row.mailboxId)!.dailySentCount = row.n;
  const views = await warmupViews(db, warmup, rows, new Map([...usage].map(([id, u]) => [id, u.dailySentCount])), now, dayStart);
  return new Map([...usage].map(([id, u]) => [id, { ...u, warmup: views.get(id)! }]));
}

/** The visible mailboxes a reconnect re-checks: these ids, or every one whose last check failed. */
export async function reconnectTargets(db: Database, principal: Principal, ids: number[] | undefined): Promise<number[]> {
  const which = ids === undefined ? or(eq(emailAccounts.isSmtpSuccess, false), eq(emailAccounts.isImapSuccess, false)) : within(ids);
  const rows = await db
    .select({ id: emailAccounts.id })
    .from(emailAccounts)
    .where(and(visibleRows(principal, emailAccounts), which));
  return rows.map((row) => row.id);
}

// Campaign <-> mailboxes.

export async function campaignMailboxes(db: Database, campaignId: number): Promise<MailboxRow[]> {
  const rows = await db
    .select({ mailbox: emailAccounts })
    .from(campaignEmailAccounts)
    .innerJoin(emailAccounts, eq(emailAccounts.id, campaignEmailAccounts.emailAccountId))
    .where(eq(campaignEmailAccounts.campaignId, campaignId))
    .orderBy(asc(emailAccounts.id));
  return rows.map((row) => row.mailbox);
}

/** The campaigns (of those the caller may see) a mailbox is attached to. */
export async function campaignIdsOf(db: Database, principal: Principal, mailboxId: number): Promise<number[]> {
  const rows = await db
    .select({ campaignId: campaignEmailAccounts.campaignId })
    .from(campaignEmailAccounts)
    .innerJoin(campaigns, eq(campaigns.id, campaignEmailAccounts.campaignId))
    .where(and(eq(campaignEmailAccounts.emailAccountId, mailboxId), visibleCampaigns(principal)))
    .orderBy(asc(campaignEmailAccounts.campaignId));
  return rows.map((row) => row.campaignId);
}

/** Attaches mailboxes (already attached ones stay) and answers every mailbox now attached. */
export async function attachMailboxes(db: Database, campaignId: number, ids: number[]): Promise<number[]> {
  await db.run(
    sql`INSERT OR IGNORE INTO campaign_email_accounts (campaign_id, email_account_id)
        SELECT ${campaignId}, value FROM json_each(${jsonList(ids)})`,
  );
  const rows = await db
    .select({ id: campaignEmailAccounts.emailAccountId })
    .from(campaignEmailAccounts)
    .where(eq(campaignEmailAccounts.campaignId, campaignId))
    .orderBy(asc(campaignEmailAccounts.emailAccountId));
  return rows.map((row) => row.id);
}

/** Detaches mailboxes; the campaign's records pinned to them with work left go back to rotation. */
export async function detachMailboxes(db: Database, campaignId: number, ids: number[]): Promise<void> {
  await db.batch([
    db
      .delete(campaignEmailAccounts)
      .where(and(eq(campaignEmailAccounts.campaignId, campaignId), sql`${campaignEmailAccounts.emailAccountId} ${inList(ids)}`)),
    db
      .update(campaignLeads)
      .set({ emailAccountId: null })
      .where(and(eq(campaignLeads.campaignId, campaignId), sql`${campaignLeads.emailAccountId} ${inList(ids)}`, isNotNull(campaignLeads.dueAt))),
  ]);
}

// Tags: the account's catalogue (the one campaign tags use), in client scopes.

const tagColumns = { id: tags.id, name: tags.name, color: tags.color, clientId: tags.clientId };

export async function visibleTags(db: Database, principal: Principal): Promise<TagRow[]> {
  return db.select(tagColumns).from(tags).where(visibleRows(principal, tags)).orderBy(asc(tags.name), asc(tags.id));
}

export async function findTag(db: Database, principal: Principal, id: number) {
  return db
    .select(tagColumns)
    .from(tags)
    .where(and(eq(tags.id, id), visibleRows(principal, tags)))
    .get();
}

export async function visibleTagIds(db: Database, principal: Principal, ids: number[]): Promise<number[]> {
  const rows = await db
    .select({ id: tags.id })
    .from(tags)
    .where(and(visibleRows(principal, tags), sql`${tags.id} ${inList(ids)}`));
  return rows.map((row) => row.id);
}

/** The tag of this name in a scope (client, or null for the account itself). */
export async function tagNamed(db: Database, accountId: number, clientId: number | null, name: string) {
  return db
    .select(tagColumns)
    .from(tags)
    .where(and(eq(tags.accountId, accountId), clientId === null ? isNull(tags.clientId) : eq(tags.clientId, clientId), eq(tags.name, name)))
    .get();
}

/** Creates a tag, or answers the scope's tag of that name (its color unchanged). */
export async function createTag(db: Database, accountId: number, clientId: number | null, name: string, color: string): Promise<TagRow> {
  await db.insert(tags).values({ accountId, clientId, name, color }).onConflictDoNothing();
  return (await tagNamed(db, accountId, clientId, name))!;
}

export async function updateTag(db: Database, id: number, changes: { name: string; color?: string }): Promise<TagRow> {
  return db.update(tags).set(changes).where(eq(tags.id, id)).returning(tagColumns).get();
}

export async function assignTags(db: Database, mailboxIds: number[], tagIds: number[]): Promise<void> {
  await db.run(
    sql`INSERT OR IGNORE INTO email_account_tags (email_account_id, tag_id)
        SELECT m.value, t.value FROM json_each(${jsonList(mailboxIds)}) m, json_each(${jsonList(tagIds)}) t`,
  );
}

export async function removeTags(db: Database, mailboxIds: number[], tagIds: number[]): Promise<void> {
  await db
    .delete(emailAccountTags)
    .where(and(sql`${emailAccountTags.emailAccountId} ${inList(mailboxIds)}`, sql`${emailAccountTags.tagId} ${inList(tagIds)}`));
}

/**
 * Each mailbox's tags the caller may see, by name: an owner may put any scope's tag on a client's
 * mailbox, and another client's tag must not show to that client's key.
 */
export async function tagsOfMailboxes(db: Database, principal: Principal, mailboxIds: number[]): Promise<Map<number, TagRow[]>> {
  const byMailbox = new Map<number, TagRow[]>(mailboxIds.map((id) => [id, []]));
  if (mailboxIds.length === 0) return byMailbox;
  const rows = await db
    .select({ mailboxId: emailAccountTags.emailAccountId, id: tags.id, name: tags.name, color: tags.color })
    .from(emailAccountTags)
    .innerJoin(tags, eq(tags.id, emailAccountTags.tagId))
    .where(and(sql`${emailAccountTags.emailAccountId} ${inList(mailboxIds)}`, visibleRows(principal, tags)))
    .orderBy(asc(tags.name), asc(tags.id));
  for (const { mailboxId, ...tag } of rows) byMailbox.get(mailboxId)?.push(tag);
  return byMailbox;
}

/** The mailboxes attached to any of these campaigns, each once (to wake them when they start or gain leads). */
export async function mailboxIdsOfCampaigns(db: Database, campaignIds: readonly number[]): Promise<number[]> {
  const rows = await db
    .selectDistinct({ id: campaignEmailAccounts.emailAccountId })
    .from(campaignEmailAccounts)
    .where(sql`${campaignEmailAccounts.campaignId} ${inList(campaignIds)}`);
  return rows.map((row) => row.id);
}

/**
 * Marks a mailbox disconnected (CONTRACT 18.5: a person must act) in one batch: its reason, the side
 * that failed, EMAIL_ACCOUNT_DISCONNECTED when it was still usable, and the records whose first email
 * is unsent back in rotation (started ones stay pinned: moving them would break their threads).
 */
export async function disconnectMailbox(
  env: Bindings,
  db: Database,
  mailbox: MailboxRow,
  side: "smtp" | "imap",
  reason: DisconnectReason,
  now: number,
  /** A refused refresh: only while the mailbox still holds the grant refused (a reconnect meanwhile brought a new one). */
  grant?: string | null,
): Promise<void> {
  const failure = side === "smtp" ? { smtp: reason.message, imap: null } : { smtp: null, imap: reason.message };
  const held = grant === undefined ? null : sql`EXISTS (SELECT 1 FROM email_accounts WHERE id = ${mailbox.id} AND oauth_token_ciphertext IS ${grant})`;
  const announce = await disconnectAnnouncement(db, mailbox, failure, now, reason, held);
  const statements = [
    ...(announce === null ? [] : [announce]),
    sql`UPDATE email_accounts SET disconnect_code = ${reason.code}, disconnect_message = ${reason.message}, disconnected_at = coalesce(disconnected_at, ${now}),
               ${side === "smtp" ? sql`is_smtp_success = 0, smtp_failure_error = ${reason.message}` : sql`is_imap_success = 0, imap_failure_error = ${reason.message}`},
               checked_at = ${now}, updated_at = ${now}
        WHERE id = ${mailbox.id} AND ${held ?? sql`1`}`,
    sql`UPDATE campaign_leads SET email_account_id = NULL
        WHERE account_id = ${mailbox.accountId} AND email_account_id = ${mailbox.id} AND has_sent = 0 AND claim_token IS NULL AND ${held ?? sql`1`}`,
  ];
  const results = await rawBatch(db.$client, statements);
  if (announce !== null) await enqueue(env, deliveryIds(results[0]));
}

/**
 * A refresh's trace on the mailbox: when, and the rotated refresh token (sealed) when the provider
 * sent one; only while the mailbox still holds the grant refreshed (`grant`, its sealed refresh
 * token). False when a reconnect brought a new grant meanwhile: nothing is written.
 */
export async function recordRefresh(db: Database, mailboxId: number, grant: string | null, rotatedCiphertext: string | null, now: number): Promise<boolean> {
  const rows = await db
    .update(emailAccounts)
    .set({ oauthLastRefreshAt: new Date(now), ...(rotatedCiphertext === null ? {} : { oauthTokenCiphertext: rotatedCiphertext }) })
    .where(and(eq(emailAccounts.id, mailboxId), grant === null ? isNull(emailAccounts.oauthTokenCiphertext) : eq(emailAccounts.oauthTokenCiphertext, grant)))
    .returning({ id: emailAccounts.id });
  return rows.length > 0;
}
