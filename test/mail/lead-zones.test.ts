import { describe, expect, inject, it } from "vitest";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { checked, saveLabMailbox } from "./lab-mailboxes";
import { delivered, header } from "./lab-messages";

/**
 * CONTRACT 23.2 on the lab: a campaign "Mon-Fri 09:00-17:00, each lead's zone" with leads in Tokyo,
 * Paris and New York sends each lead's first email at 09:00 of its own Monday, on a clock the test
 * moves. The Monday is 2027-03-15, the day after New York moved to summer time (09:00 EDT is 13:00
 * UTC, not 14:00), and two weeks later Paris's follow-up is due at 09:00 CEST (07:00 UTC, not 08:00).
 */

const lab = inject("mailLab");
const bindings = fileEnv() as unknown as Bindings;
const [tokyo, paris, newYork] = lab.mailboxes.filter((m) => m.role === "lead").slice(0, 3) as [
  (typeof lab.mailboxes)[number],
  (typeof lab.mailboxes)[number],
  (typeof lab.mailboxes)[number],
];
const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);

async function leadZoneCampaign(apiKey: string, mailboxId: number, leadZones: boolean) {
  const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Each lead's hours" } });
  const id = created.id;
  const steps = [
    { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hello {{first_name}}", email_body: "<p>Hi {{first_name}}</p>" },
    { seq_number: 2, seq_delay_details: { delay_in_days: 14 }, subject: "", email_body: "<p>Following up</p>" },
  ];
  expect((await callJson(`/api/v1/campaigns/${id}/sequences`, { method: "POST", apiKey, body: { sequences: steps } })).status).toBe(200);
  const schedule = await callJson<{ data: Record<string, unknown> }>(`/api/v1/campaigns/${id}/schedule`, {
    method: "POST",
    apiKey,
    body: {
      // The campaign's own zone is UTC; the leads' hours are their own. Months ahead of the real
      // clock, so the sender's real-time alarms find nothing to send during the test.
      timezone: "UTC",
      days_of_the_week: [1, 2, 3, 4, 5],
      start_hour: "09:00",
      end_hour: "17:00",
      min_time_btw_emails: 1,
      schedule_start_time: "2027-03-13T00:00:00Z",
      ...(leadZones ? { send_in_lead_timezone: true } : {}),
    },
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(200);
  expect(schedule.body.data.send_in_lead_timezone).toBe(leadZones);
  const upload = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${id}/leads`, {
    method: "POST",
    apiKey,
    body: {
      lead_list: [
        { email: tokyo.email, first_name: "Tokyo", timezone: "Asia/Tokyo" },
        { email: paris.email, first_name: "Paris", custom_fields: { Time_Zone: "europe/paris" } },
        { email: newYork.email, first_name: "NewYork", tz: "America/New_York" },
      ],
    },
  });
  expect(upload.body).toMatchObject({ upload_count: 3, invalid_timezone_count: 0 });
  await callJson(`/api/v1/campaigns/${id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
  expect((await callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);
  return id;
}

interface Row {
  email: string;
  due_at: number | null;
  step: number | null;
  message_id: string | null;
  sent_at: number | null;
}

async function records(campaignId: number): Promise<Map<string, Row>> {
  const rows = await fileEnv().DB.prepare(
    `SELECT l.email, cl.due_at, m.step, m.message_id, m.sent_at FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id
     LEFT JOIN messages m ON m.campaign_lead_id = cl.id AND m.status = 'sent' AND m.step = 1 WHERE cl.campaign_id = ?`,
  )
    .bind(campaignId)
    .all<Row>();
  return new Map(rows.results.map((row) => [row.email, row]));
}

async function labSender(apiKey: string, email: string) {
  const sender = lab.mailboxes.find((m) => m.email === email)!;
  const mailboxId = await saveLabMailbox(apiKey, sender.email, sender.password, { time_to_wait_in_mins: 0 });
  expect(await checked(apiKey, mailboxId)).toMatchObject({ is_smtp_success: true });
  return mailboxId;
}

describe("sending in each lead's own hours (CONTRACT 23.2)", () => {
  it("sends Tokyo, Paris and New York their first email at 09:00 of their own Monday, across New York's DST change", async () => {
    const account = await provisionAccount();
    const mailboxId = await labSender(account.apiKey, "sender4@lab.salvo.test");
    const campaignId = await leadZoneCampaign(account.apiKey, mailboxId, true);
    const stub = senderStub(bindings, mailboxId);

    // Stored due times are already inside each lead's window: 09:00 JST, 09:00 CET, 09:00 EDT.
    const tokyoOpens = at("2027-03-15T00:00:00Z");
    const parisOpens = at("2027-03-15T08:00:00Z");
    const newYorkOpens = at("2027-03-15T13:00:00Z");
    let rows = await records(campaignId);
    expect([tokyo, paris, newYork].map((lead) => rows.get(lead.email)!.due_at)).toEqual([tokyoOpens, parisOpens, newYorkOpens]);

    // Sunday evening UTC: nobody's Monday 09:00 yet; the pass wakes at Tokyo's.
    expect(await stub.runPass(at("2027-03-14T22:00:00Z"), { read: false })).toMatchObject({ sent: 0, nextWakeAt: tokyoOpens });
    expect(await stub.runPass(tokyoOpens, { read: false })).toMatchObject({ sent: 1 });
    expect(await stub.runPass(parisOpens - MINUTE, { read: false })).toMatchObject({ sent: 0, nextWakeAt: parisOpens });
    expect(await stub.runPass(parisOpens, { read: false })).toMatchObject({ sent: 1 });
    // 09:00 EST would be 14:00 UTC: the window follows New York's clock across its change.
    expect(await stub.runPass(newYorkOpens - MINUTE, { read: false })).toMatchObject({ sent: 0, nextWakeAt: newYorkOpens });
    expect(await stub.runPass(newYorkOpens, { read: false })).toMatchObject({ sent: 1 });

    rows = await records(campaignId);
    const localHour = (instant: number, timeZone: string) =>
      new Intl.DateTimeFormat("en-GB", { timeZone, weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(instant);
    expect(localHour(rows.get(tokyo.email)!.sent_at!, "Asia/Tokyo")).toBe("Mon 09:00");
    expect(localHour(rows.get(paris.email)!.sent_at!, "Europe/Paris")).toBe("Mon 09:00");
    expect(localHour(rows.get(newYork.email)!.sent_at!, "America/New_York")).toBe("Mon 09:00");
    for (const lead of [tokyo, paris, newYork]) {
      const raw = await delivered(lead.email, rows.get(lead.email)!.message_id!);
      expect(header(raw, "Subject")).toMatch(/^Hello (Tokyo|Paris|NewYork)$/);
    }
    // Paris's follow-up: 14 calendar days in Paris, across its own change, at 09:00 CEST.
    expect(rows.get(paris.email)!.due_at).toBe(at("2027-03-29T07:00:00Z"));
    expect(rows.get(newYork.email)!.due_at).toBe(at("2027-03-29T13:00:00Z"));
  });

  it("moves records due outside their leads' hours into them when the setting is turned on later, sending only those inside", async () => {
    const account = await provisionAccount();
    const mailboxId = await labSender(account.apiKey, "sender5@lab.salvo.test");
    const campaignId = await leadZoneCampaign(account.apiKey, mailboxId, false);
    const stub = senderStub(bindings, mailboxId);
    const turnedOn = await callJson(`/api/v1/campaigns/${campaignId}/schedule`, { method: "POST", apiKey: account.apiKey, body: { schedule: { use_lead_timezone: true } } });
    expect(turnedOn.status).toBe(200);
    const campaign = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaignId}`, { apiKey: account.apiKey });
    expect(campaign.body.send_in_lead_timezone).toBe(true);

    // Monday 09:30 in Paris (08:30 UTC): 17:30 in Tokyo (closed), 04:30 in New York (not yet).
    // One record per claim (the campaign keeps a gap): the first pass may send Paris before it meets
    // the others, so a second pass after the gap re-dates whatever the first did not reach.
    const now = at("2027-03-15T08:30:00Z");
    const first = await stub.runPass(now, { read: false });
    const second = await stub.runPass(now + MINUTE, { read: false });
    expect(first.sent + second.sent).toBe(1);
    // The next pass finds nothing due and wakes when New York's window opens (09:00 EDT).
    expect(await stub.runPass(now + 2 * MINUTE, { read: false })).toMatchObject({ sent: 0, nextWakeAt: at("2027-03-15T13:00:00Z") });
    const rows = await records(campaignId);
    expect(rows.get(paris.email)!.sent_at).toBe(now);
    expect(rows.get(tokyo.email)!).toMatchObject({ sent_at: null, due_at: at("2027-03-16T00:00:00Z") });
    expect(rows.get(newYork.email)!).toMatchObject({ sent_at: null, due_at: at("2027-03-15T13:00:00Z") });
  });
});
