import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { senderStub } from "../../src/mailbox-agent/stub";
import { BODY_REF } from "../../src/platform/bodies";
import type { Bindings } from "../../src/platform/env";
import { schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, saveLabMailbox } from "./lab-mailboxes";
import { delivered, htmlOf } from "./lab-messages";

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const DAY = 86_400_000;
// A campaign email over BODY_OFFLOAD_BYTES (4096), with characters of 1 to 4 UTF-8 bytes.
const PARAGRAPHS = Array.from({ length: 80 }, (_, i) => `<p>Absatz ${i}: Grüße, naïve café — 日本語 🚀</p>`).join("");

describe("a campaign email larger than BODY_OFFLOAD_BYTES, sent by the engine into the lab", () => {
  it("is kept in R2 with a reference in its SENT event, message history shows exactly what was stored, and a long reply scheduled in its thread goes out whole", async () => {
    const account = await provisionAccount();
    const apiKey = account.apiKey;
    const sender = lab.mailboxes.find((m) => m.email === "sender7@lab.salvo.test")!;
    const lead = lab.mailboxes.find((m) => m.role === "lead" && m.email.startsWith("lead5"))!;
    const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
    expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
    const t0 = Math.ceil((Date.now() + 2 * DAY) / DAY) * DAY + 9 * 3_600_000;
    const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Long body" } });
    const campaign = created.id;
    const steps = [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "A long one", email_body: `<p>Hi {{first_name}},</p>${PARAGRAPHS}` }];
    expect((await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey, body: { sequences: steps } })).status).toBe(200);
    const schedule = { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, max_new_leads_per_day: 100, schedule_start_time: new Date(t0).toISOString() };
    expect((await callJson(`/api/v1/campaigns/${campaign}/schedule`, { method: "POST", apiKey, body: schedule })).status).toBe(200);
    expect((await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: [{ email: lead.email, first_name: "Ann" }] } })).status).toBe(200);
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
    expect((await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);

    expect(await senderStub(bindings, mailboxId).runPass(t0)).toMatchObject({ sent: 1 });

    const [sent] = await testDb().select().from(schema.events).where(eq(schema.events.campaignId, campaign)).all();
    expect(sent!.type).toBe("SENT");
    expect(sent!.body!.startsWith(BODY_REF)).toBe(true);
    const stored = await (await fileEnv().BODIES.get(sent!.body!.slice(BODY_REF.length)))!.text();
    expect(stored).toContain("Absatz 79: Grüße, naïve café — 日本語 🚀");

    const record = await testDb().select({ leadId: schema.campaignLeads.leadId }).from(schema.campaignLeads).where(eq(schema.campaignLeads.campaignId, campaign)).get();
    const history = await callJson<{ history: { type: string; email_body: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${record!.leadId}/message-history`, { apiKey });
    expect(history.body.history.map((m) => m.email_body)).toEqual([stored]);

    const [message] = await testDb().select({ messageId: schema.messages.messageId }).from(schema.messages).where(eq(schema.messages.campaignId, campaign)).all();
    expect(htmlOf(await delivered(lead.email, message!.messageId!))).toContain("Absatz 79:");

    // A long reply scheduled from the inbox: stored as a reference, sent whole by the mailbox's object.
    const replyHtml = Array.from({ length: 120 }, (_, i) => `<p>Antwort ${i}: danke schön — 日本語 ✓</p>`).join("");
    const scheduledAt = Date.now() + 10 * 60_000;
    const queued = await callJson<{ message_id: string }>(`/api/v1/campaigns/${campaign}/reply-email-thread`, {
      method: "POST",
      apiKey,
      body: { email_stats_id: sent!.id, email_body: replyHtml, scheduled_time: new Date(scheduledAt).toISOString() },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const [row] = await testDb().select().from(schema.outboundReplies).where(eq(schema.outboundReplies.messageId, queued.body.message_id)).all();
    expect(row!.html.startsWith(BODY_REF)).toBe(true);
    await senderStub(bindings, mailboxId).runPass(scheduledAt + 1_000, { mailboxId, read: false });
    const status = await callJson<{ data: { status: string } }>(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(queued.body.message_id)}`, { apiKey });
    expect(status.body.data.status).toBe("COMPLETED");
    const arrived = await delivered(lead.email, queued.body.message_id);
    expect(htmlOf(arrived)).toContain("Antwort 119:");
    expect(arrived).not.toContain(BODY_REF);
    const after = await callJson<{ history: { type: string; email_body: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${record!.leadId}/message-history`, { apiKey });
    // The campaign email went out on the test's clock (days ahead), the reply on the real one: compared unordered.
    expect(after.body.history.map((m) => m.email_body).sort()).toEqual([stored, replyHtml].sort());
  });
});
