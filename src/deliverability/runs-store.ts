import { and, asc, isNotNull, lte, sql, type SQL } from "drizzle-orm";
import { spamTests } from "../db/schema";
import type { Database } from "../platform/db";
import { inList, rawBatch, statement } from "../platform/sql";
import type { DueSlot, DueTest } from "./schedule";
import { notMoving } from "../platform/moving";
import { scopeMailbox } from "../platform/access";

/**
 * The statements that start one run of a test at a slot: the run (numbered after the last one),
 * one pending result per provider x sender x seed mailbox, and the test's run count and next slot.
 * An automated test's cells get the time Salvo sends them: all at the slot without a gap, else each
 * sender's emails `min_time_btwn_emails` apart (the gap is the sending mailbox's, so it runs per sender). Every
 * statement is idempotent for the slot, so two firings for the same slot start one run. Only a test
 * still active starts a run and moves on: a firing reads the due tests before it writes, and a test
 * stopped (or deleted) meanwhile must stay so, not be set active again.
 * `test` is an SQL expression for the test id (a literal, or a lookup inside the same batch).
 */
export function startRun(test: SQL, slot: number, next: { at: number | null; status: string }, now: number): SQL[] {
  return [
    sql`INSERT INTO spam_test_runs (spam_test_id, run_no, slot_at, started_at)
        SELECT ${test}, coalesce(max(run_no), 0) + 1, ${slot}, ${now} FROM spam_test_runs WHERE spam_test_id = ${test}
          HAVING EXISTS (SELECT 1 FROM spam_tests WHERE id = ${test} AND status = 'active')
        ON CONFLICT DO NOTHING`,
    sql`INSERT INTO spam_test_results (spam_test_id, run_no, provider_id, sender_email, seed_email, send_at, updated_at)
        SELECT r.spam_test_id, r.run_no, p.id, s.from_email, m.email,
               CASE WHEN t.test_type = 'automated' THEN r.slot_at + CASE WHEN t.all_email_sent_without_time_gap THEN 0
                 ELSE (row_number() OVER (PARTITION BY s.from_email ORDER BY chosen.key, m.id) - 1) * t.min_time_btwn_emails
                      * CASE t.min_time_unit WHEN 'minutes' THEN 60000 WHEN 'hours' THEN 3600000 ELSE 86400000 END END END,
               ${now}
        FROM spam_test_runs r
        JOIN spam_tests t ON t.id = r.spam_test_id
        JOIN json_each(t.provider_ids) chosen
        JOIN spam_providers p ON p.id = chosen.value
        JOIN seed_mailboxes m ON m.provider_id = p.id
        JOIN spam_test_senders s ON s.spam_test_id = r.spam_test_id
        WHERE r.spam_test_id = ${test} AND r.slot_at = ${slot}
        ON CONFLICT DO NOTHING`,
    sql`UPDATE spam_tests SET test_run_no = (SELECT max(run_no) FROM spam_test_runs WHERE spam_test_id = ${test}),
          next_run_at = ${next.at}, status = ${next.status}, updated_at = ${now}
        WHERE id = ${test} AND status = 'active'`,
  ];
}

/**
 * The active automated tests whose next slot is due at `now`, earliest first. The status and
 * type stay literals so the query keeps to the partial index `spam_tests_due_idx`.
 */
export async function dueSpamTests(db: Database, now: number, limit: number): Promise<DueTest[]> {
  const rows = await db
    .select({
      id: spamTests.id,
      nextRunAt: spamTests.nextRunAt,
      testEndDate: spamTests.testEndDate,
      everyDays: spamTests.everyDays,
      cron: spamTests.schedulerCronValue,
      timeZone: spamTests.timeZone,
    })
    .from(spamTests)
    .where(
      and(
        sql`${spamTests.status} = 'active' AND ${spamTests.testType} = 'automated'`,
        isNotNull(spamTests.nextRunAt),
        lte(spamTests.nextRunAt, new Date(now)),
        notMoving(sql`${spamTests.accountId}`),
      ),
    )
    .orderBy(asc(spamTests.nextRunAt))
    .limit(limit);
  // An automated test is created with its whole schedule, so none of these is null.
  return rows.map((row) => ({
    id: row.id,
    nextRunAt: row.nextRunAt!.getTime(),
    testEndDate: row.testEndDate!.getTime(),
    everyDays: row.everyDays!,
    cron: row.cron!,
    timeZone: row.timeZone!,
  }));
}

const STATEMENTS_PER_BATCH = 300;

/** Starts each test's due runs (one run per slot, each moving the test on), in batches. */
export async function startDueRuns(d1: D1Database, due: { testId: number; slots: DueSlot[] }[], now: number): Promise<void> {
  const statements = due.flatMap(({ testId, slots }) =>
    slots.flatMap(({ slot, next, finished }) => startRun(sql`${testId}`, slot, { at: next, status: finished ? "completed" : "active" }, now)),
  );
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) {
    await rawBatch(d1, statements.slice(i, i + STATEMENTS_PER_BATCH));
  }
}

/** The mailboxes that send the given tests' emails: their account's mailboxes whose address is a sender and that may send them. */
export async function senderMailboxesOf(d1: D1Database, testIds: number[]): Promise<number[]> {
  if (testIds.length === 0) return [];
  const rows = await statement(
    d1,
    sql`SELECT DISTINCT e.id FROM spam_tests t
        JOIN spam_test_senders s ON s.spam_test_id = t.id
        JOIN email_accounts e ON e.account_id = t.account_id AND lower(e.from_email) = s.from_email
        WHERE t.id ${inList(testIds)}
          AND ${scopeMailbox({ clientId: sql`t.client_id`, campaignId: sql`t.campaign_id` }, { id: sql`e.id`, clientId: sql`e.client_id` })}`,
  ).all<{ id: number }>();
  return rows.results.map((row) => row.id);
}
