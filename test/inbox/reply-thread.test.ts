import { describe, expect, it } from "vitest";
import { callJson, env, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";

/** A thread pushed in through the events API (no mailbox of ours sent it), and its reply's stats id. */
async function thread() {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const map = await addLeads(account.apiKey, campaign, ["t@reply.example"]);
  await ingestOk(account.apiKey, campaign, [
    { type: "SENT", lead_email: "t@reply.example", occurred_at: "2026-03-01T10:00:00Z", message_id: "<s@x>" },
    { type: "REPLY", lead_email: "t@reply.example", occurred_at: "2026-03-02T10:00:00Z", message_id: "<r@t>", body: "Hi" },
  ]);
  const reply = (await env.DB.prepare("SELECT id FROM events WHERE campaign_lead_id = ? AND type = 'REPLY'").bind(map["t@reply.example"]!).first<{ id: number }>())!;
  return { account, campaign, statsId: reply.id };
}

const post = (apiKey: string, campaign: number, body: unknown) => callJson(`/api/v1/campaigns/${campaign}/reply-email-thread`, { method: "POST", apiKey, body });

describe("replying in a thread from the inbox", () => {
  it("answers the contract's refusals without sending or storing anything", async () => {
    const { account, campaign, statsId } = await thread();
    const before = (await env.DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ?").bind(campaign).first<{ n: number }>())!.n;

    expect(await post(account.apiKey, campaign, { email_stats_id: 999999, email_body: "x" })).toMatchObject({ status: 404, body: { error: "Email stats not found" } });
    // No mailbox of this account sent the thread: there is nothing to send from.
    expect(await post(account.apiKey, campaign, { email_stats_id: String(statsId), email_body: "x" })).toMatchObject({ status: 400, body: { error: "Email account not found!" } });
    expect((await post(account.apiKey, campaign, { email_stats_id: statsId })).status).toBe(422);
    expect((await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "x", cc: "not-an-address" })).status).toBe(422);
    const stranger = await provisionAccount();
    expect((await post(stranger.apiKey, campaign, { email_stats_id: statsId, email_body: "x" })).status).toBe(404);

    const after = (await env.DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ?").bind(campaign).first<{ n: number }>())!.n;
    expect(after).toBe(before);
  });
});
