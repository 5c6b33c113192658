import { imapString, parseValues, type ImapValue } from "./imap-protocol";
import { withImapSession, type ImapFailure, type ImapOptions, type ImapSession, type ImapSettings } from "./imap";
import { parseMessage, PARSE_LIMIT_BYTES, type ParsedMessage } from "./parsed";
import { imapDate, PASS_BYTES, searchUids } from "./reader";

/**
 * A live look at one folder of a mailbox, newest first, stored nowhere (CONTRACT 21.2's
 * fetch-messages): read-only (EXAMINE, BODY.PEEK), so nothing is marked seen. A special folder
 * (SENT, SPAM, TRASH) is found by its RFC 6154 special-use flag, then by its usual names.
 */

export const SPECIAL_FOLDERS = { SENT: "\\Sent", SPAM: "\\Junk", TRASH: "\\Trash" } as const;
export type SpecialFolder = keyof typeof SPECIAL_FOLDERS;

const USUAL_NAMES: Record<SpecialFolder, string[]> = {
  SENT: ["Sent", "Sent Items", "Sent Messages", "Sent Mail", "[Gmail]/Sent Mail", "INBOX/Sent", "INBOX.Sent"],
  SPAM: ["Junk", "Spam", "Junk Email", "Junk E-mail", "[Gmail]/Spam", "Bulk Mail", "INBOX/Junk", "INBOX.Junk", "INBOX.Spam"],
  TRASH: ["Trash", "Deleted Items", "Deleted Messages", "[Gmail]/Trash", "INBOX/Trash", "INBOX.Trash"],
};

export interface FolderQuery {
  /** INBOX, a special folder, or a folder's own name. */
  folder: string;
  limit: number;
  /** Bounds on the message's arrival (INTERNALDATE), epoch ms. */
  from?: number;
  to?: number;
  /** Also read each message's body (the newest first, within PASS_BYTES together). */
  includeBody: boolean;
}

export interface ListedMessage {
  uid: number;
  messageId: string | null;
  inReplyTo: string | null;
  from: string | null;
  to: string[];
  cc: string[];
  subject: string;
  /** The Date header, else the arrival time. */
  date: number | null;
  flags: string[];
  size: number;
  hasAttachments: boolean;
  /** With includeBody: the HTML body, or the text one when there is none; null when left out (over the byte budget). */
  body?: string | null;
}

export interface FolderListing {
  /** The folder's real name. */
  folder: string;
  /** Messages in the folder within the date bounds. */
  total: number;
  messages: ListedMessage[];
}

export type FolderResult = { ok: true; listing: FolderListing } | { ok: false; failure: ImapFailure } | { ok: false; notFound: string };

/** With date bounds, the arrival times of at most this many of the newest messages the day-range SEARCH found are read. */
const MAX_DATED = 10_000;
/** Headers of a listed message are read up to this many bytes each. */
const HEADER_BYTES = 16 * 1024;

const text = (value: ImapValue | undefined): string | null =>
  typeof value === "string" ? value : value instanceof Uint8Array ? new TextDecoder().decode(value) : null;

/** The folders the server lists: name and flags. */
async function listFolders(session: ImapSession): Promise<{ name: string; flags: string[] }[]> {
  const answer = await session.command(["LIST", imapString(""), imapString("*")]);
  return answer.untagged.flatMap((response) => {
    if (!/^LIST /i.test(response.text)) return [];
    const values = parseValues(response);
    const flags = Array.isArray(values[1]) ? values[1].map((flag) => text(flag) ?? "") : [];
    const name = text(values[3]);
    return name === null ? [] : [{ name, flags }];
  });
}

/** The folder a query names: INBOX as is, a special one by flag then usual name, any other by its exact name. */
async function resolveFolder(session: ImapSession, folder: string): Promise<string | null> {
  if (folder.toUpperCase() === "INBOX") return "INBOX";
  const folders = await listFolders(session);
  const special = SPECIAL_FOLDERS[folder.toUpperCase() as SpecialFolder] as string | undefined;
  if (special !== undefined) {
    const flagged = folders.find((one) => one.flags.some((flag) => flag.toLowerCase() === special.toLowerCase()));
    if (flagged) return flagged.name;
    const usual = USUAL_NAMES[folder.toUpperCase() as SpecialFolder];
    return usual.map((name) => folders.find((one) => one.name.toLowerCase() === name.toLowerCase())).find((one) => one !== undefined)?.name ?? null;
  }
  return folders.find((one) => one.name === folder)?.name ?? null;
}

/** Whether a BODYSTRUCTURE names a part disposed as an attachment. */
function hasAttachment(value: ImapValue | undefined): boolean {
  if (!Array.isArray(value)) return false;
  return value.some((item, i) => (typeof item === "string" && item.toLowerCase() === "attachment" && Array.isArray(value[i + 1])) || hasAttachment(item));
}

interface FetchedItems {
  uid: number;
  flags: string[];
  size: number;
  internalDate: number | null;
  structure: ImapValue | undefined;
  raw: Uint8Array | null;
}

function itemsOf(values: ImapValue[]): FetchedItems | null {
  const items = values[2];
  if (!Array.isArray(items)) return null;
  const found: Partial<FetchedItems> = {};
  for (let i = 0; i + 1 < items.length; i += 2) {
    const name = (text(items[i]) ?? "").toUpperCase();
    const value = items[i + 1];
    if (name === "UID") found.uid = Number(text(value));
    // \Recent says only which session saw the message first (RFC 3501): it is left out.
    else if (name === "FLAGS" && Array.isArray(value)) found.flags = value.map((flag) => text(flag) ?? "").filter((flag) => flag.toLowerCase() !== "\\recent");
    else if (name === "RFC822.SIZE") found.size = Number(text(value));
    else if (name === "INTERNALDATE") found.internalDate = Date.parse(text(value) ?? "") || null;
    else if (name === "BODYSTRUCTURE") found.structure = value ?? undefined;
    else if (name.startsWith("BODY[")) found.raw = value instanceof Uint8Array ? value : typeof value === "string" ? new TextEncoder().encode(value) : null;
  }
  if (!found.uid) return null;
  return { uid: found.uid, flags: found.flags ?? [], size: found.size ?? 0, internalDate: found.internalDate ?? null, structure: found.structure, raw: found.raw ?? null };
}

async function fetchItems(session: ImapSession, uids: number[], what: string, maxBytes: number): Promise<Map<number, FetchedItems>> {
  const found = new Map<number, FetchedItems>();
  if (uids.length === 0) return found;
  const answer = await session.command(["UID", "FETCH", uids.join(","), what], "rejected", { maxBytes });
  for (const response of answer.untagged) {
    if (!/^\d+ FETCH /i.test(response.text)) continue;
    const items = itemsOf(parseValues(response));
    if (items) found.set(items.uid, items);
  }
  return found;
}

/** Bodies of the newest of `uids` that fit in PASS_BYTES together (each read up to PARSE_LIMIT_BYTES). */
async function fetchBodies(session: ImapSession, uids: number[], sizes: Map<number, number>): Promise<Map<number, ParsedMessage>> {
  let total = 0;
  const chosen = uids.filter((uid) => (total += Math.min(sizes.get(uid) ?? PARSE_LIMIT_BYTES, PARSE_LIMIT_BYTES)) <= PASS_BYTES);
  const fetched = await fetchItems(session, chosen, `(UID BODY.PEEK[]<0.${PARSE_LIMIT_BYTES}>)`, total + chosen.length * 4096);
  const bodies = new Map<number, ParsedMessage>();
  for (const [uid, items] of fetched) if (items.raw) bodies.set(uid, await parseMessage(items.raw, { fetchedPartly: (sizes.get(uid) ?? 0) > PARSE_LIMIT_BYTES }));
  return bodies;
}

/** The folder's messages within the bounds, newest (highest UID) first, at most `limit`. */
export async function listFolder(settings: ImapSettings, options: ImapOptions, query: FolderQuery): Promise<FolderResult> {
  const result = await withImapSession(settings, { ...options, maxLiteralBytes: PARSE_LIMIT_BYTES }, async (session): Promise<FolderResult> => {
    await session.login();
    const folder = await resolveFolder(session, query.folder);
    if (folder === null) return { ok: false, notFound: query.folder };
    const status = await session.select(folder, { readOnly: true });
    const bounds = [
      ...(query.from === undefined ? [] : ["SINCE", imapString(imapDate(query.from))]),
      ...(query.to === undefined ? [] : ["BEFORE", imapString(imapDate(query.to + 86_400_000))]),
    ];
    let uids = status.exists === 0 ? [] : searchUids((await session.command(["UID", "SEARCH", ...(bounds.length ? bounds : ["ALL"])])).untagged);
    uids = [...new Set(uids)].sort((a, b) => b - a);
    // SEARCH's dates are whole days: the exact bounds are applied to each message's arrival time.
    const exact = query.from !== undefined || query.to !== undefined;
    let inBounds = uids;
    if (exact) {
      const candidates = uids.slice(0, MAX_DATED);
      const dated = await fetchItems(session, candidates, "(UID INTERNALDATE)", candidates.length * 128 + 65_536);
      inBounds = candidates.filter((uid) => {
        const at = dated.get(uid)?.internalDate;
        return at != null && (query.from === undefined || at >= query.from) && (query.to === undefined || at <= query.to);
      });
    }
    const wanted = inBounds.slice(0, query.limit);
    const head = await fetchItems(session, wanted, `(UID FLAGS RFC822.SIZE INTERNALDATE BODYSTRUCTURE BODY.PEEK[HEADER]<0.${HEADER_BYTES}>)`, wanted.length * (HEADER_BYTES + 8192) + 65_536);
    const page = wanted.filter((uid) => head.has(uid));
    const sizes = new Map(page.map((uid) => [uid, head.get(uid)!.size]));
    const bodies = query.includeBody ? await fetchBodies(session, page, sizes) : null;
    const messages: ListedMessage[] = [];
    for (const uid of page) {
      const items = head.get(uid)!;
      const headers = await parseMessage(items.raw ?? new Uint8Array());
      const body = bodies?.get(uid);
      messages.push({
        uid,
        messageId: headers.messageId,
        inReplyTo: headers.inReplyTo,
        from: headers.from,
        to: headers.to,
        cc: headers.cc,
        subject: headers.subject,
        date: headers.date ?? items.internalDate,
        flags: items.flags,
        size: items.size,
        hasAttachments: hasAttachment(items.structure),
        ...(bodies && { body: body ? (body.html ?? body.text) : null }),
      });
    }
    await session.logout();
    return { ok: true, listing: { folder, total: inBounds.length, messages } };
  });
  return result.ok ? result.value : result;
}
