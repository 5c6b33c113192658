import { and, asc, count, eq, sql } from "drizzle-orm";
import { spamTestResults, spamTestRuns, type PLACEMENT_FOLDERS } from "../db/schema";
import type { Database } from "../platform/db";
import { jsonList, statement } from "../platform/sql";
import type { Folder } from "./placement-report";

export type RunRow = typeof spamTestRuns.$inferSelect;

/** How many results of a test (or of one of its runs) each run, provider and folder holds. */
export interface FolderCount {
  runNo: number;
  providerId: string;
  folder: Folder;
  n: number;
}

/** One placement as the checker reports it (sender email already lower-cased). */
export interface Placement {
  providerId: string;
  senderEmail: string;
  seedEmail: string | null;
  folder: (typeof PLACEMENT_FOLDERS)[number];
  receivedAt: number | null;
}

export function folderCounts(db: Database, testId: number, runNo?: number): Promise<FolderCount[]> {
  return db
    .select({ runNo: spamTestResults.runNo, providerId: spamTestResults.providerId, folder: spamTestResults.folder, n: count() })
    .from(spamTestResults)
    .where(and(eq(spamTestResults.spamTestId, testId), runNo === undefined ? undefined : eq(spamTestResults.runNo, runNo)))
    .groupBy(spamTestResults.runNo, spamTestResults.providerId, spamTestResults.folder);
}

/** A test's runs, oldest first. */
export function listRuns(db: Database, testId: number): Promise<RunRow[]> {
  return db.select().from(spamTestRuns).where(eq(spamTestRuns.spamTestId, testId)).orderBy(asc(spamTestRuns.runNo));
}

export async function runExists(db: Database, testId: number, runNo: number): Promise<boolean> {
  const run = await db
    .select({ id: spamTestRuns.id })
    .from(spamTestRuns)
    .where(and(eq(spamTestRuns.spamTestId, testId), eq(spamTestRuns.runNo, runNo)))
    .get();
  return run !== undefined;
}

/**
 * Records placements of one run in one statement whatever their count (the list travels as one
 * JSON parameter); a later result for the same cell (provider x sender x seed) replaces the earlier
 * one. A placement without a seed email takes the seed of the run's first cell for that provider and
 * sender, else the provider's first seed mailbox.
 */
export async function recordPlacements(d1: D1Database, testId: number, runNo: number, placements: Placement[], now: number): Promise<void> {
  await statement(
    d1,
    sql`INSERT INTO spam_test_results (spam_test_id, run_no, provider_id, sender_email, seed_email, folder, received_at, updated_at)
        SELECT ${testId}, ${runNo}, value ->> '$.providerId', value ->> '$.senderEmail',
               coalesce(
                 value ->> '$.seedEmail',
                 (SELECT seed_email FROM spam_test_results c
                   WHERE c.spam_test_id = ${testId} AND c.run_no = ${runNo} AND c.provider_id = value ->> '$.providerId'
                     AND c.sender_email = value ->> '$.senderEmail' ORDER BY c.id LIMIT 1),
                 (SELECT email FROM seed_mailboxes WHERE provider_id = value ->> '$.providerId' ORDER BY id LIMIT 1),
                 (SELECT seed_email FROM spam_providers WHERE id = value ->> '$.providerId')),
               value ->> '$.folder', value ->> '$.receivedAt', ${now}
        FROM json_each(${jsonList(placements)}) WHERE true
        ON CONFLICT (spam_test_id, run_no, provider_id, sender_email, seed_email) DO UPDATE SET
          folder = excluded.folder, received_at = excluded.received_at, updated_at = excluded.updated_at`,
  ).run();
}
