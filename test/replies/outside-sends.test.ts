import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { leadByEmail, setLead } from "../db";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";

/**
 * CONTRACT 21.5's shapes, tenancy and refusals without a mail server (the lab test,
 * test/mail/outside-sends.test.ts, sends for real): nothing is stored or sent when a request is
 * refused before it reaches the mailbox's object.
 */

async function world() {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const map = await addLeads(account.apiKey, campaign, ["t@reply.example", "gone@reply.example"]);
  await ingestOk(account.apiKey, campaign, [
    { type: "SENT", lead_email: "t@reply.example", occurred_at: "2026-03-01T10:00:00Z", message_id: "<s@x>" },
    { type: "REPLY", lead_email: "t@reply.example", occurred_at: "2026-03-02T10:00:00Z", message_id: "<r@t>", body: "Hi" },
  ]);
  const reply = (await fileEnv().DB.prepare("SELECT id FROM events WHERE campaign_lead_id = ? AND type = 'REPLY'").bind(map["t@reply.example"]!).first<{ id: number }>())!;
  const mailbox = await createMailbox(account.apiKey);
  return { account, campaign, statsId: reply.id, mailbox };
}

/** The thread's record pinned to a mailbox whose last check passed (no server answers: nothing is sent). */
async function usable(campaign: number, mailboxId: number) {
  await fileEnv().DB.prepare("UPDATE email_accounts SET is_smtp_success = 1, is_imap_success = 1 WHERE id = ?").bind(mailboxId).run();
  await fileEnv().DB.prepare("UPDATE campaign_leads SET email_account_id = ? WHERE campaign_id = ?").bind(mailboxId, campaign).run();
}

const stored = async () => (await fileEnv().DB.prepare("SELECT count(*) AS n FROM outside_sends").first<{ n: number }>())!.n;
const UNUSABLE = { ok: false, error: "Email account not found!", status: "error" };

describe("forward-email", () => {
  const forward = (apiKey: string, campaign: number, body: unknown) => callJson(`/api/v1/campaigns/${campaign}/forward-email`, { method: "POST", apiKey, body });

  it("answers bad input, unknown messages, strangers and unusable mailboxes without storing anything", async () => {
    const { account, campaign, statsId, mailbox } = await world();
    const before = await stored();
    expect(await forward(account.apiKey, campaign, { to_emails: "a@b.example" })).toMatchObject({ status: 422, body: { details: [expect.objectContaining({ path: "stats_id" })] } });
    expect(await forward(account.apiKey, campaign, { stats_id: statsId })).toMatchObject({ status: 422, body: { details: [expect.objectContaining({ path: "to_emails" })] } });
    expect((await forward(account.apiKey, campaign, { stats_id: statsId, to_emails: "not-an-address" })).status).toBe(422);
    const eleven = Array.from({ length: 11 }, (_, i) => `p${i}@b.example`);
    expect((await forward(account.apiKey, campaign, { stats_id: statsId, to_emails: eleven })).status).toBe(422);
    expect((await forward(account.apiKey, campaign, { stats_id: "1.5", to_emails: "a@b.example" })).status).toBe(422);

    expect(await forward(account.apiKey, campaign, { stats_id: 999999, to_emails: "a@b.example" })).toMatchObject({ status: 404, body: { error: "Email stats not found" } });
    // No mailbox of the account wrote the thread yet.
    expect(await forward(account.apiKey, campaign, { email_stats_id: statsId, forward_to_email: "a@b.example" })).toMatchObject({ status: 400, body: UNUSABLE });
    const stranger = await provisionAccount();
    expect(await forward(stranger.apiKey, campaign, { stats_id: statsId, to_emails: "a@b.example" })).toMatchObject({ status: 404, body: { error: "Campaign not found" } });

    await usable(campaign, mailbox.id);
    expect(await forward(account.apiKey, campaign, { stats_id: statsId, to_emails: "a@b.example", message_id: "<other@x>" })).toMatchObject({
      status: 400,
      body: { error: "message_id is not the Message-ID of the message stats_id names" },
    });
    await callJson("/api/v1/leads/add-domain-block-list", { method: "POST", apiKey: account.apiKey, body: { domain_block_list: ["blocked.example"] } });
    expect(await forward(account.apiKey, campaign, { stats_id: statsId, to_emails: ["a@b.example", "x@BLOCKED.example"] })).toMatchObject({
      status: 400,
      body: { error: "The recipient x@blocked.example is on the block list" },
    });
    const { body: gone } = await callJson<{ id: number }>(`/api/v1/leads?email=gone%40reply.example`, { apiKey: account.apiKey });
    await callJson(`/api/v1/leads/${gone.id}/unsubscribe`, { method: "POST", apiKey: account.apiKey });
    expect(await forward(account.apiKey, campaign, { stats_id: statsId, to_emails: "gone@reply.example" })).toMatchObject({
      status: 400,
      body: { error: "The recipient gone@reply.example has unsubscribed or bounced" },
    });
    await fileEnv().DB.prepare("UPDATE email_accounts SET is_suspended = 1 WHERE id = ?").bind(mailbox.id).run();
    expect(await forward(account.apiKey, campaign, { stats_id: statsId, to_emails: "a@b.example" })).toMatchObject({ status: 400, body: UNUSABLE });
    expect(await stored()).toBe(before);
  });

  it("the campaign-in-body alias answers the same refusals", async () => {
    const { account, campaign, statsId } = await world();
    const alias = (body: unknown) => callJson("/api/v1/email-campaigns/forward-reply-email", { method: "POST", apiKey: account.apiKey, body });
    expect(await alias({ emailStatsId: statsId, forwardToEmailIds: ["a@b.example"] })).toMatchObject({ status: 422, body: { details: [expect.objectContaining({ path: "campaignId" })] } });
    expect(await alias({ campaignId: campaign, emailStatsId: 999999, forwardToEmailIds: ["a@b.example"] })).toMatchObject({ status: 404, body: { error: "Email stats not found" } });
    // BC's names.
    expect(await alias({ campaign_id: String(campaign), lead_id: 5, email_stats_id: String(statsId), to: ["a@b.example"], note: "fyi" })).toMatchObject({ status: 400, body: UNUSABLE });
  });
});

describe("send-email/initiate", () => {
  const initiate = (apiKey: string, body: unknown) => callJson("/api/v1/send-email/initiate", { method: "POST", apiKey, body });

  it("answers bad input, foreign or unusable mailboxes and refused recipients without storing anything", async () => {
    const { account, mailbox } = await world();
    const before = await stored();
    const base = { to: "a@b.example", subject: "Hi", body: "Hello", fromEmailId: mailbox.id };
    expect(await initiate(account.apiKey, { ...base, to: undefined })).toMatchObject({ status: 422, body: { details: [expect.objectContaining({ path: "to" })] } });
    expect(await initiate(account.apiKey, { ...base, fromEmailId: undefined })).toMatchObject({ status: 422, body: { details: [expect.objectContaining({ path: "fromEmail" })] } });
    expect((await initiate(account.apiKey, { ...base, subject: "" })).status).toBe(422);
    expect((await initiate(account.apiKey, { ...base, subject: "x".repeat(999) })).status).toBe(422);
    expect((await initiate(account.apiKey, { ...base, cc: "nope" })).status).toBe(422);
    const file = { filename: "a.bin", content: "AAAA", mimeType: "application/octet-stream" };
    expect((await initiate(account.apiKey, { ...base, attachments: Array.from({ length: 6 }, () => file) })).status).toBe(422);
    expect(await initiate(account.apiKey, { ...base, attachments: [{ ...file, content: "not base64!" }] })).toMatchObject({
      status: 422,
      body: { details: [expect.objectContaining({ path: "attachments.0.content" })] },
    });
    expect((await initiate(account.apiKey, { ...base, attachments: [{ ...file, mimeType: "bad type" }] })).status).toBe(422);

    // Failing its connection check (never checked), then another account's, then an unknown address.
    expect(await initiate(account.apiKey, base)).toMatchObject({ status: 400, body: UNUSABLE });
    await fileEnv().DB.prepare("UPDATE email_accounts SET is_smtp_success = 1, is_imap_success = 1 WHERE id = ?").bind(mailbox.id).run();
    const stranger = await provisionAccount();
    expect(await initiate(stranger.apiKey, base)).toMatchObject({ status: 400, body: UNUSABLE });
    expect(await initiate(stranger.apiKey, { ...base, fromEmailId: undefined, from: mailbox.from_email })).toMatchObject({ status: 400, body: UNUSABLE });
    expect(await initiate(account.apiKey, { ...base, fromEmailId: undefined, from_email: "nobody@sender.example.com" })).toMatchObject({ status: 400, body: UNUSABLE });
    // A client key sees only its client's mailboxes.
    const clientId = await createClient(account.apiKey);
    const clientKey = (await createClientKey(account.apiKey, clientId)).api_key;
    expect(await initiate(clientKey, base)).toMatchObject({ status: 400, body: UNUSABLE });

    await callJson("/api/v1/leads/add-domain-block-list", { method: "POST", apiKey: account.apiKey, body: { domain_block_list: ["blocked.example"] } });
    expect(await initiate(account.apiKey, { ...base, cc: "x@blocked.example" })).toMatchObject({ status: 400, body: { error: "The recipient x@blocked.example is on the block list" } });
    // An address verified invalid (CONTRACT 22) is refused like a blocked one.
    const campaignId = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaignId, ["dead@gone.example"]);
    // The upload's map names campaign records; the lead is found by its address.
    await setLead((await leadByEmail(account.id, "dead@gone.example")).id, { verificationStatus: "invalid", verificationReason: "no_domain" });
    expect(await initiate(account.apiKey, { ...base, to: "dead@gone.example" })).toMatchObject({ status: 400, body: { error: "The recipient dead@gone.example was verified invalid" } });
    const eleven = Array.from({ length: 6 }, (_, i) => `p${i}@b.example`);
    expect(await initiate(account.apiKey, { ...base, cc: eleven, bcc: eleven.map((a) => a.replace("p", "q")) })).toMatchObject({
      status: 400,
      body: { error: "A manual email may go to at most 10 recipients (to, cc and bcc together); this one has 13" },
    });
    expect(await stored()).toBe(before);
  });
});

describe("send-email-thread", () => {
  it("is reply-email-thread with the campaign in the body and camelCase names", async () => {
    const { account, campaign, statsId } = await world();
    const send = (apiKey: string, body: unknown) => callJson("/api/v1/email-campaigns/send-email-thread", { method: "POST", apiKey, body });
    expect((await send(account.apiKey, { campaignId: campaign, emailStatsId: statsId })).status).toBe(422);
    expect(await send(account.apiKey, { campaignId: campaign, emailStatsId: 999999, emailBody: "x" })).toMatchObject({ status: 404, body: { error: "Email stats not found" } });
    expect(await send(account.apiKey, { campaignId: campaign, emailStatsId: String(statsId), emailBody: "x" })).toMatchObject({ status: 400, body: { error: "Email account not found!" } });
    const stranger = await provisionAccount();
    expect((await send(stranger.apiKey, { campaignId: campaign, emailStatsId: statsId, emailBody: "x" })).status).toBe(404);
  });

  it("schedules a reply like reply-email-thread, and reply-status follows it", async () => {
    const { account, campaign, statsId, mailbox } = await world();
    await usable(campaign, mailbox.id);
    const when = new Date(Date.now() + 86_400_000);
    when.setUTCMilliseconds(0);
    const answer = await callJson<{ message_id: string; email_stats_id: string }>("/api/v1/email-campaigns/send-email-thread", {
      method: "POST",
      apiKey: account.apiKey,
      body: { campaignId: String(campaign), emailStatsId: statsId, emailBody: "<p>Tomorrow</p>", scheduledTime: when.toISOString(), cc: "boss@reply.example" },
    });
    expect(answer).toMatchObject({
      status: 200,
      body: { ok: true, data: "success", message: "Email added to the queue, will be sent out soon!", message_id: expect.any(String), email_stats_id: String(statsId) },
    });
    const { body } = await callJson(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(answer.body.message_id)}`, { apiKey: account.apiKey });
    expect(body).toMatchObject({ ok: true, data: { status: "SCHEDULED", scheduled_time: when.toISOString() } });
  });
});

describe("reply-status of sends outside sequences", () => {
  it("answers a forward's or a one-off's progress to its scope only", async () => {
    const { account, mailbox } = await world();
    const row = { account_id: account.id, email_account_id: mailbox.id, message_id: `<${crypto.randomUUID()}@x>` };
    await fileEnv().DB.prepare("INSERT INTO outside_sends (account_id, email_account_id, kind, message_id, status, status_message) VALUES (?, ?, 'single', ?, 'FAILED', 'refused: 550')")
      .bind(row.account_id, row.email_account_id, row.message_id)
      .run();
    const status = (apiKey: string) => callJson(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(row.message_id)}`, { apiKey });
    expect(await status(account.apiKey)).toMatchObject({ status: 200, body: { ok: true, data: { message_id: row.message_id, status: "FAILED", status_message: "refused: 550", email_stats_id: null } } });
    expect((await status((await provisionAccount()).apiKey)).status).toBe(404);
    const clientKey = (await createClientKey(account.apiKey, await createClient(account.apiKey))).api_key;
    expect((await status(clientKey)).status).toBe(404);
  });
});

describe("held one-off emails", () => {
  it("tries one its server refused for now again at the hold's end, for a day from when it first came due, then fails it", async () => {
    const { account, campaign, mailbox } = await world();
    await usable(campaign, mailbox.id);
    const oneOff = (subject: string) =>
      callJson<{ data: { message_id: string; status: string } }>("/api/v1/send-email/initiate", {
        method: "POST",
        apiKey: account.apiKey,
        body: { to: "t@reply.example", subject, body: "A note", fromEmailId: mailbox.id },
      });
    const status = async (messageId: string) =>
      (await callJson<{ data: { status: string; status_message: string | null; scheduled_time: string | null } }>(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(messageId)}`, { apiKey: account.apiKey })).body.data;
    const heldUntil = async () => (await fileEnv().DB.prepare("SELECT send_held_until AS until FROM email_accounts WHERE id = ?").bind(mailbox.id).first<{ until: number | null }>())!.until;
    // No server answers: the first send meets none and holds the mailbox; the next waits for the try.
    expect((await oneOff("First")).status).not.toBe(200);
    const firstTry = (await heldUntil())!;
    const queued = await oneOff("Second");
    expect(queued.body.data.status).toBe("QUEUED");
    const messageId = queued.body.data.message_id;
    expect(await status(messageId)).toMatchObject({ status: "SCHEDULED", scheduled_time: new Date(firstTry).toISOString() });

    const stub = senderStub(fileEnv() as unknown as Bindings, mailbox.id);
    await stub.runPass(firstTry, { mailboxId: mailbox.id, read: false });
    const waiting = await status(messageId);
    expect(waiting).toMatchObject({ status: "SCHEDULED", scheduled_time: new Date(firstTry + 5 * 60_000).toISOString() });
    expect(waiting.status_message).toMatch(/ \(tried again at /);
    // A day after it first came due, the next refusal is its last.
    await stub.runPass(firstTry + 86_400_000, { mailboxId: mailbox.id, read: false });
    const last = await status(messageId);
    expect(last.status).toBe("FAILED");
    expect(last.status_message).not.toContain("tried again");
  });
});
