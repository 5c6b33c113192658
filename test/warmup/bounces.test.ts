import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { parseMessage } from "../../src/mail/parsed";
import { database } from "../../src/platform/db";
import { otpDigest } from "../../src/warmup/otp";
import { withoutWarmup } from "../../src/warmup/receive";
import { classifyBounce } from "../../src/replies/bounce";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { schema, testDb } from "../db";
import { createMailbox } from "../mailboxes/fixtures";

function dsn(to: string, failed: string, originalId: string, i: number): string {
  return [
    `From: Mail Delivery System <MAILER-DAEMON@mx.example.net>`,
    `To: ${to}`,
    `Subject: Undelivered Mail Returned to Sender`,
    `Message-ID: <dsn-${i}-${crypto.randomUUID()}@mx.example.net>`,
    `Date: Wed, 05 Mar 2031 12:00:00 +0000`,
    `MIME-Version: 1.0`,
    `Content-Type: multipart/report; report-type=delivery-status; boundary="B"`,
    ``,
    `--B`,
    `Content-Type: text/plain`,
    ``,
    `This is the mail system at host mx.example.net. Your message could not be delivered.`,
    ``,
    `--B`,
    `Content-Type: message/delivery-status`,
    ``,
    `Reporting-MTA: dns; mx.example.net`,
    ``,
    `Final-Recipient: rfc822; ${failed}`,
    `Action: failed`,
    `Status: 5.1.1`,
    `Diagnostic-Code: smtp; 550 5.1.1 <${failed}>: Recipient address rejected: User unknown`,
    ``,
    `--B`,
    `Content-Type: text/rfc822-headers`,
    ``,
    `From: ${to}`,
    `To: ${failed}`,
    `Subject: quick question`,
    `Message-ID: ${originalId}`,
    ``,
    `--B--`,
    ``,
  ].join("\r\n");
}

describe("bounce reports of warmup mail (CONTRACT 19.4, 19.5)", () => {
  it("count against the sender whose reader reads them: three hard bounces in 7 days block it; one naming another mailbox's email changes nothing of it", async () => {
    const account = await provisionAccount();
    const sender = await createMailbox(account.apiKey, { warmup_enabled: true });
    const stranger = await createMailbox(account.apiKey, { warmup_enabled: true });
    const receivers = [];
    for (let i = 0; i < 3; i++) receivers.push(await createMailbox(account.apiKey, { warmup_enabled: true }));
    const now = Date.now();
    await testDb()
      .update(schema.emailAccounts)
      .set({ isSmtpSuccess: true, isImapSuccess: true, warmupEnabledAt: new Date(now - 86_400_000) })
      .where(inArray(schema.emailAccounts.id, [sender.id, stranger.id, ...receivers.map((r) => r.id)]));
    const ids = receivers.map((_, i) => `<wu.bounce${i}${crypto.randomUUID().slice(0, 8)}@sender.example.com>`);
    await testDb().insert(schema.warmupMessages).values(receivers.map((r, i) => ({ senderId: sender.id, receiverId: r.id, kind: "warmup" as const, messageId: ids[i]!, subject: "quick question", sentAt: new Date(now - 3_600_000) })));
    const reports = await Promise.all(receivers.map((r, i) => parseMessage(dsn(sender.from_email, r.from_email, ids[i]!, i))));
    for (const report of reports) expect(classifyBounce(report)).toMatchObject({ kind: "hard", originalMessageId: expect.any(String) });
    const db = database(fileEnv().DB);
    const rows = async () => (await testDb().select().from(schema.warmupMessages).where(eq(schema.warmupMessages.senderId, sender.id))).map((r) => [r.status, r.errorKind]);
    const mailbox = async (id: number) => (await testDb().select().from(schema.emailAccounts).where(eq(schema.emailAccounts.id, id)))[0]!;

    // Another mailbox's reader given the reports: still warmup's alone, and nothing of the sender's changes.
    expect(await withoutWarmup(db, stranger.id, reports, now)).toHaveLength(0);
    expect(await rows()).toEqual([["sent", null], ["sent", null], ["sent", null]]);
    expect((await mailbox(receivers[0]!.id)).warmupBouncedReason).toBeNull();

    expect(await withoutWarmup(db, sender.id, reports.slice(0, 2), now), "warmup's bounces are warmup's alone").toHaveLength(0);
    expect((await mailbox(sender.id)).warmupBlockedReason, "two hard bounces").toBeNull();
    expect(await withoutWarmup(db, sender.id, reports.slice(2), now)).toHaveLength(0);
    expect(await rows()).toEqual([["refused", "bounce"], ["refused", "bounce"], ["refused", "bounce"]]);
    expect((await mailbox(receivers[2]!.id)).warmupBouncedReason, "the bounced address leaves the pool").toContain("5.1.1");
    expect((await mailbox(sender.id)).warmupBlockedReason, "3 hard bounces in 7 days: is_warmup_blocked").toContain("5.1.1");

    // Unblocked with the code: the bounces of mail sent before it count no more, and one more does not block again.
    await testDb().insert(schema.warmupOtps).values({ emailAccountId: sender.id, codeDigest: await otpDigest(sender.id, "042917"), expiresAt: new Date(Date.now() + 600_000), tries: 0, messageId: `<wu-otp.${sender.id}@x.test>` });
    expect((await callJson(`/api/v1/email-accounts/${sender.id}/verify-otp`, { method: "POST", apiKey: account.apiKey, body: { otp: "042917" } })).status).toBe(200);
    const later = `<wu.bounce3${crypto.randomUUID().slice(0, 8)}@sender.example.com>`;
    await testDb().insert(schema.warmupMessages).values({ senderId: sender.id, receiverId: receivers[0]!.id, kind: "warmup", messageId: later, subject: "quick question", sentAt: new Date(Date.now() + 60_000) });
    expect(await withoutWarmup(db, sender.id, [await parseMessage(dsn(sender.from_email, receivers[0]!.from_email, later, 3))], Date.now() + 120_000)).toHaveLength(0);
    expect((await mailbox(sender.id)).warmupBlockedReason, "a fourth bounce in 7 days, the first since the unblock").toBeNull();
  });
});
