import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { imapString } from "../../src/mail/imap-protocol";
import { withImapSession } from "../../src/mail/imap";
import { sendMail } from "../../src/mail/smtp";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { eq } from "drizzle-orm";
import { campaignRow, eventsOf, leadByEmail, leadRow, messagesOf, recordsOf, schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createWebhook, interceptReceiver } from "../webhooks/fixtures";
import { checked, LAB_HOSTS, saveLabMailbox } from "./lab-mailboxes";

/**
 * Issue 25's lab test: leads answer from their own lab mailboxes, the mailbox's object reads the
 * replies back, and the categoriser (rules, then the model: the suite's Workers AI binding is the
 * fake of test/triage/fake-workers-ai.mjs) sorts each one off the request path, within seconds.
 */

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const MINUTE = 60_000;
const DAY = 86_400_000;
const account = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
const sender = account("sender5");
const [remover, leaver, keen, away] = [account("lead1"), account("lead2"), account("lead3"), account("lead4")];

interface Sent {
  to_email: string;
  message_id: string;
  subject: string;
  campaign_lead_id: number;
}

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

async function reply(from: { email: string; password: string }, to: Sent, text: string) {
  const sent = await sendMail(
    { host: lab.smtp.host, port: lab.smtp.port, security: "starttls", username: from.email, password: from.password },
    {
      from: from.email,
      to: sender.email,
      subject: `Re: ${to.subject}`,
      text: `${text}\n\nOn Mon, 3 Mar 2031 at 09:00, Sam <${sender.email}> wrote:\n> Hi, a quick question about your outbound.`,
      headers: { "In-Reply-To": to.message_id, References: to.message_id },
    },
    { allowPlain: false, outbound: LAB_HOSTS },
  );
  expect(sent.ok, JSON.stringify(sent)).toBe(true);
}

/** An out-of-office answer, put straight into the sender's INBOX (a responder cannot be made to answer in the lab). */
async function outOfOffice(from: { email: string }, to: Sent) {
  const raw = [
    `From: ${from.email}`,
    `To: ${sender.email}`,
    `Subject: Automatic reply: ${to.subject}`,
    "Auto-Submitted: auto-replied",
    `In-Reply-To: ${to.message_id}`,
    `Message-ID: <ooo-${crypto.randomUUID()}@lab.salvo.test>`,
    `Date: ${new Date(Date.now() - 60_000).toUTCString()}`,
    "",
    "I am out of the office until Monday with limited access to email.",
    "",
  ].join("\r\n");
  const result = await withImapSession(
    { host: lab.imap_tls.host, port: lab.imap_tls.port, security: "tls", username: sender.email, password: sender.password },
    { allowPlain: false, outbound: LAB_HOSTS },
    async (session) => {
      await session.login();
      await session.command(["APPEND", imapString("INBOX"), { literal: new TextEncoder().encode(raw) }]);
      await session.logout();
    },
  );
  expect(result.ok, JSON.stringify(result)).toBe(true);
}

describe("every reply sorted as it arrives (issue 25)", () => {
  it("categorises three lab replies automatically, stops the do-not-contact lead everywhere, fires the webhooks, and keeps analytics rules 2-6", async () => {
    const { apiKey } = await provisionAccount();
    const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
    expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true, is_imap_success: true });
    const t0 = Math.ceil((Date.now() + 2 * DAY) / DAY) * DAY + 9 * 60 * MINUTE;

    const create = async (name: string) => (await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name } })).body.id;
    const campaign = await create("Triage lab");
    const other = await create("Another campaign");
    await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
      method: "POST",
      apiKey,
      body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Quick question, {{first_name}}", email_body: "<p>Hi {{first_name}}, a quick question.</p>" }] },
    });
    await callJson(`/api/v1/campaigns/${campaign}/schedule`, {
      method: "POST",
      apiKey,
      body: { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, schedule_start_time: new Date(t0).toISOString() },
    });
    await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey, body: { out_of_office_detection_settings: { autoCategorizeOOO: true, ignoreOOOasReply: true } } });
    const leads = [remover, leaver, keen, away];
    await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: leads.map((lead, i) => ({ email: lead.email, first_name: ["Rae", "Lou", "Kim", "Ada"][i] })) } });
    const inOther = (await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${other}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: [{ email: remover.email }, { email: leaver.email }], settings: { return_lead_ids: true } },
    })).body.emailToLeadIdMap;
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
    const hook = await createWebhook(apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED", "LEAD_UNSUBSCRIBED"] });
    const otherHook = await createWebhook(apiKey, other, { event_types: ["LEAD_UNSUBSCRIBED"] });
    await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey, body: { status: "START" } });

    const stub = senderStub(bindings, mailboxId);
    for (let minute = 0; minute < leads.length; minute += 1) expect((await stub.runPass(t0 + minute * MINUTE, { read: false })).sent).toBe(1);
    const sent: Sent[] = (await messagesOf(campaign)).map((m) => ({ to_email: m.toEmail!, message_id: m.messageId, subject: m.subject!, campaign_lead_id: m.campaignLeadId }));
    const to = (lead: { email: string }) => sent.find((m) => m.to_email === lead.email)!;

    const startedAt = Date.now();
    await reply(remover, to(remover), "please remove me");
    await reply(leaver, to(leaver), "I've left the company, try Dana");
    await reply(keen, to(keen), "sounds good, can we talk Tuesday?");
    await outOfOffice(away, to(away));

    const replies = async () => (await eventsOf(campaign, "REPLY")).map((e) => ({ id: e.id, record: e.campaignLeadId, is_ooo: e.isOoo, ignored: e.ignored }));
    await vi.waitFor(
      async () => {
        await stub.runRead(Date.now(), mailboxId);
        expect(await replies()).toHaveLength(4);
      },
      { timeout: 30_000, interval: 500 },
    );
    const read = Date.now();
    const categorisation = async (record: number) => {
      const row = (await replies()).find((r) => r.record === record)!;
      const t = schema.replyCategorisations;
      const stored = await testDb().select({ category_id: t.categoryId, source: t.source, rule_id: t.ruleId, model: t.model, needs_review: t.needsReview }).from(t).where(eq(t.eventId, row.id)).get();
      return stored ?? null;
    };
    // Off the request path: the triage queue's consumer, within seconds of the read.
    await vi.waitFor(
      async () => {
        for (const lead of leads) expect(await categorisation(to(lead).campaign_lead_id), lead.email).not.toBeNull();
      },
      { timeout: 15_000, interval: 200 },
    );
    const seconds = (Date.now() - read) / 1000;
    expect(seconds).toBeLessThan(15);
    expect(await categorisation(to(remover).campaign_lead_id)).toMatchObject({ category_id: 4, source: "rule", rule_id: "dnc.remove-me@1", needs_review: false });
    expect(await categorisation(to(leaver).campaign_lead_id)).toMatchObject({ category_id: 7, source: "rule", rule_id: "wrong_person.left-company@1" });
    expect(await categorisation(to(keen).campaign_lead_id)).toMatchObject({ category_id: 2, source: "model", model: "@cf/meta/llama-3.2-3b-instruct", needs_review: false });
    expect(await categorisation(to(away).campaign_lead_id)).toMatchObject({ category_id: 6, source: "rule", rule_id: "ooo.flagged@1" });

    const records = async (campaignId: number) =>
      new Map(
        await Promise.all(
          (await recordsOf(campaignId)).map(async (r) => {
            const email = (await leadRow(r.leadId)).email;
            return [email, { id: r.id, state: r.state, category_id: r.categoryId, email }] as const;
          }),
        ),
      );
    const here = await records(campaign);
    expect(here.get(remover.email)).toMatchObject({ category_id: 4, state: "STOPPED" });
    expect(here.get(leaver.email)).toMatchObject({ category_id: 7, state: "COMPLETED" });
    expect(here.get(keen.email)).toMatchObject({ category_id: 2, state: "COMPLETED" });
    expect(here.get(away.email)).toMatchObject({ category_id: 6 });
    const there = await records(other);
    // The do-not-contact lead is stopped in every campaign of the account; the others are left alone.
    expect(there.get(remover.email)).toMatchObject({ id: inOther[remover.email], state: "STOPPED" });
    expect(there.get(leaver.email)).toMatchObject({ state: "DRAFTED" });
    expect((await leadByEmail((await campaignRow(campaign)).accountId, remover.email)).isUnsubscribed).toBe(true);

    // The webhooks fire (and reach their receiver through the delivery queue).
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(6), { timeout: 10_000, interval: 100 });
    const payloads = receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown> & { lead_category?: { new_id: number }; sl_lead_email: string });
    const changes = payloads.filter((p) => p.event_type === "LEAD_CATEGORY_UPDATED" && p.webhook_id === hook.id);
    expect(Object.fromEntries(changes.map((p) => [p.sl_lead_email, [p.lead_category!.new_id, p.category_source]]))).toEqual({
      [remover.email]: [4, "rule"],
      [leaver.email]: [7, "rule"],
      [keen.email]: [2, "model"],
      [away.email]: [6, "event"],
    });
    const unsubscribed = payloads.filter((p) => p.event_type === "LEAD_UNSUBSCRIBED");
    expect(unsubscribed.map((p) => [p.webhook_id, p.sl_lead_email, p.source]).sort()).toEqual(
      [
        [hook.id, remover.email, "reply"],
        [otherHook.id, remover.email, "reply"],
      ].sort(),
    );

    // Analytics rules 2-6: four replies, one out-of-office (ignored here, so not in reply_count).
    const window = `start_date=${new Date(startedAt - DAY).toISOString().slice(0, 10)}&end_date=${new Date(startedAt + DAY).toISOString().slice(0, 10)}`;
    const stats = async () => (await callJson<Record<string, string>>(`/api/v1/campaigns/${campaign}/analytics-by-date?${window}`, { apiKey })).body;
    expect(await stats()).toMatchObject({ total_reply_count: "4", reply_count: "3", non_ooo_reply_count: "3" });

    // Rule 6: the away lead comes back with a real answer; its latest categorised reply decides, so both of its replies count as not out of office.
    await reply(away, to(away), "Back now, can we talk on Thursday?");
    await vi.waitFor(
      async () => {
        await stub.runRead(Date.now(), mailboxId);
        expect(await replies()).toHaveLength(5);
      },
      { timeout: 30_000, interval: 500 },
    );
    await vi.waitFor(async () => expect((await records(campaign)).get(away.email)).toMatchObject({ category_id: 2 }), { timeout: 15_000, interval: 200 });
    expect(await stats()).toMatchObject({ total_reply_count: "5", reply_count: "4", non_ooo_reply_count: "5" });
  });
});
