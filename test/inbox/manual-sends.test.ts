import { describe, expect, it } from "vitest";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { addManualSends, campaignOutboundReplies, eventCount, mailboxConnected, outboundReplyRow, personOf, recordEventId } from "../db";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { createMailbox, readMailbox } from "../mailboxes/fixtures";

/**
 * Issue 23, "block list and caps bypassed outside campaigns": every manual send (inbox replies and
 * test emails today) goes through one rule: no block-listed or opted-out address in to, cc or bcc,
 * at most 10 recipients, the mailbox's gap, and a daily allowance of manual deliveries equal to its
 * cap. What needs no mail server is tested here; the lab test (test/mail/manual-sends.test.ts)
 * sends for real.
 */

const MINUTE = 60_000;
const bindings = fileEnv() as unknown as Bindings;

/** A thread of a campaign with one step, its record pinned to a mailbox that passed its check. */
async function world(mailbox: Record<string, unknown> = {}) {
  const account = await provisionAccount();
  const apiKey = account.apiKey;
  const box = await createMailbox(apiKey, { max_email_per_day: 2, ...mailbox });
  await mailboxConnected(box.id, { imap: true });
  const campaign = await createCampaign(apiKey);
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] },
  });
  const records = await addLeads(apiKey, campaign, ["lead@manual.example", "gone@manual.example"]);
  await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [box.id] } });
  await ingestOk(apiKey, campaign, [
    { type: "SENT", lead_email: "lead@manual.example", occurred_at: new Date(Date.now() - 2 * 86_400_000).toISOString(), message_id: "<s@m>", email_account_id: box.id },
  ]);
  const stats = await recordEventId(records["lead@manual.example"]!, "SENT");
  const leadId = (email: string) => personOf(records[email]!);
  return { account, apiKey, campaign, mailboxId: box.id, stats, leadId };
}

const reply = (apiKey: string, campaign: number, body: Record<string, unknown>) =>
  callJson<{ error?: string; message_id?: string; email_stats_id?: string }>(`/api/v1/campaigns/${campaign}/reply-email-thread`, { method: "POST", apiKey, body });
const testEmail = (apiKey: string, campaign: number, body: Record<string, unknown>) =>
  callJson<{ error?: string }>(`/api/v1/campaigns/${campaign}/send-test-email`, { method: "POST", apiKey, body });

/** Manual sends the mailbox made earlier today, as its object records them. */
/** Manual sends made earlier: by default half an hour ago, or at today's UTC midnight when that was later (they count for today). */
async function earlierManualSends(mailboxId: number, accountId: number, recipients: number[], at = Math.max(Date.now() - 30 * MINUTE, Date.now() - (Date.now() % 86_400_000))) {
  for (const n of recipients) {
    await addManualSends([{ accountId, emailAccountId: mailboxId, kind: "test_email", recipients: n, inEvents: false, sentAt: new Date(at), createdAt: new Date(at) }]);
  }
}

async function nothingStored(campaign: number) {
  expect({ replies: (await campaignOutboundReplies(campaign)).length, sent: await eventCount(campaign, "SENT") }).toEqual({ replies: 0, sent: 1 });
}

describe("what a manual send may reach", () => {
  it("refuses a reply with a block-listed or opted-out address in to, cc or bcc, naming it, now or scheduled", async () => {
    const { apiKey, campaign, stats, leadId } = await world();
    await callJson("/api/v1/leads/add-domain-block-list", { method: "POST", apiKey, body: { domain_block_list: ["blocked.example", "one@listed.example"] } });
    expect((await callJson(`/api/v1/leads/${await leadId("gone@manual.example")}/unsubscribe`, { method: "POST", apiKey })).status).toBe(200);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    for (const extra of [{}, { scheduled_time: later }]) {
      expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", cc: "ok@fine.example, Boss@Blocked.example", ...extra })).toMatchObject({
        status: 400,
        body: { error: "The recipient boss@blocked.example is on the block list" },
      });
      expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", bcc: ["one@listed.example"], ...extra })).toMatchObject({
        status: 400,
        body: { error: "The recipient one@listed.example is on the block list" },
      });
      expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", to_email: "gone@manual.example", ...extra })).toMatchObject({
        status: 400,
        body: { error: "The recipient gone@manual.example has unsubscribed or bounced" },
      });
      expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", bcc: "GONE@manual.example", ...extra })).toMatchObject({
        status: 400,
        body: { error: "The recipient gone@manual.example has unsubscribed or bounced" },
      });
    }
    await nothingStored(campaign);
  });

  it("takes at most 10 recipients, counting an address repeated across to, cc and bcc once", async () => {
    const { apiKey, campaign, stats } = await world();
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const ten = Array.from({ length: 10 }, (_, i) => `p${i}@many.example`);
    expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", cc: ten, scheduled_time: later })).toMatchObject({
      status: 400,
      body: { error: "A manual email may go to at most 10 recipients (to, cc and bcc together); this one has 11" },
    });
    expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", cc: ten.slice(1), scheduled_time: later })).toMatchObject({ status: 200 });
    // The lead twice more, in other cases: still ten.
    const repeated = await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x", cc: [...ten.slice(1, 6), "LEAD@manual.example"], bcc: [...ten.slice(6), "Lead@Manual.example"], scheduled_time: later });
    expect(repeated.status, JSON.stringify(repeated.body)).toBe(200);
    const stored = await outboundReplyRow(repeated.body.message_id!);
    expect({ to_email: stored.toEmail, cc: stored.cc, bcc: stored.bcc }).toEqual({ to_email: "lead@manual.example", cc: ten.slice(1, 6), bcc: ten.slice(6) });
  });

  it("refuses a test email to an opted-out address", async () => {
    const { apiKey, campaign, leadId } = await world();
    expect((await callJson(`/api/v1/leads/${await leadId("gone@manual.example")}/unsubscribe`, { method: "POST", apiKey })).status).toBe(200);
    expect(await testEmail(apiKey, campaign, { leadId: await leadId("lead@manual.example"), sequenceNumber: 1, customEmailAddress: "Gone@Manual.example" })).toMatchObject({
      status: 400,
      body: { error: "The recipient gone@manual.example has unsubscribed or bounced" },
    });
  });
});

describe("how many manual sends a mailbox makes", () => {
  it("allows as many manual deliveries a UTC day as its cap, counted per recipient, then refuses replies and test emails", async () => {
    const { account, apiKey, campaign, mailboxId, stats, leadId } = await world({ max_email_per_day: 2 });
    await earlierManualSends(mailboxId, account.id, [2]);
    expect(await testEmail(apiKey, campaign, { leadId: await leadId("lead@manual.example"), sequenceNumber: 1 })).toMatchObject({
      status: 400,
      body: {
        error: expect.stringMatching(
          /^The mailbox has made 2 of its 2 manual deliveries for today \(UTC, one per recipient\); this email needs 1: the allowance renews at \d{4}-\d\d-\d\dT00:00:00\.000Z$/,
        ),
      },
    });
    expect(await reply(apiKey, campaign, { email_stats_id: stats, email_body: "x" })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^The mailbox has made 2 of its 2 manual deliveries/) } });
    await nothingStored(campaign);
    // Manual sends count in daily_sent_count (one per email), like the campaign's.
    expect((await readMailbox(apiKey, mailboxId)).body.daily_sent_count).toBe(1);
  });

  it("keeps the mailbox's gap: a test email is refused until it ends, a reply is queued for its end", async () => {
    const { account, apiKey, campaign, mailboxId, stats, leadId } = await world({ max_email_per_day: 50, time_to_wait_in_mins: 10 });
    const sentAt = Date.now() - MINUTE;
    await earlierManualSends(mailboxId, account.id, [1], sentAt);
    const until = new Date(sentAt + 10 * MINUTE).toISOString();
    expect(await testEmail(apiKey, campaign, { leadId: await leadId("lead@manual.example"), sequenceNumber: 1 })).toMatchObject({
      status: 400,
      body: { error: `The mailbox waits 10 minutes between sends: it may send again at ${until}` },
    });
    const queued = await reply(apiKey, campaign, { email_stats_id: stats, email_body: "<p>Soon</p>" });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    expect(queued.body).toMatchObject({ ok: true, message: "Email added to the queue, will be sent out soon!", email_stats_id: String(stats) });
    const status = await callJson(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(queued.body.message_id!)}`, { apiKey });
    expect(status.body).toMatchObject({ data: { status: "SCHEDULED", scheduled_time: until } });
  });

  it("tries a scheduled reply its server refused for now again at the hold's end, for a day from when it first came due, then fails it", async () => {
    const { apiKey, campaign, mailboxId, stats } = await world({ max_email_per_day: 50, time_to_wait_in_mins: 0 });
    const due = Date.now() + 60 * MINUTE;
    const queued = await reply(apiKey, campaign, { email_stats_id: stats, email_body: "<p>Later</p>", scheduled_time: new Date(due).toISOString() });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const row = () => outboundReplyRow(queued.body.message_id!);
    // Its server is not there: the send meets no server, which holds the mailbox for 5 minutes.
    const stub = senderStub(bindings, mailboxId);
    await stub.runPass(due, { mailboxId, read: false });
    const first = await row();
    expect(first).toMatchObject({ status: "SCHEDULED", scheduledAt: new Date(due + 5 * MINUTE), firstDueAt: new Date(due) });
    expect(first.statusMessage).toMatch(/^The mail server did not take the reply: .+ \(tried again at /);
    await stub.runPass(due + 5 * MINUTE, { mailboxId, read: false });
    expect(await row()).toMatchObject({ status: "SCHEDULED", scheduledAt: new Date(due + 10 * MINUTE), firstDueAt: new Date(due) });
    // A day after it first came due, the next refusal is its last.
    await stub.runPass(due + 24 * 60 * MINUTE, { mailboxId, read: false });
    const last = await row();
    expect(last.status).toBe("FAILED");
    expect(last.statusMessage).toMatch(/^The mail server did not take the reply: /);
    expect(last.statusMessage).not.toContain("tried again");
  });
});
