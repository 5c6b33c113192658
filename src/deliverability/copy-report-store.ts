import { and, asc, eq } from "drizzle-orm";
import { spamProviders, spamTestMessages, spamTestResults } from "../db/schema";
import type { Database } from "../platform/db";

/** What the copy reports read of each cell of a run: who sent to which seed, where it landed, and the copy's headers. */
const copyFields = {
  id: spamTestResults.id,
  senderEmail: spamTestResults.senderEmail,
  seedEmail: spamTestResults.seedEmail,
  providerId: spamTestResults.providerId,
  providerName: spamProviders.name,
  folder: spamTestResults.folder,
  senderIp: spamTestResults.senderIp,
  rawHeaders: spamTestResults.rawHeaders,
};

export type CopyRow = Awaited<ReturnType<typeof copiesOfRun>>[number];

export function copiesOfRun(db: Database, testId: number, runNo: number) {
  return db
    .select(copyFields)
    .from(spamTestResults)
    .innerJoin(spamProviders, eq(spamProviders.id, spamTestResults.providerId))
    .where(and(eq(spamTestResults.spamTestId, testId), eq(spamTestResults.runNo, runNo)))
    .orderBy(asc(spamTestResults.id));
}

/** One cell of a test (any run), by its result id. */
export function copyOfTest(db: Database, testId: number, resultId: number) {
  return db
    .select(copyFields)
    .from(spamTestResults)
    .innerJoin(spamProviders, eq(spamProviders.id, spamTestResults.providerId))
    .where(and(eq(spamTestResults.spamTestId, testId), eq(spamTestResults.id, resultId)))
    .get();
}

/** The email a run sent, as kept by the sender (src/deliverability/test-send-store.ts). */
export function runMessage(db: Database, testId: number, runNo: number) {
  return db
    .select()
    .from(spamTestMessages)
    .where(and(eq(spamTestMessages.spamTestId, testId), eq(spamTestMessages.runNo, runNo)))
    .get();
}
