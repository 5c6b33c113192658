import { expect, inject } from "vitest";

/** Reading what arrived in the lab's mailboxes, through the lab's reader (test/mail/lab.global.ts). */

/** The raw message with this Message-ID in `user`'s INBOX (a failed expectation when it is not there). */
export async function delivered(user: string, messageId: string): Promise<string> {
  const response = await fetch(`${inject("mailReader")}/message?user=${encodeURIComponent(user)}&message_id=${encodeURIComponent(messageId)}`);
  expect(response.status, `${messageId} in ${user}'s INBOX`).toBe(200);
  return response.text();
}

/** A header of a raw message, unfolded; null when absent. */
export function header(raw: string, name: string): string | null {
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, " ");
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line === undefined ? null : line.slice(name.length + 1).trim();
}

/** The quoted-printable HTML part, decoded enough to read its links. */
export function htmlOf(raw: string): string {
  const start = raw.indexOf("Content-Type: text/html");
  return raw
    .slice(start)
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * The SMTP sessions that carried the messages with these Message-IDs (each in its angle brackets),
 * read from Postfix's log, each as Postfix summed it up when it ended (`ehlo=2 starttls=1 auth=1
 * mail=2 …`): a message's queue id names the smtpd process that took it (its `client=` line), and
 * that process's session runs from its "connect from" line to its "disconnect from" line.
 */
export async function smtpSessionsCarrying(messageIds: string[]): Promise<string[]> {
  const log = await (await fetch(`${inject("mailReader")}/log?name=postfix`)).text();
  const sessionOf = new Map<string, string>();
  const opened = new Map<string, number>();
  const summaries = new Map<string, string>();
  const carried: string[] = [];
  for (const line of log.split("\n")) {
    const smtpd = /\/smtpd\[(\d+)\]: (.*)$/.exec(line);
    if (smtpd) {
      const pid = smtpd[1]!;
      const text = smtpd[2]!;
      if (text.startsWith("connect from")) opened.set(pid, (opened.get(pid) ?? 0) + 1);
      const session = `${pid}/${opened.get(pid) ?? 0}`;
      const client = /^(\w+): client=/.exec(text);
      if (client) sessionOf.set(client[1]!, session);
      const ended = /^disconnect from \S+ (.*)$/.exec(text);
      if (ended) summaries.set(session, ended[1]!);
      continue;
    }
    const message = /\/cleanup\[\d+\]: (\w+): message-id=(\S+)$/.exec(line);
    if (message && messageIds.includes(message[2]!)) carried.push(message[1]!);
  }
  expect(carried.length, "each message once in the log").toBe(messageIds.length);
  expect(carried.every((id) => sessionOf.has(id)), "every message's session is in the log").toBe(true);
  const sessions = [...new Set(carried.map((id) => sessionOf.get(id)!))];
  expect(sessions.every((session) => summaries.has(session)), "every session ended").toBe(true);
  return sessions.map((session) => summaries.get(session)!);
}
