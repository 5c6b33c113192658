import { describe, expect, it } from "vitest";
import { mailboxEventCount, pinnedRecordCount } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox, readMailbox } from "./fixtures";

describe("mailbox usage", () => {
  it("counts today's sends (UTC) in daily_sent_count, and a deleted mailbox's records go back to rotation while history keeps its id", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const campaign = await createCampaign(account.apiKey);
    const leads = await addLeads(account.apiKey, campaign, ["one@lead.example", "two@lead.example"]);
    const now = new Date();
    const yesterday = new Date(now.getTime() - 86_400_000 - 60_000);
    await ingestOk(account.apiKey, campaign, [
      { event_id: "s1", type: "SENT", email_lead_map_id: leads["one@lead.example"], occurred_at: now.toISOString(), email_account_id: mailbox.id },
      { event_id: "s2", type: "SENT", email_lead_map_id: leads["two@lead.example"], occurred_at: now.toISOString(), email_account_id: mailbox.id },
      { event_id: "s0", type: "SENT", email_lead_map_id: leads["two@lead.example"], occurred_at: yesterday.toISOString(), email_account_id: mailbox.id },
    ]);
    expect((await readMailbox(account.apiKey, mailbox.id)).body.daily_sent_count).toBe(2);

    expect(await pinnedRecordCount(mailbox.id)).toBe(2);
    expect((await callJson(`/api/v1/email-accounts/${mailbox.id}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    expect(await pinnedRecordCount(mailbox.id)).toBe(0);
    expect(await mailboxEventCount(mailbox.id)).toBe(3);
  });
});
