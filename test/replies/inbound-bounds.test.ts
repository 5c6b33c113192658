import { describe, expect, it, vi } from "vitest";
import { utf8Length } from "../../src/platform/bytes";
import { parseMessage } from "../../src/mail/parsed";
import { recordInbound } from "../../src/replies/inbound";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { and, eq, sql } from "drizzle-orm";
import { addMessages, eventsOf, schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { createWebhook, deliveriesOf, RECEIVER } from "../webhooks/fixtures";

/**
 * Inbound bodies are bounded (issue 23): D1 refuses a string or row over 2,000,000 bytes, so one
 * large message, or a pass of many, must not fail the pass's batch (it would on every alarm, and
 * the mailbox would never read past it). What is stored is bounded per message, and the lists go
 * in as many statements as keep each within D1's limit.
 */

const RECEIVED = Date.parse("2026-04-02T09:30:00.000Z");
const KB = 1024;

/** A message whose text and HTML each are `kb` KiB of non-ASCII (3 bytes a character in UTF-8) and quotes. */
function big(to: string, i: number, headers: string[] = []): string {
  const text = `Answer ${i}: ${"é€\"".repeat((kb * KB) / 6)}`;
  return [
    "From: Pat Prospect <pat@prospect.example>",
    `To: ${to}`,
    `Subject: Newsletter ${i}`,
    `Message-ID: <big-${i}-${crypto.randomUUID()}@prospect.example>`,
    "Date: Thu, 02 Apr 2026 09:30:00 +0000",
    "MIME-Version: 1.0",
    ...headers,
    'Content-Type: multipart/alternative; boundary="b"',
    "",
    "--b",
    'Content-Type: text/plain; charset="utf-8"',
    "Content-Transfer-Encoding: 8bit",
    "",
    text,
    "--b",
    'Content-Type: text/html; charset="utf-8"',
    "Content-Transfer-Encoding: 8bit",
    "",
    `<p>${text}</p>`,
    "--b--",
    "",
  ].join("\r\n");
}
const kb = 200;
/** D1's limit for a string, a blob or a row (production; the local runtime does not enforce it). */
const D1_LIMIT = 2_000_000;

/** Watches (does not change) every statement's bound values: the largest string bound, in UTF-8 bytes. */
function watchParameters() {
  let largest = 0;
  const prepare = fileEnv().DB.prepare.bind(fileEnv().DB);
  const spy = vi.spyOn(fileEnv().DB, "prepare").mockImplementation((query: string) => {
    const statement = prepare(query);
    const bind = statement.bind.bind(statement);
    statement.bind = (...values: unknown[]) => {
      for (const value of values) if (typeof value === "string") largest = Math.max(largest, utf8Length(value));
      return bind(...values);
    };
    return statement;
  });
  return {
    largest: () => largest,
    restore: () => spy.mockRestore(),
  };
}

describe("inbound bodies within D1's limits", () => {
  it("keeps a pass of 100 large untracked messages, each bounded, and announces each", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const { status } = await callJson("/api/v1/webhook/create", {
      method: "POST",
      apiKey: account.apiKey,
      body: { webhook_url: RECEIVER, force_create: true, association_type: "user", event_types: ["UNTRACKED_REPLIES"] },
    });
    expect(status).toBe(200);
    const messages = await Promise.all(Array.from({ length: 100 }, (_, i) => parseMessage(big(mailbox.from_email, i))));
    const parameters = watchParameters();
    const outcome = await recordInbound(fileEnv(), { id: mailbox.id, accountId: account.id, clientId: null, fromEmail: mailbox.from_email }, messages, RECEIVED).finally(parameters.restore);
    expect(outcome).toMatchObject({ untracked: 100 });
    expect(parameters.largest()).toBeLessThan(D1_LIMIT);
    // Sizes in stored bytes (UTF-8), as D1 counts them.
    const untracked = schema.untrackedReplies;
    const rows = await testDb().select({ text: untracked.textBody, html: untracked.htmlBody }).from(untracked).where(eq(untracked.emailAccountId, mailbox.id)).all();
    expect(rows).toHaveLength(100);
    for (const row of rows) {
      expect(utf8Length(row.text)).toBeLessThanOrEqual(64 * KB);
      expect(utf8Length(row.html ?? "")).toBeLessThanOrEqual(256 * KB);
    }
    const deliveries = schema.webhookDeliveries;
    const announced = await testDb()
      .select({ payload: sql<string>`${deliveries.payload}` })
      .from(deliveries)
      .where(and(eq(deliveries.accountId, account.id), eq(deliveries.eventType, "UNTRACKED_REPLIES")))
      .all();
    expect(announced).toHaveLength(100);
    expect(Math.max(...announced.map((row) => utf8Length(row.payload)))).toBeLessThan(D1_LIMIT);
  }, 60_000);

  it("records 30 large replies to one campaign, each body bounded, with their webhook deliveries", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const campaignId = await createCampaign(account.apiKey);
    const emails = Array.from({ length: 30 }, (_, i) => `lead${i}@prospect.example`);
    const records = await addLeads(account.apiKey, campaignId, emails);
    const hook = await createWebhook(account.apiKey, campaignId, { event_types: ["EMAIL_REPLY"] });
    const sentAt = new Date(RECEIVED - 60_000);
    await addMessages(
      emails.map((email) => ({
        accountId: account.id,
        campaignId,
        campaignLeadId: records[email]!,
        step: 1,
        emailAccountId: mailbox.id,
        messageId: `<ours-${email}>`,
        status: "sent",
        createdAt: sentAt,
        updatedAt: sentAt,
      })),
    );
    const replies = await Promise.all(emails.map((email, i) => parseMessage(big(mailbox.from_email, i, [`In-Reply-To: <ours-${email}>`]).replace("pat@prospect.example", email))));
    const parameters = watchParameters();
    const outcome = await recordInbound(fileEnv(), { id: mailbox.id, accountId: account.id, clientId: null, fromEmail: mailbox.from_email }, replies, RECEIVED).finally(parameters.restore);
    expect(outcome).toMatchObject({ replies: 30, untracked: 0 });
    expect(parameters.largest()).toBeLessThan(D1_LIMIT);
    expect(outcome.writeBatches).toBeGreaterThan(1);
    const stored = await eventsOf(campaignId, "REPLY");
    expect(stored).toHaveLength(30);
    expect(Math.max(...stored.map((event) => utf8Length(event.body ?? "")))).toBeLessThanOrEqual(64 * KB);
    expect(await deliveriesOf(hook.id)).toHaveLength(30);
  }, 60_000);
});
