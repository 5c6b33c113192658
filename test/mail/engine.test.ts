import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it, vi } from "vitest";
import { SendJournal, type Opened } from "../../src/engine/journal";
import type { MailboxSender } from "../../src/mailbox-agent/mailbox.do";
import { claimRecords } from "../../src/engine/store";
import { openMessage } from "../engine/open-message";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { asc, eq } from "drizzle-orm";
import { campaignPeople, campaignRow, deliveryKinds, eventCount, recordRow, recordsOf, schema, setMailbox, testDb } from "../db";
import { call, callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, saveLabMailbox, type CheckedMailbox as MailboxRead } from "./lab-mailboxes";
import { delivered, header, htmlOf } from "./lab-messages";

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const leads = lab.mailboxes.filter((m) => m.role === "lead").slice(0, 3);
const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * A campaign whose window is open all day, every day, but which starts two days from now: the
 * sender's own alarms (real time) find nothing to do, and the test drives passes on its own clock.
 */
/** 9:00 UTC at least two days ahead: a campaign start that no pass on the real clock reaches. */
function startAhead(): number {
  return Math.ceil((Date.now() + 2 * DAY) / DAY) * DAY + 9 * 60 * MINUTE;
}

/** A new account with the lab's sender `local` saved (no gap, and `extra`) and its check passed. */
async function checkedSender(local: string, extra: Record<string, unknown> = {}) {
  const account = await provisionAccount();
  const sender = lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
  const mailboxId = await saveLabMailbox(account.apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0, ...extra });
  expect(await checked(account.apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
  return { account, sender, mailboxId };
}

async function campaignWithSequence(apiKey: string, mailboxId: number, startAt: number, options: { leadEmails?: string[]; maxNewLeadsPerDay?: number } = {}) {
  const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Lab run" } });
  const id = created.id;
  const steps = [
    {
      seq_number: 1,
      seq_delay_details: { delay_in_days: 0 },
      subject: "{Hello|Hi} {{first_name}}",
      email_body: '<p>Hi {{first_name}},</p><p>See <a href="https://example.com/offer?x=1">our offer</a>.</p>',
    },
    { seq_number: 2, seq_delay_details: { delay_in_days: 1 }, subject: "", email_body: "<p>Following up, {{first_name}}.</p>" },
    { seq_number: 3, seq_delay_details: { delay_in_days: 2 }, subject: "Last note", email_body: "Plain words for {{first_name | there}}." },
  ];
  const sequences = await callJson(`/api/v1/campaigns/${id}/sequences`, { method: "POST", apiKey, body: { sequences: steps } });
  expect(sequences.status, JSON.stringify(sequences.body)).toBe(200);
  const schedule = await callJson(`/api/v1/campaigns/${id}/schedule`, {
    method: "POST",
    apiKey,
    body: {
      timezone: "UTC",
      days_of_the_week: [0, 1, 2, 3, 4, 5, 6],
      start_hour: "00:00",
      end_hour: "23:59",
      min_time_btw_emails: 1,
      max_new_leads_per_day: options.maxNewLeadsPerDay ?? 100,
      schedule_start_time: new Date(startAt).toISOString(),
    },
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(200);
  await callJson(`/api/v1/campaigns/${id}/settings`, { method: "POST", apiKey, body: { unsubscribe_text: "Stop these emails" } });
  const upload = await callJson(`/api/v1/campaigns/${id}/leads`, {
    method: "POST",
    apiKey,
    body: { lead_list: (options.leadEmails ?? leads.map((lead) => lead.email)).map((email, index) => ({ email, first_name: `Lead${index + 1}` })) },
  });
  expect(upload.status, JSON.stringify(upload.body)).toBe(200);
  await callJson(`/api/v1/campaigns/${id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
  await callJson(`/api/v1/campaigns/${id}/webhooks`, {
    method: "POST",
    apiKey,
    body: {
      name: "All",
      webhook_url: "https://hooks.example.com/salvo",
      event_types: ["EMAIL_SENT", "FIRST_EMAIL_SENT", "EMAIL_LINK_CLICK", "LEAD_UNSUBSCRIBED"],
    },
  });
  const started = await callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey, body: { status: "START" } });
  expect(started.status).toBe(200);
  return id;
}

/** SMTP logins of a lab sender so far: Postfix's submission logins through Dovecot are logged without a session id (IMAP's carry one). */
async function smtpLogins(local: string): Promise<number> {
  const log = await (await fetch(`${inject("mailReader")}/log?name=dovecot`)).text();
  return (log.match(new RegExp(`\\(${local}@lab\\.salvo\\.test,127\\.0\\.0\\.1\\): Finished passdb lookup`, "g")) ?? []).length;
}

/**
 * Leaves a mailbox's object idle until `t0`, for a test that then acts on its claims or journal
 * itself: no pass on the real clock may run beside it. START woke the object, and that alarm may
 * arrive while a pass of ours runs, to run right after it; and a pass's end arms the alarm at once
 * when a read of the inbox is due. So the alarm is deleted (none arrives after), and a pass of ours,
 * which waits for one that already arrived, reads the inbox at its own clock: the next read, and the
 * alarm its end sets, come after `t0`.
 */
async function idle(stub: DurableObjectStub<MailboxSender>, t0: number) {
  await runInDurableObject(stub, (_: MailboxSender, state: DurableObjectState) => state.storage.deleteAlarm());
  await stub.runPass(t0 - MINUTE);
}

/** The API's least gap is a minute (one email per pass); stored as none, as the engine benchmark does. */
async function withoutGap(campaignId: number) {
  await fileEnv().DB.prepare("UPDATE campaigns SET schedule = json_set(schedule, '$.min_time_btw_emails', 0) WHERE id = ?").bind(campaignId).run();
}

/** A campaign's messages by step and address, under the column names the tests read. */
async function messagesOf(campaignId: number) {
  const t = schema.messages;
  const rows = await testDb()
    .select({ id: t.id, campaign_lead_id: t.campaignLeadId, step: t.step, message_id: t.messageId, status: t.status, to_email: t.toEmail, subject: t.subject })
    .from(t)
    .where(eq(t.campaignId, campaignId))
    .orderBy(asc(t.step), asc(t.toEmail))
    .all();
  // The engine writes each message with its recipient.
  return rows.map((row) => ({ ...row, to_email: row.to_email! }));
}

describe("the engine sends a campaign into the lab", () => {
  it("delivers a three-step sequence in order, threaded, stopping an unsubscribed lead, with analytics and webhooks", async () => {
    const { account, sender, mailboxId } = await checkedSender("sender1");
    const t0 = startAhead();
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0);
    const stub = senderStub(bindings, mailboxId);

    // The real-time wake found the campaign not started yet: nothing went out.
    expect(await messagesOf(campaignId)).toEqual([]);

    // One lead a minute (the campaign's gap), then nothing more that day.
    expect(await stub.runPass(t0)).toMatchObject({ sent: 1, nextWakeAt: t0 + MINUTE });
    expect((await stub.runPass(t0 + 30_000)).sent).toBe(0);
    expect((await stub.runPass(t0 + MINUTE)).sent).toBe(1);
    expect((await stub.runPass(t0 + 2 * MINUTE)).sent).toBe(1);
    const firsts = await messagesOf(campaignId);
    expect(firsts.map((m) => [m.step, m.status])).toEqual([
      [1, "sent"],
      [1, "sent"],
      [1, "sent"],
    ]);
    expect((await stub.runPass(t0 + 3 * MINUTE)).nextWakeAt).toBe(t0 + DAY);

    const raws = new Map<string, string>();
    for (const m of firsts) raws.set(m.to_email, await delivered(m.to_email, m.message_id));
    const [a, b, c] = leads.map((lead) => raws.get(lead.email)!);
    expect(header(a!, "Subject")).toMatch(/^(Hello|Hi) Lead1$/);
    expect(header(a!, "From")).toContain(sender.email);
    expect(header(a!, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    const unsubscribeB = /^<(https:\/\/salvo\.test\/u\/[^>]+)>$/.exec(header(b!, "List-Unsubscribe") ?? "")?.[1];
    expect(unsubscribeB).toBeDefined();
    expect(c).toContain("Stop these emails");

    // Lead 1 clicks the tracked link; lead 2 unsubscribes in one click (RFC 8058).
    const tracked = /href="(https:\/\/salvo\.test\/t\/c\/[^"]+)"/.exec(htmlOf(a!))?.[1];
    expect(tracked).toBeDefined();
    const click = await call(new URL(tracked!).pathname, { redirect: "manual", headers: { "User-Agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15" } });
    expect(click.status).toBe(302);
    expect(click.headers.get("Location")).toBe("https://example.com/offer?x=1");
    const unsubscribe = await call(new URL(unsubscribeB!).pathname, {
      method: "POST",
      rawBody: "List-Unsubscribe=One-Click",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(unsubscribe.status).toBe(200);
    // The click goes through the tracking queue: wait until its batch is written.
    await vi.waitFor(
      async () => {
        expect(await eventCount(campaignId, "CLICK")).toBe(1);
      },
      { timeout: 10_000, interval: 100 },
    );

    // A day after each first email, the follow-ups go to leads 1 and 3 only, threaded on it.
    expect((await stub.runPass(t0 + DAY)).sent).toBe(1);
    expect((await stub.runPass(t0 + DAY + MINUTE)).sent, "lead 2 unsubscribed").toBe(0);
    expect((await stub.runPass(t0 + DAY + 2 * MINUTE)).sent).toBe(1);
    const seconds = (await messagesOf(campaignId)).filter((m) => m.step === 2);
    expect(seconds.map((m) => m.to_email).sort()).toEqual([leads[0]!.email, leads[2]!.email].sort());
    for (const second of seconds) {
      const first = firsts.find((m) => m.to_email === second.to_email)!;
      const raw = await delivered(second.to_email, second.message_id);
      expect(header(raw, "In-Reply-To")).toBe(first.message_id);
      expect(header(raw, "References")).toBe(first.message_id);
      expect(header(raw, "Subject")).toBe(`Re: ${first.subject}`);
    }

    // Step 3 two days after step 2: plain text with its fallback; then the sequence is over.
    await stub.runPass(t0 + 3 * DAY + 5 * MINUTE);
    await stub.runPass(t0 + 3 * DAY + 6 * MINUTE);
    const thirds = (await messagesOf(campaignId)).filter((m) => m.step === 3);
    expect(thirds).toHaveLength(2);
    const third = await delivered(thirds[0]!.to_email, thirds[0]!.message_id);
    expect(header(third, "References")?.split(" ")).toHaveLength(2);
    const [records, people] = [await recordsOf(campaignId), await campaignPeople(campaignId)];
    expect(Object.fromEntries(records.map((r, i) => [people[i]!.email, [r.state, r.dueAt?.getTime() ?? null]]))).toEqual({
      [leads[0]!.email]: ["COMPLETED", null],
      [leads[1]!.email]: ["STOPPED", null],
      [leads[2]!.email]: ["COMPLETED", null],
    });

    const day = (offset: number) => new Date(t0 + offset).toISOString().slice(0, 10);
    const { body: stats } = await callJson<Record<string, string>>(
      // The click and the unsubscribe happened on the real clock, before the test's own.
      `/api/v1/campaigns/${campaignId}/analytics-by-date?start_date=${new Date().toISOString().slice(0, 10)}&end_date=${day(3 * DAY)}`,
      { apiKey: account.apiKey },
    );
    expect(stats).toMatchObject({ sent_count: "7", unique_sent_count: "3", click_count: "1", unique_click_count: "1", unsubscribed_count: "1" });

    expect(await deliveryKinds({ campaignId })).toMatchObject({
      EMAIL_SENT: 7,
      FIRST_EMAIL_SENT: 3,
      EMAIL_LINK_CLICK: 1,
      LEAD_UNSUBSCRIBED: 1,
    });
  });

  it("spreads spintax options over the records in turn in the incremental mode (CONTRACT 21.1)", async () => {
    const account = await provisionAccount();
    const apiKey = account.apiKey;
    const sender = lab.mailboxes.find((m) => m.email === "sender1@lab.salvo.test")!;
    const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
    const t0 = startAhead();
    const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Spintax in turn" } });
    const id = created.id;
    const step = { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "{Alpha|Beta|Gamma} note", email_body: "Hello" };
    expect((await callJson(`/api/v1/campaigns/${id}/sequences`, { method: "POST", apiKey, body: { sequences: [step] } })).status).toBe(200);
    const window = { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, schedule_start_time: new Date(t0).toISOString() };
    expect((await callJson(`/api/v1/campaigns/${id}/schedule`, { method: "POST", apiKey, body: window })).status).toBe(200);
    expect((await callJson("/api/v1/campaigns/spintax-distribution-mode", { method: "POST", apiKey, body: { campaignId: id, spintaxDistributionMode: 1 } })).status).toBe(200);
    await callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey, body: { lead_list: leads.map((lead) => ({ email: lead.email })) } });
    await callJson(`/api/v1/campaigns/${id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
    expect((await callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);
    const stub = senderStub(bindings, mailboxId);
    for (let i = 0; i < leads.length; i++) expect((await stub.runPass(t0 + i * MINUTE)).sent).toBe(1);
    const sent = await fileEnv().DB.prepare("SELECT m.to_email, m.message_id FROM messages m WHERE m.campaign_id = ? ORDER BY m.campaign_lead_id").bind(id).all<{ to_email: string; message_id: string }>();
    const subjects = [];
    for (const row of sent.results) subjects.push(header(await delivered(row.to_email, row.message_id), "Subject"));
    expect(subjects, "the k-th record by id takes option k mod 3").toEqual(["Alpha note", "Beta note", "Gamma note"]);
  });

  it("suspends a mailbox whose server refuses the login, with the server's reason, and loses nothing", async () => {
    const account = await provisionAccount();
    const sender = lab.mailboxes.find((m) => m.email === "sender2@lab.salvo.test")!;
    // A wrong SMTP password (IMAP has its own, right one, so the object's reads of the INBOX go on).
    const mailboxId = await saveLabMailbox(account.apiKey, sender.email, "not-the-password", { time_to_wait_in_mins: 0, imap_password: sender.password });
    // The check's refusal disconnects the mailbox with the server's words (CONTRACT 18.5).
    expect(await checked(account.apiKey, mailboxId)).toMatchObject({ is_smtp_success: false, is_imap_success: true, connection_state: "disconnected" });
    // The password changes on the server after a check that passed: the sender meets the refusal first.
    await setMailbox(mailboxId, { isSmtpSuccess: true, smtpFailureError: null, disconnectCode: null, disconnectMessage: null, disconnectedAt: null });
    const t0 = startAhead();
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0);
    // No gap: the three messages are opened together, and the two after the refused login are withdrawn.
    await withoutGap(campaignId);
    const stub = senderStub(bindings, mailboxId);

    expect(await stub.runPass(t0, { read: false })).toMatchObject({ sent: 0, nextWakeAt: null });
    expect((await messagesOf(campaignId)).map((m) => m.status), "the refused one waits; the others are not left opened").toEqual(["deferred"]);
    const mailbox = (await callJson<MailboxRead>(`/api/v1/email-accounts/${mailboxId}`, { apiKey: account.apiKey })).body;
    expect(mailbox.is_suspended).toBe(true);
    expect(mailbox.is_smtp_success).toBe(false);
    expect(mailbox.smtp_failure_error).toMatch(/^535 /);
    expect(await eventCount(campaignId, "SENT")).toBe(0);
    const due = (await recordsOf(campaignId)).filter((r) => r.dueAt !== null && r.dueAt.getTime() <= t0 && r.claimToken === null && r.emailAccountId === null);
    expect(due.length, "every lead still due, back in rotation").toBe(3);

    // Fixed: the right password passes the check, the mailbox is unsuspended, and the email goes.
    const update = await callJson(`/api/v1/email-accounts/${mailboxId}`, { method: "POST", apiKey: account.apiKey, body: { password: sender.password } });
    expect(update.status).toBe(200);
    await vi.waitFor(
      async () => expect((await callJson<MailboxRead>(`/api/v1/email-accounts/${mailboxId}`, { apiKey: account.apiKey })).body.is_smtp_success).toBe(true),
      { timeout: 20_000, interval: 100 },
    );
    await call(`/api/v1/email-accounts/unsuspend/${mailboxId}`, { method: "DELETE", apiKey: account.apiKey });
    expect((await stub.runPass(t0 + MINUTE, { read: false })).sent).toBe(3);
    const messages = await messagesOf(campaignId);
    expect(messages.map((m) => [m.step, m.status])).toEqual([
      [1, "sent"],
      [1, "sent"],
      [1, "sent"],
    ]);
    for (const message of messages) await delivered(message.to_email, message.message_id);
  });

  // Any lab login may send as these senders, which Postfix refuses at RCPT as providers' limits do.
  it.each([
    { limit: "421 (closing, then it hangs up)", sender: () => lab.limited_senders.throttled, words: /^421 4\.7\.0 .*too much mail/, waitMinutes: 5 },
    { limit: "550 5.4.5 (Gmail's daily limit)", sender: () => lab.limited_senders.over_limit, words: /^550 5\.4\.5 .*Daily user sending limit exceeded/, waitMinutes: 60 },
  ])("a server refusing the mailbox's sending with $limit stops the pass at once and holds the mailbox $waitMinutes minutes: its first emails back to rotation, no attempt counted, no lead bounced, nothing suspended, the owner told until a send goes", async ({ sender, words, waitMinutes }) => {
    const { account, mailboxId } = await checkedSender("sender3", { from_email: sender(), user_name: "sender3@lab.salvo.test" });
    const t0 = startAhead();
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0);
    await withoutGap(campaignId);
    const retryAt = t0 + waitMinutes * MINUTE;

    expect(await senderStub(bindings, mailboxId).runPass(t0, { read: false })).toMatchObject({ sent: 0, nextWakeAt: retryAt });
    const rows = await fileEnv().DB.prepare("SELECT status, attempts, last_error FROM messages WHERE campaign_id = ?").bind(campaignId).all<{ status: string; attempts: number; last_error: string }>();
    expect(rows.results, "one message tried; the others not left opened").toEqual([{ status: "deferred", attempts: 0, last_error: expect.stringMatching(words) }]);
    const records = await recordsOf(campaignId);
    expect(
      records.map((r) => ({ blocked: r.state === "BLOCKED", dueAt: r.dueAt?.getTime(), claimed: r.claimToken !== null, pinned: r.emailAccountId !== null })),
      "every lead back in rotation, due at once (another mailbox of the campaign may send it: the next test)",
    ).toEqual(records.map(() => ({ blocked: false, dueAt: t0, claimed: false, pinned: false })));
    expect(await eventCount(campaignId, "BOUNCE")).toBe(0);
    type Warned = MailboxRead & { sending_status: { warnings: { code: string; message: string }[] } };
    const read = async () => (await callJson<Warned>(`/api/v1/email-accounts/${mailboxId}`, { apiKey: account.apiKey })).body;
    const mailbox = await read();
    expect(mailbox).toMatchObject({ is_suspended: false, is_smtp_success: true });
    const refusing = mailbox.sending_status.warnings.filter((w) => w.code === "server_refusing").map((w) => w.message);
    expect(refusing, "the owner is told why, and when the next try is").toHaveLength(1);
    expect(refusing[0]!.split("could not be reached: ")[1]).toMatch(words);
    expect(refusing[0]).toContain(`Salvo tries again at ${new Date(retryAt).toISOString()}`);
    const held = { code: "server_refusing", next_send_at: new Date(retryAt).toISOString() };
    expect(mailbox.sending_status, "its status names the hold, not the due time its records were given").toMatchObject(held);
    const campaignStatus = async () => (await callJson<{ sending_status: { code: string; next_send_at: string | null } }>(`/api/v1/campaigns/${campaignId}`, { apiKey: account.apiKey })).body.sending_status;
    expect(await campaignStatus()).toMatchObject({ code: "all_mailboxes_held", next_send_at: new Date(retryAt).toISOString() });

    // A wake before the retry (a lead added, due at once) does not knock on that server again.
    const late = lab.mailboxes.filter((m) => m.role === "lead")[3]!.email;
    const added = await callJson(`/api/v1/campaigns/${campaignId}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: late, first_name: "Late" }] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(await senderStub(bindings, mailboxId).runPass(t0 + MINUTE, { read: false })).toMatchObject({ sent: 0, nextWakeAt: retryAt });
    expect((await messagesOf(campaignId)).map((m) => m.status), "no transaction tried while held").toEqual(["deferred"]);

    // The limit lifts (here: the mailbox sends as itself again). Another way of sending is not what the
    // server refused: the hold ends with the change, and every lead due goes at once.
    expect((await callJson(`/api/v1/email-accounts/${mailboxId}`, { method: "POST", apiKey: account.apiKey, body: { from_email: "sender3@lab.salvo.test" } })).status).toBe(200);
    expect((await read()).sending_status.warnings.map((w) => w.code)).not.toContain("server_refusing");
    expect((await campaignStatus()).code).not.toBe("all_mailboxes_held");
    expect((await senderStub(bindings, mailboxId).runPass(t0 + 2 * MINUTE, { read: false })).sent).toBe(4);
    expect((await messagesOf(campaignId)).map((m) => [m.to_email, m.status])).toEqual([...leads.map((l) => l.email), late].sort().map((email) => [email, "sent"]));
  });

  it("a held mailbox's first emails go out through the campaign's other mailbox at once, which is woken for them; the email the server refused is sent once, by the other", async () => {
    const { account, mailboxId: held } = await checkedSender("sender3", { from_email: lab.limited_senders.throttled, user_name: "sender3@lab.salvo.test" });
    const other = lab.mailboxes.find((m) => m.email === "sender2@lab.salvo.test")!;
    const otherId = await saveLabMailbox(account.apiKey, other.email, other.password, { time_to_wait_in_mins: 0 });
    expect(await checked(account.apiKey, otherId)).toMatchObject({ is_smtp_success: true });
    const t0 = startAhead();
    const campaignId = await campaignWithSequence(account.apiKey, held, t0);
    await withoutGap(campaignId);
    const attached = await callJson(`/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", apiKey: account.apiKey, body: { email_account_ids: [otherId] } });
    expect(attached.status).toBe(200);
    // Both objects' passes on the real clock (START, the attachment) are over, each asleep until the campaign's start.
    await senderStub(bindings, otherId).runPass(t0 - MINUTE, { read: false });
    await senderStub(bindings, held).runPass(t0 - MINUTE, { read: false });
    const wakeOf = async (id: number) =>
      (await fileEnv().DB.prepare("SELECT engine_wake_at FROM email_accounts WHERE id = ?").bind(id).first<{ engine_wake_at: number | null }>())!.engine_wake_at;
    await fileEnv().DB.prepare("UPDATE email_accounts SET engine_wake_at = NULL WHERE id = ?").bind(otherId).run();

    // The held mailbox claims every lead, and its server refuses the first email.
    expect(await senderStub(bindings, held).runPass(t0, { read: false })).toMatchObject({ sent: 0, nextWakeAt: t0 + 5 * MINUTE });
    // Its pass woke the other's object (whose own pass, on the real clock, records when it wakes next).
    await vi.waitFor(async () => expect(await wakeOf(otherId), "the other mailbox's object ran a pass").not.toBeNull(), { timeout: 10_000, interval: 100 });

    expect((await senderStub(bindings, otherId).runPass(t0, { read: false })).sent, "the other mailbox sends all three before the hold ends").toBe(3);
    const rows = await fileEnv()
      .DB.prepare("SELECT to_email, status, attempts, email_account_id FROM messages WHERE campaign_id = ? ORDER BY to_email")
      .bind(campaignId)
      .all<{ to_email: string; status: string; attempts: number; email_account_id: number }>();
    expect(rows.results, "one row a lead, the refused one's taken over").toEqual(
      leads.map((lead) => ({ to_email: lead.email, status: "sent", attempts: 1, email_account_id: otherId })).sort((a, b) => a.to_email.localeCompare(b.to_email)),
    );
    for (const message of await messagesOf(campaignId)) await delivered(message.to_email, message.message_id);
    const records = await recordsOf(campaignId);
    expect(records.map((r) => r.emailAccountId), "their follow-ups stay with the mailbox that sent the first").toEqual(records.map(() => otherId));
  });

  it("after a pass that died in a claim's first transaction: the rest goes out exactly once, the one in doubt never, reported, and its lead moves on", async () => {
    const { account, mailboxId } = await checkedSender("sender5");
    const t0 = startAhead();
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0);
    const stub = senderStub(bindings, mailboxId);
    // No live pass may meet the dead one's claim.
    await idle(stub, t0);

    // The pass that died: it claimed the three leads and had opened the first one's message.
    const claim = await claimRecords(fileEnv().DB, { campaign: await campaignRow(campaignId), mailboxId, senderDomain: "lab.salvo.test", now: t0, limit: 10, newLeadsLeft: 10 });
    expect(claim.records).toHaveLength(3);
    const [inDoubt] = claim.records;
    expect(await openMessage(fileEnv().DB, { nonce: claim.nonce, mailboxId, now: t0 }, inDoubt!)).not.toBeNull();

    // The next pass releases that claim and first takes the one in doubt (pinned: a follow-up), which only moves
    // on and reaches no server, so the same pass claims again and sends to the next lead; then the campaign's
    // gap (a minute) holds the last one to the next pass.
    expect((await stub.runPass(t0 + 1_000, { read: false })).sent).toBe(1);
    expect((await stub.runPass(t0 + 30_000, { read: false })).sent).toBe(0);
    expect((await stub.runPass(t0 + MINUTE + 1_000, { read: false })).sent).toBe(1);
    expect((await stub.runPass(t0 + 2 * MINUTE + 1_000, { read: false })).sent).toBe(0);
    const messages = await messagesOf(campaignId);
    expect(messages.map((m) => [m.to_email, m.status]).sort()).toEqual(
      leads.map((lead) => [lead.email, lead.email === inDoubt!.leadEmail ? "unconfirmed" : "sent"]).sort(),
    );
    for (const message of messages.filter((m) => m.status === "sent")) await delivered(message.to_email, message.message_id);
    const never = await fetch(`${inject("mailReader")}/message?user=${encodeURIComponent(inDoubt!.leadEmail)}&message_id=${encodeURIComponent(inDoubt!.messageId)}`);
    expect(never.status, "the message in doubt was never sent by a later pass").toBe(404);
    const record = await recordRow(inDoubt!.recordId);
    expect({ next_step: record.nextStep, due_at: record.dueAt?.getTime(), claim_token: record.claimToken }).toEqual({ next_step: 2, due_at: t0 + 1_000 + DAY, claim_token: null });

    const mailbox = await callJson<{ sending_status: { warnings: { code: string; message: string }[] } }>(`/api/v1/email-accounts/${mailboxId}`, { apiKey: account.apiKey });
    expect(mailbox.body.sending_status.warnings).toEqual([{ code: "unconfirmed_sends", message: expect.stringContaining(inDoubt!.leadEmail) as string }]);
  });

  it("after a pass that died inside a window of opened messages: what its journal knew is stored, the one being handed over stays in doubt, the rest go out once", async () => {
    const { account, mailboxId } = await checkedSender("sender4");
    const t0 = startAhead();
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0);
    await withoutGap(campaignId);
    const stub = senderStub(bindings, mailboxId);
    // No pass on the real clock may meet the dead pass's state half made.
    await idle(stub, t0);

    // The pass that died opened a window of three messages; the first went out (its outcome not yet in D1),
    // the second was being handed over, the third never was.
    const campaign = await campaignRow(campaignId);
    const claim = await claimRecords(fileEnv().DB, { campaign, mailboxId, senderDomain: "lab.salvo.test", now: t0, limit: 10, newLeadsLeft: 10 });
    const [wentOut, inFlight, never] = claim.records;
    const opening = { nonce: claim.nonce, mailboxId, now: t0 };
    const rows: (number | null)[] = [];
    for (const record of claim.records) rows.push(await openMessage(fileEnv().DB, opening, record));
    const opened = claim.records.map((r): Opened => ({ nonce: claim.nonce, recordId: r.recordId, step: r.step, prior: null }));
    await runInDurableObject(stub, async (_: MailboxSender, state: DurableObjectState) => {
      const journal = new SendJournal(state.storage.kv, () => state.storage.sync());
      journal.opening({ nonce: claim.nonce, now: t0, campaign }, opened);
      await journal.handingOver(opened[0]!);
      journal.ended({
        nonce: claim.nonce,
        finished: {
          record: wentOut!,
          outcome: { kind: "sent", recordId: wentOut!.recordId, messageRowId: rows[0]!, subject: "Hello Lead1", sentAt: t0, nextStep: 2, nextDueAt: t0 + DAY },
          event: { type: "SENT", subject: "Hello Lead1", body: "<p>Hi Lead1</p>", messageId: wentOut!.messageId },
          suspend: null,
        },
      });
      await journal.handingOver(opened[1]!);
    });

    expect((await stub.runPass(t0 + 1_000, { read: false })).sent, "only the message never handed over").toBe(1);
    const messages = await messagesOf(campaignId);
    expect(messages.map((m) => [m.to_email, m.status, m.id === rows[0] || m.id === rows[1]]).sort()).toEqual(
      [
        [wentOut!.leadEmail, "sent", true],
        [inFlight!.leadEmail, "unconfirmed", true],
        [never!.leadEmail, "sent", false],
      ].sort(),
    );
    expect(messages.find((m) => m.to_email === wentOut!.leadEmail)?.subject).toBe("Hello Lead1");
    expect(await eventCount(campaignId, "SENT"), "the journaled send's event, and the new one").toBe(2);
    // Withdrawn, its row went: the later pass wrote a new one, with a Message-ID of its own.
    await delivered(never!.leadEmail, messages.find((m) => m.to_email === never!.leadEmail)!.message_id!);
    const lookups = [wentOut!, inFlight!].map((unsent) =>
      fetch(`${inject("mailReader")}/message?user=${encodeURIComponent(unsent.leadEmail)}&message_id=${encodeURIComponent(unsent.messageId)}`),
    );
    expect((await Promise.all(lookups)).map((found) => found.status), "neither was sent by a later pass").toEqual([404, 404]);
    expect((await recordRow(wentOut!.recordId)).nextStep).toBe(2);
    await runInDurableObject(stub, (_: MailboxSender, state: DurableObjectState) => {
      expect(new SendJournal(state.storage.kv, () => state.storage.sync()).leftover()).toBeNull();
    });
  });

  it("a refusal that holds the mailbox in the middle of a claim: what went before is sent, the window opened ahead is withdrawn with the rest of its own, every lead after it due again", async () => {
    const { account, mailboxId } = await checkedSender("sender9", { max_email_per_day: 100 });
    const t0 = startAhead();
    const marker = crypto.randomUUID().slice(0, 8);
    // Two windows of messages (50, then 10), in the leads' order; the recipient's provider refuses the 41st
    // (421, then it hangs up), past the middle of the first window: the second is already open when the pass stops.
    const before = Array.from({ length: 40 }, (_, n) => `lead${(n % 5) + 1}+${marker}${String(n).padStart(2, "0")}@lab.salvo.test`);
    const after = Array.from({ length: 19 }, (_, n) => `warm${(n % 5) + 1}+${marker}${String(n).padStart(2, "0")}@lab.salvo.test`);
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0, { leadEmails: [...before, lab.limited_recipients.throttling, ...after] });
    await withoutGap(campaignId);
    const stub = senderStub(bindings, mailboxId);
    await idle(stub, t0);

    expect(await stub.runPass(t0, { read: false })).toMatchObject({ sent: 40, nextWakeAt: t0 + 5 * MINUTE });
    const messages = await messagesOf(campaignId);
    expect(messages.filter((m) => m.status === "sent").map((m) => m.to_email), "each lead before the refusal, once").toEqual([...before].sort());
    expect(messages.filter((m) => m.status !== "sent").map((m) => [m.to_email, m.status]), "the refused one waits; none after it is left opened").toEqual([[lab.limited_recipients.throttling, "deferred"]]);
    for (const message of [0, 39].map((n) => messages.find((m) => m.to_email === before[n])!)) {
      await delivered(message.to_email.replace(/\+[^@]*/, ""), message.message_id);
    }
    const records = await recordsOf(campaignId);
    expect(records.filter((r) => r.nextStep === 2), "the sent ones moved on").toHaveLength(40);
    const due = records.filter((r) => r.nextStep === 1 && r.dueAt?.getTime() === t0 && r.claimToken === null && r.emailAccountId === null);
    expect(due, "the refused lead and every one after it: back in rotation, due at once").toHaveLength(20);
    await runInDurableObject(stub, (_: MailboxSender, state: DurableObjectState) => {
      expect(new SendJournal(state.storage.kv, () => state.storage.sync()).leftover()).toBeNull();
    });
  });

  /** 101 leads due for a lab sender with no gap (its cap 200) and the campaign's new-leads cap; `pass` runs the pass that sends them, `before` counts its SMTP logins until then. */
  async function hundredAndOne(local: string, maxNewLeadsPerDay: number) {
    const { account, mailboxId } = await checkedSender(local, { max_email_per_day: 200 });
    const t0 = startAhead();
    const marker = crypto.randomUUID().slice(0, 8);
    const leadEmails = Array.from({ length: 101 }, (_, n) => `lead${(n % 5) + 1}+${marker}${n}@lab.salvo.test`);
    const campaignId = await campaignWithSequence(account.apiKey, mailboxId, t0, { leadEmails, maxNewLeadsPerDay });
    await withoutGap(campaignId);
    const stub = senderStub(bindings, mailboxId);
    await stub.runPass(t0 - MINUTE, { read: false });
    return { leadEmails, campaignId, before: await smtpLogins(local), pass: () => stub.runPass(t0 + 1_000, { read: false }) };
  }

  it("sends every due email of a mailbox with no gap in one pass, window after window and claim after claim, a new SMTP session every 100 messages", async () => {
    // Three windows and two claims: a window's first envelope rides behind the window before it; the
    // 101st message goes on a session opened while the first claim ended and the second was claimed.
    const { leadEmails, campaignId, pass, before } = await hundredAndOne("sender10", 200);
    expect((await pass()).sent, "101 due emails").toBe(101);
    const messages = await messagesOf(campaignId);
    expect(messages.map((m) => m.status)).toEqual(Array(101).fill("sent"));
    // The first, the last, and those on either side of the windows' and the claims' seams (messages in the leads' order).
    const byAddress = new Map(messages.map((m) => [m.to_email, m]));
    for (const email of [0, 49, 50, 99, 100].map((n) => leadEmails[n]!)) await delivered(email.replace(/\+[^@]*/, ""), byAddress.get(email)!.message_id);
    expect(await smtpLogins("sender10"), "two SMTP sessions for the pass, none opened for nothing").toBe(before + 2);
  });

  it("opens no session ahead for a claim after one that reached the campaign's new leads for the day", async () => {
    const { pass, before } = await hundredAndOne("sender8", 100);
    expect((await pass()).sent, "the day's 100 new leads").toBe(100);
    expect(await smtpLogins("sender8"), "one SMTP session: the claim after the 100th finds nothing").toBe(before + 1);
  });
});
