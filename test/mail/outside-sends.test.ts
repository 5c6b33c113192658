import { describe, expect, inject, it, vi } from "vitest";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, saveLabMailbox } from "./lab-mailboxes";
import { delivered, header, htmlOf } from "./lab-messages";

/**
 * CONTRACT 21.5 against the lab where mail is really delivered: a forward of a thread's message and a
 * one-off email go out from the mailbox's own object under the manual-send rule (block list and
 * opt-outs, the gap, counted in the day's sends), with no SENT event, and their progress shows in
 * reply-status; one the gap holds back waits in the object and goes when the gap ends.
 */

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const user = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
const [lead1, lead2, lead3, lead4] = [user("lead1"), user("lead2"), user("lead3"), user("lead4")];
const sender = user("sender8");

/** A campaign through the lab mailbox, with lead1's thread: our SENT and their REPLY (pushed in as events). */
async function world(mailbox: Record<string, unknown>) {
  const { apiKey } = await provisionAccount();
  const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, mailbox);
  expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
  const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Outside" } });
  const campaign = created.id;
  await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: [{ email: lead1.email, first_name: "Lab" }] } });
  await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
  // Hours ago, but inside today's UTC day: daily_sent_count counts our SENT.
  const todayStart = Date.now() - (Date.now() % 86_400_000);
  const sent = await callJson(`/api/v1/campaigns/${campaign}/events`, {
    method: "POST",
    apiKey,
    body: {
      events: [
        { type: "SENT", lead_email: lead1.email, occurred_at: new Date(Math.max(Date.now() - 7_200_000, todayStart)).toISOString(), email_account_id: mailboxId, message_id: "<first@lab.salvo.test>", subject: "Our pilot", body: "<p>Shall we run a pilot?</p>" },
        { type: "REPLY", lead_email: lead1.email, occurred_at: new Date(Math.max(Date.now() - 3_600_000, todayStart + 1000)).toISOString(), email_account_id: mailboxId, message_id: "<answer@lab.salvo.test>", subject: "Re: Our pilot", body: "Yes, call me on Tuesday." },
      ],
    },
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  const statsOf = async (type: string) =>
    (await fileEnv().DB.prepare("SELECT id FROM events WHERE campaign_id = ? AND type = ? ORDER BY id DESC LIMIT 1").bind(campaign, type).first<{ id: number }>())!.id;
  return { apiKey, campaign, mailboxId, replyStats: await statsOf("REPLY"), sentStats: await statsOf("SENT") };
}

const events = async (campaign: number) => (await fileEnv().DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_id = ?").bind(campaign).first<{ n: number }>())!.n;
const status = (apiKey: string, messageId: string) =>
  callJson<{ data: { status: string; scheduled_time: string | null; email_stats_id: string | null; status_message: string | null } }>(
    `/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(messageId)}`,
    { apiKey },
  );

describe("sending outside sequences in the lab", () => {
  it("forwards a reply with the thread beneath it, records no thread message, counts the send and answers reply-status", async () => {
    const { apiKey, campaign, mailboxId, replyStats } = await world({ max_email_per_day: 100, time_to_wait_in_mins: 0 });
    const before = await events(campaign);
    const forwarded = await callJson<{ ok: boolean; messageId: string; status: string }>(`/api/v1/campaigns/${campaign}/forward-email`, {
      method: "POST",
      apiKey,
      body: { stats_id: String(replyStats), to_emails: `${lead2.email}, ${lead3.email}`, forward_email_body: "Ann wants a call: yours?", message_id: "<answer@lab.salvo.test>" },
    });
    expect(forwarded.status, JSON.stringify(forwarded.body)).toBe(200);
    expect(forwarded.body).toEqual({ ok: true, messageId: expect.stringMatching(/^<[0-9a-f]{32}@lab\.salvo\.test>$/), status: "success" });

    const raw = await delivered(lead2.email, forwarded.body.messageId);
    expect(header(raw, "Subject")).toBe("Fwd: Our pilot");
    expect(header(raw, "To")).toContain(lead2.email);
    expect(header(raw, "Cc")).toBe(lead3.email);
    expect(header(raw, "In-Reply-To")).toBeNull();
    expect(header(raw, "List-Unsubscribe")).toBeNull();
    const html = htmlOf(raw);
    const order = ["Ann wants a call: yours?", "---------- Forwarded message ---------", `From: ${lead1.email}`, "Yes, call me on Tuesday.", "Shall we run a pilot?"].map((s) => html.indexOf(s));
    expect(order.every((at) => at >= 0), html).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    await delivered(lead3.email, forwarded.body.messageId);

    expect(await events(campaign)).toBe(before);
    expect((await status(apiKey, forwarded.body.messageId)).body.data).toMatchObject({ status: "COMPLETED", email_stats_id: null });
    const { body: read } = await callJson<{ daily_sent_count: number }>(`/api/v1/email-accounts/${mailboxId}`, { apiKey });
    // The campaign's SENT event of today and the forward.
    expect(read.daily_sent_count).toBe(2);

    // The alias with DL's names, answering the same.
    const again = await callJson<{ messageId: string }>("/api/v1/email-campaigns/forward-reply-email", {
      method: "POST",
      apiKey,
      body: { campaignId: campaign, emailStatsId: replyStats, forwardToEmailIds: [lead4.email], forwardEmailSubject: "Please handle" },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(header(await delivered(lead4.email, again.body.messageId), "Subject")).toBe("Please handle");
  });

  it("sends a one-off email with a file, refuses a block-listed recipient, and queues one the gap holds back until the object sends it", async () => {
    const { apiKey, mailboxId } = await world({ max_email_per_day: 100, time_to_wait_in_mins: 1 });
    const file = new TextEncoder().encode("quarterly figures\n");
    const sent = await callJson<{ data: { message: string; message_id: string; status: string } }>("/api/v1/send-email/initiate", {
      method: "POST",
      apiKey,
      body: {
        to: lead2.email,
        subject: "Notes from today",
        body: "Hi,\nthe notes are attached.",
        from_email: sender.email.toUpperCase(),
        fromName: "Pat from Lab",
        reply_to: lead3.email,
        attachments: [{ filename: "notes.txt", content: btoa(String.fromCharCode(...file)), mimeType: "text/plain" }],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toEqual({ success: true, ok: true, data: { message: "Email sent successfully", message_id: expect.stringMatching(/^<.+>$/), status: "SENT" } });
    const raw = await delivered(lead2.email, sent.body.data.message_id);
    expect(header(raw, "From")).toBe(`"Pat from Lab" <${sender.email}>`);
    expect(header(raw, "Reply-To")).toBe(lead3.email);
    expect(raw).toContain('filename="notes.txt"');
    expect(raw).toContain(btoa("quarterly figures\n"));
    expect(raw).not.toContain("text/html");

    await callJson("/api/v1/leads/add-domain-block-list", { method: "POST", apiKey, body: { domain_block_list: [lead4.email] } });
    expect(
      await callJson("/api/v1/send-email/initiate", { method: "POST", apiKey, body: { to: lead1.email, bcc: [lead4.email], subject: "x", body: "x", fromEmailId: mailboxId } }),
    ).toMatchObject({ status: 400, body: { error: `The recipient ${lead4.email} is on the block list` } });

    // The gap (1 minute) holds the next one back: queued, kept by the object, sent on its first pass after the gap.
    const held = await callJson<{ data: { message: string; message_id: string; status: string } }>("/api/v1/send-email/initiate", {
      method: "POST",
      apiKey,
      body: { to_email: lead1.email, subject: "Later", body: "<p>After the gap</p>", email_account_id: String(mailboxId) },
    });
    expect(held.body.data).toMatchObject({ message: "Email queued", status: "QUEUED" });
    const waiting = (await status(apiKey, held.body.data.message_id)).body.data;
    expect(waiting).toMatchObject({ status: "SCHEDULED", email_stats_id: null });
    const until = Date.parse(waiting.scheduled_time!);
    expect(until).toBeGreaterThan(Date.now() + 30_000);
    await senderStub(bindings, mailboxId).runPass(until - 5_000, { mailboxId, read: false });
    expect((await status(apiKey, held.body.data.message_id)).body.data.status).toBe("SCHEDULED");
    await senderStub(bindings, mailboxId).runPass(until + 1_000, { mailboxId, read: false });
    expect((await status(apiKey, held.body.data.message_id)).body.data.status).toBe("COMPLETED");
    const late = await vi.waitFor(() => delivered(lead1.email, held.body.data.message_id), { timeout: 15_000, interval: 250 });
    expect(header(late, "Subject")).toBe("Later");
    const { body: read } = await callJson<{ daily_sent_count: number }>(`/api/v1/email-accounts/${mailboxId}`, { apiKey });
    expect(read.daily_sent_count).toBe(3);
  });

  it("a one-off email its server refuses for now holds the mailbox: the next waits for the try instead of knocking, then goes, and the hold is over", async () => {
    // Any lab login may send as this address, which Postfix refuses at RCPT with a 421, as a provider's limit does.
    const { apiKey, mailboxId } = await world({ max_email_per_day: 100, time_to_wait_in_mins: 0, from_email: lab.limited_senders.throttled, user_name: sender.email });
    const oneOff = (subject: string) =>
      callJson<{ error?: string; data: { message: string; message_id: string; status: string } }>("/api/v1/send-email/initiate", {
        method: "POST",
        apiKey,
        body: { to: lead2.email, subject, body: "A note", fromEmailId: mailboxId },
      });
    const refused = await oneOff("First");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^421 4\.7\.0 .*too much mail/);
    type Read = { sending_status: { code: string; next_send_at: string | null; warnings: { code: string; message: string }[] } };
    const mailbox = async () => (await callJson<Read>(`/api/v1/email-accounts/${mailboxId}`, { apiKey })).body.sending_status;
    expect((await mailbox()).warnings.map((w) => w.code), "the owner is told, as after a campaign email").toContain("server_refusing");
    const heldUntil = (await fileEnv().DB.prepare("SELECT send_held_until AS until FROM email_accounts WHERE id = ?").bind(mailboxId).first<{ until: number }>())!.until;
    expect(heldUntil).toBeGreaterThan(Date.now() + 4 * 60_000);

    const queued = await oneOff("Second");
    expect(queued.body.data, "not sent into the refusal: queued for the try").toMatchObject({ message: "Email queued", status: "QUEUED" });
    const waiting = (await status(apiKey, queued.body.data.message_id)).body.data;
    expect(waiting).toMatchObject({ status: "SCHEDULED", scheduled_time: new Date(heldUntil).toISOString() });
    expect(waiting.status_message).toMatch(/refused its sending for now \(421 4\.7\.0 /);

    // The provider's limit lifts (here: the mailbox sends as itself again, written straight to its row, so the hold runs to its end).
    await fileEnv().DB.prepare("UPDATE email_accounts SET from_email = ? WHERE id = ?").bind(sender.email, mailboxId).run();
    await senderStub(bindings, mailboxId).runPass(heldUntil - 5_000, { mailboxId, read: false });
    expect((await status(apiKey, queued.body.data.message_id)).body.data.status, "nothing sent before the try").toBe("SCHEDULED");
    await senderStub(bindings, mailboxId).runPass(heldUntil + 1_000, { mailboxId, read: false });
    expect((await status(apiKey, queued.body.data.message_id)).body.data.status).toBe("COMPLETED");
    expect(header(await vi.waitFor(() => delivered(lead2.email, queued.body.data.message_id), { timeout: 15_000, interval: 250 }), "Subject")).toBe("Second");
    const after = await fileEnv().DB.prepare("SELECT send_held_until AS until, send_held_reason AS reason FROM email_accounts WHERE id = ?").bind(mailboxId).first();
    expect(after, "a send went: the hold is over").toEqual({ until: null, reason: null });
  });
});
