/**
 * The placement checker's pure rules: which placement a seed folder means, what a seed's copy of a
 * test message says about authentication and the hop that delivered it, which live test it
 * carries, and when a cell that never arrived counts as `not_received`.
 */

export type Placement = "inbox" | "tab" | "spam";

/** The headers Salvo's own test emails carry the token and the run in (the token is in the body too). */
export const TEST_ID_HEADER = "X-Salvo-Test-Id";
export const TEST_RUN_HEADER = "X-Salvo-Test-Run";

interface SeedFolders {
  inboxFolders: string[];
  tabFolders: string[];
  spamFolders: string[];
}

/** IMAP's INBOX is case-insensitive (RFC 3501 5.1); every other name is compared as written. */
const sameFolder = (a: string, b: string) => (a.toUpperCase() === "INBOX" ? b.toUpperCase() === "INBOX" : a === b);

/** The placement a folder of the seed means; spam wins over tab over inbox if an operator lists a folder twice. */
export function placementOf(folder: string, seed: SeedFolders): Placement | null {
  if (seed.spamFolders.some((name) => sameFolder(name, folder))) return "spam";
  if (seed.tabFolders.some((name) => sameFolder(name, folder))) return "tab";
  if (seed.inboxFolders.some((name) => sameFolder(name, folder))) return "inbox";
  return null;
}

/** Every folder the checker reads for a seed, each once, in the order spam, tab, inbox. */
export function foldersToRead(seed: SeedFolders): string[] {
  const out: string[] = [];
  for (const name of [...seed.spamFolders, ...seed.tabFolders, ...seed.inboxFolders]) {
    if (!out.some((known) => sameFolder(known, name))) out.push(name);
  }
  return out;
}

interface Authentication {
  spf: string | null;
  dkim: string | null;
  dmarc: string | null;
}

const VERDICTS = new Set(["pass", "fail", "softfail", "neutral", "none", "temperror", "permerror", "policy"]);

/**
 * SPF, DKIM and DMARC verdicts from the copy's Authentication-Results (RFC 8601). Headers come in
 * order, newest (the seed provider's own) first: for each method the first verdict found wins. A
 * DKIM verdict of several signatures is `pass` when any passed.
 */
export function authenticationOf(headers: { key: string; value: string }[]): Authentication {
  const found: Authentication = { spf: null, dkim: null, dmarc: null };
  for (const header of headers) {
    if (header.key !== "authentication-results") continue;
    const seen: Record<keyof Authentication, string[]> = { spf: [], dkim: [], dmarc: [] };
    for (const match of header.value.matchAll(/(?:^|[;\s])(spf|dkim|dmarc)\s*=\s*([a-z]+)/gi)) {
      const method = match[1]!.toLowerCase() as keyof Authentication;
      const verdict = match[2]!.toLowerCase();
      if (VERDICTS.has(verdict)) seen[method].push(verdict);
    }
    for (const method of ["spf", "dkim", "dmarc"] as const) {
      if (found[method] !== null || seen[method].length === 0) continue;
      found[method] = method === "dkim" && seen.dkim.includes("pass") ? "pass" : seen[method][0]!;
    }
  }
  return found;
}

interface SenderHop {
  ip: string | null;
  host: string | null;
}

const ADDRESS = /\[?(?:IPv6:)?((?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]*:[0-9a-f:.]+)\]?/i;

/** Loopback, private and link-local addresses: a sender's own network, not the hop that reached the provider. */
function isPrivate(ip: string): boolean {
  if (ip.includes(":")) return /^(::1$|f[cd]|fe[89ab])/i.test(ip);
  const [a, b] = ip.split(".").map(Number) as [number, number];
  return a === 10 || a === 127 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
}

/**
 * The connecting IP and host of the hop that handed the message on from the sender's side: of the
 * Received headers with a `from` address, the oldest (the last in order) with a public address, or
 * the oldest of all when every one is private (a lab on loopback). The host is the reverse name in
 * parentheses when given, else the HELO name.
 */
export function senderHopOf(headers: { key: string; value: string }[]): SenderHop {
  const hops: SenderHop[] = [];
  for (const header of headers) {
    if (header.key !== "received") continue;
    const from = /^\s*from\s+(\S+)(?:\s+\(([^)]*)\))?/i.exec(header.value);
    if (!from) continue;
    const comment = from[2] ?? "";
    const ip = ADDRESS.exec(comment)?.[1] ?? ADDRESS.exec(from[1]!)?.[1] ?? null;
    if (ip === null) continue;
    const reverse = /^([a-z0-9.-]+\.[a-z]{2,}|localhost)\s/i.exec(comment)?.[1] ?? null;
    const helo = from[1]!.replace(/^\[|\]$/g, "");
    hops.push({ ip, host: reverse ?? (helo === ip ? null : helo) });
  }
  const oldestFirst = hops.reverse();
  return oldestFirst.find((hop) => !isPrivate(hop.ip!)) ?? oldestFirst[0] ?? { ip: null, host: null };
}

/** The live tokens (tests' `email_track_id`) that occur in the message's text; quoted-printable soft breaks are undone first. */
export function tokensIn(haystack: string, tokens: Iterable<string>): string[] {
  const text = haystack.replace(/=\r?\n/g, "").toLowerCase();
  return [...tokens].filter((token) => text.includes(token.toLowerCase()));
}

/**
 * A cell's deadline: its email's send time (an automated run's own schedule) or, for a manual test
 * whose user sends it, the run's start, plus the deadline minutes.
 */
export function cellDeadline(sendAt: number | null, runStartedAt: number, minutes: number): number {
  return (sendAt ?? runStartedAt) + minutes * 60_000;
}

/** When the seed's provider took the message: the date of the newest Received header, else null. */
export function arrivalOf(headers: { key: string; value: string }[]): number | null {
  const newest = headers.find((header) => header.key === "received");
  if (!newest) return null;
  const semicolon = newest.value.lastIndexOf(";");
  if (semicolon < 0) return null;
  const at = Date.parse(newest.value.slice(semicolon + 1).trim());
  return Number.isNaN(at) ? null : at;
}
