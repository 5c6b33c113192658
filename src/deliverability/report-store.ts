import { and, asc, count, eq, sql } from "drizzle-orm";
import { spamProviders, spamTestResults, spamTestRuns, type LinkCheck, type PLACEMENT_FOLDERS, type SpamSymbol } from "../db/schema";
import type { Database } from "../platform/db";
import { jsonList, statement } from "../platform/sql";
import type { ResultRow } from "./findings";
import type { Folder } from "./placement-report";

type RunRow = typeof spamTestRuns.$inferSelect;

/** How many results of a test (or of one of its runs) each run, provider and folder holds. */
interface FolderCount {
  runNo: number;
  providerId: string;
  folder: Folder;
  n: number;
}

/** What the checker found on the seed's copy; absent members are stored as null. */
export interface Findings {
  mailboxFolder?: string;
  messageId?: string;
  spamScore?: number;
  spamRequired?: number;
  spamAction?: string;
  spamSymbols?: SpamSymbol[];
  spf?: string;
  dkim?: string;
  dmarc?: string;
  senderIp?: string;
  senderHost?: string;
  linkReport?: LinkCheck[];
}

/** One placement as the checker reports it (sender email already lower-cased). */
interface Placement extends Findings {
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

/** One run's results with their providers, in result id order. */
export function listResults(db: Database, testId: number, runNo: number): Promise<ResultRow[]> {
  return db
    .select({
      id: spamTestResults.id,
      providerId: spamTestResults.providerId,
      providerName: spamProviders.name,
      groupId: spamProviders.groupId,
      groupName: spamProviders.groupName,
      regionId: spamProviders.regionId,
      regionName: spamProviders.regionName,
      senderEmail: spamTestResults.senderEmail,
      seedEmail: spamTestResults.seedEmail,
      folder: spamTestResults.folder,
      receivedAt: spamTestResults.receivedAt,
      mailboxFolder: spamTestResults.mailboxFolder,
      messageId: spamTestResults.messageId,
      spamScore: spamTestResults.spamScore,
      spamRequired: spamTestResults.spamRequired,
      spamAction: spamTestResults.spamAction,
      spamSymbols: spamTestResults.spamSymbols,
      spf: spamTestResults.spf,
      dkim: spamTestResults.dkim,
      dmarc: spamTestResults.dmarc,
      senderIp: spamTestResults.senderIp,
      senderHost: spamTestResults.senderHost,
      linkReport: spamTestResults.linkReport,
    })
    .from(spamTestResults)
    .innerJoin(spamProviders, eq(spamProviders.id, spamTestResults.providerId))
    .where(and(eq(spamTestResults.spamTestId, testId), eq(spamTestResults.runNo, runNo)))
    .orderBy(asc(spamTestResults.id));
}

/**
 * Records placements of one run in one statement whatever their count (the list travels as one
 * JSON parameter); a later result for the same cell (provider x sender x seed) replaces the earlier
 * one, findings included. A placement without a seed email takes the seed of the run's first cell for
 * that provider and sender, else the provider's first seed mailbox.
 */
export async function recordPlacements(d1: D1Database, testId: number, runNo: number, placements: Placement[], now: number): Promise<void> {
  await statement(
    d1,
    sql`INSERT INTO spam_test_results (spam_test_id, run_no, provider_id, sender_email, seed_email, folder, received_at,
          mailbox_folder, message_id, spam_score, spam_required, spam_action, spam_symbols, spf, dkim, dmarc, sender_ip, sender_host, link_report, updated_at)
        SELECT ${testId}, ${runNo}, value ->> '$.providerId', value ->> '$.senderEmail',
               coalesce(
                 value ->> '$.seedEmail',
                 (SELECT seed_email FROM spam_test_results c
                   WHERE c.spam_test_id = ${testId} AND c.run_no = ${runNo} AND c.provider_id = value ->> '$.providerId'
                     AND c.sender_email = value ->> '$.senderEmail' ORDER BY c.id LIMIT 1),
                 (SELECT email FROM seed_mailboxes WHERE provider_id = value ->> '$.providerId' ORDER BY id LIMIT 1),
                 (SELECT seed_email FROM spam_providers WHERE id = value ->> '$.providerId')),
               value ->> '$.folder', value ->> '$.receivedAt',
               value ->> '$.mailboxFolder', value ->> '$.messageId', value ->> '$.spamScore', value ->> '$.spamRequired', value ->> '$.spamAction',
               value -> '$.spamSymbols', value ->> '$.spf', value ->> '$.dkim', value ->> '$.dmarc', value ->> '$.senderIp', value ->> '$.senderHost',
               value -> '$.linkReport', ${now}
        FROM json_each(${jsonList(placements)}) WHERE true
        ON CONFLICT (spam_test_id, run_no, provider_id, sender_email, seed_email) DO UPDATE SET
          folder = excluded.folder, received_at = excluded.received_at,
          mailbox_folder = excluded.mailbox_folder, message_id = excluded.message_id, spam_score = excluded.spam_score,
          spam_required = excluded.spam_required, spam_action = excluded.spam_action, spam_symbols = excluded.spam_symbols,
          spf = excluded.spf, dkim = excluded.dkim, dmarc = excluded.dmarc, sender_ip = excluded.sender_ip,
          sender_host = excluded.sender_host, link_report = excluded.link_report, raw_headers = NULL, updated_at = excluded.updated_at`,
  ).run();
}
