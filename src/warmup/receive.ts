/**
 * Warmup's share of a mailbox's read (CONTRACT 19.4, 19.5): the reader keeps warmup mail out of
 * everything else it records, and the receiving mailbox looks for the warmup mail sent to it in
 * INBOX and in its spam folder, records where each first landed, moves spam copies to INBOX, and
 * marks them read and important. Replies go out from the mailbox's warmup pass (send.ts).
 */
import type { ParsedMessage } from "../mail/parsed";
import { imapString, parseValues, type ImapValue } from "../mail/imap-protocol";
import { withImapSession, type ImapSession, type ImapSettings } from "../mail/imap";
import { searchUids } from "../mail/reader";
import type { OutboundPolicy } from "../platform/outbound";
import type { Database } from "../platform/db";
import { log } from "../platform/logging";
import { classifyBounce } from "../replies/bounce";
import { awaitedBy, expireUnfound, markRefusedByMessageId, recordLanding, warmupMessageIds, type Awaited } from "./store";

/** Messages looked for per read at most (the rest on the next read). */
const LOOK_FOR = 50;

/** Known names of a spam folder, tried in order when no folder carries the `\Junk` special use. */
export const SPAM_NAMES = ["Spam", "Junk", "Junk Email", "Junk E-mail", "[Gmail]/Spam", "Bulk Mail"];

/** The spam folder among a LIST answer's folders: the one flagged `\Junk`, else the first known name (case-insensitive). */
export function spamFolder(folders: { name: string; flags: string[] }[]): string | null {
  const special = folders.find((f) => f.flags.some((flag) => flag.toLowerCase() === "\\junk"));
  if (special) return special.name;
  for (const known of SPAM_NAMES) {
    const found = folders.find((f) => f.name.toLowerCase() === known.toLowerCase());
    if (found) return found.name;
  }
  return null;
}

/** The folders of a LIST answer: each `* LIST (flags) "delim" name`. */
export function listedFolders(untagged: { text: string; literals: Uint8Array[] }[]): { name: string; flags: string[] }[] {
  const folders: { name: string; flags: string[] }[] = [];
  for (const response of untagged) {
    if (!/^LIST /i.test(response.text)) continue;
    const values = parseValues(response);
    const flags = Array.isArray(values[1]) ? (values[1] as ImapValue[]).filter((v): v is string => typeof v === "string") : [];
    const name = values[3];
    const text = typeof name === "string" ? name : name instanceof Uint8Array ? new TextDecoder().decode(name) : null;
    if (text !== null) folders.push({ name: text, flags });
  }
  return folders;
}

/**
 * Takes warmup mail out of what mailbox `readerId`'s reader records (19.5): messages whose Message-ID
 * is one Salvo recorded at a warmup send, and bounces of warmup mail. A bounce of the reader's own
 * warmup email also takes the bounced address out of the pool and counts against the reader (hard
 * ones toward its block, as a refusal at send does); one naming another mailbox's email changes
 * nothing of it. Everything else is returned as it came.
 */
export async function withoutWarmup(db: Database, readerId: number, messages: ParsedMessage[], now: number): Promise<ParsedMessage[]> {
  const bounces = new Map<ParsedMessage, ReturnType<typeof classifyBounce>>();
  const ids: string[] = [];
  for (const message of messages) {
    if (message.messageId) ids.push(message.messageId);
    const bounce = classifyBounce(message);
    if (bounce?.originalMessageId) {
      bounces.set(message, bounce);
      ids.push(bounce.originalMessageId);
    }
  }
  const warmup = await warmupMessageIds(db, ids);
  if (warmup.size === 0) return messages;
  const kept: ParsedMessage[] = [];
  for (const message of messages) {
    const bounce = bounces.get(message);
    if (bounce?.originalMessageId && warmup.has(bounce.originalMessageId)) {
      const words = [bounce.status, bounce.diagnostic].filter(Boolean).join(" ") || "bounced";
      await markRefusedByMessageId(db, readerId, bounce.originalMessageId, { text: words, kind: bounce.kind === "hard" ? "bounce" : "other" }, now);
      continue;
    }
    if (message.messageId && warmup.has(message.messageId)) continue;
    kept.push(message);
  }
  return kept;
}

/** UIDs of the selected folder's messages with this Message-ID. */
async function uidsOf(session: ImapSession, messageId: string): Promise<number[]> {
  return searchUids((await session.command(["UID", "SEARCH", "HEADER", "Message-ID", imapString(messageId)])).untagged);
}

/** Read and important: `\Seen` and `\Flagged`, and on Gmail the `\Important` label. */
async function markRead(session: ImapSession, uids: number[]): Promise<void> {
  const set = uids.join(",");
  await session.command(["UID", "STORE", set, "+FLAGS.SILENT", "(\\Seen \\Flagged)"]);
  if (session.capabilities?.has("X-GM-EXT-1")) await session.command(["UID", "STORE", set, "+X-GM-LABELS", "(\\Important)"]);
}

/** Moves messages of the selected folder to INBOX: MOVE where offered, else COPY, delete and expunge. */
async function moveToInbox(session: ImapSession, uids: number[]): Promise<void> {
  const set = uids.join(",");
  if (session.capabilities?.has("MOVE")) {
    await session.command(["UID", "MOVE", set, "INBOX"]);
    return;
  }
  await session.command(["UID", "COPY", set, "INBOX"]);
  await session.command(["UID", "STORE", set, "+FLAGS.SILENT", "(\\Deleted)"]);
  await session.command(session.capabilities?.has("UIDPLUS") ? ["UID", "EXPUNGE", set] : ["EXPUNGE"]);
}

export interface Placed {
  inbox: number;
  spam: number;
}

/**
 * Looks for the warmup mail sent to this mailbox that no read has placed yet: INBOX first, then the
 * spam folder (special use, then known names). Each one found is marked read and important, a spam
 * copy moved to INBOX, and where it first landed recorded; one still missing, after a look that
 * worked, 24 h after its send is `not_found`.
 */
export async function placeWarmupMail(db: Database, mailboxId: number, imap: ImapSettings, outbound: OutboundPolicy, now: number): Promise<Placed> {
  const placed: Placed = { inbox: 0, spam: 0 };
  const awaited = await awaitedBy(db, mailboxId, LOOK_FOR);
  if (awaited.length === 0) return placed;
  const result = await withImapSession(imap, { allowPlain: false, outbound }, async (session) => {
    await session.login();
    // What the server offers once logged in (MOVE, UIDPLUS, Gmail's labels) may differ from its greeting's.
    session.capabilities = capabilitiesFrom((await session.command(["CAPABILITY"])).untagged);
    const found: { message: Awaited; landed: "inbox" | "spam" }[] = [];
    await session.select("INBOX");
    const missing: Awaited[] = [];
    for (const message of awaited) {
      const uids = await uidsOf(session, message.messageId);
      if (uids.length === 0) {
        missing.push(message);
        continue;
      }
      await markRead(session, uids);
      found.push({ message, landed: "inbox" });
    }
    if (missing.length > 0) {
      const folder = spamFolder(listedFolders((await session.command(["LIST", imapString(""), imapString("*")])).untagged));
      if (folder !== null) {
        await session.select(folder);
        for (const message of missing) {
          const uids = await uidsOf(session, message.messageId);
          if (uids.length === 0) continue;
          await markRead(session, uids);
          await moveToInbox(session, uids);
          found.push({ message, landed: "spam" });
        }
      }
    }
    await session.logout();
    return found;
  });
  if (!result.ok) {
    log("warn", "warmup read failed", { mailbox_id: mailboxId, kind: result.failure.kind });
    return placed;
  }
  for (const { message, landed } of result.value) {
    await recordLanding(db, message.id, landed, now, { rescued: landed === "spam", opened: true });
    placed[landed]++;
  }
  // Only after a look that worked: what is still missing a day after its send was not delivered.
  await expireUnfound(db, mailboxId, now);
  return placed;
}

function capabilitiesFrom(untagged: { text: string }[]): Set<string> {
  const line = untagged.find((r) => /^CAPABILITY /i.test(r.text));
  return new Set((line?.text ?? "").split(/\s+/).slice(1).map((c) => c.toUpperCase()));
}
