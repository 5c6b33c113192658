import { describe, expect, inject, it, vi } from "vitest";
import { eventCount, messagesOf } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { checked, saveLabMailbox } from "./lab-mailboxes";
import { delivered, header, htmlOf } from "./lab-messages";

const lab = inject("mailLab");
const account = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;
const sender = account("sender4");
const [lead, colleague] = [account("lead1"), account("lead2")];

interface Sent {
  message_id: string;
  from_email: string;
  to_email: string;
  subject: string;
}

describe("a campaign's test email, sent into the lab", () => {
  it("sends a step as the lead would get it, to the lead or another address, and records nothing", async () => {
    const { apiKey } = await provisionAccount();
    const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { signature: "<p>Sam, Lab Inc.</p>" });
    expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
    const campaign = await createCampaign(apiKey, { name: "Test sends" });
    const sequences = await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
      method: "POST",
      apiKey,
      body: {
        sequences: [
          { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hello {{first_name}}", email_body: '<p>Hi {{first_name}}, see <a href="https://example.com/offer?x=1">the offer</a>.</p>%signature%' },
          { seq_number: 2, seq_delay_details: { delay_in_days: 2 }, subject: "", email_body: "<p>Any thoughts, {{first_name}}?</p>" },
        ],
      },
    });
    expect(sequences.status).toBe(200);
    await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey, body: { unsubscribe_text: "Stop these emails" } });
    const { body: added } = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: [{ email: lead.email, first_name: "Ada" }], settings: { return_lead_ids: true } },
    });
    const { body: found } = await callJson<{ id: number }>(`/api/v1/leads?email=${encodeURIComponent(lead.email)}`, { apiKey });
    expect(added.emailToLeadIdMap[lead.email]).toBeDefined();
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });

    const first = await callJson<Sent>(`/api/v1/campaigns/${campaign}/send-test-email`, { method: "POST", apiKey, body: { leadId: found.id, sequenceNumber: 1 } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ ok: true, message: "Test email sent successfully", from_email: sender.email, to_email: lead.email, subject: "Hello Ada" });
    const raw = await vi.waitFor(() => delivered(lead.email, first.body.message_id), { timeout: 15_000, interval: 250 });
    expect(header(raw, "Subject")).toBe("Hello Ada");
    expect(header(raw, "From")).toContain(sender.email);
    const html = htmlOf(raw);
    // The real link, the signature and the footer, and no tracking: a test is never an open or a click.
    expect(html).toContain('href="https://example.com/offer?x=1"');
    expect(html).toContain("Sam, Lab Inc.");
    expect(html).toContain(`mailto:${sender.email}?subject=unsubscribe`);
    expect(html).not.toMatch(/\/t\/|<img/);

    // A follow-up without a subject, to a colleague: "Re:" the first step's subject, as the lead would see it.
    const second = await callJson<Sent>(`/api/v1/campaigns/${campaign}/send-test-email`, {
      method: "POST",
      apiKey,
      body: { leadId: String(found.id), sequenceNumber: 2, customEmailAddress: colleague.email.toUpperCase(), selectedEmailAccountId: mailboxId },
    });
    expect(second.body).toMatchObject({ to_email: colleague.email, subject: "Re: Hello Ada" });
    const followUp = await vi.waitFor(() => delivered(colleague.email, second.body.message_id), { timeout: 15_000, interval: 250 });
    expect(header(followUp, "To")).toBe(`<${colleague.email}>`);
    expect(header(followUp, "In-Reply-To")).toBeNull();
    expect(htmlOf(followUp)).toContain("Any thoughts, Ada?");

    expect({ messages: (await messagesOf(campaign)).length, events: await eventCount(campaign) }).toEqual({ messages: 0, events: 0 });
  });
});
