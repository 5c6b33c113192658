import { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { emailAccounts, outsideSends, type OUTBOUND_REPLY_STATUSES } from "../db/schema";
import { emailAddress } from "../mail/address";
import type { MimeAttachment } from "../mail/mime";
import type { MailboxLogins } from "../mailboxes/login";
import { mailboxObject } from "../mailboxes/wake";
import { visibleRows, type Scope } from "../platform/access";
import { fromBase64, toBase64 } from "../platform/bytes";
import { database, type Database } from "../platform/db";
import type { Bindings } from "../platform/env";
import { ApiError } from "../platform/errors";
import { log } from "../platform/logging";
import { retryAt, retryMessage } from "./rules";
import { deliverManualEmail, type ManualEmail, type ManualOutcome, type ManualSessions } from "./send";

/**
 * Emails sent outside sequences (CONTRACT 21.5: forwards and one-off emails). The route stores the
 * send's progress row (QUEUED) and hands the email to the mailbox's object, which sends it under the
 * manual-send rule (src/manual-mail/rules.ts) and settles the row: COMPLETED, FAILED with the reason,
 * or SCHEDULED for the end of the mailbox's gap or of its server's hold. An email either holds back
 * waits in the object's own storage (it may carry 10 MB of files, more than a D1 row holds) and goes
 * on the object's pass once it ends, so nothing the route accepted is lost when the caller stops waiting.
 */

export type OutsideStatus = (typeof OUTBOUND_REPLY_STATUSES)[number];

export interface OutsideSend {
  /** The progress row (`outside_sends`). */
  id: number;
  email: ManualEmail;
}

/** The mailbox agent's door for emails outside sequences (src/mailbox-agent/ implements it). */
export interface OutsideMailDoor {
  sendOutsideEmail(send: OutsideSend): Promise<ManualOutcome>;
}

export function outsideMailDoor(env: Bindings, mailboxId: number): OutsideMailDoor {
  return mailboxObject(env, mailboxId) as unknown as OutsideMailDoor;
}

/** CONTRACT 21.5: the sending mailbox deleted, suspended, failing or not the caller's (the page gives 500). */
export function mailboxUnusable(): ApiError {
  return new ApiError(400, { ok: false, error: "Email account not found!", status: "error" });
}

/** Addresses as a comma-separated string or an array, 1-10 (at most 10 recipients in all, src/manual-mail/rules.ts). */
export const RecipientList = z
  .union([z.string().max(4000), z.array(z.string().max(320)).max(10)])
  .transform((value) => (Array.isArray(value) ? value : value.split(",")).map((a) => a.trim()).filter(Boolean))
  .pipe(z.array(emailAddress()).min(1).max(10));

export function messageIdFor(fromEmail: string): string {
  return `<${crypto.randomUUID().replaceAll("-", "")}@${fromEmail.split("@")[1]}>`;
}

/** One of the caller's mailboxes (the one tenancy rule), by id or by its address (case-insensitive). */
export function visibleMailbox(db: Database, principal: Scope, key: { id: number } | { address: string }) {
  const which = "id" in key ? eq(emailAccounts.id, key.id) : sql`lower(${emailAccounts.fromEmail}) = ${key.address.toLowerCase()}`;
  return db.select().from(emailAccounts).where(and(which, visibleRows(principal, emailAccounts))).orderBy(emailAccounts.id).get();
}

/** How long a route waits for the mail server's acceptance before it answers "queued" (CONTRACT 21.5). */
export const ACCEPTANCE_WAIT_MS = 25_000;

/**
 * Hands the email to the mailbox's object and waits up to ACCEPTANCE_WAIT_MS for its outcome (null:
 * still sending; the object settles the row whenever it ends, `keepAlive` holds the request for it).
 * A send that breaks without an outcome is settled FAILED, never left QUEUED.
 */
export async function sendWithin(env: Bindings, keepAlive: (work: Promise<unknown>) => void, send: OutsideSend, waitMs = ACCEPTANCE_WAIT_MS): Promise<ManualOutcome | null> {
  const sending = outsideMailDoor(env, send.email.mailboxId)
    .sendOutsideEmail(send)
    .catch(async (error: unknown) => {
      await settle(database(env.DB), send.id, "FAILED", "Sending broke off; the email may not have gone out", null, Date.now());
      throw error;
    });
  keepAlive(sending.catch(() => undefined));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  try {
    return await Promise.race([sending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function insertOutsideSend(
  db: Database,
  row: { accountId: number; clientId: number | null; emailAccountId: number; campaignId: number | null; kind: "forward" | "single"; messageId: string },
) {
  const now = new Date();
  return db
    .insert(outsideSends)
    .values({ ...row, status: "QUEUED", createdAt: now, updatedAt: now })
    .returning({ id: outsideSends.id })
    .get();
}

function settle(db: Database, id: number, status: OutsideStatus, statusMessage: string | null, scheduledAt: number | null, now: number) {
  return db
    .update(outsideSends)
    .set({ status, statusMessage, scheduledAt: scheduledAt === null ? null : new Date(scheduledAt), updatedAt: new Date(now) })
    .where(eq(outsideSends.id, id));
}

/** A send outside sequences by its Message-ID, if the caller's scope may see it (the one tenancy rule). */
export function outsideSendByMessageId(db: Database, principal: Scope, messageId: string) {
  return db
    .select()
    .from(outsideSends)
    .where(and(eq(outsideSends.messageId, messageId), visibleRows(principal, outsideSends)))
    .get();
}

/** What the object keeps of a held-back email: JSON (files as base64) in slices under a storage value's size limit. */
const SLICE = 1_000_000;
const QUEUE_KEY = "outside:queue";

interface Held {
  id: number;
  until: number;
  slices: number;
  /** When it first came due (the first `until`): one its server refused for now is tried again until a day after. */
  since?: number;
}

type StoredEmail = Omit<ManualEmail, "message"> & {
  message: Omit<ManualEmail["message"], "attachments"> & { attachments?: (Omit<MimeAttachment, "content"> & { content: string })[] };
};

function keep(kv: SyncKvStorage, send: OutsideSend, until: number): void {
  const { attachments, ...message } = send.email.message;
  const stored: StoredEmail = { ...send.email, message: { ...message, attachments: attachments?.map((file) => ({ ...file, content: toBase64(file.content) })) } };
  const text = JSON.stringify(stored);
  const slices = Math.ceil(text.length / SLICE);
  for (let i = 0; i < slices; i += 1) kv.put(`outside:${send.id}:${i}`, text.slice(i * SLICE, (i + 1) * SLICE));
  const queue = (kv.get<Held[]>(QUEUE_KEY) ?? []).filter((held) => held.id !== send.id);
  kv.put(QUEUE_KEY, [...queue, { id: send.id, until, slices }]);
}

function take(kv: SyncKvStorage, held: Held): ManualEmail {
  const text = Array.from({ length: held.slices }, (_, i) => kv.get<string>(`outside:${held.id}:${i}`) ?? "").join("");
  const stored = JSON.parse(text) as StoredEmail;
  const attachments = stored.message.attachments?.map((file) => ({ ...file, content: fromBase64(file.content)! }));
  return { ...stored, message: { ...stored.message, attachments } };
}

function forget(kv: SyncKvStorage, held: Held): void {
  for (let i = 0; i < held.slices; i += 1) kv.delete(`outside:${held.id}:${i}`);
}

/** Sends one email now (or holds it for the gap's end) and settles its row. Runs inside the mailbox's object. */
export async function sendOutside(env: Bindings, db: Database, logins: MailboxLogins, kv: SyncKvStorage, send: OutsideSend, now: number): Promise<ManualOutcome> {
  const outcome = await deliverManualEmail(env, logins, send.email, now);
  if (outcome.ok) {
    await settle(db, send.id, "COMPLETED", null, null, Date.now());
  } else if (outcome.kind === "wait") {
    keep(kv, send, outcome.until);
    await settle(db, send.id, "SCHEDULED", outcome.message, outcome.until, Date.now());
  } else {
    await settle(db, send.id, "FAILED", outcome.message, null, Date.now());
  }
  return outcome;
}

/**
 * The mailbox object's share of held-back emails outside sequences: sends those whose gap ended, on
 * the session its pass lends, and tells when the next one is due (null: none waits). One the gap
 * still holds (a send of this pass moved it) waits for the new end.
 */
export async function sendDueOutsideEmails(env: Bindings, db: Database, logins: MailboxLogins, kv: SyncKvStorage, now: number, sessions: ManualSessions): Promise<number | null> {
  const queue = kv.get<Held[]>(QUEUE_KEY) ?? [];
  if (queue.length === 0) return null;
  const waiting: Held[] = [];
  for (const held of queue) {
    if (held.until > now) {
      waiting.push(held);
      continue;
    }
    let email: ManualEmail;
    try {
      email = take(kv, held);
    } catch (error) {
      log("error", "held email unreadable", { send_id: held.id, error: String(error) });
      forget(kv, held);
      await settle(db, held.id, "FAILED", "The held email could not be read back; it was not sent", null, Date.now());
      continue;
    }
    const outcome = await deliverManualEmail(env, logins, email, now, {}, sessions);
    const since = held.since ?? held.until;
    if (!outcome.ok && outcome.kind === "wait") {
      waiting.push({ ...held, until: outcome.until, since });
      await settle(db, held.id, "SCHEDULED", outcome.message, outcome.until, Date.now());
      continue;
    }
    // Its server refused it for now: tried again when the mailbox's other mail is (out of reach, busy, the provider's limit), or after a wait (greylisting, a full mailbox).
    const retry = !outcome.ok && outcome.kind === "server" ? retryAt(outcome, since, now) : null;
    if (!outcome.ok && retry !== null) {
      waiting.push({ ...held, until: retry, since });
      await settle(db, held.id, "SCHEDULED", retryMessage(outcome.message, retry), retry, Date.now());
      continue;
    }
    forget(kv, held);
    await settle(db, held.id, outcome.ok ? "COMPLETED" : "FAILED", outcome.ok ? null : outcome.message, null, Date.now());
    if (!outcome.ok) log("warn", "held email not sent", { send_id: held.id, reason: outcome.message });
  }
  kv.put(QUEUE_KEY, waiting);
  return waiting.length === 0 ? null : Math.min(...waiting.map((held) => held.until));
}
