import { imapString, parseValues, type ImapValue } from "./imap-protocol";
import { withImapSession, type ImapFailure, type ImapSettings } from "./imap";
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

export interface FetchedMessage {
  uid: number;
  raw: Uint8Array;
}

export interface InboxBatch {
  messages: FetchedMessage[];
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

/** A FETCH response's UID and BODY[] bytes. */
export function fetched(values: ImapValue[]): FetchedMessage | null {
  const items = values[2];
  if (!Array.isArray(items)) return null;
  let uid: number | null = null;
  let raw: Uint8Array | null = null;
  for (let i = 0; i + 1 < items.length; i += 2) {
    const name = typeof items[i] === "string" ? (items[i] as string).toUpperCase() : "";
    const value = items[i + 1];
    if (name === "UID" && typeof value === "string") uid = Number(value);
    if (name === "BODY[]") raw = value instanceof Uint8Array ? value : typeof value === "string" ? new TextEncoder().encode(value) : null;
  }
  return uid !== null && raw !== null ? { uid, raw } : null;
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
  const result = await withImapSession(settings, { allowPlain: false, outbound }, async (session) => {
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
    const chosen = uids.slice(0, limit);
    const messages: FetchedMessage[] = [];
    if (chosen.length > 0) {
      const answer = await session.command(["UID", "FETCH", chosen.join(","), "(UID BODY.PEEK[])"]);
      for (const response of answer.untagged) {
        if (!/^\d+ FETCH /i.test(response.text)) continue;
        const message = fetched(parseValues(response));
        if (message) messages.push(message);
      }
    }
    await session.logout();
    messages.sort((a, b) => a.uid - b.uid);
    const lastUid = chosen.length > 0 ? chosen.at(-1)! : Math.max(after, (box.uidNext ?? 1) - 1);
    return { messages, cursor: { uidValidity, lastUid }, more: uids.length > chosen.length };
  });
  return result.ok ? { ok: true, batch: result.value } : result;
}
