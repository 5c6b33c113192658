import { describe, expect, it } from "vitest";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { mailboxConnected, personOf } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";

/**
 * What the test-email route refuses before any mail server is reached. Sending itself is tested
 * against the lab in test/mail/test-email.test.ts.
 */

async function setUp() {
  const { apiKey } = await provisionAccount();
  const campaign = await createCampaign(apiKey, { name: "Tests" });
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi {{first_name}}", email_body: "Hello" }] },
  });
  const records = await addLeads(apiKey, campaign, ["ann@tests.example"]);
  const lead = await personOf(records["ann@tests.example"]!);
  return { apiKey, campaign, lead };
}

const send = (apiKey: string, campaign: number, body: Record<string, unknown>) =>
  callJson<{ error?: string; details?: { path: string; message: string }[] }>(`/api/v1/campaigns/${campaign}/send-test-email`, { method: "POST", apiKey, body });

/** A mailbox of the caller's that passed its connection check (the main suite runs none). */
async function sendingMailbox(apiKey: string) {
  const mailbox = await createMailbox(apiKey);
  await mailboxConnected(mailbox.id);
  return mailbox.id;
}

describe("POST /campaigns/{id}/send-test-email", () => {
  it("validates its body: a missing field is Required", async () => {
    const { apiKey, campaign, lead } = await setUp();
    const { status, body } = await send(apiKey, campaign, { leadId: lead });
    expect(status).toBe(422);
    expect(body.details).toEqual([expect.objectContaining({ path: "sequenceNumber", message: "Required" })]);
    expect((await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1, customEmailAddress: "not an address" })).status).toBe(422);
  });

  it("answers 404 for a lead not in the campaign and for a step the campaign does not have", async () => {
    const { apiKey, campaign, lead } = await setUp();
    const other = await createCampaign(apiKey);
    expect(await send(apiKey, other, { leadId: lead, sequenceNumber: 1 })).toMatchObject({ status: 404, body: { error: "Lead not found in campaign" } });
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [await sendingMailbox(apiKey)] } });
    expect(await send(apiKey, campaign, { leadId: lead, sequenceNumber: 2 })).toMatchObject({ status: 404, body: { error: "The campaign has no step 2" } });
  });

  it("refuses when no mailbox can send: none attached, or the named one failing its check", async () => {
    const { apiKey, campaign, lead } = await setUp();
    const none = await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1 });
    expect(none).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^No email account of the campaign can send/) } });
    const unchecked = await createMailbox(apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [unchecked.id] } });
    expect((await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1 })).body.error).toMatch(/^No email account of the campaign can send/);
    const named = await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1, selectedEmailAccountId: unchecked.id });
    expect(named).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^The email account cannot send/) } });
    const stranger = await provisionAccount();
    const theirs = await sendingMailbox(stranger.apiKey);
    expect(await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1, selectedEmailAccountId: theirs })).toMatchObject({
      status: 404,
      body: { error: "Email account not found" },
    });
  });

  it("keeps an unsubscribed lead's opt-out and the block list", async () => {
    const { apiKey, campaign, lead } = await setUp();
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [await sendingMailbox(apiKey)] } });
    expect((await callJson(`/api/v1/leads/${lead}/unsubscribe`, { method: "POST", apiKey })).status).toBe(200);
    expect(await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1 })).toMatchObject({
      status: 400,
      body: { error: "The lead has unsubscribed: send the test to customEmailAddress instead" },
    });
    await callJson("/api/v1/leads/add-domain-block-list", { method: "POST", apiKey, body: { domain_block_list: ["blocked.example"] } });
    expect(await send(apiKey, campaign, { leadId: lead, sequenceNumber: 1, customEmailAddress: "me@blocked.example" })).toMatchObject({
      status: 400,
      body: { error: "The recipient me@blocked.example is on the block list" },
    });
  });
});
