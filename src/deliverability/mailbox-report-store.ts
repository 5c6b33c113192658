import { and, eq, sql } from "drizzle-orm";
import { emailAccounts, spamProviders, spamTestResults, spamTests } from "../db/schema";
import { visibleRows } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";

/**
 * The placement counts of every settled cell (pending ones are not yet anything) of the caller's
 * tests, or of one test: through the tests the caller may see (the one tenancy rule).
 */
const tally = {
  inbox: sql<number>`coalesce(sum(${spamTestResults.folder} = 'inbox'), 0)`,
  tab: sql<number>`coalesce(sum(${spamTestResults.folder} = 'tab'), 0)`,
  spam: sql<number>`coalesce(sum(${spamTestResults.folder} = 'spam'), 0)`,
  failed: sql<number>`coalesce(sum(${spamTestResults.folder} = 'not_received'), 0)`,
};

function scope(principal: Principal, testId: number | null) {
  return and(visibleRows(principal, spamTests), testId === null ? undefined : eq(spamTests.id, testId), sql`${spamTestResults.folder} <> 'pending'`);
}

export async function mailboxCounts(db: Database, principal: Principal, testId: number | null) {
  const row = await db
    .select(tally)
    .from(spamTestResults)
    .innerJoin(spamTests, eq(spamTests.id, spamTestResults.spamTestId))
    .where(scope(principal, testId))
    .get();
  return row ?? { inbox: 0, tab: 0, spam: 0, failed: 0 };
}

/** One row per sender address and seed provider, by address then provider name; the sender's mailbox id when it is one of the account's. */
export function mailboxSummary(db: Database, principal: Principal, testId: number | null, page: { limit: number; offset: number }) {
  return db
    .select({
      senderEmail: spamTestResults.senderEmail,
      providerId: spamTestResults.providerId,
      providerName: sql<string>`coalesce(${spamProviders.name}, ${spamTestResults.providerId})`,
      mailboxId: sql<number | null>`(SELECT min(${emailAccounts.id}) FROM ${emailAccounts} WHERE ${emailAccounts.accountId} = ${principal.accountId}
        ${principal.clientId === null ? sql`` : sql`AND ${emailAccounts.clientId} = ${principal.clientId}`}
        AND lower(${emailAccounts.fromEmail}) = lower(${spamTestResults.senderEmail}))`,
      ...tally,
    })
    .from(spamTestResults)
    .innerJoin(spamTests, eq(spamTests.id, spamTestResults.spamTestId))
    .leftJoin(spamProviders, eq(spamProviders.id, spamTestResults.providerId))
    .where(scope(principal, testId))
    .groupBy(spamTestResults.senderEmail, spamTestResults.providerId)
    .orderBy(spamTestResults.senderEmail, sql`3`, spamTestResults.providerId)
    .limit(page.limit)
    .offset(page.offset);
}
