/**
 * The spam-test reports that read the findings of each result (spam filter verdict, authentication
 * results, sending hop, link checks): pure functions over one run's results.
 */
import type { LinkCheck, ResultFindings, SpamSymbol } from "../db/schema";
import { iso } from "../platform/time";
import { adjustedTotal, countByProvider, sumCounts, type Folder, type ProviderCounts } from "./placement-report";

/**
 * Result words of RFC 8601 section 2.7 (and RFC 7489 section 11.2 for DMARC) that an
 * Authentication-Results header may carry for each method.
 */
export const SPF_RESULTS = ["none", "neutral", "pass", "fail", "softfail", "policy", "temperror", "permerror"] as const;
export const DKIM_RESULTS = ["none", "pass", "fail", "policy", "neutral", "temperror", "permerror"] as const;
export const DMARC_RESULTS = ["none", "pass", "fail", "temperror", "permerror"] as const;

export type AuthMethod = "spf" | "dkim" | "dmarc";

/** One result of a run with its provider and findings, as the reports read it. */
export interface ResultRow extends ResultFindings {
  id: number;
  providerId: string;
  providerName: string;
  groupId: string;
  groupName: string;
  regionId: string;
  regionName: string;
  senderEmail: string;
  seedEmail: string;
  folder: Folder;
  receivedAt: Date | null;
}

/** A result whose message reached the seed (the only ones with findings). */
function received(row: ResultRow): boolean {
  return row.folder === "inbox" || row.folder === "tab" || row.folder === "spam";
}

/**
 * Block-list hits among a spam filter's symbols. Rspamd names its DNS list rules RBL_*, RECEIVED_*
 * (lists of relays), DBL_*, URIBL_*, SURBL_*, MSBL_*, SEM_URIBL*; SpamAssassin names them RCVD_IN_*
 * and URIBL_*. Not hits: allow lists (DNSWL, *_WL, whitelists), lookups that failed or that the
 * list refused (*_FAIL, *_BLOCKED*), and good-reputation answers (a list rule scored below zero).
 */
const IP_LIST = /^(RBL_|RECEIVED_|RCVD_IN_)/;
const DOMAIN_LIST = /^(DBL_|URIBL_|SURBL_|MSBL_|SEM_URIBL|RSPAMD_URIBL)/;
const NOT_A_HIT = /DNSWL|_WL(_|$)|WHITELIST|ALLOWLIST|_FAIL$|_BLOCKED/;

type ListKind = "ip" | "domain";

function blockListHits(symbols: SpamSymbol[] | null, kind: ListKind): SpamSymbol[] {
  const pattern = kind === "ip" ? IP_LIST : DOMAIN_LIST;
  return (symbols ?? []).filter((s) => pattern.test(s.name) && !NOT_A_HIT.test(s.name) && s.score >= 0);
}

/** Whether a received result was scored by a spam filter (so its block lists are known, possibly none). */
function filtered(row: ResultRow): boolean {
  return received(row) && row.spamSymbols !== null;
}

function symbolView(s: SpamSymbol) {
  return { name: s.name, score: s.score, description: s.description ?? null };
}

/** Results grouped by sender, senders in the test's order, each one's results in provider order. */
function bySender(rows: ResultRow[], senders: string[]): { email: string; rows: ResultRow[] }[] {
  return senders.map((email) => ({ email, rows: rows.filter((r) => r.senderEmail === email) }));
}

function countsOf(rows: ResultRow[]): ProviderCounts {
  return sumCounts(countByProvider(rows.map((r) => ({ providerId: r.providerId, folder: r.folder, n: 1 }))).values());
}

const time = (value: Date | null) => (value === null ? null : iso(value));

function seedOf(row: ResultRow) {
  return { id: String(row.id), provider_id: row.providerId, provider_name: row.providerName, email: row.seedEmail, folder: row.folder };
}

/** What the seed's copy showed; null for a message that never arrived (or not yet). */
function replyOf(row: ResultRow) {
  if (!received(row)) return null;
  const hits = filtered(row) ? blockListHits(row.spamSymbols, "ip") : null;
  return {
    mail_folder: row.folder,
    mailbox_folder: row.mailboxFolder,
    message_id: row.messageId,
    received_at: time(row.receivedAt),
    spam_score: row.spamScore,
    spf_result: { status: row.spf },
    dkim_result: { status: row.dkim },
    dmarc_result: { status: row.dmarc },
    rdns_result: { ip: row.senderIp, rdns: row.senderHost },
    blacklist_status: { totalBlacklist: hits === null ? null : hits.length, blacklists: (hits ?? []).map((s) => s.name) },
  };
}

/** Per sender: its placement counts and, per seed, where the message landed and what its copy showed. */
export function senderAccountWise(rows: ResultRow[], senders: { id: number; email: string }[]) {
  const ids = new Map(senders.map((s) => [s.email, s.id]));
  return bySender(rows, senders.map((s) => s.email)).map(({ email, rows: mine }) => {
    const counts = countsOf(mine);
    return {
      id: String(ids.get(email)),
      email,
      inbox_count: counts.inbox_count,
      tab_count: counts.tab_count,
      spam_count: counts.spam_count,
      not_received_count: counts.not_received_count,
      pending_count: counts.pending_count,
      total_count: counts.total_count,
      details: mine.map((row) => ({ ...seedOf(row), reply: replyOf(row) })),
    };
  });
}

/** Placement per provider group (with its region), groups in the order of the test's providers. */
export function groupWise(rows: ResultRow[], providers: { groupId: string; groupName: string; regionId: string; regionName: string }[]) {
  const groups = new Map(providers.map((p) => [p.groupId, p]));
  return [...groups.values()].map((group) => {
    const counts = countsOf(rows.filter((r) => r.groupId === group.groupId));
    return {
      group_id: group.groupId,
      group_name: group.groupName,
      region_id: group.regionId,
      region_name: group.regionName,
      inbox_count: counts.inbox_count,
      tab_count: counts.tab_count,
      spam_count: counts.spam_count,
      not_received_count: counts.not_received_count,
      adjusted_total_email_count: adjustedTotal(counts),
    };
  });
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Per sender: every scored copy with the filter's score, threshold, action and the rules that made the score. */
export function spamFilterDetails(rows: ResultRow[], senders: string[]) {
  return bySender(rows, senders).map(({ email, rows: mine }) => {
    const scored = mine.filter((r) => received(r) && r.spamScore !== null);
    return {
      email,
      scored_count: scored.length,
      average_score: scored.length ? round2(scored.reduce((sum, r) => sum + r.spamScore!, 0) / scored.length) : null,
      details: scored.map((row) => ({
        ...seedOf(row),
        spam_score: row.spamScore!,
        spam_required: row.spamRequired,
        spam_action: row.spamAction,
        is_spam: row.spamRequired === null ? null : row.spamScore! >= row.spamRequired,
        symbols: (row.spamSymbols ?? []).map(symbolView),
      })),
    };
  });
}

/** Per sender: one method's verdict on every received copy (`pass`, any other verdict, or none recorded). */
export function authDetails(rows: ResultRow[], senders: string[], method: AuthMethod) {
  return bySender(rows, senders).map(({ email, rows: mine }) => {
    const copies = mine.filter(received);
    const verdicts = copies.map((row) => row[method]);
    return {
      email,
      pass_count: verdicts.filter((v) => v === "pass").length,
      fail_count: verdicts.filter((v) => v !== null && v !== "pass").length,
      not_checked_count: verdicts.filter((v) => v === null).length,
      details: copies.map((row) => ({ ...seedOf(row), status: row[method] })),
    };
  });
}

/** Hits counted per list name, in first-seen order. */
function tally(hits: SpamSymbol[]) {
  const lists = new Map<string, { name: string; description: string | null; count: number }>();
  for (const s of hits) {
    const entry = lists.get(s.name) ?? { name: s.name, description: s.description ?? null, count: 0 };
    entry.count += 1;
    lists.set(s.name, entry);
  }
  return [...lists.values()];
}

/** Per sender: every received copy with the sending hop and the IP block lists its filter matched. */
export function blacklistReport(rows: ResultRow[], senders: string[]) {
  return bySender(rows, senders).map(({ email, rows: mine }) => ({
    email,
    details: mine.filter(received).map((row) => {
      const hits = filtered(row) ? blockListHits(row.spamSymbols, "ip") : null;
      return {
        ...seedOf(row),
        ip: row.senderIp,
        host: row.senderHost,
        checked: hits !== null,
        blacklist_count: hits === null ? null : hits.length,
        blacklists: (hits ?? []).map(symbolView),
      };
    }),
  }));
}

const unique = <T>(values: T[]) => [...new Set(values)];

/** Per sending IP (from the received copies' first outside hop): who sent through it and which IP lists matched. */
export function ipDetails(rows: ResultRow[]) {
  const copies = rows.filter((r) => received(r) && r.senderIp !== null);
  const ips = unique(copies.map((r) => r.senderIp!)).map((ip) => {
    const mine = copies.filter((r) => r.senderIp === ip);
    const checked = mine.filter(filtered);
    const lists = tally(checked.flatMap((r) => blockListHits(r.spamSymbols, "ip")));
    return {
      ip,
      hosts: unique(mine.flatMap((r) => (r.senderHost === null ? [] : [r.senderHost]))),
      senders: unique(mine.map((r) => r.senderEmail)),
      message_count: mine.length,
      checked_count: checked.length,
      blacklist_count: checked.length ? lists.length : null,
      blacklists: lists,
    };
  });
  const known = ips.filter((ip) => ip.blacklist_count !== null);
  return {
    total_ips: ips.length,
    total_blacklist_count: known.length ? unique(known.flatMap((ip) => ip.blacklists.map((l) => l.name))).length : null,
    ips,
  };
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1);

/**
 * Per sender domain: its senders' authentication tallies, the domains their messages link to, and
 * the domain lists (DBL, URIBL, SURBL...) the filter matched on their messages. A domain list may
 * have matched the sender's domain or a linked one: the filter's symbol does not say which.
 */
export function domainDetails(rows: ResultRow[], senders: string[]) {
  return unique(senders.map(domainOf)).map((domain) => {
    const mine = rows.filter((r) => domainOf(r.senderEmail) === domain && received(r));
    const checked = mine.filter(filtered);
    const lists = tally(checked.flatMap((r) => blockListHits(r.spamSymbols, "domain")));
    const passes = (method: AuthMethod) => ({
      pass_count: mine.filter((r) => r[method] === "pass").length,
      fail_count: mine.filter((r) => r[method] !== null && r[method] !== "pass").length,
    });
    return {
      domain,
      senders: senders.filter((email) => domainOf(email) === domain),
      message_count: mine.length,
      spf: passes("spf"),
      dkim: passes("dkim"),
      dmarc: passes("dmarc"),
      link_domains: unique(mine.flatMap((r) => (r.linkReport ?? []).flatMap((l) => hostOf(l.url) ?? []))),
      checked_count: checked.length,
      blacklist_count: checked.length ? lists.length : null,
      blacklists: lists,
    };
  });
}

/**
 * Every link the checker followed, once per URL: a link broken in any copy is reported as that copy
 * saw it (a redirect chain can differ by where it was followed from), with how many copies carried it.
 */
export function linkReport(rows: ResultRow[]) {
  const links = new Map<string, { check: LinkCheck; seen: number; senders: Set<string> }>();
  for (const row of rows.filter(received)) {
    for (const check of row.linkReport ?? []) {
      const entry = links.get(check.url);
      if (!entry) links.set(check.url, { check, seen: 1, senders: new Set([row.senderEmail]) });
      else {
        entry.seen += 1;
        entry.senders.add(row.senderEmail);
        if (entry.check.ok && !check.ok) entry.check = check;
      }
    }
  }
  const result = [...links.values()].map(({ check, seen, senders }) => ({
    url: check.url,
    ok: check.ok,
    status: check.status,
    final_url: check.final_url,
    redirects: check.redirects,
    error: check.error ?? null,
    message_count: seen,
    senders: [...senders],
  }));
  return {
    checked_messages: rows.filter((r) => received(r) && r.linkReport !== null).length,
    total_links: result.length,
    broken_count: result.filter((l) => !l.ok).length,
    redirected_count: result.filter((l) => l.redirects > 0).length,
    links: result,
  };
}
