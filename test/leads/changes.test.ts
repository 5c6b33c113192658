import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { claimRecords } from "../../src/engine/store";
import { blockListed, campaignRow, eventsOf, personOf, recordRow, recordsOf, setCampaign, setRecord } from "../db";
import { addLeads, analytics, createCampaign, ingestOk, sleepingActiveCampaign } from "../campaigns/fixtures";
import { createWebhook, deliveriesOf, interceptReceiver, RECEIVER } from "../webhooks/fixtures";
import { call, callJson, env, fileEnv, fileShard, provisionAccount } from "../helpers";
import { attach, mailbox, post, setUp } from "./fixtures";
import { recordingQueries } from "../d1-queries";

const DAY_MS = 86_400_000;
const ANN = "ann@leads.example";
const BOB = "bob@leads.example";
const today = new Date().toISOString().slice(0, 10);

// Webhook deliveries these tests cause go to the test receiver, never out.
let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

async function activate(campaign: number) {
  await setCampaign(campaign, { status: "ACTIVE" });
}

async function claim(campaign: number, mailboxId: number, at: number) {
  const { records } = await claimRecords(fileEnv().DB, { campaign: await campaignRow(campaign), mailboxId, senderDomain: "sender.example", now: at, limit: 10, newLeadsLeft: 10 });
  return records.map((r) => r.recordId);
}

describe("pause and resume", () => {
  it("pauses a live record so the engine skips it, and resumes it into the state it was paused from, due after the delay", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    await ingestOk(apiKey, campaign, [{ type: "SENT", email_lead_map_id: records[ANN], occurred_at: new Date().toISOString() }]);
    const box = await mailbox(apiKey, "pause");
    await activate(campaign);

    const paused = await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ ok: true, success: true, message: expect.any(String), data: "success" });
    expect(await recordRow(records[ANN]!)).toMatchObject({ state: "PAUSED", pausedFrom: "INPROGRESS" });
    // Pausing again is a no-op, and the paused record is never claimed.
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`)).status).toBe(200);
    expect(await claim(campaign, box, Date.now() + 60_000)).toEqual([records[BOB]]);

    const before = Date.now();
    const resumed = await post<{ will_resume_at: string; data: string }>(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/resume`, {
      resume_lead_with_delay_days: 2,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data).toBe("success");
    const row = await recordRow(records[ANN]!);
    expect(row).toMatchObject({ state: "INPROGRESS", pausedFrom: null });
    expect(row.dueAt!.getTime()).toBeGreaterThanOrEqual(before + 2 * DAY_MS);
    expect(row.dueAt!.getTime()).toBeLessThan(Date.now() + 2 * DAY_MS + 1);
    expect(Date.parse(resumed.body.will_resume_at)).toBe(row.dueAt!.getTime());
    // Not due yet; due once the delay has passed.
    expect(await claim(campaign, box, Date.now() + DAY_MS)).not.toContain(records[ANN]);
    expect(await claim(campaign, box, Date.now() + 3 * DAY_MS)).toContain(records[ANN]);
  });

  it("ends a paused record when its lead replies, so a resume cannot send them the rest", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    await ingestOk(apiKey, campaign, [{ type: "SENT", email_lead_map_id: records[ANN], occurred_at: new Date().toISOString() }]);
    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`);
    await ingestOk(apiKey, campaign, [{ type: "REPLY", email_lead_map_id: records[ANN], from_email: ANN, occurred_at: new Date().toISOString() }]);
    expect(await recordRow(records[ANN]!)).toMatchObject({ state: "COMPLETED", pausedFrom: null, dueAt: null });
    expect(await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/resume`)).toMatchObject({
      status: 400,
      body: { error: "Lead is not paused" },
    });
  });

  it("answers 400 for a record that is not paused, or a final one, or one with nothing left to send", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const notPaused = await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/resume`);
    expect(notPaused).toMatchObject({ status: 400, body: { error: "Lead is not paused" } });

    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[BOB]}/manual-complete`);
    expect(await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[BOB]}/pause`)).toMatchObject({ status: 400, body: { error: "Lead is COMPLETED" } });

    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`);
    await setRecord(records[ANN]!, { nextStep: null });
    expect(await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/resume`)).toMatchObject({
      status: 400,
      body: { error: "This is the last sequence. You cannot resume this lead." },
    });
  });

  it("resumes without a delay after the next step's own delay, counted from the pause", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const steps = [
      { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "One" },
      { seq_number: 2, seq_delay_details: { delay_in_days: 3 }, email_body: "Two" },
    ];
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/sequences`, { sequences: steps })).status).toBe(200);
    await setRecord(records[ANN]!, { nextStep: 2 });
    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`);
    const pausedAt = (await recordRow(records[ANN]!)).pausedAt!.getTime();
    const resumed = await post<{ will_resume_at: string }>(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/resume`);
    expect(resumed.status).toBe(200);
    expect(Date.parse(resumed.body.will_resume_at)).toBe(pausedAt + 3 * DAY_MS);
    expect((await recordRow(records[ANN]!)).state).toBe("DRAFTED");
  });

  it("resumes from the master inbox, refusing a campaign that is not the record's", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const other = await createCampaign(apiKey);
    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`);
    const wrong = await post(apiKey, "/api/v1/master-inbox/resume-lead", { campaign_id: other, email_lead_map_id: records[ANN] }, "PATCH");
    expect(wrong).toMatchObject({ status: 404, body: { error: "Lead mapping not found" } });
    const done = await post<{ data: Record<string, unknown> }>(
      apiKey,
      "/api/v1/master-inbox/resume-lead",
      { campaign_id: String(campaign), email_lead_map_id: records[ANN], resume_delay_days: 1 },
      "PATCH",
    );
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ campaign_id: campaign, email_lead_map_id: records[ANN], resume_delay_days: 1 });
    expect((await recordRow(records[ANN]!)).state).toBe("DRAFTED");
  });
});

/** The app over the file shard's real D1, counting the statements sent to it (alone or in a batch). */
async function countingStatements(path: string, apiKey: string, body: unknown): Promise<{ status: number; statements: number }> {
  const { database: counting, queries } = recordingQueries(fileEnv().DB);
  const binding = fileShard() === 0 ? "DB" : `DB_${fileShard()}`;
  const ctx = createExecutionContext();
  const response = await createApp().fetch(
    new Request(`http://salvo.test${path}`, { method: "PUT", headers: { "Content-Type": "application/json", "X-API-Key": apiKey, "CF-Connecting-IP": "10.9.9.10" }, body: JSON.stringify(body) }),
    { ...env, [binding]: counting },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, statements: queries.length };
}

/** A lead `one` in one campaign and a lead `many` in five (the first shared), with their records by campaign. */
async function oneAndFive() {
  const { apiKey } = await provisionAccount();
  const [one, many] = [`one-${crypto.randomUUID()}@leads.example`, `many-${crypto.randomUUID()}@leads.example`];
  const campaigns = [] as number[];
  for (let i = 0; i < 5; i++) campaigns.push(await createCampaign(apiKey));
  const records = await Promise.all(campaigns.map((campaign, i) => addLeads(apiKey, campaign, i === 0 ? [one, many] : [many])));
  return { apiKey, one, many, campaigns, records };
}

describe("resuming a lead everywhere, at scale", () => {
  it("sends D1 a constant number of statements however many campaigns the lead is paused in", async () => {
    const { apiKey, one, many, campaigns, records } = await oneAndFive();
    // ACTIVE (set in D1, no mailbox to wake): a resume reads whom to wake.
    for (const campaign of campaigns) await setCampaign(campaign, { status: "ACTIVE" });
    const leadOf = { one: await personOf(records[0]![one]!), many: await personOf(records[0]![many]!) };
    for (const lead of Object.values(leadOf)) expect((await post(apiKey, `/api/v1/leads/${lead}/status`, { status: "paused" }, "PUT")).status).toBe(200);

    const single = await countingStatements(`/api/v1/leads/${leadOf.one}/status`, apiKey, { status: "active" });
    const fivefold = await countingStatements(`/api/v1/leads/${leadOf.many}/status`, apiKey, { status: "active" });
    expect([single.status, fivefold.status]).toEqual([200, 200]);
    expect(single.statements, "counted on the shard the account lives on").toBeGreaterThan(0);
    expect(fivefold.statements, "five paused records cost what one does").toBe(single.statements);
    for (const record of records.map((byEmail) => byEmail[many]!)) expect((await recordRow(record)).state).toBe("DRAFTED");
    expect((await recordRow(records[0]![one]!)).state).toBe("DRAFTED");
  });
});

/** A webhook's deliveries as its receiver would see them, without what differs from one call to the next (ids, times). */
async function receivedBy(webhookId: number): Promise<Record<string, unknown>[]> {
  return (await deliveriesOf(webhookId)).map(({ event_type, payload }) => {
    const { event_timestamp, stats_id, ...stable } = JSON.parse(payload) as Record<string, unknown>;
    return { event_type, timed: typeof event_timestamp === "string", stats_id: typeof stats_id, ...stable };
  });
}

describe("unsubscribing a lead everywhere, at scale", () => {
  it("sends D1 a constant number of statements however many campaigns, with each campaign's records and webhooks as before", async () => {
    const { apiKey, one, many, campaigns, records } = await oneAndFive();
    const hooks = [] as number[];
    for (const campaign of campaigns) hooks.push((await createWebhook(apiKey, campaign, { event_types: ["LEAD_UNSUBSCRIBED"] })).id);
    const deaf = (await createWebhook(apiKey, campaigns[1]!, { event_types: ["EMAIL_SENT"] })).id;
    const everywhere = await callJson<{ id: number }>("/api/v1/webhooks", { method: "POST", apiKey, body: { name: "All", url: RECEIVER, events: ["LEAD_UNSUBSCRIBED"] } });
    expect(everywhere.status).toBe(200);
    // A record whose sequence is over keeps its state: only live records are unsubscribed.
    await setRecord(records[4]![many]!, { state: "COMPLETED" });
    const leadOf = { one: await personOf(records[0]![one]!), many: await personOf(records[0]![many]!) };

    const single = await countingStatements(`/api/v1/leads/${leadOf.one}/status`, apiKey, { status: "unsubscribed" });
    const before = Date.now();
    const fivefold = await countingStatements(`/api/v1/leads/${leadOf.many}/status`, apiKey, { status: "unsubscribed" });
    expect([single.status, fivefold.status]).toEqual([200, 200]);

    for (const [i, byEmail] of records.entries()) {
      const row = await recordRow(byEmail[many]!);
      if (i === 4) expect(row).toMatchObject({ state: "COMPLETED", hasUnsubscribed: false });
      else {
        expect(row).toMatchObject({ state: "STOPPED", hasUnsubscribed: true, dueAt: null });
        expect(row.stoppedAt!.getTime()).toBeGreaterThanOrEqual(before);
      }
      const events = (await eventsOf(campaigns[i]!, "UNSUBSCRIBE")).filter((e) => e.campaignLeadId === byEmail[many]);
      expect(events.map((e) => String(e.eventId)), `campaign ${i}'s events`).toEqual(i === 4 ? [] : [expect.stringMatching(new RegExp(`^salvo-unsubscribe-api:${byEmail[many]}:`))]);
    }
    expect(await recordRow(records[0]![one]!)).toMatchObject({ state: "STOPPED", hasUnsubscribed: true });
    for (const lead of Object.values(leadOf)) expect((await callJson(`/api/v1/leads/${lead}`, { apiKey })).body).toMatchObject({ is_unsubscribed: true });
    const report = await analytics(apiKey, campaigns[0]!, { start_date: today, end_date: today });
    expect(report.body.unsubscribed_count).toBe("2");

    // What each webhook received, as the code before this change delivered it: one LEAD_UNSUBSCRIBED per live record of a campaign it hears.
    const unsubscribed = (webhook: { id: number; name: string }, campaign: number, record: number, lead: number, email: string) => ({
      event_type: "LEAD_UNSUBSCRIBED", timed: true, stats_id: "string", webhook_id: webhook.id, webhook_name: webhook.name, webhook_url: RECEIVER,
      campaign_id: campaign, campaign_name: "Untitled Campaign", campaign_status: "DRAFTED", client_id: null,
      sl_email_lead_id: lead, sl_email_lead_map_id: record, sl_lead_email: email, lead_email: email, lead_name: null,
      to_email: null, to_name: null, from_email: null, sequence_number: 1, description: "Lead unsubscribed",
      metadata: { webhook_created_at: expect.any(String) }, unsubscribed_client_id_map: {}, time_unsubscribed: expect.any(String), source: "api",
    });
    const heard = (webhook: { id: number; name: string }, i: number) => [
      ...(i === 0 ? [unsubscribed(webhook, campaigns[0]!, records[0]![one]!, leadOf.one, one)] : []),
      ...(i === 4 ? [] : [unsubscribed(webhook, campaigns[i]!, records[i]![many]!, leadOf.many, many)]),
    ];
    for (const [i, hook] of hooks.entries()) expect(await receivedBy(hook), `campaign ${i}'s webhook`).toEqual(heard({ id: hook, name: "CRM" }, i));
    const byCampaign = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.campaign_id) - Number(b.campaign_id) || Number(a.sl_email_lead_map_id) - Number(b.sl_email_lead_map_id);
    expect((await receivedBy(everywhere.body.id)).sort(byCampaign), "the account's webhook").toEqual(campaigns.flatMap((_, i) => heard({ id: everywhere.body.id, name: "All" }, i)).sort(byCampaign));
    expect(await deliveriesOf(deaf)).toEqual([]);
    expect(fivefold.statements, "five records cost what one does").toBe(single.statements);
  });
});

describe("unsubscribe", () => {
  it("stops the record through an UNSUBSCRIBE event: unsubscribed_count and LEAD_UNSUBSCRIBED follow", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const hook = await createWebhook(apiKey, campaign, { event_types: ["LEAD_UNSUBSCRIBED"] });
    const done = await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/unsubscribe`);
    expect(done).toMatchObject({ status: 200, body: { ok: true, message: "Lead unsubscribed successfully" } });
    expect(await recordRow(records[ANN]!)).toMatchObject({ state: "STOPPED", hasUnsubscribed: true, dueAt: null });
    expect((await recordRow(records[BOB]!)).state).toBe("DRAFTED");
    const [event] = (await eventsOf(campaign, "UNSUBSCRIBE")).filter((e) => e.campaignLeadId === records[ANN]);
    expect(String(event!.eventId)).toMatch(new RegExp(`^salvo-unsubscribe-api:${records[ANN]}:`));
    const report = await analytics(apiKey, campaign, { start_date: today, end_date: today });
    expect(report.body.unsubscribed_count).toBe("1");
    expect((await deliveriesOf(hook.id)).map((d) => d.event_type)).toEqual(["LEAD_UNSUBSCRIBED"]);
    // Once only.
    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/unsubscribe`);
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
  });

  it("keeps an operator's per-campaign unsubscribe to that campaign, while the person's own (a reported UNSUBSCRIBE) covers the account", async () => {
    const { apiKey, campaign, leads } = await setUp();
    await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/unsubscribe`);
    expect((await callJson(`/api/v1/leads/${leads[ANN]}`, { apiKey })).body).toMatchObject({ is_unsubscribed: false });
    const second = await createCampaign(apiKey);
    expect((await post(apiKey, `/api/v1/campaigns/${second}/leads`, { lead_list: [{ email: ANN }] })).body).toMatchObject({ upload_count: 1, unsubscribed_leads: 0 });

    await ingestOk(apiKey, campaign, [{ type: "UNSUBSCRIBE", lead_email: BOB, occurred_at: new Date().toISOString() }]);
    expect((await callJson(`/api/v1/leads/${leads[BOB]}`, { apiKey })).body).toMatchObject({ is_unsubscribed: true });
    expect((await post(apiKey, `/api/v1/campaigns/${second}/leads`, { lead_list: [{ email: BOB }] })).body).toMatchObject({ upload_count: 0, unsubscribed_leads: 1 });
  });

  it("unsubscribes a lead everywhere, and later uploads skip it unless told to ignore the list", async () => {
    const { apiKey, records, leads } = await setUp();
    const second = await createCampaign(apiKey);
    const secondRecords = await addLeads(apiKey, second, [ANN]);
    const done = await post(apiKey, `/api/v1/leads/${leads[ANN]}/unsubscribe`);
    expect(done).toMatchObject({ status: 200, body: { ok: true } });
    expect((await recordRow(records[ANN]!)).state).toBe("STOPPED");
    expect((await recordRow(secondRecords[ANN]!)).state).toBe("STOPPED");
    expect((await callJson(`/api/v1/leads/${leads[ANN]}`, { apiKey })).body).toMatchObject({ is_unsubscribed: true });
    expect((await post(apiKey, `/api/v1/leads/${leads[ANN]}/unsubscribe`)).body).toEqual({ ok: true });

    const third = await createCampaign(apiKey);
    const skipped = await post(apiKey, `/api/v1/campaigns/${third}/leads`, { lead_list: [{ email: ANN }, { email: "new@leads.example" }] });
    expect(skipped.body).toMatchObject({ upload_count: 1, unsubscribed_leads: 1 });
    const forced = await post(apiKey, `/api/v1/campaigns/${third}/leads`, { lead_list: [{ email: ANN }], settings: { ignore_unsubscribe_list: true } });
    expect(forced.body).toMatchObject({ upload_count: 1, unsubscribed_leads: 0 });
  });

  it("sets a lead's status everywhere: paused, active, unsubscribed", async () => {
    const { apiKey, records, leads } = await setUp();
    expect((await post(apiKey, `/api/v1/leads/${leads[ANN]}/status`, { status: "paused" }, "PUT")).status).toBe(200);
    expect((await recordRow(records[ANN]!)).state).toBe("PAUSED");
    expect((await post(apiKey, `/api/v1/leads/${leads[ANN]}/status`, { status: "active" }, "PUT")).status).toBe(200);
    expect((await recordRow(records[ANN]!)).state).toBe("DRAFTED");
    expect((await post(apiKey, `/api/v1/leads/${leads[ANN]}/status`, { status: "unsubscribed" }, "PUT")).status).toBe(200);
    expect((await recordRow(records[ANN]!)).state).toBe("STOPPED");
    expect((await post(apiKey, `/api/v1/leads/${leads[ANN]}/status`, { status: "gone" }, "PUT")).status).toBe(422);
  });

  it("resumes every paused record of a lead (status active) in one batch: a failed resume changes none; else each resumes by its own rules", async () => {
    const { apiKey, campaign: live, woken } = await sleepingActiveCampaign(ANN);
    const [liveRecord] = await recordsOf(live);
    const lead = await personOf(liveRecord!.id);
    // Sent to, and a campaign without steps yet: it resumes INPROGRESS, due at once.
    const sent = await createCampaign(apiKey);
    const sentRecord = (await addLeads(apiKey, sent, [ANN]))[ANN]!;
    await ingestOk(apiKey, sent, [{ type: "SENT", email_lead_map_id: sentRecord, occurred_at: new Date().toISOString() }]);
    // Its next step waits 3 days after the pause.
    const stepped = await createCampaign(apiKey);
    const steps = [
      { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "One" },
      { seq_number: 2, seq_delay_details: { delay_in_days: 3 }, email_body: "Two" },
    ];
    expect((await post(apiKey, `/api/v1/campaigns/${stepped}/sequences`, { sequences: steps })).status).toBe(200);
    const steppedRecord = (await addLeads(apiKey, stepped, [ANN]))[ANN]!;
    await setRecord(steppedRecord, { nextStep: 2 });
    // Nothing left to send: it stays paused.
    const ended = await createCampaign(apiKey);
    const endedRecord = (await addLeads(apiKey, ended, [ANN]))[ANN]!;
    const ids = [liveRecord!.id, sentRecord, steppedRecord, endedRecord];
    expect((await post(apiKey, `/api/v1/leads/${lead}/status`, { status: "paused" }, "PUT")).status).toBe(200);
    await setRecord(endedRecord, { nextStep: null });
    const paused = await Promise.all(ids.map((id) => recordRow(id)));
    expect(paused.map((row) => [row.state, row.pausedFrom])).toEqual([
      ["PAUSED", "DRAFTED"],
      ["PAUSED", "INPROGRESS"],
      ["PAUSED", "DRAFTED"],
      ["PAUSED", "DRAFTED"],
    ]);

    // The resume of the last resumable record fails, after the others' (as a D1 error between writes would leave them).
    const trigger = `test_refuse_resume_${steppedRecord}`;
    const d1 = fileEnv().DB;
    await d1
      .prepare(`CREATE TRIGGER ${trigger} BEFORE UPDATE OF state ON campaign_leads WHEN NEW.id = ${steppedRecord} AND OLD.state = 'PAUSED' BEGIN SELECT RAISE(ABORT, 'resume refused'); END`)
      .run();
    try {
      expect((await post(apiKey, `/api/v1/leads/${lead}/status`, { status: "active" }, "PUT")).status).toBe(500);
    } finally {
      await d1.prepare(`DROP TRIGGER ${trigger}`).run();
    }
    expect(await Promise.all(ids.map((id) => recordRow(id)))).toEqual(paused);

    const done = await post(apiKey, `/api/v1/leads/${lead}/status`, { status: "active" }, "PUT");
    expect(done).toMatchObject({ status: 200, body: { ok: true, message: "Lead status updated successfully" } });
    const [liveRow, sentRow, steppedRow, endedRow] = await Promise.all(ids.map((id) => recordRow(id)));
    const [livePause, sentPause, steppedPause] = paused.map((row) => row.pausedAt!.getTime());
    expect(liveRow).toMatchObject({ state: "DRAFTED", dueAt: new Date(livePause!), pausedFrom: null, pausedAt: null });
    expect(sentRow).toMatchObject({ state: "INPROGRESS", dueAt: new Date(sentPause!), pausedFrom: null, pausedAt: null });
    expect(steppedRow).toMatchObject({ state: "DRAFTED", dueAt: new Date(steppedPause! + 3 * DAY_MS), pausedFrom: null, pausedAt: null });
    expect(endedRow).toEqual(paused[3]);
    // The ACTIVE campaign's sender is told its record is due again.
    await woken();
  });
});

describe("delete", () => {
  it("deletes a record from a campaign: listings drop it and lifetime counts fall, while its events stay in windowed counts", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    await ingestOk(apiKey, campaign, [
      { type: "SENT", email_lead_map_id: records[ANN], occurred_at: new Date().toISOString() },
      { type: "REPLY", email_lead_map_id: records[ANN], occurred_at: new Date().toISOString(), from_email: ANN, body: "hi" },
    ]);
    const done = await call(`/api/v1/campaigns/${campaign}/leads/${leads[ANN]}`, { method: "DELETE", apiKey });
    expect(done.status).toBe(200);
    const listing = await callJson<{ data: { campaign_lead_map_id: number }[] }>(`/api/v1/campaigns/${campaign}/leads`, { apiKey });
    expect(listing.body.data.map((r) => r.campaign_lead_map_id)).toEqual([records[BOB]]);
    const report = await analytics(apiKey, campaign, { start_date: today, end_date: today });
    expect(report.body).toMatchObject({ sent_count: "1", reply_count: "1", total_count: "1" });
    const inbox = await callJson<{ messages: unknown[] }>("/api/v1/master-inbox/inbox-replies", { method: "POST", apiKey, body: {} });
    expect(inbox.body.messages).toEqual([]);
    expect((await call(`/api/v1/campaigns/${campaign}/leads/${leads[ANN]}`, { method: "DELETE", apiKey })).status).toBe(404);
  });

  it("deletes a lead from every campaign, then the lead", async () => {
    const { apiKey, campaign, leads } = await setUp();
    expect((await call(`/api/v1/leads/${leads[ANN]}`, { method: "DELETE", apiKey })).status).toBe(200);
    expect((await callJson(`/api/v1/leads/${leads[ANN]}`, { apiKey })).body).toEqual({});
    expect((await callJson<{ total_leads: string }>(`/api/v1/campaigns/${campaign}/leads`, { apiKey })).body.total_leads).toBe("1");
  });
});

describe("update, complete, category, re-pin", () => {
  it("updates a lead: merges custom fields (null removes one) and readdresses it, refusing an address another lead has", async () => {
    const { apiKey, campaign, leads } = await setUp();
    const path = `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}`;
    expect((await post(apiKey, path, { first_name: "Ann", custom_fields: { plan: "pro", seats: 3 } })).body).toMatchObject({
      ok: true,
      message: "Lead updated successfully",
    });
    await post(apiKey, `/api/v1/leads/${leads[ANN]}`, { email: "Ann.New@Leads.example", custom_fields: { seats: null, team: "x" } }, "PUT");
    const lead = await callJson(`/api/v1/leads/${leads[ANN]}`, { apiKey });
    expect(lead.body).toMatchObject({ email: "ann.new@leads.example", first_name: "Ann", custom_fields: { plan: "pro", team: "x" } });
    expect(await post(apiKey, path, { email: BOB })).toMatchObject({ status: 400, body: { error: `Email already belongs to lead ${leads[BOB]}` } });
    const tooMany = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i]));
    expect((await post(apiKey, path, { custom_fields: tooMany })).status).toBe(422);
  });

  it("marks a record complete by record id, or by lead id when the campaign has no such record", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${records[ANN]}/manual-complete`)).body).toMatchObject({ message: "Lead marked as complete" });
    expect((await recordRow(records[ANN]!)).state).toBe("COMPLETED");
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[BOB]}/manual-complete`)).status).toBe(200);
    expect(await recordRow(records[BOB]!)).toMatchObject({ state: "COMPLETED", dueAt: null });
  });

  it("categorises by id or name with LEAD_CATEGORY_UPDATED, clears with an empty string, and refuses unknown names", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const hook = await createWebhook(apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    const path = `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/category`;
    expect((await post(apiKey, path, { category: "interested", pause_lead: true })).body).toMatchObject({ message: "Lead category updated" });
    expect(await recordRow(records[ANN]!)).toMatchObject({ categoryId: 1, state: "PAUSED" });
    expect((await deliveriesOf(hook.id)).map((d) => d.event_type)).toEqual(["LEAD_CATEGORY_UPDATED"]);
    await post(apiKey, path, { category_id: "" });
    expect((await recordRow(records[ANN]!)).categoryId).toBeNull();
    expect(await post(apiKey, path, { category: "Nope" })).toMatchObject({ status: 400, body: { error: "Invalid category - Nope" } });
  });

  it("categorises and pauses (pause_lead) in one batch: a pause that fails leaves the category and its webhook unwritten", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const hook = await createWebhook(apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    // The pause of this one record fails (as a D1 error between two batches would leave it).
    const trigger = `test_refuse_pause_${records[ANN]}`;
    const d1 = fileEnv().DB;
    await d1
      .prepare(`CREATE TRIGGER ${trigger} BEFORE UPDATE OF state ON campaign_leads WHEN NEW.id = ${records[ANN]} AND NEW.state = 'PAUSED' BEGIN SELECT RAISE(ABORT, 'pause refused'); END`)
      .run();
    try {
      const refused = await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/category`, { category_id: 1, pause_lead: true });
      expect(refused.status).toBe(500);
    } finally {
      await d1.prepare(`DROP TRIGGER ${trigger}`).run();
    }
    expect(await recordRow(records[ANN]!)).toMatchObject({ categoryId: null, state: "DRAFTED" });
    expect(await deliveriesOf(hook.id)).toEqual([]);

    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/category`, { category_id: 1, pause_lead: true })).status).toBe(200);
    expect(await recordRow(records[ANN]!)).toMatchObject({ categoryId: 1, state: "PAUSED", pausedFrom: "DRAFTED" });
    expect((await deliveriesOf(hook.id)).map((d) => d.event_type)).toEqual(["LEAD_CATEGORY_UPDATED"]);
  });

  it("re-pins a record to a mailbox of the campaign; a pinned record needs the override", async () => {
    const { apiKey, campaign, records, leads } = await setUp();
    const [one, two, stray] = [await mailbox(apiKey, "one"), await mailbox(apiKey, "two"), await mailbox(apiKey, "stray")];
    await attach(apiKey, campaign, [one, two]);
    const path = "/api/v1/campaigns/update-lead-email-account";
    expect((await post(apiKey, path, { email_account_id: stray, email_campaign_id: campaign, email_lead_id: leads[ANN] })).status).toBe(400);
    expect((await post(apiKey, path, { email_account_id: one, campaign_id: campaign, lead_id: leads[ANN] })).body).toMatchObject({ message: "Lead email account updated" });
    expect((await recordRow(records[ANN]!)).emailAccountId).toBe(one);
    expect((await post(apiKey, path, { email_account_id: two, email_campaign_id: campaign, email_lead_id: leads[ANN] })).status).toBe(400);
    await post(apiKey, path, { email_account_id: two, email_campaign_id: campaign, email_lead_id: leads[ANN], override_lead_email_account: true });
    expect((await recordRow(records[ANN]!)).emailAccountId).toBe(two);
    await activate(campaign);
    expect(await claim(campaign, one, Date.now() + 60_000)).toEqual([records[BOB]]);
  });
});

describe("adding leads", () => {
  it("takes one flat lead, top-level settings, the bulk form, and skips block-listed addresses", async () => {
    const account = await provisionAccount();
    const apiKey = account.apiKey;
    const campaign = await createCampaign(apiKey);
    const flat = await post(apiKey, `/api/v1/campaigns/${campaign}/leads`, { email: "flat@leads.example", first_name: "Flat", return_lead_ids: true, campaign_id: 999 });
    expect(flat.body).toMatchObject({ ok: true, upload_count: 1, emailToLeadIdMap: { "flat@leads.example": expect.any(Number) } });
    await blockListed(account.id, "blocked.example");
    const bulk = await post(apiKey, `/api/v1/campaigns/${campaign}/leads/bulk`, { leads: [{ email: "a@blocked.example" }, { email: "b@fine.example" }] });
    expect(bulk.body).toMatchObject({ upload_count: 1, block_count: 1, total_leads: 2 });
    const forced = await post(apiKey, `/api/v1/campaigns/${campaign}/leads`, { lead_list: [{ email: "a@blocked.example" }], ignore_global_block_list: true });
    expect(forced.body).toMatchObject({ upload_count: 1, block_count: 0 });
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads`, {})).status).toBe(422);
  });

  it("pages a campaign's leads with a starting_after cursor that rows added meanwhile do not shift", async () => {
    const { apiKey, campaign, records } = await setUp(["a@page.example", "b@page.example", "c@page.example"]);
    const first = await callJson<{ data: { campaign_lead_map_id: number }[] }>(`/api/v1/campaigns/${campaign}/leads?limit=2`, { apiKey });
    const last = first.body.data[1]!.campaign_lead_map_id;
    await addLeads(apiKey, campaign, ["d@page.example"]);
    const next = await callJson<{ data: { campaign_lead_map_id: number }[]; total_leads: string }>(
      `/api/v1/campaigns/${campaign}/leads?limit=2&starting_after=${last}`,
      { apiKey },
    );
    expect(next.body.data.map((r) => r.campaign_lead_map_id)).toEqual([records["c@page.example"], expect.any(Number)]);
    expect(next.body.total_leads).toBe("4");
  });
});

describe("tenancy", () => {
  it("treats another account's lead as missing", async () => {
    const { campaign, leads } = await setUp();
    const other = await provisionAccount();
    expect((await post(other.apiKey, `/api/v1/campaigns/${campaign}/leads/${leads[ANN]}/pause`)).status).toBe(404);
    expect((await post(other.apiKey, `/api/v1/leads/${leads[ANN]}/unsubscribe`)).status).toBe(404);
    expect((await call(`/api/v1/leads/${leads[ANN]}`, { method: "DELETE", apiKey: other.apiKey })).status).toBe(404);
    expect((await callJson(`/api/v1/leads/${leads[ANN]}`, { apiKey: other.apiKey })).body).toEqual({});
  });
});
