import { config } from "../config";
import type { Bindings } from "../platform/env";
import { decryptSecret, loadKeyring, type Keyring } from "../platform/crypto";
import { database } from "../platform/db";
import type { ScheduledJob } from "../platform/jobs";
import { log } from "../platform/logging";
import { mailPolicy, urlPolicy } from "../platform/outbound";
import { parseMessage, type ParsedMessage } from "../mail/parsed";
import { expireOverdueCells, pendingCellsOf, seedsToCheck, storeSeedPass, type Finding, type PendingCell } from "./checker-store";
import { checkLinks, linksOf } from "./link-checker";
import { headerBlock } from "./copy-headers";
import { arrivalOf, authenticationOf, foldersToRead, placementOf, senderHopOf, TEST_ID_HEADER, TEST_RUN_HEADER, tokensIn, type Placement } from "./placement";
import { readSeedFolders, type SeedMessage } from "./seed-reader";
import { saveSeedCheck, seedPasswordContext, type SeedMailboxRow } from "./seed-store";
import { scoreWithRspamd, type SpamVerdict } from "./spam-filter";

/** New messages read per folder per pass; a folder with more is read on by the next pass. */
const MESSAGES_PER_FOLDER = 200;
/** Seeds read side by side (each is one IMAP session). */
const SEEDS_AT_ONCE = 6;
/** Messages of one seed scored and link-checked side by side. */
const FINDINGS_AT_ONCE = 8;
/** A seed read for the first time is searched from a day before its oldest pending run. */
const FIRST_READ_MARGIN_MS = 86_400_000;

/** A message of a seed matched to the cell it answers, in the placement its folder means. */
interface Matched {
  cell: PendingCell;
  message: SeedMessage;
  parsed: ParsedMessage;
  placement: Placement;
}

export interface CheckReport {
  seeds: number;
  messages: number;
  recorded: number;
  expired: number;
  /** D1 write batches (one per seed read, plus the deadline sweep). */
  writeBatches: number;
  failures: { seed: string; error: string }[];
}

/** Every shard's pass as one report (a seed read by two shards' passes counts twice: it was read twice). */
export function sumSeedChecks(reports: CheckReport[]): CheckReport {
  return reports.reduce((sum, report) => ({
    seeds: sum.seeds + report.seeds,
    messages: sum.messages + report.messages,
    recorded: sum.recorded + report.recorded,
    expired: sum.expired + report.expired,
    writeBatches: sum.writeBatches + report.writeBatches,
    failures: [...sum.failures, ...report.failures],
  }));
}

/**
 * The cell a message answers: the test whose token it carries, from that sender (its From), in the
 * run its header names or else the oldest pending one; a cell already taken in this pass is skipped.
 */
function cellFor(cells: PendingCell[], taken: Set<number>, tokens: string[], from: string | null, run: number | null): PendingCell | null {
  if (from === null) return null;
  return (
    cells.find(
      (cell) => !taken.has(cell.id) && tokens.includes(cell.trackId.toLowerCase()) && cell.senderEmail === from && (run === null || cell.runNo === run),
    ) ?? null
  );
}

async function verdict(rspamdUrl: string | undefined, message: SeedMessage, hop: { ip: string | null; host: string | null }): Promise<SpamVerdict | null> {
  if (rspamdUrl === undefined) return null;
  try {
    return await scoreWithRspamd(rspamdUrl, message.raw, hop);
  } catch (error) {
    log("warn", "spam filter did not score a test message", { error: String(error) });
    return null;
  }
}

async function findingFor(env: Bindings, { cell, message, parsed, placement }: Matched, now: number): Promise<Finding> {
  const hop = senderHopOf(parsed.headers);
  const auth = authenticationOf(parsed.headers);
  const spam = cell.spamFilters ? await verdict(config(env).rspamdUrl, message, hop) : null;
  const links = cell.linkChecker ? await checkLinks(linksOf(parsed.html, parsed.text), { policy: urlPolicy(config(env)) }) : null;
  return {
    cellId: cell.id,
    folder: placement,
    mailboxFolder: message.folder,
    messageId: parsed.messageId,
    receivedAt: arrivalOf(parsed.headers) ?? now,
    spamScore: spam?.score ?? null,
    spamRequired: spam?.required ?? null,
    spamAction: spam?.action ?? null,
    spamSymbols: spam?.symbols ?? null,
    ...auth,
    senderIp: hop.ip,
    senderHost: hop.host,
    linkReport: links,
    rawHeaders: headerBlock(message.raw),
  };
}

/**
 * Reads one seed's folders and records every pending cell whose email is there. The cells of an
 * account a move has fenced cannot be written: the others' are, and the seed's cursor stays where it
 * was, so a pass after the move reads those messages again.
 */
async function checkSeed(env: Bindings, keyring: Keyring, seed: SeedMailboxRow, now: number): Promise<{ messages: number; recorded: number; error: string | null }> {
  const db = database(env.DB);
  const pending = await pendingCellsOf(env.DB, seed.email);
  const cells = pending.filter((cell) => cell.writable);
  if (cells.length === 0 || seed.imapPassword === null) return { messages: 0, recorded: 0, error: null };
  const password = await decryptSecret(keyring, seed.imapPassword, seedPasswordContext(seed.email));
  const since = Math.min(...cells.map((cell) => cell.runStartedAt)) - FIRST_READ_MARGIN_MS;
  const read = await readSeedFolders(
    { host: seed.imapHost!, port: seed.imapPort!, security: seed.imapSecurity ?? "tls", username: seed.imapUsername ?? seed.email, password },
    foldersToRead(seed),
    seed.cursor ?? {},
    since,
    MESSAGES_PER_FOLDER,
    mailPolicy(config(env)),
  );
  if (!read.ok) {
    await saveSeedCheck(db, seed.id, null, `${read.failure.kind}: ${read.failure.text}`, now);
    return { messages: 0, recorded: 0, error: read.failure.text };
  }
  const liveTokens = new Set(cells.map((cell) => cell.trackId));
  const taken = new Set<number>();
  const matched: Matched[] = [];
  for (const message of read.read.messages) {
    let parsed;
    try {
      parsed = await parseMessage(message.raw);
    } catch (error) {
      log("warn", "unreadable seed message skipped", { seed_id: seed.id, uid: message.uid, error: String(error) });
      continue;
    }
    const header = (name: string) => parsed.headers.find((h) => h.key === name.toLowerCase())?.value ?? "";
    const tokens = tokensIn([header(TEST_ID_HEADER), parsed.subject, parsed.text, parsed.html ?? ""].join("\n"), liveTokens).map((t) => t.toLowerCase());
    const run = /^\d+$/.test(header(TEST_RUN_HEADER).trim()) ? Number(header(TEST_RUN_HEADER).trim()) : null;
    const cell = cellFor(cells, taken, tokens, parsed.from, run);
    const placement = placementOf(message.folder, seed);
    if (cell === null || placement === null) continue;
    taken.add(cell.id);
    matched.push({ cell, message, parsed, placement });
  }
  // Scoring and link checks wait on the network: a few messages at a time rather than one by one.
  const findings: Finding[] = [];
  for (let i = 0; i < matched.length; i += FINDINGS_AT_ONCE) {
    findings.push(...(await Promise.all(matched.slice(i, i + FINDINGS_AT_ONCE).map((m) => findingFor(env, m, now)))));
  }
  await storeSeedPass(env.DB, db, seed.id, findings, cells.length < pending.length ? (seed.cursor ?? {}) : read.read.cursor, now);
  return { messages: read.read.messages.length, recorded: findings.length, error: null };
}

/**
 * One placement-checker pass: every seed with IMAP settings and a pending cell is read (a few side
 * by side), its test messages recorded with their findings, then pending cells past their deadline
 * become `not_received`. Reading first means a message that arrived just in time still counts.
 */
export async function checkSeedMailboxes(env: Bindings, now: number): Promise<CheckReport> {
  const settings = config(env);
  const db = database(env.DB);
  const seeds = await seedsToCheck(db);
  const report: CheckReport = { seeds: seeds.length, messages: 0, recorded: 0, expired: 0, writeBatches: 0, failures: [] };
  if (seeds.length > 0) {
    const keyring = await loadKeyring(settings.secretsKey);
    for (let i = 0; i < seeds.length; i += SEEDS_AT_ONCE) {
      const outcomes = await Promise.all(
        seeds.slice(i, i + SEEDS_AT_ONCE).map((seed) =>
          checkSeed(env, keyring, seed, now).catch((error: unknown) => ({ messages: 0, recorded: 0, error: String(error) })),
        ),
      );
      outcomes.forEach((outcome, index) => {
        report.messages += outcome.messages;
        report.recorded += outcome.recorded;
        report.writeBatches += 1;
        if (outcome.error !== null) report.failures.push({ seed: seeds[i + index]!.email, error: outcome.error });
      });
    }
  }
  report.expired = await expireOverdueCells(env.DB, now, settings.spamTestDeadlineMinutes);
  report.writeBatches += 1;
  for (const failure of report.failures) log("warn", "seed mailbox not read", failure);
  return report;
}

/** The minute cron's share: one checker pass (its count: the results it recorded or expired). */
export const checkPlacements: ScheduledJob = async (env, at) => {
  const report = await checkSeedMailboxes(env, at.getTime());
  return report.recorded + report.expired;
};
