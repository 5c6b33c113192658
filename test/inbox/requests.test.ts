import { describe, expect, it } from "vitest";
import { provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { act, list, world } from "./fixtures";

const at = (i: number) => new Date(Date.UTC(2026, 2, 1) + i * 3_600_000).toISOString();

describe("inbox requests", () => {
  it("a mailbox id named twice in emailAccountId changes neither the rows nor total_count", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    const m1 = (await createMailbox(k)).id;
    const emails = Array.from({ length: 30 }, (_, i) => `p${i}@dup.example`);
    await addLeads(k, campaign, emails);
    await ingestOk(k, campaign, emails.flatMap((email, i) => [
      { type: "SENT", lead_email: email, occurred_at: at(i), email_account_id: m1 },
      { type: "REPLY", lead_email: email, occurred_at: at(i + 100), from_email: email },
    ]));
    const once = await list(k, "inbox-replies", { limit: 5, filters: { emailAccountId: [m1] } });
    const twice = await list(k, "inbox-replies", { limit: 5, filters: { emailAccountId: [m1, m1] } });
    expect(once.body.total_count).toBe(30);
    expect(new Set(once.body.messages.map((m) => m.email_lead_map_id)).size).toBe(5);
    expect({ total: twice.body.total_count, ids: twice.body.messages.map((m) => m.lead.email) }).toEqual({
      total: once.body.total_count,
      ids: once.body.messages.map((m) => m.lead.email),
    });
  });

  it("keeps section 4's caps (campaignId <= 5, emailAccountId <= 10) on every view but sent, which takes 15 and 100", async () => {
    const { k } = await world();
    const six = [1, 2, 3, 4, 5, 6];
    const eleven = Array.from({ length: 11 }, (_, i) => i + 1);
    const answers: Record<string, number[]> = {};
    for (const view of ["unread-replies", "important", "assigned-me", "views", "scheduled", "reminders"] as const) {
      answers[view] = [
        (await list(k, view, { filters: { campaignId: six } })).status,
        (await list(k, view, { filters: { emailAccountId: eleven } })).status,
      ];
    }
    expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((view) => [view, [422, 422]])));
    expect((await list(k, "sent", { filters: { campaignId: six, emailAccountId: eleven } })).status).toBe(200);
    expect((await list(k, "sent", { filters: { campaignId: Array.from({ length: 16 }, (_, i) => i + 1) } })).status).toBe(422);
    expect((await list(k, "views", { filters: { subSequenceId: [1] } })).status).toBe(200);
  });

  it("update-team-member takes the id as a decimal string, like every id in a body", async () => {
    const { k, ids } = await world();
    const answer = await act(k, "update-team-member", { email_lead_map_id: ids["bob@in.example"], team_member_id: "9" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  });
});
