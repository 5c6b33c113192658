import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import { resumePausedRecords } from "../../src/replies/resume";
import { campaignDeliveries, campaignRow, eventCount, eventsOf, recordRow, setRecord } from "../db";
import { mailboxWakeReads, recordingQueries } from "../d1-queries";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { addLeads, createCampaign, ingest, ingestOk } from "./fixtures";


describe("event ingestion", () => {
  it("stores events by record id or lead email, and a re-sent event_id is a duplicate", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["ann@ev.example"]);
    const events = [
      { event_id: "s1", type: "SENT", email_lead_map_id: map["ann@ev.example"], occurred_at: "2026-03-01T10:00:00Z" },
      { event_id: "o1", type: "OPEN", lead_email: "ANN@ev.example", occurred_at: "2026-03-01T11:00:00+01:00" },
      { type: "CLICK", lead_email: "ann@ev.example", occurred_at: "2026-03-01T12:00:00Z", link_url: "https://x.example" },
    ];
    expect(await ingestOk(account.apiKey, campaign, events)).toEqual({ ok: true, accepted: 3, duplicates: 0 });
    expect(await ingestOk(account.apiKey, campaign, events.slice(0, 2))).toEqual({ ok: true, accepted: 0, duplicates: 2 });
    const sameCall = await ingestOk(account.apiKey, campaign, [
      { event_id: "r1", type: "REPLY", lead_email: "ann@ev.example", occurred_at: "2026-03-02T10:00:00Z" },
      { event_id: "r1", type: "REPLY", lead_email: "ann@ev.example", occurred_at: "2026-03-02T10:00:00Z" },
    ]);
    expect(sameCall).toEqual({ ok: true, accepted: 1, duplicates: 1 });
    expect(await eventCount(campaign)).toBe(4);
    const stored = (await eventsOf(campaign)).find((e) => e.eventId === "o1");
    expect(stored?.occurredAt).toEqual(new Date("2026-03-01T10:00:00Z"));
  });

  it("refuses the whole call when one event is bad, naming its index, and stores nothing", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["ok@ev.example"]);
    const good = { type: "SENT", lead_email: "ok@ev.example", occurred_at: "2026-03-01T10:00:00Z" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good, lead_email: "stranger@ev.example" }, "events.1.lead_email"],
      [{ ...good, type: "DELIVERED" }, "events.1.type"],
      [{ ...good, occurred_at: "yesterday" }, "events.1.occurred_at"],
      [{ type: "SENT", occurred_at: good.occurred_at }, "events.1.email_lead_map_id"],
      [{ ...good, type: "REPLY", category_id: 999 }, "events.1.category_id"],
    ];
    for (const [bad, path] of cases) {
      const { status, body } = await ingest(account.apiKey, campaign, [good, bad]);
      expect(status, path).toBe(422);
      expect(body).toMatchObject({ error: "Validation failed", details: [expect.objectContaining({ path })] });
    }
    const tooMany = await ingest(account.apiKey, campaign, Array.from({ length: 1001 }, () => good));
    expect(tooMany.status).toBe(422);
    expect((await ingest(account.apiKey, campaign, [])).status).toBe(422);
    expect(await eventCount(campaign)).toBe(0);
    expect((await ingest(account.apiKey, campaign, Array.from({ length: 1000 }, () => good))).body).toEqual({
      ok: true,
      accepted: 1000,
      duplicates: 0,
    });
  });

  it("moves record state: SENT -> INPROGRESS, REPLY -> COMPLETED, BOUNCE/BLOCK -> BLOCKED, UNSUBSCRIBE -> STOPPED, and keeps the inbox facts", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["a@st.example", "b@st.example", "c@st.example", "d@st.example"]);
    const mailbox = (await createMailbox(account.apiKey)).id;
    await ingestOk(account.apiKey, campaign, [
      { type: "SENT", lead_email: "a@st.example", occurred_at: "2026-03-01T10:00:00Z", email_account_id: mailbox },
      { type: "OPEN", lead_email: "a@st.example", occurred_at: "2026-03-01T11:00:00Z" },
      { type: "REPLY", lead_email: "a@st.example", occurred_at: "2026-03-02T09:00:00Z", from_email: "a@st.example" },
      { type: "SENT", lead_email: "b@st.example", occurred_at: "2026-03-01T10:00:00Z" },
      { type: "BOUNCE", lead_email: "b@st.example", occurred_at: "2026-03-01T10:01:00Z" },
      { type: "BLOCK", lead_email: "c@st.example", occurred_at: "2026-03-01T10:00:00Z" },
      { type: "SENT", lead_email: "d@st.example", occurred_at: "2026-03-01T10:00:00Z" },
      { type: "UNSUBSCRIBE", lead_email: "d@st.example", occurred_at: "2026-03-03T10:00:00Z" },
    ]);
    // The lead's reply ends its sequence (CONTRACT section 11, stop_lead_settings).
    expect(await recordRow(map["a@st.example"]!)).toMatchObject({
      state: "COMPLETED",
      emailAccountId: mailbox,
      hasSent: true,
      hasOpened: true,
      hasReplied: true,
      hasBounced: false,
      isRead: false,
      lastSentAt: new Date("2026-03-01T10:00:00Z"),
      lastReplyAt: new Date("2026-03-02T09:00:00Z"),
    });
    expect(await recordRow(map["b@st.example"]!)).toMatchObject({ state: "BLOCKED", hasBounced: true });
    expect(await recordRow(map["c@st.example"]!)).toMatchObject({ state: "BLOCKED", hasBounced: false });
    expect(await recordRow(map["d@st.example"]!)).toMatchObject({ state: "STOPPED", hasUnsubscribed: true });

    // A later SENT does not revive a stopped record.
    await ingestOk(account.apiKey, campaign, [{ type: "SENT", lead_email: "d@st.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    expect(await recordRow(map["d@st.example"]!)).toMatchObject({ state: "STOPPED" });
  });

  it("flags replies from another sender, and out-of-office replies only when the account ignores them", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["lead@fl.example"]);
    const reply = { type: "REPLY", lead_email: "lead@fl.example", occurred_at: "2026-03-01T10:00:00Z" };
    await ingestOk(account.apiKey, campaign, [
      { ...reply, event_id: "own", from_email: "Lead@FL.example" },
      { ...reply, event_id: "fwd", from_email: "colleague@fl.example" },
      { ...reply, event_id: "ooo", from_email: "lead@fl.example", is_ooo: true },
      { ...reply, event_id: "cat6", category_id: 6 },
    ]);
    const flags = await eventsOf(campaign);
    expect(Object.fromEntries(flags.map((r) => [r.eventId, r.ignored]))).toEqual({ own: false, fwd: true, ooo: false, cat6: false });

    const strict = await provisionAccount({ ignore_ooo_replies: true });
    const strictCampaign = await createCampaign(strict.apiKey);
    await addLeads(strict.apiKey, strictCampaign, ["lead@fl.example"]);
    await ingestOk(strict.apiKey, strictCampaign, [
      { ...reply, event_id: "ooo", is_ooo: true },
      { ...reply, event_id: "cat6", category_id: 6 },
      { ...reply, event_id: "plain" },
    ]);
    const strictFlags = await eventsOf(strictCampaign);
    expect(Object.fromEntries(strictFlags.map((r) => [r.eventId, r.ignored]))).toEqual({ ooo: true, cat6: true, plain: false });
  });

  it("categorises the lead from its most recent categorised reply", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["cat@ev.example"]);
    await ingestOk(account.apiKey, campaign, [
      { type: "REPLY", lead_email: "cat@ev.example", occurred_at: "2026-03-05T10:00:00Z", category_id: 1 },
      { type: "REPLY", lead_email: "cat@ev.example", occurred_at: "2026-03-01T10:00:00Z", category_id: 6 },
      { type: "REPLY", lead_email: "cat@ev.example", occurred_at: "2026-03-06T10:00:00Z" },
    ]);
    expect(await recordRow(map["cat@ev.example"]!)).toMatchObject({ categoryId: 1 });
  });
});

describe("stop rules (CONTRACT section 11)", () => {
  it("ends a sequence on a counted reply, not an ignored one; on a human click only when the campaign says so", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["own@sr.example", "fwd@sr.example", "click@sr.example", "bot@sr.example"]);
    const at = "2026-03-02T09:00:00Z";
    await ingestOk(account.apiKey, campaign, [
      { type: "REPLY", lead_email: "own@sr.example", occurred_at: at, from_email: "own@sr.example" },
      { type: "REPLY", lead_email: "fwd@sr.example", occurred_at: at, from_email: "colleague@sr.example" },
      { type: "CLICK", lead_email: "click@sr.example", occurred_at: at },
    ]);
    expect((await recordRow(map["own@sr.example"]!)).state).toBe("COMPLETED");
    expect((await recordRow(map["fwd@sr.example"]!)).state).toBe("DRAFTED");
    expect((await recordRow(map["click@sr.example"]!)).state, "clicks do not stop by default").toBe("DRAFTED");

    await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { stop_lead_settings: "CLICK_ON_A_LINK" } });
    await ingestOk(account.apiKey, campaign, [
      { type: "CLICK", lead_email: "bot@sr.example", occurred_at: at, is_machine: true },
      { type: "CLICK", lead_email: "click@sr.example", occurred_at: at, event_id: "human-click" },
    ]);
    expect((await recordRow(map["click@sr.example"]!)).state).toBe("COMPLETED");
    expect((await recordRow(map["bot@sr.example"]!)).state, "a scanner's click stops nothing").toBe("DRAFTED");
    expect((await recordRow(map["click@sr.example"]!)).dueAt).toBeNull();
  });
});

describe("bounce auto-pause (CONTRACT section 11)", () => {
  it("pauses an ACTIVE campaign when its bounces reach the threshold, in the same commit, with its status webhook", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["b1@ap.example", "b2@ap.example", "b3@ap.example"]);
    await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { bounce_autopause_threshold: 2 } });
    await callJson(`/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { name: "Status", webhook_url: "https://hooks.example.com/ap", event_types: ["CAMPAIGN_STATUS_CHANGED"] },
    });
    await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey: account.apiKey, body: { status: "START" } });
    const status = async () => (await campaignRow(campaign)).status;
    const pauses = async () =>
      (await campaignDeliveries(campaign)).filter((d) => d.eventType === "CAMPAIGN_STATUS_CHANGED" && JSON.stringify(d.payload).includes("PAUSED")).length;

    await ingestOk(account.apiKey, campaign, [{ type: "BOUNCE", lead_email: "b1@ap.example", occurred_at: "2026-03-01T10:00:00Z" }]);
    expect(await status()).toBe("ACTIVE");
    expect(await pauses()).toBe(0);
    await ingestOk(account.apiKey, campaign, [{ type: "BOUNCE", lead_email: "b2@ap.example", occurred_at: "2026-03-01T10:05:00Z" }]);
    expect(await status()).toBe("PAUSED");
    expect(await pauses()).toBe(1);
    // Already paused: a further bounce changes nothing and announces nothing.
    await ingestOk(account.apiKey, campaign, [{ type: "BOUNCE", lead_email: "b3@ap.example", occurred_at: "2026-03-01T10:10:00Z" }]);
    expect(await pauses()).toBe(1);
  });
});

describe("out-of-office auto-reactivation (CONTRACT section 11)", () => {
  it("pauses a record on a counted out-of-office reply and the minute job resumes it after the delay; a human reply still completes", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["away@ooo.example", "here@ooo.example"]);
    await callJson(`/api/v1/campaigns/${campaign}/settings`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { out_of_office_detection_settings: { autoReactivateOOO: true, reactivateOOOwithDelay: 3 } },
    });
    const at = Date.parse("2026-03-02T09:00:00Z");
    await ingestOk(account.apiKey, campaign, [
      { type: "SENT", lead_email: "away@ooo.example", occurred_at: "2026-03-01T09:00:00Z" },
      { type: "REPLY", lead_email: "away@ooo.example", occurred_at: new Date(at).toISOString(), from_email: "away@ooo.example", is_ooo: true },
      { type: "REPLY", lead_email: "here@ooo.example", occurred_at: new Date(at).toISOString(), from_email: "here@ooo.example" },
    ]);
    expect(await recordRow(map["away@ooo.example"]!)).toMatchObject({ state: "PAUSED", resumeAt: new Date(at + 3 * 86_400_000) });
    expect(await recordRow(map["here@ooo.example"]!)).toMatchObject({ state: "COMPLETED", resumeAt: null });

    expect(await resumePausedRecords(fileEnv() as unknown as Bindings, new Date(at + 2 * 86_400_000))).toBe(0);
    expect((await recordRow(map["away@ooo.example"]!)).state).toBe("PAUSED");
    expect(await resumePausedRecords(fileEnv() as unknown as Bindings, new Date(at + 3 * 86_400_000))).toBeGreaterThanOrEqual(1);
    expect(await recordRow(map["away@ooo.example"]!)).toMatchObject({ state: "INPROGRESS", resumeAt: null });
  });

  it("wakes the senders of every campaign it resumed records in with one read, however many campaigns", async () => {
    const account = await provisionAccount();
    const records: number[] = [];
    for (let i = 0; i < 3; i++) {
      const campaign = await createCampaign(account.apiKey);
      records.push(...Object.values(await addLeads(account.apiKey, campaign, [`back${i}@ooo.example`])));
    }
    const now = Date.now();
    await setRecord(records, { state: "PAUSED", resumeAt: new Date(now - 60_000) });
    const { database, queries } = recordingQueries(fileEnv().DB);
    expect(await resumePausedRecords({ ...fileEnv(), DB: database } as unknown as Bindings, new Date(now))).toBeGreaterThanOrEqual(3);
    for (const record of records) expect(await recordRow(record)).toMatchObject({ state: "INPROGRESS", resumeAt: null });
    expect(mailboxWakeReads(queries), "one read for three campaigns' mailboxes").toBe(1);
  });
});
