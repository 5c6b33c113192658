import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import { accounts, spamProviders, spamTestFolders, spamTests, spamTestSenders } from "../db/schema";
import { visibleRows } from "../platform/access";
import type { Principal } from "../platform/principal";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { inList, jsonList, rawBatch } from "../platform/sql";
import { startRun } from "./runs-store";
import { FOLDER_NOT_FOUND, parseTestId, TEST_NOT_FOUND, type FolderRow, type ProviderRow, type SpamTestRow } from "./shared";

type NewSpamTest = typeof spamTests.$inferInsert;
type NewFolder = typeof spamTestFolders.$inferInsert;
type SenderRow = typeof spamTestSenders.$inferSelect;

/** Whether the account has deliverability testing arranged. */
export async function deliverabilityEnabled(db: Database, accountId: number): Promise<boolean> {
  const account = await db.select({ enabled: accounts.deliverabilityEnabled }).from(accounts).where(eq(accounts.id, accountId)).get();
  return account?.enabled ?? false;
}

/** The provider catalogue, by region, group and name. */
export function listProviders(db: Database): Promise<ProviderRow[]> {
  return db.select().from(spamProviders).orderBy(asc(spamProviders.regionId), asc(spamProviders.groupId), asc(spamProviders.name));
}

/** A test the caller may see (ids as the path carries them), or the contract's 404. */
export async function findSpamTest(db: Database, principal: Principal, id: string | number): Promise<SpamTestRow> {
  const testId = parseTestId(id);
  const row =
    testId === null
      ? undefined
      : await db
          .select()
          .from(spamTests)
          .where(and(eq(spamTests.id, testId), visibleRows(principal, spamTests)))
          .get();
  if (!row) throw ApiError.notFound(TEST_NOT_FOUND);
  return row;
}

/** One page of the caller's tests, newest first, with how many there are in all. */
export async function listSpamTests(
  db: Database,
  principal: Principal,
  page: { testType?: SpamTestRow["testType"]; limit: number; offset: number },
): Promise<{ rows: SpamTestRow[]; total: number }> {
  const where = and(visibleRows(principal, spamTests), page.testType ? eq(spamTests.testType, page.testType) : undefined);
  const [rows, total] = await Promise.all([
    db.select().from(spamTests).where(where).orderBy(desc(spamTests.id)).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(spamTests).where(where),
  ]);
  return { rows, total: total[0]?.n ?? 0 };
}

/**
 * Stores a test and its senders, and for a test that runs at once its first run (slot `now`), in
 * one batch; answers the new test's id. The later statements find the test by its track id.
 */
export async function insertSpamTest(d1: D1Database, test: NewSpamTest, senders: string[], runsNow: boolean, now: number): Promise<number> {
  const testId = sql`(SELECT id FROM spam_tests WHERE email_track_id = ${test.emailTrackId})`;
  const [inserted] = await rawBatch(d1, [
    database(d1).insert(spamTests).values(test).returning({ id: spamTests.id }),
    sql`INSERT INTO spam_test_senders (spam_test_id, from_email, created_at, updated_at)
        SELECT ${testId}, value, ${now}, ${now} FROM json_each(${jsonList(senders)})`,
    ...(runsNow ? startRun(testId, now, { at: null, status: "active" }, now) : []),
  ]);
  return Number(inserted![0]!.id);
}

/** Stops a test: no further runs. */
export async function stopSpamTest(db: Database, testId: number, now: Date): Promise<void> {
  await db.update(spamTests).set({ status: "stopped", nextRunAt: null, updatedAt: now }).where(eq(spamTests.id, testId));
}

/** Deletes those of the tests the caller may see; answers how many went. */
export async function deleteSpamTests(db: Database, principal: Principal, ids: number[]): Promise<number> {
  const deleted = await db
    .delete(spamTests)
    .where(and(visibleRows(principal, spamTests), sql`${spamTests.id} ${inList(ids)}`))
    .returning({ id: spamTests.id });
  return deleted.length;
}

/** A test's sender accounts, in the order they were stored. */
export function listSenders(db: Database, testId: number): Promise<SenderRow[]> {
  return db.select().from(spamTestSenders).where(eq(spamTestSenders.spamTestId, testId)).orderBy(asc(spamTestSenders.id));
}

/** A folder the caller may see, or 404. */
export async function findFolder(db: Database, principal: Principal, id: number): Promise<FolderRow> {
  const row = await db
    .select()
    .from(spamTestFolders)
    .where(and(eq(spamTestFolders.id, id), visibleRows(principal, spamTestFolders)))
    .get();
  if (!row) throw ApiError.notFound(FOLDER_NOT_FOUND);
  return row;
}

export function insertFolder(db: Database, folder: NewFolder): Promise<FolderRow> {
  return db.insert(spamTestFolders).values(folder).returning().get();
}

/** The folders the caller may see, oldest first. */
export function listFolders(db: Database, principal: Principal): Promise<FolderRow[]> {
  return db.select().from(spamTestFolders).where(visibleRows(principal, spamTestFolders)).orderBy(asc(spamTestFolders.id));
}

/** The tests in a folder that the caller may see, oldest first. */
export function listFolderTests(db: Database, principal: Principal, folderId: number) {
  return db
    .select({ id: spamTests.id, testName: spamTests.testName, testType: spamTests.testType, status: spamTests.status })
    .from(spamTests)
    .where(and(eq(spamTests.folderId, folderId), visibleRows(principal, spamTests)))
    .orderBy(asc(spamTests.id));
}

/** How many tests a folder holds, whoever may see them. */
export async function countFolderTests(db: Database, folderId: number): Promise<number> {
  const inside = await db.select({ n: count() }).from(spamTests).where(eq(spamTests.folderId, folderId)).get();
  return inside?.n ?? 0;
}

export async function deleteFolder(db: Database, folderId: number): Promise<void> {
  await db.delete(spamTestFolders).where(eq(spamTestFolders.id, folderId));
}
