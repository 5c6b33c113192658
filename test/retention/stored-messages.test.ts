import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseMessage } from "../../src/mail/parsed";
import { BODY_REF } from "../../src/platform/bodies";
import { recordInbound } from "../../src/replies/inbound";
import { mailboxConnected, outboundReplyRow, recordEventId, setCampaignRecords } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { consumeDelivery, deliveriesOf, interceptReceiver, RECEIVER } from "../webhooks/fixtures";

const RECEIVED = Date.parse("2026-04-02T09:30:00.000Z");
const LONG_TEXT = Array.from({ length: 300 }, (_, i) => `Zeile ${i}: Grüße aus Köln — ça va? 你好 🎉`).join("\n");
const LONG_HTML = `<div>${Array.from({ length: 250 }, (_, i) => `<p>Absatz ${i}: naïve café 🚀 &amp; more</p>`).join("")}</div>`;

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

/** A stranger's long plain-text message, which answers none of our emails. */
async function strangerWrites(account: { id: number }, mailbox: { id: number; from_email: string }) {
  const raw = [
    "From: Pat Prospect <pat@prospect.example>",
    `To: ${mailbox.from_email}`,
    "Subject: A long letter",
    `Message-ID: <${crypto.randomUUID()}@prospect.example>`,
    "Date: Thu, 02 Apr 2026 09:30:00 +0000",
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: 8bit",
    "",
    LONG_TEXT,
  ].join("\r\n");
  const parsed = await parseMessage(raw);
  await recordInbound(fileEnv(), { id: mailbox.id, accountId: account.id, clientId: null, fromEmail: mailbox.from_email }, [parsed], RECEIVED);
  return parsed.text;
}

describe("untracked replies and replies written in the inbox keep large bodies in R2", () => {
  it("an untracked reply: a reference in D1 and in its UNTRACKED_REPLIES delivery; listed, sent and associated whole", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const mailbox = await createMailbox(k);
    const hook = (await callJson<{ id: number }>("/api/v1/webhook/create", { method: "POST", apiKey: k, body: { webhook_url: RECEIVER, association_type: "user", event_types: ["UNTRACKED_REPLIES", "EMAIL_REPLY"] } })).body.id;
    const text = await strangerWrites(account, mailbox);
    expect(text.length).toBeGreaterThan(4096);

    const row = await fileEnv().DB.prepare("SELECT id, text_body, html_body FROM untracked_replies WHERE email_account_id = ?").bind(mailbox.id).first<{ id: number; text_body: string; html_body: string | null }>();
    expect(row!.text_body.startsWith(BODY_REF)).toBe(true);
    expect(row!.html_body).toBeNull();

    const list = await callJson<{ data: { data: { replies: { id: number; body: string }[] } } }>("/api/v1/master-inbox/untracked-replies?fetchBody=true", { apiKey: k });
    const listed = list.body.data.data.replies.find((r) => r.id === row!.id)!;
    expect(listed.body).toBe(text);

    const [delivery] = await deliveriesOf(hook);
    expect(delivery!.payload).toContain(BODY_REF);
    await consumeDelivery(delivery!.id);
    const sent = JSON.parse(receiver.received.filter((r) => r.request.headers.get("webhook-id") === delivery!.message_id).at(-1)!.body) as { reply_body: string; preview_text: string };
    expect(sent.reply_body).toBe(text);
    expect(sent.preview_text.startsWith("Zeile 0: Grüße aus Köln")).toBe(true);

    // Associated to a lead, the reply's whole text becomes the thread's message.
    const campaign = await createCampaign(k);
    const ids = await addLeads(k, campaign, ["pat@prospect.example"]);
    await ingestOk(k, campaign, [{ type: "SENT", lead_email: "pat@prospect.example", occurred_at: "2026-04-01T09:00:00Z", email_account_id: mailbox.id }]);
    const associated = await callJson("/api/v1/master-inbox/untracked-replies/associate-to-lead", {
      method: "POST",
      apiKey: k,
      body: { emailCampaignId: campaign, leadMapId: ids["pat@prospect.example"], untrackedReplyId: String(row!.id) },
    });
    expect(associated.status).toBe(200);
    const conversation = await callJson<{ data: { email_history: { type: string; email_body: string }[] } }>(`/api/v1/master-inbox/${ids["pat@prospect.example"]}`, { apiKey: k });
    const reply = conversation.body.data.email_history.find((m) => m.type === "REPLY")!;
    expect(reply.email_body).toContain("Zeile 299: Grüße aus Köln — ça va? 你好 🎉");
    expect(reply.email_body).not.toContain(BODY_REF);
  });

  it("a reply scheduled from the inbox: a reference in D1, the scheduled view shows it whole", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    const map = await addLeads(k, campaign, ["t@reply.example"]);
    await ingestOk(k, campaign, [
      { type: "SENT", lead_email: "t@reply.example", occurred_at: "2026-03-01T10:00:00Z", message_id: "<s@x>" },
      { type: "REPLY", lead_email: "t@reply.example", occurred_at: "2026-03-02T10:00:00Z", message_id: "<r@t>", body: "Hi" },
    ]);
    const statsId = await recordEventId(map["t@reply.example"]!, "REPLY");
    const mailbox = await createMailbox(k);
    await mailboxConnected(mailbox.id, { imap: true });
    await setCampaignRecords(campaign, { emailAccountId: mailbox.id });
    const answer = await callJson<{ message_id: string }>(`/api/v1/campaigns/${campaign}/reply-email-thread`, {
      method: "POST",
      apiKey: k,
      body: { email_stats_id: statsId, email_body: LONG_HTML, scheduled_time: new Date(Date.now() + 86_400_000).toISOString() },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const stored = await outboundReplyRow(answer.body.message_id);
    expect(stored.html.startsWith(BODY_REF)).toBe(true);
    expect(await (await fileEnv().BODIES.get(stored.html.slice(BODY_REF.length)))!.text()).toBe(LONG_HTML);
    const view = await callJson<{ messages: { email_lead_map_id: number; scheduled_message: { email_body: string } }[] }>("/api/v1/master-inbox/scheduled", { method: "POST", apiKey: k, body: {} });
    expect(view.body.messages.find((m) => m.email_lead_map_id === map["t@reply.example"])!.scheduled_message.email_body).toBe(LONG_HTML);
  });
});
