import { and, asc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Bindings } from "../platform/env";
import { database, type Database } from "../platform/db";
import { log } from "../platform/logging";
import { rawBatch } from "../platform/sql";
import type { LeadListRow } from "../platform/access";
import { ApiError } from "../platform/errors";
import { sortUpload } from "../leads/rules";
import { leadListImports } from "../db/schema";
import { columnFields, countCsvRows, readCsvRows, rowToLead } from "./csv";
import { importStatements, leadListById, screenEmails, type LeadFields } from "./store";
import { flagForVerification, screenAddresses, type Screened, type VerifyMode } from "../verification/upload";
import { storeOnLeadsByEmail } from "../verification/store";
import { notMoving } from "../platform/moving";

export interface ImportSettings {
  ignoreGlobalBlockList: boolean;
  ignoreUnsubscribeList: boolean;
  /** CONTRACT 22 (absent in imports stored before it: off). */
  verifyEmails?: VerifyMode;
  skipRisky?: boolean;
}

interface ImportCounts {
  total_leads: number;
  imported: number;
  duplicates: number;
  blocked: number;
  invalid: number;
  invalid_timezone_count: number;
  invalid_emails?: string[];
  verification_job_id?: string;
}

/**
 * Sorts an upload into what goes into the list and what is counted out: invalid addresses, repeats
 * within the upload, and (unless the settings say otherwise) block-listed or unsubscribed leads,
 * both counted as `blocked`.
 */
async function sortForList(env: Bindings, list: LeadListRow, upload: LeadFields[], settings: ImportSettings) {
  const d1 = env.DB;
  const sorted = sortUpload(upload);
  const screened = settings.verifyEmails === "skip" ? await screenAddresses(env, sorted.unique.map((lead) => lead.email), settings.skipRisky ?? false) : null;
  const unique = screened ? sorted.unique.filter((lead) => !screened.refused.has(lead.email)) : sorted.unique;
  const { duplicateCount, invalidTimezoneCount } = sorted;
  const invalidEmailCount = sorted.invalidEmailCount + (screened?.refused.size ?? 0);
  const screening = await screenEmails(
    d1,
    list.accountId,
    list.clientId,
    unique.map((lead) => lead.email),
  );
  const kept = unique.filter(
    (lead) =>
      !(screening.blocked.has(lead.email) && !settings.ignoreGlobalBlockList) &&
      !(screening.unsubscribed.has(lead.email) && !settings.ignoreUnsubscribeList),
  );
  return { kept, duplicateCount, invalidEmailCount, invalidTimezoneCount, blocked: unique.length - kept.length, screened };
}

/** After the leads are stored: the checked results on them (`skip`), or a background job over them (`flag`). */
async function verifyImported(env: Bindings, list: LeadListRow, kept: LeadFields[], settings: ImportSettings, screened: Screened | null, waitUntil: (work: Promise<unknown>) => void) {
  const scope = { accountId: list.accountId, clientId: list.clientId };
  if (screened) await storeOnLeadsByEmail(env.DB, scope, screened.results.filter((r) => !screened.refused.has(r.email)), Date.now());
  if (settings.verifyEmails !== "flag") return null;
  return flagForVerification(env, waitUntil, scope, kept.map((lead) => lead.email));
}

/** Imports up to 1000 leads into a list at once (the JSON import). */
export async function importLeads(
  env: Bindings,
  list: LeadListRow,
  upload: LeadFields[],
  settings: ImportSettings,
  waitUntil: (work: Promise<unknown>) => void,
): Promise<ImportCounts> {
  const d1 = env.DB;
  const db = database(d1);
  const { kept, duplicateCount, invalidEmailCount, invalidTimezoneCount, blocked, screened } = await sortForList(env, list, upload, settings);
  const statements = await importStatements(db, list, kept, Date.now());
  const results = statements.length > 0 ? await rawBatch(d1, statements) : [];
  const imported = results.at(-1)?.length ?? 0;
  const jobId = await verifyImported(env, list, kept, settings, screened, waitUntil);
  return {
    total_leads: upload.length,
    imported,
    duplicates: duplicateCount + kept.length - imported,
    blocked,
    invalid: invalidEmailCount,
    invalid_timezone_count: invalidTimezoneCount,
    ...(screened && { invalid_emails: [...screened.refused] }),
    ...(jobId !== null && { verification_job_id: jobId }),
  };
}

// CSV imports: stored at upload, worked through in chunks by the request's waitUntil and, for
// whatever that leaves, by the minute cron (a D1 job table rather than a new Queue: nothing to
// configure per environment, and the progress a caller reads is the same row the work advances).

/** Rows per chunk: each chunk is one read of known leads, one screening query and one batch. */
const CSV_CHUNK_ROWS = 500;
/** How long a worker holds an import before another may take it over. */
const LEASE_MS = 60_000;
/** How long one pass (a waitUntil, or a cron run) keeps working before it leaves the rest. */
const PASS_BUDGET_MS = 20_000;
/** Imports one cron run takes up. */
const IMPORTS_PER_CRON = 3;
/** Passes that may fail before an import is given up (a transient D1 error heals; a bad row would loop forever). */
const MAX_FAILED_PASSES = 5;

export type ImportRow = typeof leadListImports.$inferSelect;

/** Stores a CSV import (the header read and the rows counted now, so progress has a total). */
export async function createCsvImport(db: Database, list: LeadListRow, csv: string, fileName: string, settings: ImportSettings): Promise<ImportRow> {
  const header = readCsvRows(csv, 0, 1);
  const columns = header.rows[0];
  if (!columns || !columnFields(columns)) throw ApiError.badRequest("The CSV needs a header row with an email column");
  const now = new Date();
  return db
    .insert(leadListImports)
    .values({
      accountId: list.accountId,
      listId: list.id,
      fileName,
      csv,
      columns,
      settings,
      cursor: header.next,
      total: countCsvRows(csv, header.next),
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export function findImport(db: Database, listId: number, importId: number) {
  return db
    .select()
    .from(leadListImports)
    .where(and(eq(leadListImports.id, importId), eq(leadListImports.listId, listId)))
    .get();
}

/** Takes an unfinished import whose lease is free (or lapsed); undefined when another worker holds it. */
function claimImport(db: Database, id: number, now: number) {
  return db
    .update(leadListImports)
    .set({ state: "running", leaseUntil: new Date(now + LEASE_MS) })
    .where(
      and(
        eq(leadListImports.id, id),
        inArray(leadListImports.state, ["queued", "running"]),
        or(isNull(leadListImports.leaseUntil), lt(leadListImports.leaseUntil, new Date(now))),
      ),
    )
    .returning()
    .get();
}

/**
 * One chunk: its leads, the import's counters and cursor in one batch, so the counters always
 * describe exactly the rows before the cursor.
 */
async function importChunk(env: Bindings, job: ImportRow, list: LeadListRow): Promise<{ done: boolean }> {
  const d1 = env.DB;
  const db = database(d1);
  const csv = job.csv ?? "";
  const { rows, next } = readCsvRows(csv, job.cursor, CSV_CHUNK_ROWS);
  const fields = columnFields(job.columns)!;
  const upload = rows.map((row) => rowToLead(job.columns, fields, row) as LeadFields);
  const { kept, duplicateCount, invalidEmailCount, invalidTimezoneCount, blocked, screened } = await sortForList(env, list, upload, job.settings);
  const now = Date.now();
  // Only the worker whose cursor is current adds members, so a second worker on the same chunk
  // (after a lapsed lease) neither adds nor counts anything.
  const current = sql`EXISTS (SELECT 1 FROM lead_list_imports WHERE id = ${job.id} AND cursor = ${job.cursor})`;
  const statements = await importStatements(db, list, kept, now, current);
  // changes() is the row count of the batch's previous statement: the membership insert.
  const added = statements.length > 0 ? sql`changes()` : sql`0`;
  const done = next >= csv.length;
  await rawBatch(d1, [
    ...statements,
    sql`UPDATE lead_list_imports SET
          imported = imported + ${added},
          duplicates = duplicates + ${duplicateCount + kept.length} - ${added},
          blocked = blocked + ${blocked},
          invalid = invalid + ${invalidEmailCount},
          invalid_timezone = invalid_timezone + ${invalidTimezoneCount},
          processed = processed + ${rows.length},
          cursor = ${next},
          state = ${done ? "done" : "running"},
          csv = ${done ? sql`NULL` : sql`csv`},
          finished_at = ${done ? now : null},
          lease_until = ${done ? null : now + LEASE_MS},
          updated_at = ${now}
        WHERE id = ${job.id} AND cursor = ${job.cursor}`,
  ]);
  job.cursor = next;
  // A `flag` job is left to the minute cron (no request to wait on here).
  await verifyImported(env, list, kept, job.settings, screened, () => undefined);
  return { done };
}

/** Works on one import for at most `budgetMs`; what is left waits for the next pass. */
export async function runImport(env: Bindings, importId: number, budgetMs = PASS_BUDGET_MS): Promise<void> {
  const db = database(env.DB);
  const started = Date.now();
  const job = await claimImport(db, importId, started);
  if (!job) return;
  const list = await leadListById(db, job.listId);
  if (!list) return;
  try {
    while (Date.now() - started < budgetMs) {
      if ((await importChunk(env, job, list)).done) return;
    }
  } catch (error) {
    log("warn", "lead list import pass failed", { import_id: importId, error: String(error) });
    await recordFailedPass(db, importId);
    return;
  }
  await db
    .update(leadListImports)
    .set({ leaseUntil: null })
    .where(and(eq(leadListImports.id, importId), eq(leadListImports.state, "running")));
}

/** Counts a failed pass and frees the import for the next one; after too many, the import ends as failed. */
async function recordFailedPass(db: Database, importId: number): Promise<void> {
  const now = new Date();
  await db
    .update(leadListImports)
    .set({
      failedPasses: sql`${leadListImports.failedPasses} + 1`,
      state: sql`CASE WHEN ${leadListImports.failedPasses} + 1 >= ${MAX_FAILED_PASSES} THEN 'failed' ELSE ${leadListImports.state} END`,
      error: sql`CASE WHEN ${leadListImports.failedPasses} + 1 >= ${MAX_FAILED_PASSES}
        THEN ${`The import failed ${MAX_FAILED_PASSES} times and was stopped after `} || ${leadListImports.processed} || ' rows' ELSE NULL END`,
      finishedAt: sql`CASE WHEN ${leadListImports.failedPasses} + 1 >= ${MAX_FAILED_PASSES} THEN ${now.getTime()} ELSE NULL END`,
      csv: sql`CASE WHEN ${leadListImports.failedPasses} + 1 >= ${MAX_FAILED_PASSES} THEN NULL ELSE ${leadListImports.csv} END`,
      leaseUntil: null,
      updatedAt: now,
    })
    .where(and(eq(leadListImports.id, importId), eq(leadListImports.state, "running")));
}

/** Minute job: carries on the imports no worker holds (a lapsed waitUntil, or one too big for it). */
export async function continueCsvImports(env: Bindings, at: Date): Promise<number> {
  const db = database(env.DB);
  const pending = await db
    .select({ id: leadListImports.id })
    .from(leadListImports)
    .where(
      and(
        inArray(leadListImports.state, ["queued", "running"]),
        or(isNull(leadListImports.leaseUntil), lt(leadListImports.leaseUntil, at)),
        notMoving(sql`${leadListImports.accountId}`),
      ),
    )
    .orderBy(asc(leadListImports.id))
    .limit(IMPORTS_PER_CRON);
  for (const { id } of pending) await runImport(env, id, PASS_BUDGET_MS / IMPORTS_PER_CRON);
  return pending.length;
}
