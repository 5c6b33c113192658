import { describe, expect, it } from "vitest";
import { parseMessage } from "../../src/mail/parsed";
import { recordInbound } from "../../src/replies/inbound";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { createWebhook, deliveriesOf } from "../webhooks/fixtures";

const RECEIVED = Date.parse("2026-04-02T09:30:00.000Z");

/** A stranger's message the reader could not thread: it lands in the untracked list. */
async function untrackedReply(account: { id: number; apiKey: string }, mailbox: { id: number; from_email: string }, clientId: number | null = null) {
  const raw = [
    "From: Pat Prospect <pat@prospect.example>",
    `To: ${mailbox.from_email}`,
    "Subject: Re: our chat",
    `Message-ID: <${crypto.randomUUID()}@prospect.example>`,
    "Date: Thu, 02 Apr 2026 09:30:00 +0000",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Yes, let's talk on Tuesday.",
    "",
    "> quoted earlier text",
  ].join("\r\n");
  await recordInbound(fileEnv(), { id: mailbox.id, accountId: account.id, clientId, fromEmail: mailbox.from_email }, [await parseMessage(raw)], RECEIVED);
  const row = await fileEnv().DB.prepare("SELECT id FROM untracked_replies WHERE email_account_id = ? ORDER BY id DESC").bind(mailbox.id).first<{ id: number }>();
  return row!.id;
}

async function setting() {
  const account = await provisionAccount();
  const k = account.apiKey;
  const campaign = await createCampaign(k);
  const ids = await addLeads(k, campaign, ["pat@prospect.example", "quiet@prospect.example"]);
  const mailbox = await createMailbox(k);
  await ingestOk(k, campaign, [{ type: "SENT", lead_email: "pat@prospect.example", occurred_at: "2026-04-01T09:00:00Z", email_account_id: mailbox.id }]);
  const webhook = await createWebhook(k, campaign);
  return { account, k, campaign, pat: ids["pat@prospect.example"]!, quiet: ids["quiet@prospect.example"]!, mailbox, webhook };
}

const associate = (apiKey: string, body: Record<string, unknown>) => callJson("/api/v1/master-inbox/untracked-replies/associate-to-lead", { method: "POST", apiKey, body });

describe("associate an untracked reply to a lead (CONTRACT 21.3)", () => {
  it("makes it a reply of the record on its latest send, which acts as any reply and leaves the untracked list", async () => {
    const { account, k, campaign, pat, mailbox, webhook } = await setting();
    const untracked = await untrackedReply(account, mailbox);
    const { status, body } = await associate(k, { emailCampaignId: campaign, leadMapId: pat, untrackedReplyId: String(untracked) });
    expect(status).toBe(200);
    expect(body).toEqual({ sucess: true, success: true, ok: true, message: "Untracked reply associated to lead successfully", data: { leadMapId: pat, swMessageId: expect.any(Number) } });
    const stat = (body as { data: { swMessageId: number } }).data.swMessageId;
    const reply = await fileEnv().DB.prepare("SELECT type, campaign_lead_id, body, email_account_id, sequence_number FROM events WHERE id = ?").bind(stat).first();
    expect(reply).toEqual({ type: "REPLY", campaign_lead_id: pat, body: "Yes, let's talk on Tuesday.", email_account_id: mailbox.id, sequence_number: 1 });
    // The record replied (its state and flags), the webhook heard it, and the untracked list no longer has it.
    const record = await fileEnv().DB.prepare("SELECT has_replied, last_reply_at FROM campaign_leads WHERE id = ?").bind(pat).first<{ has_replied: number; last_reply_at: number }>();
    expect(record).toEqual({ has_replied: 1, last_reply_at: RECEIVED });
    expect((await deliveriesOf(webhook.id)).map((d) => d.event_type)).toContain("EMAIL_REPLY");
    const list = await callJson<{ data: { data: { replies: { id: number }[] } } }>("/api/v1/master-inbox/untracked-replies", { apiKey: k });
    expect(list.body.data.data.replies.map((r) => r.id)).not.toContain(untracked);
    // The thread shows it.
    const history = await callJson<{ history: { type: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${(await fileEnv().DB.prepare("SELECT lead_id FROM campaign_leads WHERE id = ?").bind(pat).first<{ lead_id: number }>())!.lead_id}/message-history`, { apiKey: k });
    expect(history.body.history.map((m) => m.type)).toEqual(["SENT", "REPLY"]);
    // A second association of the same reply finds it gone.
    expect((await associate(k, { emailCampaignId: campaign, leadMapId: pat, untrackedReplyId: untracked })).status).toBe(404);
  });

  it("refuses a record without a sent email (400) and unknown or foreign ids (404), changing nothing", async () => {
    const { account, k, campaign, pat, quiet, mailbox } = await setting();
    const untracked = await untrackedReply(account, mailbox);
    const noSend = await associate(k, { emailCampaignId: campaign, leadMapId: quiet, untrackedReplyId: untracked });
    expect(noSend.status).toBe(400);
    expect(noSend.body).toEqual({ ok: false, error: "No sent email found for this lead in the campaign", message: "No sent email found for this lead in the campaign" });
    const refused = (error: string) => ({ ok: false, error, message: error });
    expect((await associate(k, { emailCampaignId: 999_999_999, leadMapId: pat, untrackedReplyId: untracked })).body).toEqual(refused("Campaign not found"));
    expect((await associate(k, { emailCampaignId: campaign, leadMapId: 999_999_999, untrackedReplyId: untracked })).body).toEqual(refused("Lead not found in campaign"));
    expect((await associate(k, { emailCampaignId: campaign, leadMapId: pat, untrackedReplyId: 999_999_999 })).body).toEqual(refused("Untracked reply not found"));

    const stranger = await provisionAccount();
    const strangerMailbox = await createMailbox(stranger.apiKey);
    const theirs = await untrackedReply(stranger, strangerMailbox);
    expect((await associate(k, { emailCampaignId: campaign, leadMapId: pat, untrackedReplyId: theirs })).body).toEqual(refused("Untracked reply not found"));
    expect((await associate(stranger.apiKey, { emailCampaignId: campaign, leadMapId: pat, untrackedReplyId: untracked })).body).toEqual(refused("Campaign not found"));
    // A client key sees neither the account's campaign nor the account's mailbox's untracked replies.
    const clientKey = await createClientKey(k, await createClient(k));
    expect((await associate(clientKey.api_key, { emailCampaignId: campaign, leadMapId: pat, untrackedReplyId: untracked })).status).toBe(404);
    const replies = await fileEnv().DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id IN (?, ?) AND type = 'REPLY'").bind(pat, quiet).first<{ n: number }>();
    expect(replies!.n).toBe(0);
    expect(await fileEnv().DB.prepare("SELECT id FROM untracked_replies WHERE id = ?").bind(untracked).first()).not.toBeNull();
  });

  it("answers bad input with 422", async () => {
    const { k } = await setting();
    for (const body of [{}, { emailCampaignId: 1, leadMapId: 1 }, { emailCampaignId: "x", leadMapId: 1, untrackedReplyId: 1 }, { emailCampaignId: 1, leadMapId: 1, untrackedReplyId: "1.5" }, { emailCampaignId: 1, leadMapId: -1, untrackedReplyId: 1 }]) {
      expect((await associate(k, body)).status, JSON.stringify(body)).toBe(422);
    }
  });
});
