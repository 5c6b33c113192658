import { createScheduledController } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it, vi } from "vitest";
import worker from "../../src/index";
import { sendMail } from "../../src/mail/smtp";
import type { Bindings } from "../../src/platform/env";
import { asc, eq, sql } from "drizzle-orm";
import { eventsOf, schema, testDb } from "../db";
import { ADMIN_TOKEN, callJson, env, fileShard, provisionAccount, fileEnv } from "../helpers";
import { advanceMove, requestMove } from "../../src/moves/run";
import { createCampaign } from "../campaigns/fixtures";
import { senderStub } from "../../src/mailbox-agent/stub";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";
import { smtpSessionsCarrying } from "./lab-messages";

const lab = inject("mailLab");
const reader = inject("mailReader");
const bindings = fileEnv() as unknown as Bindings;
const GTUBE = "XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X";
const seeds = lab.mailboxes.filter((m) => m.role === "seed");
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

interface SeedRead {
  id: number;
  provider_id: string;
  email: string;
  polled: boolean;
}

interface ProviderCounts {
  provider_id: string;
  inbox_count: number;
  tab_count: number;
  spam_count: number;
  not_received_count: number;
  total_count: number;
}

type Cell = Awaited<ReturnType<typeof cellsOf>>[number];

/** The operator's part: the catalogue's unread default seeds of the lab's providers replaced by the lab's seeds. */
async function registerLabSeeds() {
  const { body } = await callJson<{ data: SeedRead[] }>("/admin/v1/seed-mailboxes", { headers: admin });
  for (const seed of body.data.filter((s) => seeds.some((lab) => lab.provider_id === s.provider_id) && !s.polled)) {
    expect((await callJson(`/admin/v1/seed-mailboxes/${seed.id}`, { method: "DELETE", headers: admin })).status).toBe(200);
  }
  for (const seed of seeds) {
    if (body.data.some((s) => s.email === seed.email)) continue;
    const created = await callJson<SeedRead & { password?: string }>("/admin/v1/seed-mailboxes", {
      method: "POST",
      headers: admin,
      body: {
        provider_id: seed.provider_id,
        email: seed.email,
        imap_host: lab.imap.host,
        imap_port: lab.imap.port,
        imap_security: "starttls",
        password: seed.password,
        inbox_folders: seed.inbox_folders,
        tab_folders: seed.tab_folders,
        spam_folders: seed.spam_folders,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ provider_id: seed.provider_id, email: seed.email, polled: true });
    expect(JSON.stringify(created.body)).not.toContain(seed.password);
  }
}

/** A test's cells by provider, under the column names the tests read; the JSON columns as stored (text). */
function cellsOf(testId: string | number) {
  const t = schema.spamTestResults;
  return testDb()
    .select({
      provider_id: t.providerId,
      seed_email: t.seedEmail,
      folder: t.folder,
      mailbox_folder: t.mailboxFolder,
      spam_score: t.spamScore,
      spam_required: t.spamRequired,
      spam_action: t.spamAction,
      spam_symbols: sql<string | null>`${t.spamSymbols}`,
      link_report: sql<string | null>`${t.linkReport}`,
      sender_ip: t.senderIp,
      sent_at: t.sentAt,
      send_error: t.sendError,
    })
    .from(t)
    .where(eq(t.spamTestId, Number(testId)))
    .orderBy(asc(t.providerId))
    .all();
}

/** Runs the checker until no cell of the test is pending (mail takes a moment through Postfix and LMTP). */
async function checkUntilPlaced(testId: string | number): Promise<Cell[]> {
  for (let i = 0; i < 60; i += 1) {
    const pass = await callJson<{ ok: boolean; failures: unknown[] }>("/admin/v1/seed-mailboxes/check", { method: "POST", headers: admin });
    expect(pass.status).toBe(200);
    expect(pass.body.failures).toEqual([]);
    const cells = await cellsOf(testId);
    if (cells.every((cell) => cell.folder !== "pending")) return cells;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`cells still pending: ${JSON.stringify(await cellsOf(testId))}`);
}

async function providerReport(apiKey: string, testId: string | number) {
  const { status, body } = await callJson<{ data: { providers: ProviderCounts[] } }>("/api/v1/smart-delivery/provider-report", {
    method: "POST",
    apiKey,
    body: { spam_test_id: testId },
  });
  expect(status).toBe(200);
  return Object.fromEntries(body.data.providers.map((p) => [p.provider_id, p]));
}

/**
 * An automated test of a new campaign's one step, from `sender` to the gmail and yahoo seeds, every
 * minute from 55 s ago: its first slot is already due (the last seconds of a minute are skipped).
 */
async function automatedTest(apiKey: string, sender: string, subject: string): Promise<string> {
  const campaign = await createCampaign(apiKey);
  const steps = await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject, email_body: "<p>A short note.</p>" }] },
  });
  expect(steps.status, JSON.stringify(steps.body)).toBe(200);
  while (new Date().getUTCSeconds() >= 50) await new Promise((resolve) => setTimeout(resolve, 500));
  const start = Date.now() - 55_000;
  const created = await callJson<{ id: string }>("/api/v1/spam-test/schedule", {
    method: "POST",
    apiKey,
    body: {
      test_name: "lab automated",
      spam_filters: true,
      campaign_id: campaign,
      sequence_mapping_id: 1,
      provider_ids: ["gmail", "yahoo"],
      sender_accounts: [sender],
      all_email_sent_without_time_gap: true,
      schedule_start_time: new Date(start).toISOString(),
      test_end_date: new Date(start + 86_400_000).toISOString(),
      scheduler_cron_value: "* * * * *",
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id;
}

beforeAll(registerLabSeeds);

describe("placement tests against the lab's seed mailboxes", () => {
  it("offers the lab's providers with the lab's seeds", async () => {
    const account = await provisionAccount();
    const { body } = await callJson<{ groups: { providers: { provider_id: string; seed_email: string }[] }[] }[]>("/api/v1/spam-test/seed/providers", {
      apiKey: account.apiKey,
    });
    const offered = Object.fromEntries(body.flatMap((r) => r.groups.flatMap((g) => g.providers)).map((p) => [p.provider_id, p.seed_email]));
    for (const seed of seeds) expect(offered[seed.provider_id!]).toBe(seed.email);
  });

  it("a manual test sent by the user lands inbox for a clean email, tab for a promotion and spam for GTUBE, scored by Rspamd, in the provider report", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const sender = lab.mailboxes.find((m) => m.email === "sender2@lab.salvo.test")!;
    const created = await callJson<{ id: string; email_track_id: string; seed_emails: { provider_id: string; email: string }[] }>("/api/v1/spam-test/manual", {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        test_name: "lab manual",
        spam_filters: true,
        link_checker: true,
        campaign_id: campaign,
        sequence_mapping_id: 1,
        provider_ids: ["gmail", "outlook", "yahoo"],
        sender_accounts: [sender.email],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { id, email_track_id: token, seed_emails } = created.body;
    expect(seed_emails).toEqual(seeds.map((seed) => ({ provider_id: seed.provider_id, email: seed.email })));

    // What the user does: the token in the email, one to each seed.
    const bodies: Record<string, { subject: string; text: string }> = {
      gmail: { subject: "Quarterly numbers", text: `Hi, the numbers are here: ${reader}/numbers\n\n${token}` },
      outlook: { subject: "[promo] Spring offer", text: `Our spring offer.\n\n${token}` },
      yahoo: { subject: "Hello", text: `${GTUBE}\n\n${token}` },
    };
    for (const seed of seed_emails) {
      const sent = await sendMail(
        { host: lab.smtp.host, port: lab.smtp.port, security: "starttls", username: sender.email, password: sender.password },
        { from: { email: sender.email, name: "Lab sender" }, to: seed.email, ...bodies[seed.provider_id]! },
        { allowPlain: false, outbound: LAB_HOSTS },
      );
      expect(sent.ok, JSON.stringify(sent)).toBe(true);
    }

    const cells = await checkUntilPlaced(id);
    expect(cells.map((c) => [c.provider_id, c.folder, c.mailbox_folder])).toEqual([
      ["gmail", "inbox", "INBOX"],
      ["outlook", "tab", "Promotions"],
      ["yahoo", "spam", "Junk"],
    ]);
    for (const cell of cells) {
      expect(cell.spam_score, cell.provider_id).not.toBeNull();
      expect(JSON.parse(cell.spam_symbols ?? "[]").length, cell.provider_id).toBeGreaterThan(0);
      expect(cell.sender_ip).toBe("127.0.0.1");
    }
    expect(cells.find((c) => c.provider_id === "yahoo")).toMatchObject({ spam_action: "reject", link_report: "[]" });
    // The reader answers a path it does not know with an error: the link checker reports it broken.
    expect(JSON.parse(cells.find((c) => c.provider_id === "gmail")!.link_report!)).toEqual([
      expect.objectContaining({ url: `${reader}/numbers`, redirects: 0, ok: false }),
    ]);
    expect(cells.find((c) => c.provider_id === "gmail")!.spam_action).not.toBe("reject");

    const report = await providerReport(account.apiKey, id);
    expect(report.gmail).toMatchObject({ inbox_count: 1, tab_count: 0, spam_count: 0, total_count: 1 });
    expect(report.outlook).toMatchObject({ inbox_count: 0, tab_count: 1, spam_count: 0, total_count: 1 });
    expect(report.yahoo).toMatchObject({ inbox_count: 0, tab_count: 0, spam_count: 1, total_count: 1 });

    // CONTRACT 21.6: the checker kept each copy's headers as they arrived; the provider's first hop names the lab's sender.
    const gmailCell = await fileEnv().DB.prepare("SELECT id FROM spam_test_results WHERE spam_test_id = ? AND provider_id = 'gmail'").bind(Number(id)).first<{ id: number }>();
    const headers = await callJson<Record<string, string | string[]>>(`/api/v1/spam-test/report/${id}/sender-account-wise/${gmailCell!.id}/email-headers`, { apiKey: account.apiKey });
    expect(headers.status, JSON.stringify(headers.body)).toBe(200);
    expect(headers.body.Subject).toBe("Quarterly numbers");
    // The seed's INBOX copy went through Postfix, then LMTP: the hop from the sender names its IP.
    expect(headers.body.Received).toEqual([expect.stringMatching(/ with LMTP /), expect.stringMatching(/^from \S+ \(\S+ \[127\.0\.0\.1\]\)/), ...(headers.body.Received as string[]).slice(2)]);
    const rdns = await callJson<{ from_email: string; seed_accounts: Record<string, unknown>[] }[]>(`/api/v1/spam-test/report/${id}/rdns-details`, { apiKey: account.apiKey });
    expect(rdns.body).toEqual([{ from_email: sender.email, seed_accounts: expect.any(Array) }]);
    expect(rdns.body[0]!.seed_accounts.find((s) => s.id === String(gmailCell!.id))).toMatchObject({ ip: "127.0.0.1", rdns_source: expect.stringMatching(/^(received_header|ptr_query)$/) });
  });

  it("places other accounts' copies while one account moves, and that account's once its fence lifts", async () => {
    const sender = lab.mailboxes.find((m) => m.email === "sender4@lab.salvo.test")!;
    const gmail = seeds.find((seed) => seed.provider_id === "gmail")!;
    const manualTest = async (apiKey: string, subject: string) => {
      const created = await callJson<{ id: string; email_track_id: string }>("/api/v1/spam-test/manual", {
        method: "POST",
        apiKey,
        body: { test_name: subject, spam_filters: false, link_checker: false, campaign_id: await createCampaign(apiKey), sequence_mapping_id: 1, provider_ids: ["gmail"], sender_accounts: [sender.email] },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const sent = await sendMail(
        { host: lab.smtp.host, port: lab.smtp.port, security: "starttls", username: sender.email, password: sender.password },
        { from: { email: sender.email, name: "Lab sender" }, to: gmail.email, subject, text: `Hello.\n\n${created.body.email_track_id}` },
        { allowPlain: false, outbound: LAB_HOSTS },
      );
      expect(sent.ok, JSON.stringify(sent)).toBe(true);
      return created.body.id;
    };
    const moving = await provisionAccount();
    const staying = await provisionAccount();
    const movingTest = await manualTest(moving.apiKey, "Moving account");
    const stayingTest = await manualTest(staying.apiKey, "Staying account");
    // The moving account's copy is in the seed before the fence rises (LMTP delivers both within moments).
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const shard = fileShard();
    expect((await requestMove(env, moving.id, 1 - shard, Date.now())).ok).toBe(true);
    await advanceMove(env, moving.id, 0);
    try {
      expect((await checkUntilPlaced(stayingTest)).map((cell) => cell.folder)).toEqual(["inbox"]);
      expect((await cellsOf(movingTest)).map((cell) => cell.folder)).toEqual(["pending"]);
    } finally {
      // The move undone by hand (as a failed check would): the fence lifts on both shards.
      for (const db of [env.DB, env.DB_1]) await db.prepare("DELETE FROM account_moves WHERE account_id = ?").bind(moving.id).run();
      await env.DIRECTORY.prepare("DELETE FROM directory_moves WHERE account_id = ?").bind(moving.id).run();
    }
    // The seed's cursor stayed for the copy that could not be written: the next pass finds it.
    expect((await checkUntilPlaced(movingTest)).map((cell) => cell.folder)).toEqual(["inbox"]);
  });

  it("an automated test's run sends the campaign step from the sender mailbox by itself and is checked", { timeout: 120_000 }, async () => {
    const account = await provisionAccount();
    const sender = lab.mailboxes.find((m) => m.email === "sender3@lab.salvo.test")!;
    const mailboxId = await saveLabMailbox(account.apiKey, sender.email, sender.password);
    expect(await checked(account.apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
    // A hold that ran out (its server refused the mailbox's sending a while ago): the run's first email to go ends it.
    await fileEnv().DB.prepare("UPDATE email_accounts SET send_held_until = ?, send_held_reason = '421 4.7.0 Try again later' WHERE id = ?").bind(Date.now() - 60_000, mailboxId).run();
    const testId = await automatedTest(account.apiKey, sender.email, "Hello {{first_name | there}}");
    expect(await cellsOf(testId)).toEqual([]);

    // The minute cron starts the run and wakes the sender mailbox's object, which sends on its own.
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), bindings);
    let cells: Cell[] = [];
    for (let i = 0; i < 100; i += 1) {
      cells = await cellsOf(testId);
      if (cells.length === 2 && cells.every((c) => c.sent_at !== null)) break;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(cells.map((c) => [c.seed_email, c.send_error])).toEqual([
      ["seed-gmail@lab.salvo.test", null],
      ["seed-yahoo@lab.salvo.test", null],
    ]);
    expect(cells.every((c) => c.sent_at !== null)).toBe(true);
    expect(await fileEnv().DB.prepare("SELECT send_held_until AS until, send_held_reason AS reason FROM email_accounts WHERE id = ?").bind(mailboxId).first()).toEqual({ until: null, reason: null });

    const placed = await checkUntilPlaced(testId);
    expect(placed.map((c) => [c.provider_id, c.folder])).toEqual([
      ["gmail", "inbox"],
      ["yahoo", "inbox"],
    ]);
    expect(placed.every((c) => c.spam_score !== null)).toBe(true);
    // Issue 27: a pass's test emails go on one SMTP session (a run sends to every seed at once), not a login each.
    const sent = await fileEnv().DB.prepare("SELECT message_id AS id FROM spam_test_results WHERE spam_test_id = ?").bind(Number(testId)).all<{ id: string }>();
    const sessions = await smtpSessionsCarrying(sent.results.map((cell) => cell.id));
    expect(sessions, "the run's two emails on one SMTP session").toHaveLength(1);
    // The second email's envelope rode behind the first (no RSET before it), as the engine's do.
    expect(sessions[0]).toMatch(/\bmail=2 rcpt=2 data=2\b/);
    expect(sessions[0], "no RSET: the second envelope went ahead").not.toMatch(/\brset=/);
    const report = await providerReport(account.apiKey, testId);
    expect(report.gmail).toMatchObject({ inbox_count: 1, total_count: 1 });
    expect(report.yahoo).toMatchObject({ inbox_count: 1, total_count: 1 });

    // CONTRACT 21.6: the email as the mailbox handed it to the server, the same one the seed received.
    const content = await callJson<{ spamTest: string; subject: string; text: string; html: string; rawEmailContent: string }>(
      `/api/v1/spam-test/report/${testId}/email-content`,
      { apiKey: account.apiKey },
    );
    expect(content.status, JSON.stringify(content.body)).toBe(200);
    expect(content.body).toMatchObject({ spamTest: testId, subject: "Hello there", html: expect.stringContaining("<p>A short note.</p>") });
    const messageId = /^Message-ID: (.+)$/im.exec(content.body.rawEmailContent)![1]!.trim();
    const arrived = await fileEnv().DB.prepare("SELECT count(*) AS n FROM spam_test_results WHERE spam_test_id = ? AND message_id = ?").bind(Number(testId), messageId).first<{ n: number }>();
    expect(arrived!.n).toBe(1);
    expect(content.body.rawEmailContent).toMatch(/^Subject: Hello there\r$/m);
  });

  it("a sender whose server refuses its sending for now spends no seed on refusals: a run due while it is held waits for the try, and a try still refused holds it again, the emails waiting again", { timeout: 60_000 }, async () => {
    const account = await provisionAccount();
    const login = lab.mailboxes.find((m) => m.email === "sender6@lab.salvo.test")!;
    // Any lab login may send as this address, which Postfix refuses at RCPT with a 421, as a provider's limit does.
    const from = lab.limited_senders.throttled;
    const mailboxId = await saveLabMailbox(account.apiKey, login.email, login.password, { from_email: from, user_name: login.email });
    expect(await checked(account.apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
    const testId = await automatedTest(account.apiKey, from, "Hello");
    const hold = async () => (await fileEnv().DB.prepare("SELECT send_held_until AS until FROM email_accounts WHERE id = ?").bind(mailboxId).first<{ until: number | null }>())!.until;
    const cells = async () =>
      (await fileEnv().DB.prepare("SELECT send_at, sent_at, send_error FROM spam_test_results WHERE spam_test_id = ? ORDER BY id").bind(Number(testId)).all<{ send_at: number; sent_at: number | null; send_error: string | null }>()).results;

    // Any pass the mailbox's saving started is over (one at a time in its object) before the wake below is watched.
    await senderStub(bindings, mailboxId).runPass(Date.now(), { mailboxId, read: false });
    // A campaign email met its server's 421 a moment ago: the mailbox is held for 2 more minutes.
    const heldUntil = Date.now() + 2 * 60_000;
    await fileEnv().DB.prepare("UPDATE email_accounts SET send_held_until = ?, send_held_reason = '421 4.7.0 too much mail', engine_wake_at = NULL WHERE id = ?").bind(heldUntil, mailboxId).run();
    // The minute cron starts the run and wakes the mailbox's object, whose pass (it records its next wake) knocks on nothing.
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), bindings);
    const wake = async () => (await fileEnv().DB.prepare("SELECT engine_wake_at AS at FROM email_accounts WHERE id = ?").bind(mailboxId).first<{ at: number | null }>())!.at;
    for (let i = 0; i < 100 && (await wake()) === null; i += 1) await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await wake(), "the object ran a pass").not.toBeNull();
    const due = await cells();
    expect(due).toHaveLength(2);
    expect(due.every((c) => c.send_at <= Date.now() && c.sent_at === null && c.send_error === null), "due, and not sent into the refusal").toBe(true);
    expect(await hold()).toBe(heldUntil);

    // The try meets the 421 again: the mailbox is held again and the run's emails wait again, neither counted as sent nor failed.
    await senderStub(bindings, mailboxId).runPass(heldUntil + 1_000, { mailboxId, read: false });
    const again = heldUntil + 1_000 + 5 * 60_000;
    expect(await hold()).toBe(again);
    expect(await cells()).toEqual([
      { send_at: again, sent_at: null, send_error: null },
      { send_at: again, sent_at: null, send_error: null },
    ]);
  });
  it("a scheduled reply its server refuses for now holds the mailbox, the same pass's test emails wait for the try instead of knocking, and the reply goes at the try", { timeout: 60_000 }, async () => {
    const account = await provisionAccount();
    const login = lab.mailboxes.find((m) => m.email === "sender5@lab.salvo.test")!;
    // Any lab login may send as this address, which Postfix refuses at RCPT with a 421, as a provider's limit does.
    const from = lab.limited_senders.throttled;
    const mailboxId = await saveLabMailbox(account.apiKey, login.email, login.password, { from_email: from, user_name: login.email, time_to_wait_in_mins: 0 });
    expect(await checked(account.apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
    const testId = await automatedTest(account.apiKey, from, "Hello");
    const cells = async () => (await fileEnv().DB.prepare("SELECT send_at, sent_at, send_error FROM spam_test_results WHERE spam_test_id = ? ORDER BY id").bind(Number(testId)).all()).results;
    await senderStub(bindings, mailboxId).runPass(Date.now(), { mailboxId, read: false });
    // Held a moment ago, so the pass the cron's wake starts sends nothing; the run's emails are due at the try.
    const heldUntil = Date.now() + 2 * 60_000;
    await fileEnv().DB.prepare("UPDATE email_accounts SET send_held_until = ?, send_held_reason = '421 4.7.0 too much mail', engine_wake_at = NULL WHERE id = ?").bind(heldUntil, mailboxId).run();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), bindings);
    await vi.waitFor(async () => expect(await cells()).toHaveLength(2), { timeout: 30_000, interval: 300 });
    await senderStub(bindings, mailboxId).runPass(Date.now(), { mailboxId, read: false });
    const due = await cells();
    // A thread of the mailbox, and a reply on it scheduled for the try.
    const campaign = await createCampaign(account.apiKey);
    const lead = lab.mailboxes.find((m) => m.email === "lead2@lab.salvo.test")!;
    await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: lead.email }] } });
    const sent = await callJson(`/api/v1/campaigns/${campaign}/events`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { events: [{ type: "SENT", lead_email: lead.email, occurred_at: new Date().toISOString(), email_account_id: mailboxId, message_id: `<held-${crypto.randomUUID()}@lab.salvo.test>`, subject: "Hi" }] },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const thread = (await eventsOf(campaign, "SENT")).at(-1)!.id;
    const reply = await callJson<{ message_id: string }>(`/api/v1/campaigns/${campaign}/reply-email-thread`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { email_stats_id: thread, email_body: "<p>Following up.</p>", scheduled_time: new Date(heldUntil).toISOString() },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const replyStatus = async () =>
      (await callJson<{ data: { status: string; status_message: string | null; scheduled_time: string | null } }>(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(reply.body.message_id)}`, { apiKey: account.apiKey })).body.data;

    // The try: the reply meets the 421 and holds the mailbox again; the test emails, due too, see that hold and wait for it.
    await senderStub(bindings, mailboxId).runPass(heldUntil + 1_000, { mailboxId, read: false });
    const again = (await fileEnv().DB.prepare("SELECT send_held_until AS until FROM email_accounts WHERE id = ?").bind(mailboxId).first<{ until: number }>())!.until;
    expect(again).toBe(heldUntil + 1_000 + 5 * 60_000);
    expect(await cells(), "not claimed, not sent into the refusal").toEqual(due);
    // Nobody waits on a scheduled reply: it is tried again at the hold's end, not failed.
    const waiting = await replyStatus();
    expect(waiting).toMatchObject({ status: "SCHEDULED", scheduled_time: new Date(again).toISOString() });
    expect(waiting.status_message).toMatch(/^The mail server did not take the reply: 421 4\.7\.0 .* \(tried again at /);
    // The provider's limit lifts (here: the mailbox sends as its login again, written straight to its row): the next try delivers it.
    await fileEnv().DB.prepare("UPDATE email_accounts SET from_email = ? WHERE id = ?").bind(login.email, mailboxId).run();
    await senderStub(bindings, mailboxId).runPass(again + 1_000, { mailboxId, read: false });
    expect((await replyStatus()).status).toBe("COMPLETED");
    await vi.waitFor(async () => expect((await fetch(`${reader}/message?${new URLSearchParams({ user: lead.email, message_id: reply.body.message_id })}`)).status).toBe(200), { timeout: 15_000, interval: 250 });
  });
  it("a sender whose server refuses its login tries it once a pass: the run's other emails fail with the same words, no login tried again", { timeout: 60_000 }, async () => {
    const account = await provisionAccount();
    // A lab login no other test refuses, so its refusals in Dovecot's log are this test's.
    const login = lab.mailboxes.find((m) => m.email === "bench-seed-zoho@lab.salvo.test")!;
    const refusals = async () => ((await (await fetch(`${reader}/log?name=dovecot`)).text()).match(/plain\(bench-seed-zoho@lab\.salvo\.test,[^)]*\): Password mismatch/g) ?? []).length;
    const mailboxId = await saveLabMailbox(account.apiKey, login.email, "not-the-password", { imap_password: login.password });
    expect(await checked(account.apiKey, mailboxId)).toMatchObject({ is_smtp_success: false });
    // The password changes on the server after a check that passed: the test emails meet the refusal first.
    await fileEnv()
      .DB.prepare("UPDATE email_accounts SET is_smtp_success = 1, smtp_failure_error = NULL, disconnect_code = NULL, disconnect_message = NULL, disconnected_at = NULL WHERE id = ?")
      .bind(mailboxId)
      .run();
    const testId = await automatedTest(account.apiKey, login.email, "Hello");
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), bindings);
    // Any pass the cron's wake started is over (one at a time in the object) before the count.
    await senderStub(bindings, mailboxId).runPass(Date.now(), { mailboxId, read: false });
    const before = await refusals();
    await fileEnv().DB.prepare("UPDATE spam_test_results SET sent_at = NULL, send_error = NULL WHERE spam_test_id = ?").bind(Number(testId)).run();
    await senderStub(bindings, mailboxId).runPass(Date.now(), { mailboxId, read: false });
    const cells = (await cellsOf(testId)).map((c) => c.send_error);
    expect(cells).toHaveLength(2);
    expect(cells.every((error) => /^The mail server did not take the test email: 535 /.test(error ?? "")), JSON.stringify(cells)).toBe(true);
    await vi.waitFor(async () => expect(await refusals()).toBeGreaterThan(before), { timeout: 10_000, interval: 200 });
    expect(await refusals(), "one refused login for the pass's two emails").toBe(before + 1);
  });
});
