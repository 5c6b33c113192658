import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import { resumePausedRecords } from "../../src/replies/resume";
import { callJson, env, provisionAccount } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { addLeads, createCampaign, ingest, ingestOk } from "./fixtures";

async function record(id: number) {
  return env.DB.prepare("SELECT * FROM campaign_leads WHERE id = ?").bind(id).first<Record<string, unknown>>();
}

async function recordOf(id: number): Promise<Record<string, unknown>> {
  const row = await record(id);
  if (!row) throw new Error(`no record ${id}`);
  return row;
}

async function eventCount(campaignId: number) {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ?").bind(campaignId).first<{ n: number }>();
  return row!.n;
}

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
    const stored = await env.DB.prepare("SELECT occurred_at FROM events WHERE event_id = 'o1' AND campaign_id = ?").bind(campaign).first<{ occurred_at: number }>();
    expect(stored?.occurred_at).toBe(Date.parse("2026-03-01T10:00:00Z"));
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
    expect(await record(map["a@st.example"]!)).toMatchObject({
      state: "COMPLETED",
      email_account_id: mailbox,
      has_sent: 1,
      has_opened: 1,
      has_replied: 1,
      has_bounced: 0,
      is_read: 0,
      last_sent_at: Date.parse("2026-03-01T10:00:00Z"),
      last_reply_at: Date.parse("2026-03-02T09:00:00Z"),
    });
    expect(await record(map["b@st.example"]!)).toMatchObject({ state: "BLOCKED", has_bounced: 1 });
    expect(await record(map["c@st.example"]!)).toMatchObject({ state: "BLOCKED", has_bounced: 0 });
    expect(await record(map["d@st.example"]!)).toMatchObject({ state: "STOPPED", has_unsubscribed: 1 });

    // A later SENT does not revive a stopped record.
    await ingestOk(account.apiKey, campaign, [{ type: "SENT", lead_email: "d@st.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    expect(await record(map["d@st.example"]!)).toMatchObject({ state: "STOPPED" });
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
    const flags = await env.DB.prepare("SELECT event_id, ignored FROM events WHERE campaign_id = ? ORDER BY event_id")
      .bind(campaign)
      .all<{ event_id: string; ignored: number }>();
    expect(Object.fromEntries(flags.results.map((r) => [r.event_id, r.ignored]))).toEqual({ own: 0, fwd: 1, ooo: 0, cat6: 0 });

    const strict = await provisionAccount({ ignore_ooo_replies: true });
    const strictCampaign = await createCampaign(strict.apiKey);
    await addLeads(strict.apiKey, strictCampaign, ["lead@fl.example"]);
    await ingestOk(strict.apiKey, strictCampaign, [
      { ...reply, event_id: "ooo", is_ooo: true },
      { ...reply, event_id: "cat6", category_id: 6 },
      { ...reply, event_id: "plain" },
    ]);
    const strictFlags = await env.DB.prepare("SELECT event_id, ignored FROM events WHERE campaign_id = ? ORDER BY event_id")
      .bind(strictCampaign)
      .all<{ event_id: string; ignored: number }>();
    expect(Object.fromEntries(strictFlags.results.map((r) => [r.event_id, r.ignored]))).toEqual({ ooo: 1, cat6: 1, plain: 0 });
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
    expect(await record(map["cat@ev.example"]!)).toMatchObject({ category_id: 1 });
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
    expect((await recordOf(map["own@sr.example"]!)).state).toBe("COMPLETED");
    expect((await recordOf(map["fwd@sr.example"]!)).state).toBe("DRAFTED");
    expect((await recordOf(map["click@sr.example"]!)).state, "clicks do not stop by default").toBe("DRAFTED");

    await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { stop_lead_settings: "CLICK_ON_A_LINK" } });
    await ingestOk(account.apiKey, campaign, [
      { type: "CLICK", lead_email: "bot@sr.example", occurred_at: at, is_machine: true },
      { type: "CLICK", lead_email: "click@sr.example", occurred_at: at, event_id: "human-click" },
    ]);
    expect((await recordOf(map["click@sr.example"]!)).state).toBe("COMPLETED");
    expect((await recordOf(map["bot@sr.example"]!)).state, "a scanner's click stops nothing").toBe("DRAFTED");
    expect((await recordOf(map["click@sr.example"]!)).due_at).toBeNull();
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
    const status = async () => (await env.DB.prepare("SELECT status FROM campaigns WHERE id = ?").bind(campaign).first<{ status: string }>())!.status;
    const pauses = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE campaign_id = ? AND event_type = 'CAMPAIGN_STATUS_CHANGED' AND payload LIKE '%PAUSED%'").bind(campaign).first<{ n: number }>())!.n;

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
    expect(await recordOf(map["away@ooo.example"]!)).toMatchObject({ state: "PAUSED", resume_at: at + 3 * 86_400_000 });
    expect(await recordOf(map["here@ooo.example"]!)).toMatchObject({ state: "COMPLETED", resume_at: null });

    expect(await resumePausedRecords(env as unknown as Bindings, new Date(at + 2 * 86_400_000))).toBe(0);
    expect((await recordOf(map["away@ooo.example"]!)).state).toBe("PAUSED");
    expect(await resumePausedRecords(env as unknown as Bindings, new Date(at + 3 * 86_400_000))).toBeGreaterThanOrEqual(1);
    expect(await recordOf(map["away@ooo.example"]!)).toMatchObject({ state: "INPROGRESS", resume_at: null });
  });
});
