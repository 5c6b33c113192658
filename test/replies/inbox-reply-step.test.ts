import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { deliveryKinds, eventsOf, mailboxConnected, personOf, recordRow, setRecord } from "../db";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { createWebhook } from "../webhooks/fixtures";
import { campaigns } from "../../src/db/schema";
import { loadIngestContext } from "../../src/events/store";
import { database } from "../../src/platform/db";
import type { Bindings } from "../../src/platform/env";
import { rawBatch } from "../../src/platform/sql";
import { inboxReplyIngestion } from "../../src/replies/outbound";

/**
 * CONTRACT 12, reply in a thread: a reply sent from the inbox is stored as a SENT message of the
 * thread, and the record's step and state do not move. These store the reply's SENT as sendReply
 * does once the mail server took it (inboxReplyIngestion, in one batch on the real D1); the lab
 * test (test/mail/replies.test.ts) sends one through SMTP.
 */

const env = fileEnv() as unknown as Bindings;
const LEAD = "first@drafted.example";
const SENT_TO = "sent@drafted.example";
const HOUR = 3_600_000;

/** A thread the campaign has not written to: a colleague's note (an ignored reply) on a DRAFTED record; `hooked`: a webhook on every send. */
async function threadNotWrittenTo(hooked = true) {
  const { apiKey, id: accountId } = await provisionAccount();
  const box = await createMailbox(apiKey, { max_email_per_day: 50, time_to_wait_in_mins: 0 });
  await mailboxConnected(box.id, { imap: true });
  const campaign = await createCampaign(apiKey);
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] },
  });
  if (hooked) await createWebhook(apiKey, campaign, { event_types: ["EMAIL_SENT", "FIRST_EMAIL_SENT"] });
  const record = (await addLeads(apiKey, campaign, [LEAD]))[LEAD]!;
  await ingestOk(apiKey, campaign, [
    { type: "REPLY", lead_email: LEAD, from_email: "colleague@drafted.example", occurred_at: new Date(Date.now() - 86_400_000).toISOString(), message_id: "<note@d>", body: "FYI" },
  ]);
  await setRecord(record, { emailAccountId: box.id });
  return { apiKey, accountId, campaign, record, box };
}

/** Stores a sent inbox reply's SENT in `record`'s thread (default: the world's) as sendReply does after the send. */
async function storeInboxReply(world: Awaited<ReturnType<typeof threadNotWrittenTo>>, at: number, record = world.record, to = LEAD) {
  const db = database(env.DB);
  const context = await loadIngestContext(db, eq(campaigns.accountId, world.accountId), world.accountId, world.campaign, {
    recordIds: [record],
    emails: [],
    categoryIds: [],
  });
  const messageId = `<reply-${at}@salvo.test>`;
  const { statements } = inboxReplyIngestion({ ...context, campaign: context.campaign! }, context.records[0]!, {
    eventKey: `inbox-reply:${messageId}`,
    reply: { toEmail: to, subject: "Re: FYI", messageId },
    body: "<p>Hello</p>",
    at,
    mailbox: { id: world.box.id, fromEmail: world.box.from_email },
  });
  await rawBatch(env.DB, statements);
}

describe("a reply sent from the inbox is no step of the campaign", () => {
  it("stays a SENT message of the thread, but the record reads as never sent to: no sent flag or time, no send webhook, and resume restores DRAFTED", async () => {
    const world = await threadNotWrittenTo();
    const at = Date.now() - 60_000;
    await storeInboxReply(world, at);

    const lead = await personOf(world.record);
    const history = await callJson<{ history: { type: string; message_id: string }[] }>(`/api/v1/campaigns/${world.campaign}/leads/${lead}/message-history`, {
      apiKey: world.apiKey,
    });
    expect(history.body.history.map((m) => m.type)).toEqual(["REPLY", "SENT"]);
    expect(await eventsOf(world.campaign, "SENT")).toHaveLength(1);

    // The campaign's first email was not sent: neither EMAIL_SENT nor FIRST_EMAIL_SENT fires for a person's message.
    expect(await deliveryKinds({ campaignId: world.campaign })).toEqual({});
    expect(await recordRow(world.record)).toMatchObject({ state: "DRAFTED", nextStep: 1, hasSent: false, lastSentAt: null });

    // Paused and resumed, a record the campaign never wrote to is DRAFTED again, not in progress.
    expect((await callJson(`/api/v1/campaigns/${world.campaign}/leads/${lead}/pause`, { method: "POST", apiKey: world.apiKey })).status).toBe(200);
    // As a pause by an out-of-office reply leaves it: no state to return to, so resume reads whether the campaign sent.
    await setRecord(world.record, { pausedFrom: null });
    expect((await callJson(`/api/v1/campaigns/${world.campaign}/leads/${lead}/resume`, { method: "POST", apiKey: world.apiKey, body: {} })).status).toBe(200);
    expect((await recordRow(world.record)).state).toBe("DRAFTED");
  });
});

describe("campaign figures count the campaign's emails, not a person's inbox replies", () => {
  it("leaves inbox replies out of sent and unique sent (campaign, by date, statistics, per lead, overall) and credits the lead's answer to the step sent", async () => {
    const world = await threadNotWrittenTo(false);
    const { apiKey, campaign } = world;
    const answered = (await addLeads(apiKey, campaign, [SENT_TO]))[SENT_TO]!;
    const t0 = Date.now() - 5 * HOUR;
    // One email of the campaign (step 1) and the lead's answer; then a person answers in both threads, and the lead again.
    await ingestOk(apiKey, campaign, [
      { type: "SENT", lead_email: SENT_TO, sequence_number: 1, occurred_at: new Date(t0).toISOString(), message_id: "<step1@d>", email_account_id: world.box.id },
      { type: "REPLY", lead_email: SENT_TO, occurred_at: new Date(t0 + HOUR).toISOString(), message_id: "<r1@d>", body: "Tell me more" },
    ]);
    await storeInboxReply(world, t0 + 2 * HOUR, answered, SENT_TO);
    await storeInboxReply(world, t0 + 2 * HOUR + 60_000);
    await ingestOk(apiKey, campaign, [{ type: "REPLY", lead_email: SENT_TO, occurred_at: new Date(t0 + 3 * HOUR).toISOString(), message_id: "<r2@d>", body: "Thanks" }]);
    expect(await eventsOf(campaign, "SENT")).toHaveLength(3);

    const lifetime = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaign}/analytics`, { apiKey });
    expect(lifetime.body).toMatchObject({ sent_count: "1", unique_sent_count: "1" });
    const day = new Date(t0).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    const byDate = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaign}/top-level-analytics-by-date?start_date=${day}&end_date=${today}`, { apiKey });
    expect(byDate.body).toMatchObject({ sent_count: "1", unique_sent_count: "1" });
    const overall = await callJson<{ data: { overall_stats: Record<string, unknown> } }>(
      `/api/v1/analytics/overall-stats-v2?start_date=${day}&end_date=${today}&campaign_ids=${campaign}`,
      { apiKey },
    );
    expect(overall.body.data.overall_stats).toMatchObject({ sent: 1, unique_lead_count: 1 });

    // One row per email the campaign sent, with both of the lead's answers credited to it.
    const stats = await callJson<{ total_stats: string; data: { sequence_number: number; reply_time: string | null }[] }>(`/api/v1/campaigns/${campaign}/statistics`, { apiKey });
    expect(stats.body.total_stats).toBe("1");
    const step = (await eventsOf(campaign, "SENT")).find((e) => e.sequenceNumber === 1)!;
    expect((await eventsOf(campaign, "REPLY")).filter((e) => e.fromEmail !== "colleague@drafted.example").map((e) => e.sendId)).toEqual([step.id, step.id]);

    // Per lead: one email sent, the person's reply still in the history.
    const leads = await callJson<{ data: { lead_email: string; sent_count: number; history: { type: string }[] }[] }>(`/api/v1/campaigns/${campaign}/leads-statistics`, { apiKey });
    const lead = leads.body.data.find((row) => row.lead_email === SENT_TO)!;
    expect(lead.sent_count).toBe(1);
    expect(lead.history.filter((m) => m.type === "SENT")).toHaveLength(2);
    const overview = await callJson<{ data: { sent_count: number; current_sequence_number: number | null }[] }>(
      `/api/v1/leads/${await personOf(answered)}/campaign-overview`,
      { apiKey },
    );
    expect(overview.body.data).toEqual([expect.objectContaining({ sent_count: 1, current_sequence_number: 1 })]);
  });
});
