import { describe, expect, inject, it, vi } from "vitest";
import { imapString } from "../../src/mail/imap-protocol";
import { withImapSession } from "../../src/mail/imap";
import { sendMail } from "../../src/mail/smtp";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { deliveryKinds, eventsOf as campaignEvents, messagesOf, personOf, recordEventId, recordRow, recordsOf, webhookDeliveries } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { addLeads, ingestOk } from "../campaigns/fixtures";
import { createWebhook } from "../webhooks/fixtures";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";

const lab = inject("mailLab");
const reader = inject("mailReader");
const bindings = fileEnv() as unknown as Bindings;
const MINUTE = 60_000;
const DAY = 86_400_000;
const account = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
const sender = account("sender3");
const [replier, vacationer, bouncer] = [account("lead3"), account("lead4"), account("lead5")];

/** Puts a raw message straight into a lab INBOX (a delivery report cannot be made to happen in the lab). */
async function append(user: { email: string; password: string }, raw: string) {
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: user.email, password: user.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      await session.command(["APPEND", imapString("INBOX"), { literal: new TextEncoder().encode(raw) }]);
      await session.logout();
    },
  );
  expect(result.ok, JSON.stringify(result)).toBe(true);
}

interface Sent {
  to_email: string;
  message_id: string;
  subject: string;
  campaign_lead_id: number;
}

function dsn(original: Sent): string {
  const boundary = "dsn-boundary";
  return [
    "From: Mail Delivery System <MAILER-DAEMON@mx.lab.salvo.test>",
    `To: ${sender.email}`,
    "Subject: Undelivered Mail Returned to Sender",
    "Date: " + new Date().toUTCString(),
    "Message-ID: <dsn-" + crypto.randomUUID() + "@mx.lab.salvo.test>",
    "Auto-Submitted: auto-replied",
    "MIME-Version: 1.0",
    `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain",
    "",
    "I'm sorry to have to inform you that your message could not be delivered.",
    "",
    `--${boundary}`,
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.lab.salvo.test",
    "",
    `Final-Recipient: rfc822; ${original.to_email}`,
    "Action: failed",
    "Status: 5.1.1",
    "Diagnostic-Code: smtp; 550 5.1.1 <" + original.to_email + ">: Recipient address rejected: User unknown",
    "",
    `--${boundary}`,
    "Content-Type: text/rfc822-headers",
    "",
    `From: ${sender.email}`,
    `To: ${original.to_email}`,
    `Subject: ${original.subject}`,
    `Message-ID: ${original.message_id}`,
    "",
    `--${boundary}--`,
    "",
  ].join("\r\n");
}

describe("the engine reads replies back from the lab", () => {
  it("records a reply (inbox, stop, webhook, analytics), an out-of-office answer and a bounce, each once", async () => {
    const owner = await provisionAccount();
    const apiKey = owner.apiKey;
    const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
    expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true, is_imap_success: true });
    const t0 = Math.ceil((Date.now() + 2 * DAY) / DAY) * DAY + 9 * 60 * MINUTE;

    const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Replies" } });
    const campaignId = created.id;
    await callJson(`/api/v1/campaigns/${campaignId}/sequences`, {
      method: "POST",
      apiKey,
      body: {
        sequences: [
          { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Question for {{first_name}}", email_body: "<p>Hi {{first_name}}, a question.</p>" },
          { seq_number: 2, seq_delay_details: { delay_in_days: 1 }, subject: "", email_body: "<p>Following up.</p>" },
        ],
      },
    });
    await callJson(`/api/v1/campaigns/${campaignId}/schedule`, {
      method: "POST",
      apiKey,
      body: { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, schedule_start_time: new Date(t0).toISOString() },
    });
    await callJson(`/api/v1/campaigns/${campaignId}/settings`, {
      method: "POST",
      apiKey,
      body: { out_of_office_detection_settings: { ignoreOOOasReply: true, autoCategorizeOOO: true } },
    });
    await callJson(`/api/v1/campaigns/${campaignId}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: [replier, vacationer, bouncer].map((lead, i) => ({ email: lead.email, first_name: ["Rita", "Vic", "Bo"][i] })) },
    });
    await callJson(`/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
    const hook = await createWebhook(apiKey, campaignId, { event_types: ["EMAIL_REPLY", "EMAIL_BOUNCE"] });
    await callJson(`/api/v1/campaigns/${campaignId}/status`, { method: "POST", apiKey, body: { status: "START" } });

    const stub = senderStub(bindings, mailboxId);
    for (let minute = 0; minute < 3; minute += 1) expect((await stub.runPass(t0 + minute * MINUTE, { read: false })).sent).toBe(1);
    const sent = (
      await messagesOf(campaignId)
    ).map((m) => ({ to_email: m.toEmail!, message_id: m.messageId, subject: m.subject!, campaign_lead_id: m.campaignLeadId }));
    const to = (lead: { email: string }) => sent.find((m) => m.to_email === lead.email)!;

    // A lead answers from its own mailbox, through the lab's SMTP, quoting our email.
    const reply = await sendMail(
      { host: lab.smtp.host, port: lab.smtp.port, security: "starttls", username: replier.email, password: replier.password },
      {
        from: replier.email,
        to: sender.email,
        subject: `Re: ${to(replier).subject}`,
        text: `Yes, let's talk on Monday.\n\nOn Mon, 3 Mar 2031 at 09:00, Sam <${sender.email}> wrote:\n> Hi Rita, a question.`,
        // Copying a colleague (named in the header only): the inbox and the webhook show who else saw it.
        headers: { "In-Reply-To": to(replier).message_id, References: to(replier).message_id, Cc: "Rita's Boss <Boss@Lab.Salvo.test>" },
      },
      { allowPlain: false, outbound: LAB_HOSTS },
    );
    expect(reply.ok).toBe(true);
    await append(
      sender,
      [
        `From: ${vacationer.email}`,
        `To: ${sender.email}`,
        `Subject: Automatic reply: ${to(vacationer).subject}`,
        "Auto-Submitted: auto-replied",
        `In-Reply-To: ${to(vacationer).message_id}`,
        `Message-ID: <ooo-${crypto.randomUUID()}@lab.salvo.test>`,
        `Date: ${new Date().toUTCString()}`,
        "",
        "I am out of the office until Monday with limited access to email.",
        "",
      ].join("\r\n"),
    );
    await append(sender, dsn(to(bouncer)));

    const eventsOf = async () =>
      [...(await campaignEvents(campaignId, "REPLY")), ...(await campaignEvents(campaignId, "BOUNCE"))].map((e) => ({ type: e.type, body: e.body, is_ooo: e.isOoo, ignored: e.ignored, record: e.campaignLeadId }));
    await vi.waitFor(
      async () => {
        await stub.runRead(Date.now(), mailboxId);
        expect(await eventsOf()).toHaveLength(3);
      },
      { timeout: 20_000, interval: 500 },
    );
    const events = await eventsOf();
    expect(events.find((e) => e.record === to(replier).campaign_lead_id)).toMatchObject({ type: "REPLY", body: "Yes, let's talk on Monday.", is_ooo: false, ignored: false });
    expect(events.find((e) => e.record === to(vacationer).campaign_lead_id)).toMatchObject({ type: "REPLY", is_ooo: true, ignored: true });
    expect(events.find((e) => e.record === to(bouncer).campaign_lead_id)).toMatchObject({ type: "BOUNCE" });

    // Read again: nothing new is recorded.
    expect((await stub.runRead(Date.now(), mailboxId)).outcome).toMatchObject({ replies: 0, bounces: 0 });
    expect(await eventsOf()).toHaveLength(3);

    const states = (await recordsOf(campaignId)).map((r) => ({ id: r.id, state: r.state, category_id: r.categoryId, due_at: r.dueAt }));
    const stateOf = (lead: { email: string }) => states.find((s) => s.id === to(lead).campaign_lead_id)!;
    expect(stateOf(replier)).toMatchObject({ state: "COMPLETED", due_at: null });
    expect(stateOf(vacationer)).toMatchObject({ state: "INPROGRESS", category_id: 6 });
    expect(stateOf(bouncer)).toMatchObject({ state: "BLOCKED", due_at: null });

    // A day later only the out-of-office lead (ignored answer) gets the follow-up.
    await stub.runPass(t0 + DAY + 5 * MINUTE, { read: false });
    expect((await stub.runPass(t0 + DAY + 10 * MINUTE, { read: false })).sent).toBe(0);
    const followUps = (await messagesOf(campaignId)).filter((m) => m.step === 2);
    expect(followUps.map((m) => m.toEmail)).toEqual([vacationer.email]);

    const { body: inbox } = await callJson<{ messages: { lead: { email: string } }[] }>("/api/v1/master-inbox/inbox-replies", { method: "POST", apiKey, body: {} });
    expect(inbox.messages.map((m) => m.lead.email)).toContain(replier.email);
    const day = new Date().toISOString().slice(0, 10);
    const { body: stats } = await callJson<Record<string, string>>(`/api/v1/campaigns/${campaignId}/analytics-by-date?start_date=${day}&end_date=${new Date(t0 + DAY).toISOString().slice(0, 10)}`, { apiKey });
    expect(stats).toMatchObject({ reply_count: "1", bounce_count: "1" });
    // Answering from the inbox: threaded on the lead's reply, in the lead's mailbox, and in the thread. It is
    // named: by time the thread's newest message (the default) is the campaign email, sent on the test's clock.
    const leadReply = { id: await recordEventId(to(replier).campaign_lead_id, "REPLY"), messageId: reply.ok ? reply.messageId : "" };
    const answer = await callJson<{ ok: boolean; message_id: string; email_stats_id: string }>(`/api/v1/campaigns/${campaignId}/reply-email-thread`, {
      method: "POST",
      apiKey,
      body: { email_stats_id: String(leadReply.id), reply_message_id: leadReply.messageId, email_body: "<p>Monday at 10 works. Talk then!</p>", bcc: "archive@lab.salvo.test" },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, data: "success", message: "Email added to the queue, will be sent out soon!" });
    const arrived = await fetch(`${reader}/message?${new URLSearchParams({ user: replier.email, message_id: answer.body.message_id })}`);
    expect(arrived.status).toBe(200);
    const head = (await arrived.text()).split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, " ");
    expect(head).toContain(`In-Reply-To: ${reply.ok ? reply.messageId : ""}`);
    expect(head).toContain(`References: ${to(replier).message_id} ${reply.ok ? reply.messageId : ""}`);
    expect(head).toContain(`Subject: Re: Question for Rita`);
    expect(head).not.toMatch(/^Bcc:/im);
    const history = await callJson<{ history: { type: string; stats_id: string; cc: string | null; bcc: string | null }[] }>(
      `/api/v1/campaigns/${campaignId}/leads/${await personOf(to(replier).campaign_lead_id)}/message-history`,
      { apiKey },
    );
    // Ordered by time: the campaign email went out on the test's clock (days ahead), the rest on the real one.
    expect(history.body.history.map((m) => m.type).sort()).toEqual(["REPLY", "SENT", "SENT"]);
    expect(history.body.history.find((m) => m.stats_id === answer.body.email_stats_id)).toMatchObject({ type: "SENT", cc: null, bcc: "archive@lab.salvo.test" });
    expect(history.body.history.find((m) => m.type === "REPLY")).toMatchObject({ stats_id: String(leadReply.id), cc: "boss@lab.salvo.test" });
    const replyDelivery = (await webhookDeliveries(hook.id)).filter((d) => d.eventType === "EMAIL_REPLY");
    const replied = replyDelivery.map((d) => d.payload as { sl_lead_email: string; cc_emails: string[] });
    expect(replied.find((p) => p.sl_lead_email === replier.email)?.cc_emails).toEqual(["boss@lab.salvo.test"]);

    // A reply scheduled for later, with a file: the mailbox's object sends it on its first pass after that time.
    const realFetch = globalThis.fetch;
    const files = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname !== "files.lab.example") return realFetch(input, init);
      return new Response("agenda: pricing, onboarding", { headers: { "Content-Type": "text/plain" } });
    });
    const at = Date.now() + 2 * DAY;
    const scheduled = await callJson<{ message_id: string }>(`/api/v1/campaigns/${campaignId}/reply-email-thread`, {
      method: "POST",
      apiKey,
      body: {
        email_stats_id: leadReply.id,
        reply_message_id: leadReply.messageId,
        email_body: "<p>The agenda is attached.</p>",
        scheduled_time: new Date(at).toISOString(),
        attachments: [{ file_url: "https://files.lab.example/docs/agenda.txt" }],
      },
    });
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
    const replyStatus = () => callJson<{ data: { status: string; email_stats_id: string | null } }>(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(scheduled.body.message_id)}`, { apiKey });
    await stub.runPass(at - MINUTE, { read: false });
    expect((await replyStatus()).body.data).toMatchObject({ status: "SCHEDULED", email_stats_id: null });
    await stub.runPass(at + MINUTE, { read: false });
    files.mockRestore();
    const done = (await replyStatus()).body.data;
    expect(done).toMatchObject({ status: "COMPLETED", email_stats_id: expect.stringMatching(/^\d+$/) });
    const withFile = await fetch(`${reader}/message?${new URLSearchParams({ user: replier.email, message_id: scheduled.body.message_id })}`);
    expect(withFile.status).toBe(200);
    const raw = await withFile.text();
    expect(raw.replace(/\r?\n[ \t]+/g, " ")).toContain(`In-Reply-To: ${reply.ok ? reply.messageId : ""}`);
    expect(raw).toContain('Content-Disposition: attachment; filename="agenda.txt"');
    expect(raw).toContain(btoa("agenda: pricing, onboarding"));
    const history2 = await callJson<{ history: { stats_id: string; attachments: unknown[] }[] }>(
      `/api/v1/campaigns/${campaignId}/leads/${await personOf(to(replier).campaign_lead_id)}/message-history`,
      { apiKey },
    );
    expect(history2.body.history.find((m) => m.stats_id === done.email_stats_id)?.attachments).toEqual([
      { file_name: "agenda.txt", file_url: "https://files.lab.example/docs/agenda.txt", file_type: "text/plain", file_size: 27 },
    ]);

    const kinds = await deliveryKinds({ webhookId: hook.id });
    expect(kinds).toMatchObject({ EMAIL_BOUNCE: 1 });
    expect(kinds.EMAIL_REPLY).toBeGreaterThanOrEqual(1);
  });

  it("sends a reply in a thread the campaign has not written to yet, and leaves its record DRAFTED, its first step still to send (CONTRACT 12)", async () => {
    const { apiKey } = await provisionAccount();
    const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
    const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Not yet written" } });
    const campaignId = created.id;
    await callJson(`/api/v1/campaigns/${campaignId}/sequences`, {
      method: "POST",
      apiKey,
      body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "<p>Hello</p>" }] },
    });
    await callJson(`/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
    const record = (await addLeads(apiKey, campaignId, [replier.email]))[replier.email]!;
    // The thread opens with a colleague's note (a reply the rule ignores): the campaign has sent nothing.
    await ingestOk(apiKey, campaignId, [
      { type: "REPLY", lead_email: replier.email, from_email: "colleague@lab.salvo.test", email_account_id: mailboxId, occurred_at: new Date(Date.now() - DAY).toISOString(), message_id: `<note-${crypto.randomUUID()}@lab.salvo.test>`, body: "FYI" },
    ]);
    expect((await recordRow(record)).state).toBe("DRAFTED");

    const answer = await callJson<{ message_id: string }>(`/api/v1/campaigns/${campaignId}/reply-email-thread`, {
      method: "POST",
      apiKey,
      body: { email_stats_id: await recordEventId(record, "REPLY"), email_body: "<p>Hello from a person</p>" },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const arrived = await fetch(`${reader}/message?${new URLSearchParams({ user: replier.email, message_id: answer.body.message_id })}`);
    expect(arrived.status).toBe(200);
    expect(await campaignEvents(campaignId, "SENT")).toHaveLength(1);
    expect(await recordRow(record)).toMatchObject({ state: "DRAFTED", nextStep: 1 });
  });
});
