import { describe, expect, it } from "vitest";
import { addLeads, createCampaign, ingest, ingestOk } from "../campaigns/fixtures";
import { addEvents, eventCount, recordsOf, setMailbox } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createMailbox, readMailbox } from "../mailboxes/fixtures";

/**
 * Issue 23, "another account can stop your mailbox for good": events name only the caller's
 * mailboxes, refuse a time ahead of now, and a mailbox's count of the day (its `daily_sent_count`,
 * the engine's cap and `sending_status`) is its own account's, one definition for all three.
 */

const MINUTE = 60_000;

/** An ACTIVE campaign sending now (every day, all day, UTC) through one mailbox capped at `cap`. */
async function sendingCampaign(apiKey: string, cap: number, leads = 3) {
  const mailbox = await createMailbox(apiKey, { max_email_per_day: cap });
  // Passed its check, but no password: the mailbox's object, woken by START, can send nothing here.
  await setMailbox(mailbox.id, { isSmtpSuccess: true, passwordCiphertext: null });
  const campaign = await createCampaign(apiKey, { name: "Victim" });
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] },
  });
  const schedule = await callJson(`/api/v1/campaigns/${campaign}/schedule`, {
    method: "POST",
    apiKey,
    body: { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1 },
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(200);
  const records = await addLeads(apiKey, campaign, Array.from({ length: leads }, (_, i) => `v${i}-${crypto.randomUUID().slice(0, 8)}@victim.example`));
  await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } });
  expect((await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);
  return { mailboxId: mailbox.id, campaign, records };
}

async function statusOf(apiKey: string, campaign: number, mailboxId: number) {
  const { body: read } = await callJson<{ sending_status: { code: string } }>(`/api/v1/campaigns/${campaign}`, { apiKey });
  const { body: mailbox } = await readMailbox(apiKey, mailboxId);
  return {
    campaign: read.sending_status.code,
    mailbox: (mailbox.sending_status as { code: string }).code,
    daily_sent_count: mailbox.daily_sent_count,
  };
}

/** Events as the attack stored them before the fix: straight rows, in the attacker's campaign. */
async function legacyForeignSends(campaign: number, mailboxId: number, count: number, at: number) {
  const records = (await recordsOf(campaign)).slice(0, count);
  await addEvents(
    records.map((record, n) => ({
      accountId: record.accountId,
      campaignId: campaign,
      campaignLeadId: record.id,
      eventId: `legacy-${at}-${n}`,
      type: "SENT",
      occurredAt: new Date(at),
      sequenceNumber: 1,
      emailAccountId: mailboxId,
      fromEmail: "forged@attacker.example",
      createdAt: new Date(at),
    })),
  );
}

describe("events name only the caller's mailboxes", () => {
  it("answers another account's mailbox exactly like one that does not exist (422 with the event's index), and stores nothing", async () => {
    const victim = await provisionAccount();
    const theirs = await createMailbox(victim.apiKey);
    const attacker = await provisionAccount();
    const campaign = await createCampaign(attacker.apiKey);
    const records = await addLeads(attacker.apiKey, campaign, ["x@attacker.example"]);
    const event = (id: number) => ({ type: "SENT", email_lead_map_id: records["x@attacker.example"], occurred_at: new Date().toISOString(), email_account_id: id });

    const foreign = await ingest(attacker.apiKey, campaign, [event(theirs.id)]);
    const missing = await ingest(attacker.apiKey, campaign, [event(2_000_000_000)]);
    expect(foreign.status).toBe(422);
    expect(foreign.body).toEqual({ error: "Validation failed", details: [{ path: "events.0.email_account_id", message: "No such email account" }] });
    expect(missing).toEqual(foreign);
    // One bad event refuses the call: the good one beside it is not stored either.
    const mixed = await ingest(attacker.apiKey, campaign, [{ ...event(theirs.id), email_account_id: undefined }, event(theirs.id)]);
    expect(mixed.body).toMatchObject({ details: [{ path: "events.1.email_account_id" }] });
    expect(await eventCount(campaign)).toBe(0);

    const own = await createMailbox(attacker.apiKey);
    expect((await ingest(attacker.apiKey, campaign, [event(own.id)])).status).toBe(200);
  });

  it("lets a client key name its client's mailboxes and those attached to its campaign, and no other of the account", async () => {
    const owner = await provisionAccount();
    const clientId = await createClient(owner.apiKey);
    const clientKey = (await createClientKey(owner.apiKey, clientId)).api_key;
    const campaign = await createCampaign(owner.apiKey, { client_id: clientId });
    const records = await addLeads(owner.apiKey, campaign, ["c@client.example"]);
    const ofClient = await createMailbox(owner.apiKey, { client_id: clientId });
    const attached = await createMailbox(owner.apiKey);
    const elsewhere = await createMailbox(owner.apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey: owner.apiKey, body: { email_account_ids: [attached.id] } });
    const send = (id: number) =>
      ingest(clientKey, campaign, [{ type: "SENT", email_lead_map_id: records["c@client.example"], occurred_at: new Date().toISOString(), email_account_id: id }]);
    expect((await send(ofClient.id)).status).toBe(200);
    expect((await send(attached.id)).status).toBe(200);
    expect(await send(elsewhere.id)).toMatchObject({ status: 422, body: { details: [{ path: "events.0.email_account_id", message: "No such email account" }] } });
  });

  it("refuses an occurred_at more than 5 minutes ahead of now, and takes one just inside that margin", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const records = await addLeads(apiKey, campaign, ["f@future.example"]);
    const at = (offset: number) => [{ type: "OPEN", email_lead_map_id: records["f@future.example"], occurred_at: new Date(Date.now() + offset).toISOString() }];
    expect(await ingest(apiKey, campaign, at(6 * MINUTE))).toMatchObject({
      status: 422,
      body: { details: [{ path: "events.0.occurred_at", message: "occurred_at may be at most 5 minutes ahead of now" }] },
    });
    expect(await ingest(apiKey, campaign, [{ ...at(0)[0]!, occurred_at: "9999-12-31T23:59:59Z", type: "SENT" }])).toMatchObject({ status: 422 });
    expect((await ingest(apiKey, campaign, at(4 * MINUTE))).status).toBe(200);
  });
});

describe("a mailbox's count of the day", () => {
  it("is its own account's: another account's sends naming it (stored before the fix) stop nothing, and the engine agrees with daily_sent_count", async () => {
    const victim = await provisionAccount();
    const { mailboxId, campaign } = await sendingCampaign(victim.apiKey, 3);
    expect(await statusOf(victim.apiKey, campaign, mailboxId)).toEqual({ campaign: "sending", mailbox: "sending", daily_sent_count: 0 });

    const attacker = await provisionAccount();
    const theirCampaign = await createCampaign(attacker.apiKey);
    await addLeads(attacker.apiKey, theirCampaign, Array.from({ length: 60 }, (_, i) => `t${i}@attacker.example`));
    // Sixty rows dated 9999-12-31 and sixty of today, as the attack left them before the fix.
    await legacyForeignSends(theirCampaign, mailboxId, 60, Date.parse("9999-12-31T00:00:00Z"));
    await legacyForeignSends(theirCampaign, mailboxId, 60, Date.now() - MINUTE);
    expect(await statusOf(victim.apiKey, campaign, mailboxId)).toEqual({ campaign: "sending", mailbox: "sending", daily_sent_count: 0 });
    // And through the API it is refused now.
    const now = await ingest(attacker.apiKey, theirCampaign, [{ type: "SENT", lead_email: "t0@attacker.example", occurred_at: new Date().toISOString(), email_account_id: mailboxId }]);
    expect(now.status).toBe(422);
  });

  it("counts the account's own sends of the UTC day the same way everywhere: at the cap, both say so", async () => {
    const { apiKey } = await provisionAccount();
    const { mailboxId, campaign } = await sendingCampaign(apiKey, 3);
    const other = await createCampaign(apiKey, { name: "Elsewhere" });
    const leads = await addLeads(apiKey, other, ["a@own.example", "b@own.example", "c@own.example"]);
    const yesterday = new Date(Date.now() - 86_400_000 - MINUTE).toISOString();
    await ingestOk(apiKey, other, [
      { type: "SENT", email_lead_map_id: leads["a@own.example"], occurred_at: new Date().toISOString(), email_account_id: mailboxId },
      { type: "SENT", email_lead_map_id: leads["b@own.example"], occurred_at: new Date().toISOString(), email_account_id: mailboxId },
      { type: "SENT", email_lead_map_id: leads["c@own.example"], occurred_at: yesterday, email_account_id: mailboxId },
    ]);
    expect(await statusOf(apiKey, campaign, mailboxId)).toEqual({ campaign: "sending", mailbox: "sending", daily_sent_count: 2 });
    await ingestOk(apiKey, other, [{ type: "SENT", email_lead_map_id: leads["c@own.example"], occurred_at: new Date().toISOString(), email_account_id: mailboxId, sequence_number: 2 }]);
    expect(await statusOf(apiKey, campaign, mailboxId)).toEqual({ campaign: "daily_cap_reached", mailbox: "daily_cap_reached", daily_sent_count: 3 });
  });
});
