import type { SeedCursor } from "../db/schema";
import { withImapSession, type ImapFailure, type ImapSettings } from "../mail/imap";
import { imapString } from "../mail/imap-protocol";
import { fetchBodies, imapDate, searchUids, type InboxMessage } from "../mail/reader";
import type { OutboundPolicy } from "../platform/outbound";

/**
 * What is read of a seed's message: all of one of our test emails (Rspamd scores it whole), while a
 * stranger's huge message in a seed costs a bounded memory.
 */
const SEED_BODY_BYTES = 4 * 1024 * 1024;

export interface SeedMessage extends InboxMessage {
  folder: string;
}

interface SeedRead {
  messages: SeedMessage[];
  cursor: SeedCursor;
  /** A folder had more new messages than this pass took. */
  more: boolean;
}

/**
 * One session on a seed mailbox reading every given folder after its cursor (read-only EXAMINE and
 * BODY.PEEK, so nothing changes in the seed), as the reply reader does for an INBOX: the cursor is
 * each folder's UIDVALIDITY and last UID, and a folder seen for the first time (or rebuilt) is read
 * from `since`. A folder that does not exist is skipped, not an error: an operator may name a tab
 * folder before the provider creates it.
 */
export async function readSeedFolders(
  settings: ImapSettings,
  folders: string[],
  cursor: SeedCursor,
  since: number,
  limitPerFolder: number,
  outbound: OutboundPolicy,
): Promise<{ ok: true; read: SeedRead } | { ok: false; failure: ImapFailure }> {
  const result = await withImapSession(settings, { allowPlain: false, outbound, maxLiteralBytes: SEED_BODY_BYTES }, async (session) => {
    await session.login();
    const next: SeedCursor = { ...cursor };
    const messages: SeedMessage[] = [];
    let more = false;
    for (const folder of folders) {
      let box;
      try {
        box = await session.select(folder, { readOnly: true });
      } catch {
        continue;
      }
      const uidValidity = box.uidValidity ?? 0;
      const known = cursor[folder];
      const continuing = known !== undefined && known.uidValidity === uidValidity;
      const after = continuing ? known.lastUid : 0;
      if (continuing && box.uidNext !== null && box.uidNext <= after + 1) continue;
      const search = continuing
        ? await session.command(["UID", "SEARCH", "UID", `${after + 1}:*`])
        : await session.command(["UID", "SEARCH", "SINCE", imapString(imapDate(since))]);
      const uids = [...new Set(searchUids(search.untagged))].filter((uid) => uid > after).sort((a, b) => a - b);
      const { messages: read, chosen } = await fetchBodies(session, uids.slice(0, limitPerFolder), SEED_BODY_BYTES);
      more ||= uids.length > chosen.length;
      messages.push(...read.map((message) => ({ ...message, folder })));
      next[folder] = { uidValidity, lastUid: chosen.length > 0 ? chosen.at(-1)! : Math.max(after, (box.uidNext ?? 1) - 1) };
    }
    await session.logout();
    return { messages, cursor: next, more };
  });
  return result.ok ? { ok: true, read: result.value } : result;
}
