import { describe, expect, inject, it } from "vitest";
import { imapString } from "../../src/mail/imap-protocol";
import { withImapSession } from "../../src/mail/imap";
import { schema, testDb } from "../db";
import { call, callJson, provisionAccount } from "../helpers";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";

/** CONTRACT 21.2's fetch-messages: a live, read-only IMAP read of a mailbox, against the lab's Dovecot. */

const lab = inject("mailLab");
const labConsent = inject("labConsent");
const hostile = inject("hostileMail");
const box = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
const owner = box("sender9");
const other = box("sender10");

/** Appends a message to a folder of a lab mailbox with the given arrival time (INTERNALDATE) and flags. */
async function append(user: { email: string; password: string }, folder: string, raw: string, arrived: string, flags = "()") {
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: user.email, password: user.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      await session.command(["APPEND", imapString(folder), flags, imapString(arrived), { literal: new TextEncoder().encode(raw) }]);
      await session.logout();
    },
  );
  expect(result.ok, JSON.stringify(result)).toBe(true);
}

const run = crypto.randomUUID().slice(0, 8);
// The lab keeps its mailboxes between runs: each run's messages arrive on days of their own.
const DAY = 86_400_000;
const base = Date.UTC(2001, 0, 1) + Math.floor(Math.random() * 7000) * DAY;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const day = (n: number) => new Date(base + (n - 1) * DAY);
const arrival = (n: number) => `${String(day(n).getUTCDate()).padStart(2, "0")}-${MONTHS[day(n).getUTCMonth()]}-${day(n).getUTCFullYear()} 10:00:00 +0000`;
const at = (n: number, time: string) => `${day(n).toISOString().slice(0, 10)}T${time}Z`;
const message = (n: number, extra: string[] = [], body = `Body ${n}`) =>
  [
    `From: Pat ${n} <pat${n}@prospect.example>`,
    `To: ${owner.email}`,
    `Cc: cc${n}@prospect.example`,
    `Subject: Run ${run} message ${n}`,
    `Message-ID: <${run}-${n}@prospect.example>`,
    `In-Reply-To: <sent-${n}@lab.salvo.test>`,
    `Date: ${day(n).toUTCString().replace("GMT", "+0000").replace("00:00:00", "10:00:00")}`,
    ...extra,
    ...(extra.length ? [] : ["Content-Type: text/plain; charset=utf-8", ""]),
    body,
  ].join("\r\n");

const withAttachment = [
  "MIME-Version: 1.0",
  'Content-Type: multipart/mixed; boundary="b"',
  "",
  "--b",
  "Content-Type: text/html; charset=utf-8",
  "",
  "<p>See the file</p>",
  "--b",
  'Content-Type: application/pdf; name="offer.pdf"',
  'Content-Disposition: attachment; filename="offer.pdf"',
  "Content-Transfer-Encoding: base64",
  "",
  "JVBERi0xLjQK",
  "--b--",
].join("\r\n");

type Listing = { email_account_id: number; folder: string; total: number; messages: Record<string, unknown>[] };

function fetchMessages(apiKey: string, id: number, body?: Record<string, unknown>) {
  return callJson<{ ok: boolean; data: Listing; error?: string }>(`/api/v1/email-accounts/${id}/fetch-messages`, { method: "POST", apiKey, body });
}

/** Connects a lab mailbox through the lab provider's consent (no browser); answers its id. */
async function connectOAuth(apiKey: string, email: string): Promise<number> {
  const started = await callJson<{ session_id: string; auth_url: string }>("/api/v1/email-accounts/oauth/microsoft/init", { method: "POST", apiKey, body: { email, from_name: "Lab OAuth" } });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const person = await fetch(labConsent, { method: "POST", body: JSON.stringify({ auth_url: started.body.auth_url, email, browser: false }) });
  expect(person.status).toBe(200);
  const redirect = new URL(((await person.json()) as { redirect: string }).redirect);
  expect((await call(`/oauth/microsoft/callback${redirect.search}`, { redirect: "manual" })).status).toBe(200);
  const session = await callJson<{ status: string; email_account_id: number }>(`/api/v1/email-accounts/oauth/sessions/${started.body.session_id}`, { apiKey });
  expect(session.body).toMatchObject({ status: "success" });
  return session.body.email_account_id;
}

describe("fetch-messages against the lab", () => {
  it("reads an OAuth mailbox with its access token (XOAUTH2)", async () => {
    const account = await provisionAccount();
    const mailbox = box("oauth-microsoft");
    const id = await connectOAuth(account.apiKey, mailbox.email);
    await append(mailbox, "INBOX", message(5).replace(owner.email, mailbox.email), arrival(5));
    const { status, body } = await fetchMessages(account.apiKey, id, { from: at(5, "00:00:00"), to: at(5, "23:00:00") });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data).toMatchObject({ email_account_id: id, folder: "INBOX", total: 1, messages: [expect.objectContaining({ message_id: `<${run}-5@prospect.example>`, to: [mailbox.email] })] });
  });

  it("reads a folder newest first within the bounds, with flags, attachments and bodies, marking nothing seen", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, owner.email, owner.password);
    expect((await checked(account.apiKey, id)).is_imap_success).toBe(true);
    await append(owner, "INBOX", message(1), arrival(1));
    await append(owner, "INBOX", message(2, [], ""), arrival(2), "(\\Flagged)");
    await append(owner, "INBOX", [message(3, withAttachment.split("\r\n").slice(0, 2)), ...withAttachment.split("\r\n").slice(2)].join("\r\n"), arrival(3));
    await append(owner, "Junk", message(4), arrival(4));
    const bounds = { from: at(1, "00:00:00"), to: at(3, "23:59:59") };

    const { status, body } = await fetchMessages(account.apiKey, id, { ...bounds, limit: 2 });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data).toMatchObject({ email_account_id: id, folder: "INBOX", total: 3 });
    expect(body.data.messages).toEqual([
      {
        uid: expect.any(Number),
        message_id: `<${run}-3@prospect.example>`,
        in_reply_to: "<sent-3@lab.salvo.test>",
        from: "pat3@prospect.example",
        to: [owner.email],
        cc: ["cc3@prospect.example"],
        subject: `Run ${run} message 3`,
        date: at(3, "10:00:00.000"),
        flags: [],
        size: expect.any(Number),
        has_attachments: true,
        is_warmup: false,
      },
      expect.objectContaining({ message_id: `<${run}-2@prospect.example>`, flags: ["\\Flagged"], has_attachments: false }),
    ]);
    expect(body.data.messages[0]!).not.toHaveProperty("body");

    const narrow = await fetchMessages(account.apiKey, id, { from: at(1, "00:00:00"), to: at(1, "23:00:00"), includeBody: true });
    expect(narrow.body.data.total).toBe(1);
    expect(narrow.body.data.messages).toEqual([expect.objectContaining({ message_id: `<${run}-1@prospect.example>`, body: expect.stringMatching(/^Body 1\s*$/) })]);
    const html = await fetchMessages(account.apiKey, id, { ...bounds, limit: 1, includeBody: true });
    expect(html.body.data.messages[0]).toMatchObject({ body: expect.stringMatching(/^<p>See the file<\/p>\s*$/) });

    // The special folder by its special-use flag; a message whose Message-ID a warmup send recorded is warmup mail.
    await testDb()
      .insert(schema.warmupMessages)
      .values({ senderId: id, receiverId: id, kind: "warmup", messageId: `<${run}-4@prospect.example>`, subject: "Warmup", sentAt: day(4) });
    const spam = await fetchMessages(account.apiKey, id, { folder: "SPAM", from: at(4, "00:00:00"), to: at(4, "23:00:00") });
    expect(spam.body.data).toMatchObject({ folder: "Junk", total: 1, messages: [expect.objectContaining({ message_id: `<${run}-4@prospect.example>`, is_warmup: true })] });

    // Read-only: nothing was marked seen, even with bodies read.
    const again = await fetchMessages(account.apiKey, id, bounds);
    expect(again.body.data.messages.map((m) => m.flags)).toEqual([[], ["\\Flagged"], []]);

    // Without bounds: the folder's newest first (the appended ones are the newest UIDs).
    const newest = await fetchMessages(account.apiKey, id);
    expect(newest.body.data.messages[0]).toMatchObject({ message_id: `<${run}-3@prospect.example>` });
    expect(newest.body.data.total).toBeGreaterThanOrEqual(3);

    const missing = await fetchMessages(account.apiKey, id, { folder: "No Such Folder" });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "Folder not found: No Such Folder" });
  });

  it("reads several mailboxes at once, each answering its data or why not", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const mine = await saveLabMailbox(account.apiKey, owner.email, owner.password);
    const theirs = await saveLabMailbox(stranger.apiKey, other.email, other.password);
    await checked(account.apiKey, mine);
    await checked(stranger.apiKey, theirs);
    for (const body of [
      [{ account_id: mine, limit: 1 }, { account_id: theirs }, { account_id: 999_999_999 }],
      { accounts: [{ account_id: mine, limit: 1 }, { account_id: theirs }, { account_id: 999_999_999 }] },
    ]) {
      const { status, body: answer } = await callJson<{ ok: boolean; data: Record<string, unknown>[] }>("/api/v1/email-accounts/multi/fetch-messages", { method: "POST", apiKey: account.apiKey, body });
      expect(status).toBe(200);
      expect(answer.data).toEqual([
        expect.objectContaining({ email_account_id: mine, folder: "INBOX", messages: [expect.any(Object)] }),
        { email_account_id: theirs, ok: false, error: "Email account not found" },
        { email_account_id: 999_999_999, ok: false, error: "Email account not found" },
      ]);
    }
    expect((await fetchMessages(account.apiKey, theirs)).status).toBe(404);
    const tooMany = await callJson("/api/v1/email-accounts/multi/fetch-messages", { method: "POST", apiKey: account.apiKey, body: Array.from({ length: 11 }, () => ({ account_id: mine })) });
    expect(tooMany.status).toBe(422);
    for (const bad of [{ limit: 0 }, { limit: 501 }, { from: "yesterday" }, { includeBody: "yes" }]) {
      expect((await fetchMessages(account.apiKey, mine, bad)).status, JSON.stringify(bad)).toBe(422);
    }
  });

  it("answers a mailbox that cannot read with 400 and its reason", async () => {
    const account = await provisionAccount();
    const wrong = await saveLabMailbox(account.apiKey, owner.email, "wrong-password");
    const state = await checked(account.apiKey, wrong);
    expect(state.is_imap_success).toBe(false);
    const refused = await fetchMessages(account.apiKey, wrong);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: state.imap_failure_error });
    // A server that never finishes its greeting: the read gives up with the connection's reason.
    const slow = await saveLabMailbox(account.apiKey, other.email, other.password, { imap_host: "127.0.0.1", imap_port: hostile.imapTls.drip, imap_port_type: "SSL" });
    await callJson(`/api/v1/email-accounts/${slow}`, { method: "POST", apiKey: account.apiKey, body: { max_email_per_day: 10 } });
    const started = Date.now();
    const answer = await fetchMessages(account.apiKey, slow);
    expect([400]).toContain(answer.status);
    expect(Date.now() - started).toBeLessThan(26_000);
  }, 60_000);
});
