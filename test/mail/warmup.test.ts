import { and, eq, gte, inArray, sql } from "drizzle-orm";
import { describe, expect, inject, it, vi } from "vitest";
import { imapAstring, parseValues } from "../../src/mail/imap-protocol";
import { withImapSession } from "../../src/mail/imap";
import { searchUids } from "../../src/mail/reader";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { answers, sendTimes, zonedDay } from "../../src/warmup/rules";
import { WEBHOOK_EVENT_KINDS } from "../../src/webhooks/event-kinds";
import { schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";
import { smtpSessionsCarrying } from "./lab-messages";

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const pool = lab.mailboxes.filter((m) => m.role === "warmup");
/** scripts/lib/mail-lab-config.mjs files warmup mail whose Message-ID's first random digit is one of these into Junk. */
const JUNK_DIGITS = ["0", "1", "2", "3"];
const REPLY_RATE = 40;
/** The pool's mailboxes carry a campaign too: their cap (shared with warmup: auto_adjust_warmup) and gap bind both. */
const CAP = 8;
const GAP_MINUTES = 30;
const CAMPAIGN_LEADS = 30;
const CAMPAIGN_PER_DAY = 10;
/** A pass each hour warmup mail may go, and one at 19:30 for the day's last slot (by 19:12) when a send at 19:00 held the gap. */
const ROUND_HOURS = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 19.5];

interface LabMessage {
  messageId: string;
  inReplyTo: string | null;
  from: string;
  subject: string;
}

/** What a lab mailbox's folder holds, read straight from Dovecot. */
async function folder(user: { email: string; password: string }, name: string): Promise<LabMessage[]> {
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: user.email, password: user.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      await session.command(["EXAMINE", imapAstring(name)]);
      const uids = searchUids((await session.command(["UID", "SEARCH", "ALL"])).untagged);
      const messages: LabMessage[] = [];
      if (uids.length > 0) {
        const answer = await session.command(["UID", "FETCH", uids.join(","), "(BODY.PEEK[HEADER.FIELDS (MESSAGE-ID IN-REPLY-TO FROM SUBJECT)])"]);
        for (const response of answer.untagged) {
          if (!/^\d+ FETCH /i.test(response.text)) continue;
          const items = parseValues(response)[2] as unknown[];
          const raw = items.find((item) => item instanceof Uint8Array) as Uint8Array;
          const head = new TextDecoder().decode(raw).replace(/\r?\n[ \t]+/g, " ");
          const field = (n: string) => head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${n}:`))?.slice(n.length + 1).trim() ?? null;
          messages.push({ messageId: field("message-id") ?? "", inReplyTo: field("in-reply-to"), from: field("from") ?? "", subject: field("subject") ?? "" });
        }
      }
      await session.logout();
      return messages;
    },
  );
  expect(result.ok, JSON.stringify(result)).toBe(true);
  return result.ok ? result.value : [];
}

/** Empties a lab folder (mail of earlier runs). */
async function empty(user: { email: string; password: string }, name: string): Promise<void> {
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: user.email, password: user.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      const box = await session.select(name);
      if (box.exists > 0) {
        await session.command(["STORE", "1:*", "+FLAGS.SILENT", "(\\Deleted)"]);
        await session.command(["EXPUNGE"]);
      }
      await session.logout();
    },
  );
  expect(result.ok, JSON.stringify(result)).toBe(true);
}

/** The next Monday 00:00 UTC at least two days ahead: the accelerated clock runs ahead of any real alarm. */
function startMonday(): number {
  let day = Date.now() - (Date.now() % DAY) + 2 * DAY;
  while (new Date(day).getUTCDay() !== 1) day += DAY;
  return day;
}

/** Every warmup email recorded as sent is in its receiver's INBOX or Junk: the accelerated clock waits for the lab's delivery. */
async function allDelivered(db: ReturnType<typeof testDb>, ids: number[]): Promise<void> {
  const sent = await db.select({ messageId: schema.warmupMessages.messageId }).from(schema.warmupMessages).where(and(inArray(schema.warmupMessages.senderId, ids), eq(schema.warmupMessages.status, "sent")));
  await vi.waitFor(
    async () => {
      const held = new Set<string>();
      for (const box of pool) for (const name of ["INBOX", "Junk"]) for (const m of await folder(box, name)) held.add(m.messageId);
      expect(sent.filter((r) => !held.has(r.messageId)).map((r) => r.messageId)).toEqual([]);
    },
    { timeout: 30_000, interval: 250 },
  );
}

/** A one-step campaign on the pool's mailboxes from `startAt`, 10 new leads a day, with a user webhook for every kind. */
async function sharingCampaign(apiKey: string, mailboxIds: number[], startAt: number): Promise<number> {
  const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Shares the pool" } });
  const id = created.id;
  const steps = [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hello {{first_name}}", email_body: "<p>Hi {{first_name}}, a short note.</p>" }];
  expect((await callJson(`/api/v1/campaigns/${id}/sequences`, { method: "POST", apiKey, body: { sequences: steps } })).status).toBe(200);
  const schedule = await callJson(`/api/v1/campaigns/${id}/schedule`, {
    method: "POST",
    apiKey,
    body: { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, max_new_leads_per_day: CAMPAIGN_PER_DAY, schedule_start_time: new Date(startAt).toISOString() },
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(200);
  const lead_list = Array.from({ length: CAMPAIGN_LEADS }, (_, i) => ({ email: `lead2+share${i}@lab.salvo.test`, first_name: `Share${i}` }));
  expect((await callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey, body: { lead_list } })).status).toBe(200);
  expect((await callJson(`/api/v1/campaigns/${id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: mailboxIds } })).status).toBe(200);
  const hook = await callJson("/api/v1/webhooks", { method: "POST", apiKey, body: { name: "Everything", url: "https://hooks.example.com/salvo", events: [...WEBHOOK_EVENT_KINDS] } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  expect((await callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);
  return id;
}

describe("warmup across a pool of ten lab mailboxes over seven days (issue 26's done-when)", () => {
  it("follows the ramp, rescues what the lab files into Junk, replies threaded at the rate, and the stats read back what the mailboxes hold", { timeout: 600_000 }, async () => {
    const account = await provisionAccount();
    const ids: number[] = [];
    for (const box of pool) {
      await empty(box, "INBOX");
      await empty(box, "Junk");
      const id = await saveLabMailbox(account.apiKey, box.email, box.password, { from_name: `${box.email.split("@")[0]} Lab`, warmup_enabled: true, max_email_per_day: CAP, time_to_wait_in_mins: GAP_MINUTES });
      const check = await checked(account.apiKey, id);
      expect(check, JSON.stringify(check)).toMatchObject({ is_smtp_success: true, is_imap_success: true });
      const set = await callJson(`/api/v1/email-accounts/${id}/warmup`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { warmup_enabled: true, total_warmup_per_day: 3, warmup_min_count: 3, daily_rampup: 1, is_rampup_enabled: true, reply_rate_percentage: REPLY_RATE, auto_adjust_warmup: true },
      });
      expect(set.status).toBe(200);
      ids.push(id);
    }
    const t0 = startMonday();
    const db = testDb();
    // Warmup was turned on at the clock's start (the ramp counts from it).
    await db.update(schema.emailAccounts).set({ warmupEnabledAt: new Date(t0) }).where(inArray(schema.emailAccounts.id, ids));
    const campaign = await sharingCampaign(account.apiKey, ids, t0);
    const round = async (at: number, which = ids) => {
      for (const id of which) await senderStub(bindings, id).runPass(at, { mailboxId: id });
    };
    // Each day in the hours warmup mail goes (a pass sends one email at most with a gap set); before each
    // day, what was sent is delivered (the readers judge a message not found 24 h after its send, clock time).
    for (let day = 0; day < 7; day++) {
      await allDelivered(db, ids);
      for (const hour of ROUND_HOURS) await round(t0 + day * DAY + hour * HOUR);
    }
    // The morning after, at 08:00 (when warmup mail may go again, and before the day's first email is due):
    // the last mail is placed and answered; then the answers are placed by a read that sends nothing.
    await allDelivered(db, ids);
    await round(t0 + 7 * DAY + 8 * HOUR);
    await allDelivered(db, ids);
    for (const id of ids) await senderStub(bindings, id).runRead(t0 + 7 * DAY + 8 * HOUR + 60_000, id);

    const rows = await db.select().from(schema.warmupMessages).where(inArray(schema.warmupMessages.senderId, ids));
    const firsts = rows.filter((r) => r.kind === "warmup");
    // The objects' real alarms also run passes at the real time (before t0): what they sent is checked like the rest, the ramp on the clock's days.
    const onClock = (r: { sentAt: Date }) => r.sentAt.getTime() >= t0 && r.sentAt.getTime() < t0 + 7 * DAY;
    expect(rows.every((r) => r.status === "sent")).toBe(true);
    // The ramp: daily_rampup 1 × n, up to 3 (min = max = 3), n counted from the day warmup was turned on, which nothing moved.
    const turnedOn = await db
      .select({ id: schema.emailAccounts.id, at: schema.emailAccounts.warmupEnabledAt, rampup: schema.emailAccounts.dailyRampup, ramping: schema.emailAccounts.isRampupEnabled, min: schema.emailAccounts.warmupMinCount, max: schema.emailAccounts.totalWarmupPerDay })
      .from(schema.emailAccounts)
      .where(inArray(schema.emailAccounts.id, ids));
    expect(turnedOn.filter((m) => m.at?.getTime() !== t0), "warmup turned on at the clock's start").toEqual([]);
    for (const id of ids) {
      const perDay = Array.from({ length: 7 }, (_, d) => firsts.filter((r) => r.senderId === id && onClock(r) && Math.floor((r.sentAt.getTime() - t0) / DAY) === d).length);
      // Its sends' times in the message: a day off the ramp then says which pass sent the extra one.
      const times = firsts.filter((r) => r.senderId === id).map((r) => new Date(r.sentAt).toISOString());
      const settings = turnedOn.find((m) => m.id === id);
      expect(perDay, `mailbox ${id} (${JSON.stringify(settings)}), t0 ${new Date(t0).toISOString()}, sent ${times.join(" ")}`).toEqual([1, 2, 3, 3, 3, 3, 3]);
      // Partners: other pool members only, spread (no receiver twice in a day).
      for (let d = 0; d < 7; d++) {
        const receivers = firsts.filter((r) => r.senderId === id && onClock(r) && Math.floor((r.sentAt.getTime() - t0) / DAY) === d).map((r) => r.receiverId);
        expect(new Set(receivers).size).toBe(receivers.length);
        expect(receivers).not.toContain(id);
      }
      // Sends between 08:00 and 20:00, replies too.
      for (const r of rows.filter((row) => row.senderId === id && row.sentAt.getTime() >= t0)) {
        const hourOfDay = ((r.sentAt.getTime() - t0) % DAY) / HOUR;
        expect(hourOfDay).toBeGreaterThanOrEqual(8);
        expect(hourOfDay).toBeLessThan(20);
      }
    }

    // The campaign went out at its pace, and with warmup mail it kept every mailbox's cap and gap.
    const sentEvents = await db
      .select({ mailboxId: schema.events.emailAccountId, at: schema.events.occurredAt })
      .from(schema.events)
      .where(and(eq(schema.events.accountId, account.id), eq(schema.events.type, "SENT")));
    expect(sentEvents).toHaveLength(CAMPAIGN_LEADS);
    expect(sentEvents.every((e) => e.at.getTime() >= t0 && e.at.getTime() < t0 + 3 * DAY)).toBe(true);
    for (const id of ids) {
      const times = [...sentEvents.filter((e) => e.mailboxId === id).map((e) => e.at.getTime()), ...rows.filter((r) => r.senderId === id && onClock(r)).map((r) => r.sentAt.getTime())].sort((a, b) => a - b);
      for (let d = 0; d < 8; d++) expect(times.filter((t) => Math.floor((t - t0) / DAY) === d).length, `mailbox ${id} day ${d}`).toBeLessThanOrEqual(CAP);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!, `mailbox ${id}`).toBeGreaterThanOrEqual(GAP_MINUTES * 60_000);
    }
    // Where each landed is what the lab's filter did: its known share in spam, every one found.
    const junked = (messageId: string) => JUNK_DIGITS.includes(messageId.charAt(4));
    for (const r of rows) {
      expect(r.landed, r.messageId).toBe(junked(r.messageId) ? "spam" : "inbox");
      expect(r.rescuedAt !== null).toBe(junked(r.messageId));
      expect(r.openedAt).not.toBeNull();
    }
    expect(rows.filter((r) => junked(r.messageId)).length).toBeGreaterThan(0);
    // Replies: exactly the share the stable hash picks, each in its thread.
    const replies = rows.filter((r) => r.kind === "reply");
    for (const first of firsts) {
      const reply = replies.find((r) => r.replyToId === first.id);
      expect(reply !== undefined, first.messageId).toBe(answers(first.messageId, REPLY_RATE));
      if (reply) {
        expect(reply.senderId).toBe(first.receiverId);
        expect(reply.receiverId).toBe(first.senderId);
        expect(reply.subject).toBe(`Re: ${first.subject}`);
      }
    }
    const share = replies.length / firsts.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.6);

    // What the lab's mailboxes hold: nothing left in Junk, every warmup email in its receiver's INBOX once.
    const held = new Map<number, LabMessage[]>();
    for (const [i, box] of pool.entries()) {
      expect((await folder(box, "Junk")).filter((m) => m.messageId.startsWith("<wu.")), `${box.email} Junk`).toEqual([]);
      held.set(ids[i]!, (await folder(box, "INBOX")).filter((m) => m.messageId.startsWith("<wu.")));
    }
    for (const r of rows) {
      const copies = held.get(r.receiverId)!.filter((m) => m.messageId === r.messageId);
      expect(copies, r.messageId).toHaveLength(1);
      if (r.kind === "reply") expect(copies[0]!.inReplyTo).toBe(firsts.find((f) => f.id === r.replyToId)!.messageId);
    }

    // The stats read back exactly that.
    const first = new Date(t0).toISOString().slice(0, 10);
    const last = new Date(t0 + 6 * DAY).toISOString().slice(0, 10);
    for (const [i, box] of pool.entries()) {
      const id = ids[i]!;
      const all = [...held.values()].flat();
      const mine = all.filter((m) => m.from.includes(box.email));
      const repliesToMe = held.get(id)!.filter((m) => m.inReplyTo !== null);
      const stats = await callJson<Record<string, unknown> & { stats_by_date: { sent_count: number; spam_count: number; inbox_count: number; reply_count: number; save_from_spam_count: number }[] }>(
        `/api/v1/email-accounts/${id}/warmup-stats?start_date=${first}&end_date=${last}`,
        { apiKey: account.apiKey },
      );
      expect(stats.status).toBe(200);
      const sum = (key: "sent_count" | "spam_count" | "inbox_count" | "reply_count" | "save_from_spam_count") => stats.body.stats_by_date.reduce((total, d) => total + d[key], 0);
      // Replies sent on the morning after fall outside the window; the lifetime counts hold them.
      expect(stats.body.sent_count, box.email).toBe(mine.length);
      expect(stats.body.spam_count).toBe(mine.filter((m) => junked(m.messageId)).length);
      expect(stats.body.inbox_count).toBe(mine.filter((m) => !junked(m.messageId)).length);
      expect(stats.body.warmup_email_received_count).toBe(held.get(id)!.length);
      expect(sum("sent_count")).toBe(rows.filter((r) => r.senderId === id && onClock(r)).length);
      expect(sum("spam_count")).toBe(sum("save_from_spam_count"));
      expect(sum("reply_count")).toBe(repliesToMe.filter((m) => onClock(rows.find((r) => r.messageId === m.messageId)!)).length);
      const details = (await callJson<{ warmup_details: Record<string, unknown> }>(`/api/v1/email-accounts/${id}`, { apiKey: account.apiKey })).body.warmup_details;
      expect(details).toMatchObject({ total_sent_count: mine.length, total_spam_count: mine.filter((m) => junked(m.messageId)).length, pool_size: 10 });
    }

    // Isolation: the campaign's own events only; no inbox message, analytics figure, webhook delivery or untracked reply from warmup mail.
    const kinds = await db.select({ type: schema.events.type, n: sql<number>`count(*)` }).from(schema.events).where(eq(schema.events.accountId, account.id)).groupBy(schema.events.type);
    expect(Object.fromEntries(kinds.map((k) => [k.type, k.n]))).toEqual({ SENT: CAMPAIGN_LEADS });
    const warmupIds = rows.map((r) => r.messageId.replace(/^<|>$/g, ""));
    const mentionsWarmup = (body: unknown) => warmupIds.filter((m) => JSON.stringify(body).includes(m));
    for (const view of ["inbox-replies", "unread-replies", "important", "sent", "archived"]) {
      const listed = await callJson(`/api/v1/master-inbox/${view}`, { method: "POST", apiKey: account.apiKey, body: { limit: 20 } });
      expect(listed.status, view).toBe(200);
      expect(mentionsWarmup(listed.body), view).toEqual([]);
    }
    const untracked = await callJson<{ data?: unknown[] }>("/api/v1/master-inbox/untracked-replies", { apiKey: account.apiKey });
    expect(mentionsWarmup(untracked.body)).toEqual([]);
    expect(JSON.stringify(untracked.body)).not.toContain("<wu.");
    // The hosted shape carries the counts as strings.
    const analytics = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaign}/analytics`, { apiKey: account.apiKey });
    expect(analytics.body).toMatchObject({ sent_count: String(CAMPAIGN_LEADS), reply_count: "0", bounce_count: "0" });
    const deliveries = await db.select({ type: schema.webhookDeliveries.eventType, payload: schema.webhookDeliveries.payload }).from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.accountId, account.id));
    expect(deliveries.filter((d) => d.type === "EMAIL_SENT")).toHaveLength(CAMPAIGN_LEADS);
    expect(deliveries.filter((d) => !["EMAIL_SENT", "FIRST_EMAIL_SENT", "CAMPAIGN_STATUS_CHANGED"].includes(d.type))).toEqual([]);
    expect(mentionsWarmup(deliveries)).toEqual([]);

    // A mailbox that starts failing its check leaves the pool and receives no more warmup mail.
    const failing = ids[9]!;
    const changed = await callJson(`/api/v1/email-accounts/${failing}`, { method: "POST", apiKey: account.apiKey, body: { password: "not-the-password" } });
    expect(changed.status).toBe(200);
    expect((await checked(account.apiKey, failing)).is_smtp_success).toBe(false);
    const dayAfter = t0 + 8 * DAY;
    for (const hour of [8, 12, 16, 20]) await round(dayAfter + hour * HOUR);
    const later = await db
      .select()
      .from(schema.warmupMessages)
      .where(and(inArray(schema.warmupMessages.senderId, ids), gte(schema.warmupMessages.sentAt, new Date(dayAfter))));
    expect(later.filter((r) => r.kind === "warmup").length).toBeGreaterThan(0);
    expect(later.filter((r) => r.receiverId === failing || r.senderId === failing)).toEqual([]);
    const shown = (await callJson<{ warmup_details: Record<string, unknown> }>(`/api/v1/email-accounts/${failing}`, { apiKey: account.apiKey })).body.warmup_details;
    expect(shown).toMatchObject({ state: "out_of_pool" });
  });
  it("sends a pass's warmup emails on one SMTP session when the mailbox keeps no gap (issue 27)", { timeout: 120_000 }, async () => {
    const account = await provisionAccount();
    const boxes = pool.slice(0, 4);
    const ids: number[] = [];
    for (const box of boxes) {
      const id = await saveLabMailbox(account.apiKey, box.email, box.password, { warmup_enabled: true, time_to_wait_in_mins: 0 });
      expect(await checked(account.apiKey, id)).toMatchObject({ is_smtp_success: true, is_imap_success: true });
      const set = await callJson(`/api/v1/email-accounts/${id}/warmup`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { warmup_enabled: true, total_warmup_per_day: 3, warmup_min_count: 3, is_rampup_enabled: false, reply_rate_percentage: 0 },
      });
      expect(set.status).toBe(200);
      ids.push(id);
    }
    const db = testDb();
    await db.update(schema.emailAccounts).set({ warmupEnabledAt: new Date(Date.now() - 7 * DAY) }).where(inArray(schema.emailAccounts.id, ids));
    // 19:30 of a weekday ahead: the whole day's three warmup emails are due (the last by 19:12), and with no gap one pass sends them all.
    const at = startMonday() + 19.5 * HOUR;
    await senderStub(bindings, ids[0]!).runPass(at, { mailboxId: ids[0]!, read: false });
    const sent = await db
      .select({ messageId: schema.warmupMessages.messageId, status: schema.warmupMessages.status })
      .from(schema.warmupMessages)
      .where(and(eq(schema.warmupMessages.senderId, ids[0]!), eq(schema.warmupMessages.sentAt, new Date(at))));
    expect(sent.map((r) => r.status)).toEqual(["sent", "sent", "sent"]);
    await vi.waitFor(async () => expect(await smtpSessionsCarrying(sent.map((r) => r.messageId)), "the pass's three warmup emails on one SMTP session").toHaveLength(1), { timeout: 10_000, interval: 250 });
  });

  it("blocks a mailbox whose warmup mail a server refuses by policy three times in a day, in the batch that records the third", { timeout: 120_000 }, async () => {
    const account = await provisionAccount();
    const sender = await saveLabMailbox(account.apiKey, pool[0]!.email, pool[0]!.password, { warmup_enabled: true, time_to_wait_in_mins: 0 });
    expect(await checked(account.apiKey, sender)).toMatchObject({ is_smtp_success: true, is_imap_success: true });
    const set = await callJson(`/api/v1/email-accounts/${sender}/warmup`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { warmup_enabled: true, total_warmup_per_day: 3, warmup_min_count: 3, is_rampup_enabled: false, reply_rate_percentage: 0 },
    });
    expect(set.status).toBe(200);
    // The pool's other member: an address whose server refuses mail to it by policy (it passed its checks once).
    const refusing = await saveLabMailbox(account.apiKey, lab.limited_recipients.policy, "not-a-lab-password", { warmup_enabled: true });
    await checked(account.apiKey, refusing);
    const db = testDb();
    await db.update(schema.emailAccounts).set({ isSmtpSuccess: true, isImapSuccess: true, disconnectCode: null, isSuspended: false }).where(eq(schema.emailAccounts.id, refusing));
    await db.update(schema.emailAccounts).set({ warmupEnabledAt: new Date(Date.now() - 7 * DAY) }).where(inArray(schema.emailAccounts.id, [sender, refusing]));
    const times = sendTimes(sender, zonedDay(startMonday(), "UTC"), 3, "UTC");
    const blocked = async () => (await db.select({ reason: schema.emailAccounts.warmupBlockedReason }).from(schema.emailAccounts).where(eq(schema.emailAccounts.id, sender)).get())!.reason;

    await senderStub(bindings, sender).runPass(times[1]! + 60_000, { mailboxId: sender, read: false });
    const refused = () => db.select({ status: schema.warmupMessages.status, kind: schema.warmupMessages.errorKind, error: schema.warmupMessages.error }).from(schema.warmupMessages).where(eq(schema.warmupMessages.senderId, sender));
    expect((await refused()).map((r) => [r.status, r.kind]), "two refused by policy").toEqual([["refused", "policy"], ["refused", "policy"]]);
    expect(await blocked(), "two policy rejections do not block").toBeNull();

    await senderStub(bindings, sender).runPass(times[2]! + 60_000, { mailboxId: sender, read: false });
    expect((await refused()).map((r) => r.kind)).toEqual(["policy", "policy", "policy"]);
    expect(await blocked(), "the third blocks, with the server's words").toMatch(/^550 5\.7\.1 .*policy/);
    const shown = (await callJson<{ warmup_details: Record<string, unknown> }>(`/api/v1/email-accounts/${sender}`, { apiKey: account.apiKey })).body.warmup_details;
    expect(shown).toMatchObject({ is_warmup_blocked: true, state: "blocked" });
  });
});
