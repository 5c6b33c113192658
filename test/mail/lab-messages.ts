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
