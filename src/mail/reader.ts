import { imapString, parseValues, type ImapValue } from "./imap-protocol";
import { withImapSession, type ImapFailure, type ImapSession, type ImapSettings } from "./imap";
import { PARSE_LIMIT_BYTES } from "./parsed";
import type { OutboundPolicy } from "../platform/outbound";

/**
 * Reading a mailbox's INBOX incrementally: the cursor is the folder's UIDVALIDITY and the highest
 * UID already read, so a pass fetches only what arrived since, never the mailbox twice. A new
 * UIDVALIDITY (the folder was rebuilt) starts over from the cursor's date floor; recorded events
 * carry ids of their own, so a message read again records nothing twice.
 */

export interface ReaderCursor {
  uidValidity: number;
  lastUid: number;
}

interface FetchedMessage {
  uid: number;
  raw: Uint8Array;
}

/** An INBOX message: its first PARSE_LIMIT_BYTES when it is larger (`size` says). */
export interface InboxMessage extends FetchedMessage {
  /** The whole message's size (RFC822.SIZE). */
  size: number;
}

/**
 * What one pass fetches at most, all messages together: the pass's memory stays bounded whatever
 * arrives, and what is left waits for the next pass (`more`). At least one message is always read.
 */
export const PASS_BYTES = 8 * 1024 * 1024;
/** The FETCH of bodies gets this long in all (one deadline for the command, like every command). */
const FETCH_TIMEOUT_MS = 60_000;
/** What the FETCH of bodies may bring beyond the bodies asked for (its response lines), per message. */
const FETCH_LINE_BYTES = 4 * 1024;

interface InboxBatch {
  messages: InboxMessage[];
  cursor: ReaderCursor;
  /** More new messages wait beyond this batch's limit. */
  more: boolean;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** IMAP's date form for SEARCH SINCE (RFC 3501: d-Mon-yyyy). */
export function imapDate(at: number): string {
  const date = new Date(at);
  return `${date.getUTCDate()}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()}`;
}

export function searchUids(untagged: { text: string }[]): number[] {
  return untagged
    .filter((response) => /^SEARCH\b/i.test(response.text))
    .flatMap((response) => response.text.split(/\s+/).slice(1).map(Number))
    .filter((uid) => Number.isSafeInteger(uid) && uid > 0);
}

/** A FETCH response's UID, RFC822.SIZE and BODY[] (or partial `BODY[]<0>`) bytes; null for what a response lacks. */
function fetchItems(values: ImapValue[]): { uid: number | null; size: number | null; raw: Uint8Array | null } | null {
  const items = values[2];
  if (!Array.isArray(items)) return null;
  let uid: number | null = null;
  let size: number | null = null;
  let raw: Uint8Array | null = null;
  for (let i = 0; i + 1 < items.length; i += 2) {
    const name = typeof items[i] === "string" ? (items[i] as string).toUpperCase() : "";
    const value = items[i + 1];
    if (name === "UID" && typeof value === "string") uid = Number(value);
    if (name === "RFC822.SIZE" && typeof value === "string") size = Number(value);
    if (name === "BODY[]" || name === "BODY[]<0>") raw = value instanceof Uint8Array ? value : typeof value === "string" ? new TextEncoder().encode(value) : null;
  }
  return { uid, size, raw };
}

/** The first UIDs whose sizes (each cut at `maxBodyBytes`) fit in PASS_BYTES together; at least one. */
export function withinPassBudget(uids: number[], sizes: Map<number, number>, maxBodyBytes: number): number[] {
  let total = 0;
  const chosen: number[] = [];
  for (const uid of uids) {
    total += Math.min(sizes.get(uid) ?? maxBodyBytes, maxBodyBytes);
    if (chosen.length > 0 && total > PASS_BYTES) break;
    chosen.push(uid);
  }
  return chosen;
}

/**
 * The bodies of the first of `uids` (ascending) that fit in PASS_BYTES, with BODY.PEEK so nothing is
 * marked seen: their sizes first, then one FETCH of each body's first `maxBodyBytes` (a partial
 * FETCH; the whole body when it is smaller). The FETCH's byte budget is what was asked for, whatever
 * the sizes said, and its one deadline FETCH_TIMEOUT_MS. `chosen`: the UIDs read (the rest wait).
 */
export async function fetchBodies(session: ImapSession, uids: number[], maxBodyBytes: number): Promise<{ messages: InboxMessage[]; chosen: number[] }> {
  if (uids.length === 0) return { messages: [], chosen: [] };
  const sizes = new Map<number, number>();
  for (const response of (await session.command(["UID", "FETCH", uids.join(","), "(UID RFC822.SIZE)"])).untagged) {
    const item = /^\d+ FETCH /i.test(response.text) ? fetchItems(parseValues(response)) : null;
    if (item?.uid != null && item.size !== null) sizes.set(item.uid, item.size);
  }
  const chosen = withinPassBudget(uids, sizes, maxBodyBytes);
  const answer = await session.command(["UID", "FETCH", chosen.join(","), `(UID BODY.PEEK[]<0.${maxBodyBytes}>)`], "rejected", {
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: chosen.reduce((sum, uid) => sum + Math.min(sizes.get(uid) ?? maxBodyBytes, maxBodyBytes) + FETCH_LINE_BYTES, 0),
  });
  const messages: InboxMessage[] = [];
  for (const response of answer.untagged) {
    if (!/^\d+ FETCH /i.test(response.text)) continue;
    const item = fetchItems(parseValues(response));
    if (item?.uid != null && item.raw !== null) messages.push({ uid: item.uid, raw: item.raw, size: sizes.get(item.uid) ?? item.raw.length });
  }
  return { messages: messages.sort((a, b) => a.uid - b.uid), chosen };
}

/**
 * The INBOX messages after the cursor (or, with none, those since `since`), oldest first, at most
 * `limit`, read with BODY.PEEK so nothing is marked seen in the customer's mailbox.
 */
export async function fetchNewMessages(
  settings: ImapSettings,
  cursor: ReaderCursor | null,
  since: number,
  limit: number,
  outbound: OutboundPolicy,
): Promise<{ ok: true; batch: InboxBatch } | { ok: false; failure: ImapFailure }> {
  // A server that sends more of a body than the partial FETCH asked for is cut off.
  const result = await withImapSession(settings, { allowPlain: false, outbound, maxLiteralBytes: PARSE_LIMIT_BYTES }, async (session) => {
    await session.login();
    const box = await session.select("INBOX", { readOnly: true });
    const uidValidity = box.uidValidity ?? 0;
    const continuing = cursor !== null && cursor.uidValidity === uidValidity;
    const after = continuing ? cursor.lastUid : 0;
    if (continuing && box.uidNext !== null && box.uidNext <= after + 1) {
      await session.logout();
      return { messages: [], cursor: { uidValidity, lastUid: after }, more: false };
    }
    const search = continuing
      ? await session.command(["UID", "SEARCH", "UID", `${after + 1}:*`])
      : await session.command(["UID", "SEARCH", "SINCE", imapString(imapDate(since))]);
    // `n:*` always names the highest UID, even one below n.
    const uids = [...new Set(searchUids(search.untagged))].filter((uid) => uid > after).sort((a, b) => a - b);
    const { messages, chosen } = await fetchBodies(session, uids.slice(0, limit), PARSE_LIMIT_BYTES);
    await session.logout();
    const lastUid = chosen.length > 0 ? chosen.at(-1)! : Math.max(after, (box.uidNext ?? 1) - 1);
    return { messages, cursor: { uidValidity, lastUid }, more: uids.length > chosen.length };
  });
  return result.ok ? { ok: true, batch: result.value } : result;
}
