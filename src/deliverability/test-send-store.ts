import { and, asc, eq, isNotNull, isNull, ne, sql } from "drizzle-orm";
import { scopeMailbox } from "../platform/access";
import { campaigns, emailAccounts, sequenceSteps, sequenceVariants, spamTestResults, spamTests } from "../db/schema";
import type { Database } from "../platform/db";
import { jsonList, rawBatch, statement } from "../platform/sql";
import { holdStatement, type SendHold } from "../mailboxes/hold";

/** A cell whose email the sending mailbox has just taken. */
export interface ClaimedSend {
  id: number;
  testId: number;
  runNo: number;
  seedEmail: string;
  trackId: string;
  campaignId: number;
  sequenceMappingId: string;
}

/**
 * Takes up to `limit` cells due at `now` that this mailbox sends (its account's automated tests with
 * it as a sender that it may send, not stopped: a test that completed with its last run still sends that run), marking them sent in the same statement so a second pass never
 * sends one twice; answers them, earliest first.
 */
export async function claimDueSends(
  d1: D1Database,
  mailbox: { id: number; accountId: number; clientId: number | null; fromEmail: string },
  now: number,
  limit: number,
): Promise<ClaimedSend[]> {
  const rows = await statement(
    d1,
    sql`UPDATE spam_test_results SET sent_at = ${now}, updated_at = ${now}
        WHERE id IN (
          SELECT r.id FROM spam_test_results r JOIN spam_tests t ON t.id = r.spam_test_id
          WHERE r.sender_email = ${mailbox.fromEmail.toLowerCase()} AND r.sent_at IS NULL AND r.send_at IS NOT NULL AND r.send_at <= ${now}
            AND t.account_id = ${mailbox.accountId} AND t.status <> 'stopped'
            AND ${scopeMailbox({ clientId: sql`t.client_id`, campaignId: sql`t.campaign_id` }, { id: sql`${mailbox.id}`, clientId: sql`${mailbox.clientId}` })}
          ORDER BY r.send_at, r.id LIMIT ${limit})
        RETURNING id, spam_test_id AS testId, run_no AS runNo, seed_email AS seedEmail,
          (SELECT email_track_id FROM spam_tests WHERE id = spam_test_id) AS trackId,
          (SELECT campaign_id FROM spam_tests WHERE id = spam_test_id) AS campaignId,
          (SELECT sequence_mapping_id FROM spam_tests WHERE id = spam_test_id) AS sequenceMappingId`,
  ).all<ClaimedSend>();
  return rows.results.sort((a, b) => a.id - b.id);
}

/**
 * Its server refused the mailbox's sending for now: the mailbox held (src/mailboxes/hold.ts) and these
 * cells, claimed and not delivered, due again at the hold's end, in one batch; so a throttled sender
 * spends no seed of the run on refusals, which would read as mail that never arrived.
 */
export async function holdTestSends(d1: D1Database, mailboxId: number, cellIds: number[], hold: SendHold, now: number): Promise<void> {
  await rawBatch(d1, [
    holdStatement(mailboxId, hold, now),
    sql`UPDATE spam_test_results SET sent_at = NULL, send_at = max(send_at, ${hold.until}), updated_at = ${now} WHERE id IN (SELECT value FROM json_each(${jsonList(cellIds)}))`,
  ]);
}

/**
 * When the mailbox's next test email is due (its one row: `at`, null when none waits): its account's
 * tests, not stopped, with its address as a sender, that it may send. A query the pass's first batch runs.
 */
export function nextTestSendQuery(db: Database, mailboxId: number) {
  return db
    .select({ at: sql<number | null>`min(${spamTestResults.sendAt})` })
    .from(emailAccounts)
    .innerJoin(spamTestResults, and(eq(spamTestResults.senderEmail, sql`lower(${emailAccounts.fromEmail})`), isNull(spamTestResults.sentAt), isNotNull(spamTestResults.sendAt)))
    .innerJoin(
      spamTests,
      and(
        eq(spamTests.id, spamTestResults.spamTestId),
        eq(spamTests.accountId, emailAccounts.accountId),
        ne(spamTests.status, "stopped"),
        scopeMailbox({ clientId: sql`${spamTests.clientId}`, campaignId: sql`${spamTests.campaignId}` }, { id: sql`${emailAccounts.id}`, clientId: sql`${emailAccounts.clientId}` }),
      ),
    )
    .where(eq(emailAccounts.id, mailboxId));
}

/** A send that did not go out keeps its cell pending (the deadline makes it not_received) with the reason. */
export async function recordSendError(d1: D1Database, cellId: number, error: string, now: number): Promise<void> {
  await statement(d1, sql`UPDATE spam_test_results SET send_error = ${error}, updated_at = ${now} WHERE id = ${cellId}`).run();
}

/**
 * The campaign step a test sends: `sequence_mapping_id` as the id of one of the campaign's live
 * steps, else as its step number; with its live variants. Null: the campaign has no such step.
 */
export async function testStep(db: Database, campaignId: number, mappingId: string) {
  const id = /^\d{1,15}$/.test(mappingId) ? Number(mappingId) : null;
  if (id === null) return null;
  const live = and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt));
  const step =
    (await db.select().from(sequenceSteps).where(and(live, eq(sequenceSteps.id, id))).get()) ??
    (await db.select().from(sequenceSteps).where(and(live, eq(sequenceSteps.seqNumber, id))).get());
  if (!step) return null;
  const variants = await db
    .select()
    .from(sequenceVariants)
    .where(and(eq(sequenceVariants.stepId, step.id), isNull(sequenceVariants.deletedAt)))
    .orderBy(asc(sequenceVariants.position));
  const campaign = await db.select({ settings: campaigns.settings }).from(campaigns).where(eq(campaigns.id, campaignId)).get();
  return { step, variants, settings: campaign?.settings ?? null };
}

/** A raw source larger than this is not kept (a D1 row holds 2 MB; the parts are kept all the same). */
const MAX_RAW_CHARS = 1_000_000;

/** The email a run sent, kept once per run (its first cell Salvo sent): the email-content report. */
export async function keepRunMessage(
  d1: D1Database,
  cell: { testId: number; runNo: number },
  message: { subject: string; text: string; html: string | null; raw: string },
  now: number,
): Promise<void> {
  await statement(
    d1,
    sql`INSERT OR IGNORE INTO spam_test_messages (spam_test_id, run_no, subject, text, html, raw, sent_at)
        VALUES (${cell.testId}, ${cell.runNo}, ${message.subject}, ${message.text}, ${message.html},
                ${message.raw.length <= MAX_RAW_CHARS ? message.raw : null}, ${now})`,
  ).run();
}
