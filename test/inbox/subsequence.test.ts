import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { act } from "./fixtures";

async function world() {
  const account = await provisionAccount();
  const k = account.apiKey;
  const parent = await createCampaign(k, { name: "Outreach" });
  const ids = await addLeads(k, parent, ["ann@sub.example", "bob@sub.example"]);
  const created = await callJson<{ id: number }>("/api/v1/campaigns/create-subsequence", { method: "POST", apiKey: k, body: { parent_campaign_id: parent, name: "Interested" } });
  expect(created.status).toBe(200);
  return { k, parent, sub: created.body.id, ids };
}

const records = schema.campaignLeads;
const recordOf = (id: number) =>
  testDb()
    .select({
      state: records.state,
      sub_sequence_id: records.subSequenceId,
      campaign_id: records.campaignId,
      email_account_id: records.emailAccountId,
      due_at: records.dueAt,
      parent_record_id: records.parentRecordId,
      stop_on_parent_reply: records.stopOnParentReply,
      stopped_at: records.stoppedAt,
    })
    .from(records)
    .where(eq(records.id, id))
    .get();

describe("push-to-subsequence", () => {
  it("ends the record in its campaign and starts the lead in the subsequence after the delay", async () => {
    const { k, parent, sub, ids } = await world();
    const before = Date.now();
    const pushed = await act(k, "push-to-subsequence", { email_lead_map_id: ids["ann@sub.example"], sub_sequence_id: String(sub), sub_sequence_delay_time: 3600 });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
    const data = (pushed.body as { data: Record<string, unknown> }).data;
    expect(pushed.body).toMatchObject({ ok: true, success: true, message: "Lead pushed to subsequence successfully" });
    expect(data).toMatchObject({ email_lead_map_id: ids["ann@sub.example"], parent_campaign_id: parent, sub_sequence_id: sub, stop_on_parent_reply: false });
    expect(Date.parse(String(data.will_start_at)) - before).toBeGreaterThanOrEqual(3_600_000);
    expect(await recordOf(ids["ann@sub.example"]!)).toMatchObject({ state: "COMPLETED", sub_sequence_id: sub, due_at: null });
    const child = await recordOf(Number(data.new_email_lead_map_id));
    expect(child).toMatchObject({ state: "DRAFTED", campaign_id: sub, parent_record_id: ids["ann@sub.example"], stop_on_parent_reply: false });
    expect(Number(child!.due_at)).toBe(Date.parse(String(data.will_start_at)));
    const again = await act(k, "push-to-subsequence", { email_lead_map_id: ids["ann@sub.example"], subsequence_id: sub });
    expect(again).toMatchObject({ status: 400, body: { error: "Lead already pushed to a subsequence" } });
  });

  it("refuses a campaign that is not a subsequence of the record's, another tenant's alike, and changes nothing", async () => {
    const { k, parent, ids } = await world();
    const other = await createCampaign(k, { name: "Unrelated" });
    const stranger = await provisionAccount();
    const theirs = await createCampaign(stranger.apiKey);
    const theirSub = await callJson<{ id: number }>("/api/v1/campaigns/create-subsequence", { method: "POST", apiKey: stranger.apiKey, body: { parent_campaign_id: theirs } });
    for (const target of [other, parent, theirSub.body.id, 999_999_999]) {
      expect(await act(k, "push-to-subsequence", { email_lead_map_id: ids["bob@sub.example"], sub_sequence_id: target })).toMatchObject({
        status: 400,
        body: { error: "sub_sequence_id must be a subsequence of the lead's campaign" },
      });
    }
    expect(await recordOf(ids["bob@sub.example"]!)).toMatchObject({ state: "DRAFTED", sub_sequence_id: null });
  });

  it("with stop_lead_on_parent_campaign_reply, a reply on the parent thread stops the pushed record (and only then)", async () => {
    const { k, parent, sub, ids } = await world();
    const push = async (email: string, stop: boolean) =>
      ((await act(k, "push-to-subsequence", { email_lead_map_id: ids[email], sub_sequence_id: sub, stop_lead_on_parent_campaign_reply: stop })).body as { data: { new_email_lead_map_id: number } }).data
        .new_email_lead_map_id;
    const annChild = await push("ann@sub.example", true);
    const bobChild = await push("bob@sub.example", false);
    await ingestOk(k, parent, [
      { type: "REPLY", lead_email: "ann@sub.example", occurred_at: "2026-03-03T10:00:00Z", body: "Not now" },
      { type: "REPLY", lead_email: "bob@sub.example", occurred_at: new Date().toISOString(), body: "Tell me more" },
    ]);
    // The stop is the reply's (13.3 counts it in the reply's window, however late the reply is reported).
    expect(await recordOf(annChild)).toMatchObject({ state: "STOPPED", due_at: null, stopped_at: new Date("2026-03-03T10:00:00Z") });
    expect(await recordOf(bobChild)).toMatchObject({ state: "DRAFTED", stopped_at: null });
    const { body } = await callJson<{ messages: { lead: { email: string }; is_pushed_to_sub_sequence: boolean; sub_sequence_id: number | null }[] }>("/api/v1/master-inbox/inbox-replies", {
      method: "POST",
      apiKey: k,
      body: { filters: { campaignId: parent } },
    });
    expect(body.messages.map((m) => [m.lead.email, m.is_pushed_to_sub_sequence, m.sub_sequence_id]).sort()).toEqual([
      ["ann@sub.example", true, sub],
      ["bob@sub.example", true, sub],
    ]);
  });
});
