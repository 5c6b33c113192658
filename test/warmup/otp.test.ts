import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { callJson, provisionAccount } from "../helpers";
import { schema, testDb } from "../db";
import { createMailbox, readMailbox } from "../mailboxes/fixtures";
import { otpDigest } from "../../src/warmup/otp";

function post(apiKey: string, path: string, body?: unknown) {
  return callJson<{ ok?: boolean; data?: string; error?: string }>(path, { method: "POST", apiKey, body });
}

async function block(id: number) {
  await testDb().update(schema.emailAccounts).set({ warmupEnabled: true, warmupBlockedReason: "550 5.7.1 rejected by policy" }).where(eq(schema.emailAccounts.id, id));
}

/** A code as the send route stores it (its digest, 10 minutes), without a mail server. */
async function seedCode(id: number, code: string, expiresAt = Date.now() + 600_000) {
  await testDb()
    .insert(schema.warmupOtps)
    .values({ emailAccountId: id, codeDigest: await otpDigest(id, code), expiresAt: new Date(expiresAt), tries: 0, messageId: `<wu-otp.${id}@x.test>` });
}

describe("warmup unblock codes (CONTRACT 19.4)", () => {
  it("refuses a code for a mailbox whose warmup is not blocked, answers the server's words when the send fails, and holds a mailbox whose server is out of reach", async () => {
    const account = await provisionAccount();
    const box = await createMailbox(account.apiKey, { smtp_host: "smtp.invalid.example", smtp_port: 465 });
    expect(await post(account.apiKey, `/api/v1/email-accounts/${box.id}/send-otp-email`)).toMatchObject({ status: 400, body: { error: "Warmup is not blocked for this mailbox" } });
    await block(box.id);
    const refused = await post(account.apiKey, `/api/v1/email-accounts/${box.id}/send-otp-email`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBeTruthy();
    // Nothing valid is left behind by a send that failed.
    expect(await post(account.apiKey, `/api/v1/email-accounts/${box.id}/verify-otp`, { otp: "123456" })).toMatchObject({ status: 400, body: { error: "No valid OTP exists for this email account." } });
    // Its server out of reach holds the mailbox, as a campaign email's would: the next code's email waits for the try.
    const [held] = await testDb().select({ until: schema.emailAccounts.sendHeldUntil, reason: schema.emailAccounts.sendHeldReason }).from(schema.emailAccounts).where(eq(schema.emailAccounts.id, box.id));
    expect(held!.until!.getTime()).toBeGreaterThan(Date.now() + 4 * 60_000);
    expect(held!.reason).toBe(refused.body.error);
    const again = await post(account.apiKey, `/api/v1/email-accounts/${box.id}/send-otp-email`);
    expect(again).toMatchObject({ status: 400, body: { error: `The mailbox's mail server refused its sending for now (${held!.reason}): it may send again at ${held!.until!.toISOString()}` } });
  });

  it("unblocks with the right code (single use), counts wrong ones (5 tries) and refuses an expired one", async () => {
    const account = await provisionAccount();
    const box = await createMailbox(account.apiKey);
    await block(box.id);
    await seedCode(box.id, "042917");
    const verify = (otp: unknown) => post(account.apiKey, `/api/v1/email-accounts/${box.id}/verify-otp`, { otp });
    expect(await verify("111111")).toMatchObject({ status: 400, body: { error: "The OTP entered is incorrect. Please attempt again." } });
    expect((await readMailbox(account.apiKey, box.id)).body.warmup_details).toMatchObject({ is_warmup_blocked: true, state: "blocked" });
    expect(await verify(42917)).toMatchObject({ status: 200, body: { ok: true, data: "OTP verification completed successfully; your warmup account is now unblocked." } });
    expect((await readMailbox(account.apiKey, box.id)).body.warmup_details).toMatchObject({ is_warmup_blocked: false, blocked_reason: null, status: "ACTIVE" });
    expect(await verify("042917")).toMatchObject({ status: 400, body: { error: "No valid OTP exists for this email account." } });

    const tries = await createMailbox(account.apiKey);
    await block(tries.id);
    await seedCode(tries.id, "555000");
    for (let i = 0; i < 5; i++) expect((await post(account.apiKey, `/api/v1/email-accounts/${tries.id}/verify-otp`, { otp: "000555" })).body.error).toBe("The OTP entered is incorrect. Please attempt again.");
    expect((await post(account.apiKey, `/api/v1/email-accounts/${tries.id}/verify-otp`, { otp: "555000" })).body.error).toBe("No valid OTP exists for this email account.");

    const late = await createMailbox(account.apiKey);
    await block(late.id);
    await seedCode(late.id, "777777", Date.now() - 1);
    expect((await post(account.apiKey, `/api/v1/email-accounts/${late.id}/verify-otp`, { otp: "777777" })).body.error).toBe("No valid OTP exists for this email account.");
  });

  it("answers bad input with 422 and another tenant's mailbox with 404", async () => {
    const account = await provisionAccount();
    const other = await provisionAccount();
    const box = await createMailbox(account.apiKey);
    for (const body of [{}, { otp: "" }, { otp: true }, { otp: -1 }]) {
      expect((await post(account.apiKey, `/api/v1/email-accounts/${box.id}/verify-otp`, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect(await post(other.apiKey, `/api/v1/email-accounts/${box.id}/verify-otp`, { otp: "123456" })).toMatchObject({ status: 404, body: { error: "Email account not found" } });
    expect(await post(other.apiKey, `/api/v1/email-accounts/${box.id}/send-otp-email`)).toMatchObject({ status: 404, body: { error: "Email account not found" } });
  });
});
