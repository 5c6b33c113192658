import type { WarmupConfig } from "../config";
import { type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Principal } from "../platform/principal";
import { distinct, presentTag, utcDayStart, type MailboxRow, presentMailbox } from "./rules";
import { mailboxesOfAddresses, mailboxUsage, tagsOfMailboxes, visibleMailboxIds } from "./store";

// Schemas.

/** The tag every mailbox operation is listed under in the reference. */
export const MAILBOX_TAG = ["Email accounts"];

/** The Ack answer of a mailbox change. */
export const ack = (message: string) => ({ ok: true, success: true, message });

/** Mailbox ids named by id or by address; any the caller cannot see is a 400 naming it. */
export async function namedMailboxes(db: Database, principal: Principal, ids: number[] | undefined, emails: string[] | undefined): Promise<number[]> {
  if ((ids === undefined) === (emails === undefined)) {
    throw ApiError.validation([{ path: "email_account_ids", message: "Give either email_account_ids or emails" }]);
  }
  if (emails !== undefined) {
    const wanted = distinct(emails.map((email) => email.toLowerCase()));
    const found = await mailboxesOfAddresses(db, principal, wanted);
    const unknown = wanted.find((email) => !found.some((row) => row.fromEmail === email));
    if (unknown !== undefined) throw ApiError.badRequest(`Email account not found: ${unknown}`);
    return found.map((row) => row.id);
  }
  const wanted = distinct(ids!);
  const visible = new Set(await visibleMailboxIds(db, principal, wanted));
  const unknown = wanted.find((id) => !visible.has(id));
  if (unknown !== undefined) throw ApiError.badRequest(`Email account not found: ${unknown}`);
  return wanted;
}

export async function presentRows(db: Database, principal: Principal, warmup: WarmupConfig, rows: MailboxRow[], withTags = false) {
  const ids = rows.map((row) => row.id);
  const now = Date.now();
  const usage = await mailboxUsage(db, principal, rows, utcDayStart(now), warmup, now);
  const tagsOf = withTags ? await tagsOfMailboxes(db, principal, ids) : null;
  return rows.map((row) => ({
    ...presentMailbox(row, usage.get(row.id)!, now),
    ...(tagsOf ? { tags: tagsOf.get(row.id)!.map(presentTag) } : {}),
  }));
}
