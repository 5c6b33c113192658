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

/** A thread the campaign has not written to: a colleague's note (an ignored reply) on a DRAFTED record, a webhook on every send. */
async function threadNotWrittenTo() {
  const { apiKey, id: accountId } = await provisionAccount();
  const box = await createMailbox(apiKey, { max_email_per_day: 50, time_to_wait_in_mins: 0 });
  await mailboxConnected(box.id, { imap: true });
  const campaign = await createCampaign(apiKey);
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] },
  });
  await createWebhook(apiKey, campaign, { event_types: ["EMAIL_SENT", "FIRST_EMAIL_SENT"] });
  const record = (await addLeads(apiKey, campaign, [LEAD]))[LEAD]!;
  await ingestOk(apiKey, campaign, [
    { type: "REPLY", lead_email: LEAD, from_email: "colleague@drafted.example", occurred_at: new Date(Date.now() - 86_400_000).toISOString(), message_id: "<note@d>", body: "FYI" },
  ]);
  await setRecord(record, { emailAccountId: box.id });
  return { apiKey, accountId, campaign, record, box };
}

/** Stores a sent inbox reply's SENT as sendReply does after the send. */
async function storeInboxReply(world: Awaited<ReturnType<typeof threadNotWrittenTo>>, at: number) {
  const db = database(env.DB);
  const context = await loadIngestContext(db, eq(campaigns.accountId, world.accountId), world.accountId, world.campaign, {
    recordIds: [world.record],
    emails: [],
    categoryIds: [],
  });
  const messageId = `<reply-${at}@salvo.test>`;
  const { statements } = inboxReplyIngestion({ ...context, campaign: context.campaign! }, context.records[0]!, {
    eventKey: `inbox-reply:${messageId}`,
    reply: { toEmail: LEAD, subject: "Re: FYI", messageId },
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
