import { and, asc, eq, isNotNull, sql, type SQL } from "drizzle-orm";
import { seedMailboxes, type ResultFindings, type SeedCursor } from "../db/schema";
import type { Database } from "../platform/db";
import { rawBatch, statement } from "../platform/sql";
import type { SeedMailboxRow } from "./seed-store";
import { notMoving } from "../platform/moving";

/** A cell waiting for its email at one seed, with what the checker needs of its test and run. */
export interface PendingCell {
  id: number;
  testId: number;
  runNo: number;
  senderEmail: string;
  trackId: string;
  spamFilters: boolean;
  linkChecker: boolean;
  runStartedAt: number;
  /** False while a move has fenced the test's account (src/moves/): its cell cannot be written now. */
  writable: boolean;
}

/** What the checker found for one cell. */
export interface Finding extends ResultFindings {
  cellId: number;
  /** The copy's header block as it arrived (src/deliverability/copy-headers.ts). */
  rawHeaders: string;
  folder: "inbox" | "tab" | "spam";
  mailboxFolder: string;
  receivedAt: number;
}

/** The seeds the checker reads now: those with IMAP settings and at least one pending cell. */
export function seedsToCheck(db: Database): Promise<SeedMailboxRow[]> {
  return db
    .select()
    .from(seedMailboxes)
    .where(
      and(
        isNotNull(seedMailboxes.imapHost),
        sql`EXISTS (SELECT 1 FROM spam_test_results r WHERE r.seed_email = seed_mailboxes.email AND r.folder = 'pending')`,
      ),
    )
    .orderBy(asc(seedMailboxes.id));
}

/** The pending cells of one seed (through the partial index of pending cells), oldest run first. */
export async function pendingCellsOf(d1: D1Database, seedEmail: string): Promise<PendingCell[]> {
  const rows = await statement(
    d1,
    sql`SELECT r.id, r.spam_test_id AS testId, r.run_no AS runNo, r.sender_email AS senderEmail, t.email_track_id AS trackId,
               t.spam_filters AS spamFilters, t.link_checker AS linkChecker, u.started_at AS runStartedAt,
               ${notMoving(sql`t.account_id`)} AS writable
        FROM spam_test_results r
        JOIN spam_tests t ON t.id = r.spam_test_id
        JOIN spam_test_runs u ON u.spam_test_id = r.spam_test_id AND u.run_no = r.run_no
        WHERE r.seed_email = ${seedEmail} AND r.folder = 'pending'
        ORDER BY r.run_no, r.id`,
  ).all<Omit<PendingCell, "spamFilters" | "linkChecker" | "writable"> & { spamFilters: number; linkChecker: number; writable: number }>();
  return rows.results.map((row) => ({ ...row, spamFilters: Boolean(row.spamFilters), linkChecker: Boolean(row.linkChecker), writable: Boolean(row.writable) }));
}

function findingStatement(finding: Finding, now: number): SQL {
  return sql`UPDATE spam_test_results SET folder = ${finding.folder}, mailbox_folder = ${finding.mailboxFolder},
      message_id = ${finding.messageId}, received_at = ${finding.receivedAt}, spam_score = ${finding.spamScore},
      spam_required = ${finding.spamRequired}, spam_action = ${finding.spamAction},
      spam_symbols = ${finding.spamSymbols === null ? null : JSON.stringify(finding.spamSymbols)},
      spf = ${finding.spf}, dkim = ${finding.dkim}, dmarc = ${finding.dmarc}, sender_ip = ${finding.senderIp},
      sender_host = ${finding.senderHost}, raw_headers = ${finding.rawHeaders}, link_report = ${finding.linkReport === null ? null : JSON.stringify(finding.linkReport)},
      updated_at = ${now}
    WHERE id = ${finding.cellId} AND folder = 'pending'`;
}

/**
 * One seed's pass in one batch: its findings (a cell already answered, by hand or by an earlier
 * pass, is left as it is) and where its folders' cursors now stand, so a failed write reads the
 * same messages again rather than lose them.
 */
export async function storeSeedPass(d1: D1Database, db: Database, seedId: number, findings: Finding[], cursor: SeedCursor, now: number): Promise<void> {
  await rawBatch(d1, [
    ...findings.map((finding) => findingStatement(finding, now)),
    db.update(seedMailboxes).set({ cursor, checkError: null, checkedAt: new Date(now) }).where(eq(seedMailboxes.id, seedId)),
  ]);
}

/**
 * Pending cells past their deadline become `not_received`: the email's send time (automated runs)
 * or the run's start (manual tests), plus `minutes`. Answers how many.
 */
export async function expireOverdueCells(d1: D1Database, now: number, minutes: number): Promise<number> {
  const result = await statement(
    d1,
    sql`UPDATE spam_test_results SET folder = 'not_received', updated_at = ${now}
        WHERE folder = 'pending'
          AND coalesce(send_at, (SELECT u.started_at FROM spam_test_runs u
                                  WHERE u.spam_test_id = spam_test_results.spam_test_id AND u.run_no = spam_test_results.run_no))
              + ${minutes * 60_000} <= ${now}
          AND ${notMoving(sql`(SELECT t.account_id FROM spam_tests t WHERE t.id = spam_test_results.spam_test_id)`)}`,
  ).run();
  return result.meta.changes;
}
