import { describe, expect, it } from "vitest";
import { parseMessage } from "../../src/mail/parsed";
import { recordInbound } from "../../src/replies/inbound";
import { createCampaign } from "../campaigns/fixtures";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { createWebhook, deliveriesOf, RECEIVER } from "./fixtures";

const RECEIVED = Date.parse("2026-04-02T09:30:00.000Z");

function raw(to: string, subject: string): string {
  const headers = [
    "From: Pat Prospect <Pat@Prospect.example>",
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${crypto.randomUUID()}@prospect.example>`,
    "Date: Thu, 02 Apr 2026 09:30:00 +0000",
    "MIME-Version: 1.0",
    'Content-Type: text/plain; charset="utf-8"',
  ];
  return [...headers, "", "Hello, who is this? I never got an email from you."].join("\r\n");
}

const WITH_ATTACHMENT = (to: string) =>
  [
    "From: pat@prospect.example",
    `To: ${to}`,
    "Subject: Invoice",
    "Message-ID: <inv-1@prospect.example>",
    "Date: Thu, 02 Apr 2026 10:00:00 +0000",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b"',
    "",
    "--b",
    "Content-Type: text/html; charset=utf-8",
    "",
    "<p>See attached</p>",
    "--b",
    'Content-Type: text/plain; name="invoice.txt"',
    'Content-Disposition: attachment; filename="invoice.txt"',
    "",
    "12345",
    "--b--",
    "",
  ].join("\r\n");

async function hook(apiKey: string, body: Record<string, unknown>) {
  const { status, body: answer } = await callJson<{ id: number }>("/api/v1/webhook/create", {
    method: "POST",
    apiKey,
    body: { webhook_url: RECEIVER, force_create: true, ...body },
  });
  if (status !== 200) throw new Error(`webhook create failed: ${status} ${JSON.stringify(answer)}`);
  return answer.id;
}

type Listing = { ok: boolean; data: { success: boolean; message: string; data: { replies: Record<string, unknown>[]; total_count: number } } };

describe("untracked replies", () => {
  it("are kept, announced once to the user webhooks and the mailbox's client's, and listed", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const clientA = await createClient(k, "A", "a@u.example");
    const clientB = await createClient(k, "B", "b@u.example");
    const own = await createMailbox(k);
    const ofA = await createMailbox(k, { client_id: clientA });
    const campaign = await createCampaign(k, { client_id: clientA });
    const user = await hook(k, { association_type: "user", event_types: ["UNTRACKED_REPLIES"] });
    const forA = await hook(k, { association_type: "client", client_id: clientA, event_types: ["UNTRACKED_REPLIES"] });
    const forB = await hook(k, { association_type: "client", client_id: clientB, event_types: ["UNTRACKED_REPLIES"] });
    const otherKind = await hook(k, { association_type: "user", event_types: ["EMAIL_REPLY"] });
    const campaignScope = await createWebhook(k, campaign, { event_types: ["UNTRACKED_REPLIES"] });

    const message = await parseMessage(raw(ofA.from_email, "Who are you?"));
    const mailboxA = { id: ofA.id, accountId: account.id, clientId: clientA, fromEmail: ofA.from_email };
    const outcome = await recordInbound(fileEnv(), mailboxA, [message], RECEIVED + 60_000);
    expect(outcome).toMatchObject({ replies: 0, bounces: 0, untracked: 1 });
    // Read again (a repeated pass): kept and announced once.
    await recordInbound(fileEnv(), mailboxA, [message], RECEIVED + 120_000);

    for (const id of [user, forA]) {
      const deliveries = await deliveriesOf(id);
      expect(deliveries.map((d) => d.event_type)).toEqual(["UNTRACKED_REPLIES"]);
      expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({
        event_type: "UNTRACKED_REPLIES",
        email_account_id: ofA.id,
        from_email: "pat@prospect.example",
        to_email: ofA.from_email,
        subject: "Who are you?",
        message_id: message.messageId,
        time_replied: "2026-04-02T09:30:00.000Z",
        preview_text: "Hello, who is this? I never got an email from you.",
        campaign_id: null,
        campaign_name: null,
        sl_email_lead_map_id: null,
        client_id: clientA,
      });
    }
    for (const id of [forB, otherKind, campaignScope.id]) expect(await deliveriesOf(id)).toEqual([]);

    await recordInbound(fileEnv(), { id: own.id, accountId: account.id, clientId: null, fromEmail: own.from_email }, [await parseMessage(WITH_ATTACHMENT(own.from_email))], RECEIVED + 3_600_000);
    expect((await deliveriesOf(user)).map((d) => JSON.parse(d.payload).subject)).toEqual(["Who are you?", "Invoice"]);
    expect(await deliveriesOf(forA)).toHaveLength(1);

    const listed = await callJson<Listing>("/api/v1/master-inbox/untracked-replies", { apiKey: k });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      ok: true,
      data: {
        success: true,
        message: "Untracked replies fetched",
        data: {
          replies: [
            { id: expect.any(Number), email_account_id: own.id, from_email: "pat@prospect.example", to_email: own.from_email, subject: "Invoice", received_at: "2026-04-02T10:00:00.000Z", has_attachments: true },
            { id: expect.any(Number), email_account_id: ofA.id, from_email: "pat@prospect.example", to_email: ofA.from_email, subject: "Who are you?", received_at: "2026-04-02T09:30:00.000Z", has_attachments: false },
          ],
          total_count: 2,
        },
      },
    });
    const full = await callJson<Listing>("/api/v1/master-inbox/untracked-replies/?fetchBody=true&fetchAttachments=1&subject_line=voic&limit=1", { apiKey: k });
    expect(full.body.data.data).toEqual({
      replies: [expect.objectContaining({ subject: "Invoice", body: expect.stringMatching(/^<p>See attached<\/p>\s*$/), attachments: [{ filename: "invoice.txt", content_type: "text/plain", size: expect.any(Number) }] })],
      total_count: 1,
    });
    const byMailbox = await callJson<Listing>(`/api/v1/master-inbox/untracked-replies?to_email=${encodeURIComponent(ofA.from_email)}&from_email=PAT@prospect.example`, { apiKey: k });
    expect(byMailbox.body.data.data.replies.map((r) => r.subject)).toEqual(["Who are you?"]);
    expect((await callJson<Listing>("/api/v1/master-inbox/untracked-replies?offset=1", { apiKey: k })).body.data.data).toMatchObject({ total_count: 2, replies: [expect.objectContaining({ subject: "Who are you?" })] });
    expect((await callJson("/api/v1/master-inbox/untracked-replies?limit=101", { apiKey: k })).status).toBe(422);

    // A client key sees its client's mailboxes' replies only; another account sees none.
    const keyA = (await createClientKey(k, clientA)).api_key;
    expect((await callJson<Listing>("/api/v1/master-inbox/untracked-replies", { apiKey: keyA })).body.data.data.replies.map((r) => r.subject)).toEqual(["Who are you?"]);
    const stranger = await provisionAccount();
    expect((await callJson<Listing>("/api/v1/master-inbox/untracked-replies", { apiKey: stranger.apiKey })).body.data.data).toEqual({ replies: [], total_count: 0 });
  });

  it("keeps no stray bounce as a reply", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const bounce = await parseMessage(
      [
        "From: MAILER-DAEMON@mx.example",
        `To: ${mailbox.from_email}`,
        "Subject: Undelivered Mail Returned to Sender",
        "Message-ID: <b-1@mx.example>",
        "MIME-Version: 1.0",
        'Content-Type: multipart/report; report-type=delivery-status; boundary="r"',
        "",
        "--r",
        "Content-Type: text/plain",
        "",
        "Delivery failed.",
        "--r",
        "Content-Type: message/delivery-status",
        "",
        "Reporting-MTA: dns; mx.example",
        "",
        "Final-Recipient: rfc822; gone@nowhere.example",
        "Action: failed",
        "Status: 5.1.1",
        "",
        "--r--",
        "",
      ].join("\r\n"),
    );
    const outcome = await recordInbound(fileEnv(), { id: mailbox.id, accountId: account.id, clientId: null, fromEmail: mailbox.from_email }, [bounce], RECEIVED);
    expect(outcome.untracked).toBe(1);
    expect((await callJson<Listing>("/api/v1/master-inbox/untracked-replies", { apiKey: account.apiKey })).body.data.data.total_count).toBe(0);
  });
});
