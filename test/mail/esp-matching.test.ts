import { describe, expect, inject, it } from "vitest";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { setMailbox } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, saveLabMailbox } from "./lab-mailboxes";
import { delivered, header } from "./lab-messages";

/**
 * CONTRACT 23.3 on the lab: with ESP matching on, a Google lead's first email goes out from the
 * Gmail mailbox and a Microsoft lead's from the Outlook one, through the lab's real Postfix, while a
 * lead whose provider is unknown still goes out. The lab's addresses share one domain, so the
 * leads' providers are written as the background pass leaves them (its lookup through a real
 * DNS-over-HTTPS responder is tested in test/leads/esp.test.ts and test/engine/esp-matching.test.ts).
 */

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const [googleLead, microsoftLead, unknownLead] = lab.mailboxes.filter((m) => m.role === "lead").slice(0, 3) as [
  (typeof lab.mailboxes)[number],
  (typeof lab.mailboxes)[number],
  (typeof lab.mailboxes)[number],
];
/** Monday 2027-05-10 10:00 UTC, inside the campaign's window, after its start. */
const MONDAY_10 = Date.parse("2027-05-10T10:00:00Z");

async function labSender(apiKey: string, email: string, type: "GMAIL" | "OUTLOOK") {
  const sender = lab.mailboxes.find((m) => m.email === email)!;
  const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
  expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
  // A Gmail or Outlook mailbox as its type says (the lab serves both over password SMTP).
  await setMailbox(mailboxId, { type });
  return mailboxId;
}

describe("ESP matching on the lab (CONTRACT 23.3)", () => {
  it("sends a Google lead's first email from the Gmail mailbox, a Microsoft lead's from the Outlook one, and a matchless lead's still", async () => {
    const account = await provisionAccount();
    const apiKey = account.apiKey;
    const gmail = await labSender(apiKey, "sender6@lab.salvo.test", "GMAIL");
    const outlook = await labSender(apiKey, "sender7@lab.salvo.test", "OUTLOOK");
    const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Matching" } });
    const id = created.id;
    const steps = [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hello {{first_name}}", email_body: "<p>Hi {{first_name}}</p>" }];
    expect((await callJson(`/api/v1/campaigns/${id}/sequences`, { method: "POST", apiKey, body: { sequences: steps } })).status).toBe(200);
    const schedule = await callJson(`/api/v1/campaigns/${id}/schedule`, {
      method: "POST",
      apiKey,
      // Months ahead of the real clock, so the senders' real-time alarms send nothing during the test.
      body: { timezone: "UTC", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", min_time_btw_emails: 1, schedule_start_time: "2027-05-08T00:00:00Z" },
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(200);
    expect((await callJson(`/api/v1/campaigns/${id}/settings`, { method: "POST", apiKey, body: { enable_ai_esp_matching: true } })).status).toBe(200);
    const leads = [
      { email: googleLead.email, first_name: "Google" },
      { email: microsoftLead.email, first_name: "Microsoft" },
      { email: unknownLead.email, first_name: "Unknown" },
    ];
    expect((await callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey, body: { lead_list: leads } })).body).toMatchObject({ upload_count: 3 });
    await fileEnv().DB.prepare("UPDATE leads SET email_provider = ?, esp_checked_at = ? WHERE account_id = ? AND email = ?").bind("google", MONDAY_10, account.id, googleLead.email).run();
    await fileEnv().DB.prepare("UPDATE leads SET email_provider = ?, esp_checked_at = ? WHERE account_id = ? AND email = ?").bind("microsoft", MONDAY_10, account.id, microsoftLead.email).run();
    await callJson(`/api/v1/campaigns/${id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [gmail, outlook] } });
    expect((await callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);

    // The Outlook mailbox's passes first (one email a pass: the campaign keeps a 1-minute gap): the
    // Microsoft lead and the unknown one, then nothing more, never the Google lead.
    const pass = async (mailboxId: number, minutes: number) => (await senderStub(bindings, mailboxId).runPass(MONDAY_10 + minutes * 60_000, { read: false })).sent;
    expect([await pass(outlook, 0), await pass(outlook, 2), await pass(outlook, 4)]).toEqual([1, 1, 0]);
    expect([await pass(gmail, 6), await pass(gmail, 8)]).toEqual([1, 0]);

    const rows = await fileEnv().DB.prepare(
      `SELECT l.email, m.email_account_id AS mailbox, m.message_id FROM messages m JOIN campaign_leads cl ON cl.id = m.campaign_lead_id
       JOIN leads l ON l.id = cl.lead_id WHERE m.campaign_id = ? AND m.status = 'sent'`,
    )
      .bind(id)
      .all<{ email: string; mailbox: number; message_id: string }>();
    const sent = new Map(rows.results.map((row) => [row.email, row]));
    expect(Object.fromEntries([...sent].map(([email, row]) => [email, row.mailbox]))).toEqual({
      [googleLead.email]: gmail,
      [microsoftLead.email]: outlook,
      [unknownLead.email]: outlook,
    });
    // Delivered by the lab's Postfix, from the matched mailbox's address.
    expect(header(await delivered(googleLead.email, sent.get(googleLead.email)!.message_id), "From")).toContain("sender6@lab.salvo.test");
    expect(header(await delivered(microsoftLead.email, sent.get(microsoftLead.email)!.message_id), "From")).toContain("sender7@lab.salvo.test");
    expect(header(await delivered(unknownLead.email, sent.get(unknownLead.email)!.message_id), "Subject")).toBe("Hello Unknown");
  });
});
