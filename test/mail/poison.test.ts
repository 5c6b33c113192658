import { describe, expect, inject, it } from "vitest";
import { imapString } from "../../src/mail/imap-protocol";
import { withImapSession } from "../../src/mail/imap";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { eq } from "drizzle-orm";
import { utf8Length } from "../../src/platform/bytes";
import { addMessages, eventsOf, recordsOf, schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";

/**
 * Issue 23's "Done when": a stranger's poison email must not stop a mailbox's reading. Before, a
 * bounce with 600 KB of blank lines took 91 s to classify and an HTML email of 116 KB of unclosed
 * `<a href>` 234 s to turn into text; the pass never finished, its cursor never moved, and a
 * genuine reply that arrived after them was never recorded (deployed, the pass hits the CPU limit
 * and reads the same message for ever). Here both poisons arrive before a lead's reply, through the
 * lab's real Dovecot, and the reply must be recorded within two read passes. Each pass's time is
 * printed as a `poison-pass` line for `npm run bench:poison` (bench/RESULTS.md); no time is
 * asserted here.
 */
const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const account = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
// Used by no other lab test: its INBOX is emptied first, so what is read is only what this test puts there.
const sender = account("sender7");
const lead = account("lead1");
const KB = 1_000;

async function onLab<T>(run: Parameters<typeof withImapSession<T>>[2]): Promise<T> {
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: sender.email, password: sender.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      const value = await run(session);
      await session.logout();
      return value;
    },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.failure));
  return result.value;
}

const emptyInbox = () =>
  onLab(async (session) => {
    const box = await session.select("INBOX");
    if (box.exists === 0) return;
    await session.command(["STORE", "1:*", "+FLAGS.SILENT", "(\\Deleted)"]);
    await session.command(["EXPUNGE"]);
  });

// A message is appended with a literal of up to this many bytes per command answer (the default budget is 4 MiB).
const append = (raw: string) => onLab(async (session) => session.command(["APPEND", imapString("INBOX"), { literal: new TextEncoder().encode(raw) }]));

const headers = (from: string, subject: string, extra: string[] = []) => [
  `From: ${from}`,
  `To: ${sender.email}`,
  `Subject: ${subject}`,
  `Date: ${new Date().toUTCString()}`,
  `Message-ID: <${crypto.randomUUID()}@poison.example>`,
  "MIME-Version: 1.0",
  ...extra,
];

/** 600 KB of the pattern that made bounce.ts's RETURNED_MARKER quadratic: a bounce notice, then blank lines. */
const bouncePoison = () =>
  [
    ...headers("Mail Delivery System <MAILER-DAEMON@mx.poison.example>", "Undelivered Mail Returned to Sender", ["Content-Type: text/plain"]),
    "",
    "This is the mail system at host mx.poison.example.",
    "",
    "I'm sorry to have to inform you that your message could not be delivered.",
    "",
    `${"\r\n".repeat(300 * KB)}`,
    "-- The body of the message follows",
    "",
  ].join("\r\n");

/** 116 KB of unclosed `<a href>`, what took html-text.ts 234 s. */
const linkPoison = () =>
  [...headers("Stranger <stranger@poison.example>", "Offer", ["Content-Type: text/html; charset=utf-8"]), "", '<a href="https://poison.example/x">'.repeat((116 * KB) / 35)].join("\r\n");

describe("a poison email does not stop a mailbox's reading", () => {
  it("records the genuine reply that follows 600 KB of a bounce pattern and 116 KB of unclosed links, within two read passes", async () => {
    await emptyInbox();
    const owner = await provisionAccount();
    const mailboxId = await saveLabMailbox(owner.apiKey, sender.email, sender.password);
    expect(await checked(owner.apiKey, mailboxId)).toMatchObject({ is_imap_success: true });
    const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey: owner.apiKey, body: { name: "Poison" } });
    await callJson(`/api/v1/campaigns/${created.id}/leads`, { method: "POST", apiKey: owner.apiKey, body: { lead_list: [{ email: lead.email }] } });
    // The email the lead answers, as the engine records a sent one.
    const ours = `<poison-ours-${crypto.randomUUID()}@lab.salvo.test>`;
    const sentAt = Date.now() - 3_600_000;
    const at = new Date(sentAt);
    await addMessages(
      (await recordsOf(created.id)).map((record) => ({
        accountId: record.accountId,
        campaignId: created.id,
        campaignLeadId: record.id,
        step: 1,
        emailAccountId: mailboxId,
        messageId: ours,
        status: "sent",
        sentAt: at,
        createdAt: at,
        updatedAt: at,
      })),
    );

    await append(bouncePoison());
    await append(linkPoison());
    await append(
      [...headers(`Lead <${lead.email}>`, "Re: Our offer", ["Content-Type: text/plain; charset=utf-8", `In-Reply-To: ${ours}`, `References: ${ours}`]), "", "Yes, let's talk on Monday.", ""].join(
        "\r\n",
      ),
    );

    const replies = async () => (await eventsOf(created.id, "REPLY")).map((event) => ({ body: event.body }));
    const stub = senderStub(bindings, mailboxId);
    const passes: { ms: number; messages: number }[] = [];
    for (let pass = 0; pass < 2 && (await replies()).length === 0; pass += 1) {
      const started = Date.now();
      const result = await stub.runRead(Date.now(), mailboxId);
      const outcome = result.outcome ?? { replies: 0, bounces: 0, untracked: 0 };
      passes.push({ ms: Date.now() - started, messages: outcome.replies + outcome.bounces + outcome.untracked });
    }
    console.log(`poison-pass ${JSON.stringify(passes)}`);
    expect(await replies()).toEqual([{ body: "Yes, let's talk on Monday." }]);
    // The link poison is kept as an untracked message (bounded), not lost.
    const untracked = schema.untrackedReplies;
    const kept = await testDb().select({ subject: untracked.subject, html: untracked.htmlBody }).from(untracked).where(eq(untracked.emailAccountId, mailboxId)).all();
    expect(kept.map((row) => ({ subject: row.subject, html: utf8Length(row.html ?? "") }))).toEqual([{ subject: "Offer", html: expect.any(Number) }]);
  });
});
