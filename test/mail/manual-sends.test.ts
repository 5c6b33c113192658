import { describe, expect, inject, it, vi } from "vitest";
import { withImapSession } from "../../src/mail/imap";
import { imapString } from "../../src/mail/imap-protocol";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { campaignPeople, eventsOf, recordsOf } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";
import { delivered, header, smtpSessionsCarrying } from "./lab-messages";

/**
 * Issue 23, "block list and caps bypassed outside campaigns", against the lab where mail is really
 * delivered: a mailbox capped at 2 a day once made 49 deliveries through test emails and inbox
 * replies. Now every manual send goes through the mailbox's object and one rule: at most 10
 * recipients, repeats collapsed, no block-listed or opted-out address anywhere, the mailbox's gap,
 * and as many manual deliveries a day as its cap (a person's reply is never refused because campaign
 * mail spent the cap).
 */

const lab = inject("mailLab");
const reader = inject("mailReader");
const bindings = fileEnv() as unknown as Bindings;
const user = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
const [lead1, lead2, lead3, lead4, lead5] = [user("lead1"), user("lead2"), user("lead3"), user("lead4"), user("lead5")];

/** How many messages in `who`'s INBOX carry `marker` in their body. */
async function arrivals(who: { email: string; password: string }, marker: string): Promise<number> {
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: who.email, password: who.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      await session.select("INBOX", { readOnly: true });
      const { untagged } = await session.command(["SEARCH", "BODY", imapString(marker)]);
      await session.logout();
      const hits = untagged.find((r) => r.text.startsWith("SEARCH"))?.text.slice("SEARCH".length).trim() ?? "";
      return hits === "" ? 0 : hits.split(/\s+/).length;
    },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.failure));
  return result.value;
}

/**
 * A campaign of one step (its body carries `marker`) through a lab mailbox, and its threads (SENT
 * events of today, pinning the record). With `password`, the mailbox is saved with that one instead
 * of its own, as if it changed on the server after a check that passed.
 */
async function world(local: string, marker: string, mailbox: Record<string, unknown>, password?: string) {
  const { apiKey } = await provisionAccount();
  const sender = user(local);
  const mailboxId = await saveLabMailbox(apiKey, sender.email, password ?? sender.password, mailbox);
  expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: password === undefined });
  if (password !== undefined) {
    await fileEnv()
      .DB.prepare("UPDATE email_accounts SET is_smtp_success = 1, smtp_failure_error = NULL, disconnect_code = NULL, disconnect_message = NULL, disconnected_at = NULL WHERE id = ?")
      .bind(mailboxId)
      .run();
  }
  const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Manual" } });
  const campaign = created.id;
  await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hello {{first_name}}", email_body: `<p>Hi {{first_name}}, ${marker}</p>` }] },
  });
  await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: [lead1, lead2, lead5].map((l) => ({ email: l.email, first_name: "Lab" })) } });
  await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
  const stats = async (lead: { email: string }, n: number) => {
    // Minutes ago, but inside today's UTC day (the cap and daily_sent_count count that day).
    const at = new Date(Math.max(Date.now() - 60_000 * (10 - n), Date.now() - (Date.now() % 86_400_000) + n)).toISOString();
    const sent = await callJson(`/api/v1/campaigns/${campaign}/events`, {
      method: "POST",
      apiKey,
      body: { events: [{ type: "SENT", lead_email: lead.email, occurred_at: at, email_account_id: mailboxId, message_id: `<camp-${crypto.randomUUID()}@lab.salvo.test>`, subject: "Hello Lab" }] },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [records, people] = [await recordsOf(campaign), await campaignPeople(campaign)];
    const recordId = records[people.findIndex((person) => person.email === lead.email)]!.id;
    return (await eventsOf(campaign, "SENT")).filter((event) => event.campaignLeadId === recordId).at(-1)!.id;
  };
  const { body: found } = await callJson<{ id: number }>(`/api/v1/leads?email=${encodeURIComponent(lead1.email)}`, { apiKey });
  return { apiKey, campaign, mailboxId, stats, lead1Id: found.id };
}

const replyStatus = (apiKey: string, messageId: string) =>
  callJson<{ data: { status: string; status_message: string | null } }>(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(messageId)}`, { apiKey });
const reply = (apiKey: string, campaign: number, body: Record<string, unknown>) =>
  callJson<{ error?: string; message_id: string; email_stats_id: string }>(`/api/v1/campaigns/${campaign}/reply-email-thread`, { method: "POST", apiKey, body });
const testEmail = (apiKey: string, campaign: number, body: Record<string, unknown>) =>
  callJson<{ error?: string; message_id: string }>(`/api/v1/campaigns/${campaign}/send-test-email`, { method: "POST", apiKey, body });

/** Replies on these threads, scheduled for `at`: their Message-IDs. */
async function scheduleReplies(apiKey: string, campaign: number, threads: number[], marker: string, at: number): Promise<string[]> {
  const scheduled: string[] = [];
  for (const thread of threads) {
    const queued = await reply(apiKey, campaign, { email_stats_id: thread, email_body: `<p>${marker}</p>`, scheduled_time: new Date(at).toISOString() });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    scheduled.push(queued.body.message_id);
  }
  return scheduled;
}

describe("manual sends in the lab", () => {
  it("a mailbox capped at 2 makes at most 2 manual deliveries a day, and a reply still goes when campaign mail spent the cap", async () => {
    const marker = `cap-${crypto.randomUUID()}`;
    const { apiKey, campaign, mailboxId, stats, lead1Id } = await world("sender5", marker, { max_email_per_day: 2, time_to_wait_in_mins: 0 });
    // The campaign's two emails of the day: its cap is spent.
    const thread = await stats(lead1, 1);
    await stats(lead2, 2);
    const body = `<p>${marker}</p>`;

    // The 41 recipients in one reply: refused whole.
    const many = Array.from({ length: 20 }, (_, i) => `p${i}@lab.salvo.test`);
    expect(await reply(apiKey, campaign, { email_stats_id: thread, email_body: body, cc: many, bcc: many.map((a) => a.replace("p", "q")) })).toMatchObject({
      status: 400,
      body: { error: "A manual email may go to at most 10 recipients (to, cc and bcc together); this one has 41" },
    });
    const first = await testEmail(apiKey, campaign, { leadId: lead1Id, sequenceNumber: 1, customEmailAddress: lead2.email });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const answered = await reply(apiKey, campaign, { email_stats_id: thread, email_body: body });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    await delivered(lead1.email, answered.body.message_id);
    await delivered(lead2.email, first.body.message_id);

    // The allowance (2 a day, one per recipient) is spent: replies and test emails are refused, whoever they go to.
    const spent = expect.stringMatching(/^The mailbox has made 2 of its 2 manual deliveries for today \(UTC, one per recipient\); this email needs [12]:/);
    expect(await reply(apiKey, campaign, { email_stats_id: thread, email_body: body, cc: lead3.email })).toMatchObject({ status: 400, body: { error: spent } });
    expect(await reply(apiKey, campaign, { email_stats_id: thread, email_body: body })).toMatchObject({ status: 400, body: { error: spent } });
    for (let i = 0; i < 3; i += 1) {
      expect(await testEmail(apiKey, campaign, { leadId: lead1Id, sequenceNumber: 1, customEmailAddress: lead4.email })).toMatchObject({ status: 400, body: { error: spent } });
    }
    // Two campaign emails, one test email, one reply: what the mailbox answers, one email each.
    const { body: read } = await callJson<{ daily_sent_count: number }>(`/api/v1/email-accounts/${mailboxId}`, { apiKey });
    expect(read.daily_sent_count).toBe(4);

    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const counts = await Promise.all([lead1, lead2, lead3, lead4, lead5].map((who) => arrivals(who, marker)));
    expect(counts).toEqual([1, 1, 0, 0, 0]);
  });

  it("reaches no block-listed or opted-out address in to, cc or bcc, and sends each recipient one copy", async () => {
    const marker = `block-${crypto.randomUUID()}`;
    const { apiKey, campaign, stats } = await world("sender6", marker, { max_email_per_day: 100, time_to_wait_in_mins: 0 });
    const thread = await stats(lead1, 1);
    await callJson("/api/v1/leads/add-domain-block-list", { method: "POST", apiKey, body: { domain_block_list: [lead4.email] } });
    const { body: gone } = await callJson<{ id: number }>(`/api/v1/leads?email=${encodeURIComponent(lead5.email)}`, { apiKey });
    expect((await callJson(`/api/v1/leads/${gone.id}/unsubscribe`, { method: "POST", apiKey })).status).toBe(200);
    const body = `<p>${marker}</p>`;

    expect(await reply(apiKey, campaign, { email_stats_id: thread, email_body: body, cc: [lead2.email, lead4.email.toUpperCase()] })).toMatchObject({
      status: 400,
      body: { error: `The recipient ${lead4.email} is on the block list` },
    });
    expect(await reply(apiKey, campaign, { email_stats_id: thread, email_body: body, bcc: lead5.email })).toMatchObject({
      status: 400,
      body: { error: `The recipient ${lead5.email} has unsubscribed or bounced` },
    });
    const ok = await reply(apiKey, campaign, { email_stats_id: thread, email_body: body, cc: [lead1.email.toUpperCase(), lead2.email], bcc: [lead2.email, lead1.email] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const raw = await delivered(lead2.email, ok.body.message_id);
    expect(header(raw, "Cc")).toBe(lead2.email);
    expect(header(raw, "To")).toContain(lead1.email);
    await delivered(lead1.email, ok.body.message_id);

    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const counts = await Promise.all([lead1, lead2, lead3, lead4, lead5].map((who) => arrivals(who, marker)));
    expect(counts).toEqual([1, 1, 0, 0, 0]);
  });

  it("keeps the mailbox's gap: a test email waits for it, a reply is sent by the mailbox's object when it ends", async () => {
    const marker = `gap-${crypto.randomUUID()}`;
    const { apiKey, campaign, mailboxId, stats, lead1Id } = await world("sender7", marker, { max_email_per_day: 100, time_to_wait_in_mins: 1 });
    const thread = await stats(lead1, 1);
    const first = await testEmail(apiKey, campaign, { leadId: lead1Id, sequenceNumber: 1, customEmailAddress: lead3.email });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await testEmail(apiKey, campaign, { leadId: lead1Id, sequenceNumber: 1, customEmailAddress: lead3.email });
    expect(second).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^The mailbox waits 1 minute between sends: it may send again at /) } });
    const until = Date.parse(second.body.error!.split(" at ")[1]!);
    expect(until).toBeGreaterThan(Date.now() + 30_000);

    const queued = await reply(apiKey, campaign, { email_stats_id: thread, email_body: `<p>${marker}</p>` });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const status = () => callJson<{ data: { status: string; scheduled_time: string | null } }>(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(queued.body.message_id)}`, { apiKey });
    expect((await status()).body.data).toMatchObject({ status: "SCHEDULED", scheduled_time: new Date(until).toISOString() });
    // The object's pass before the gap's end leaves it; the first after it sends it.
    await senderStub(bindings, mailboxId).runPass(until - 5_000, { mailboxId, read: false });
    expect((await status()).body.data.status).toBe("SCHEDULED");
    await senderStub(bindings, mailboxId).runPass(until + 1_000, { mailboxId, read: false });
    expect((await status()).body.data.status).toBe("COMPLETED");
    await vi.waitFor(() => delivered(lead1.email, queued.body.message_id), { timeout: 15_000, interval: 250 });
  });

  it("a pass's scheduled replies go on one SMTP session", { timeout: 60_000 }, async () => {
    const marker = `session-${crypto.randomUUID()}`;
    const { apiKey, campaign, mailboxId, stats } = await world("sender10", marker, { max_email_per_day: 100, time_to_wait_in_mins: 0 });
    const at = Date.now() + 3_600_000;
    const scheduled = await scheduleReplies(apiKey, campaign, [await stats(lead1, 1), await stats(lead2, 2)], marker, at);
    await senderStub(bindings, mailboxId).runPass(at + 1_000, { mailboxId, read: false });
    for (const messageId of scheduled) expect((await replyStatus(apiKey, messageId)).body.data.status).toBe("COMPLETED");
    await delivered(lead1.email, scheduled[0]!);
    await delivered(lead2.email, scheduled[1]!);
    const sessions = await smtpSessionsCarrying(scheduled);
    expect(sessions, "both replies on one session").toHaveLength(1);
    expect(sessions[0]).toMatch(/ mail=2 rcpt=2 data=2 /);
  });

  it("a pass whose server refuses the mailbox's login tries it once: its other scheduled replies fail with the same words", { timeout: 60_000 }, async () => {
    // A lab login no other test refuses, so its refusals in Dovecot's log are this test's.
    const login = "bench-seed-gmx";
    const refusals = async () => ((await (await fetch(`${reader}/log?name=dovecot`)).text()).match(/plain\(bench-seed-gmx@lab\.salvo\.test,[^)]*\): Password mismatch/g) ?? []).length;
    const marker = `refused-${crypto.randomUUID()}`;
    const { apiKey, campaign, mailboxId, stats } = await world(login, marker, { max_email_per_day: 100, time_to_wait_in_mins: 0, imap_password: user(login).password }, "not-the-password");
    const at = Date.now() + 3_600_000;
    const scheduled = await scheduleReplies(apiKey, campaign, [await stats(lead1, 1), await stats(lead2, 2)], marker, at);
    // Any pass the save's wake started is over (one at a time in the object) before the count.
    await senderStub(bindings, mailboxId).runPass(at - 60_000, { mailboxId, read: false });
    const before = await refusals();
    await senderStub(bindings, mailboxId).runPass(at + 1_000, { mailboxId, read: false });
    for (const messageId of scheduled) {
      expect((await replyStatus(apiKey, messageId)).body.data).toMatchObject({ status: "FAILED", status_message: expect.stringMatching(/^The mail server did not take the reply: 535 /) });
    }
    await vi.waitFor(async () => expect(await refusals()).toBeGreaterThan(before), { timeout: 10_000, interval: 200 });
    expect(await refusals(), "one refused login for the pass's two replies").toBe(before + 1);
  });

  it("a scheduled reply a greylisting server refuses for now is tried again after a wait, its mailbox not held, and fails once a day has gone by", { timeout: 60_000 }, async () => {
    const marker = `greylisted-${crypto.randomUUID()}`;
    const { apiKey, campaign, mailboxId, stats } = await world("sender9", marker, { max_email_per_day: 100, time_to_wait_in_mins: 0 });
    const greylisting = { email: lab.limited_recipients.greylisting };
    expect((await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: [greylisting] } })).status).toBe(200);
    const at = Date.now() + 3_600_000;
    const [messageId] = await scheduleReplies(apiKey, campaign, [await stats(greylisting, 3)], marker, at);
    const status = async () => (await replyStatus(apiKey, messageId!)).body.data as { status: string; status_message: string | null; scheduled_time: string | null };

    await senderStub(bindings, mailboxId).runPass(at + 1_000, { mailboxId, read: false });
    const waiting = await status();
    expect(waiting).toMatchObject({ status: "SCHEDULED", scheduled_time: new Date(at + 1_000 + 5 * 60_000).toISOString() });
    expect(waiting.status_message).toMatch(/^The mail server did not take the reply: 450 4\.2\.0 .*Greylisted.* \(tried again at /);
    const held = await fileEnv().DB.prepare("SELECT send_held_until AS until FROM email_accounts WHERE id = ?").bind(mailboxId).first<{ until: number | null }>();
    expect(held!.until, "the recipient's refusal holds no mailbox").toBeNull();

    // Still refused a day after it first came due: it fails.
    await senderStub(bindings, mailboxId).runPass(at + 25 * 3_600_000, { mailboxId, read: false });
    expect(await status()).toMatchObject({ status: "FAILED", status_message: expect.stringMatching(/^The mail server did not take the reply: 450 4\.2\.0 /) });
  });
});
