import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { beforeAll, describe, expect, it } from "vitest";
import { callJson, provisionAccount, type TestAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { callTool, connect } from "./fixtures";

const STEPS = [
  { seq_number: 1, subject: "Hello {{first_name}}", email_body: "<p>Hi {{first_name}}</p>", seq_delay_details: { delay_in_days: 0 } },
  { seq_number: 2, subject: "Following up", email_body: "<p>Any thoughts?</p>", seq_delay_details: { delay_in_days: 3 } },
];
const SCHEDULE = {
  timezone: "Europe/Paris",
  days_of_the_week: [1, 2, 3, 4, 5],
  start_hour: "09:00",
  end_hour: "17:00",
  min_time_btw_emails: 10,
  max_new_leads_per_day: 50,
};

function leads(count: number, domain: string) {
  return Array.from({ length: count }, (_, i) => ({ email: `lead${i}@${domain}`, first_name: `Lead${i}` }));
}

let owner: TestAccount;
let client: Client;

beforeAll(async () => {
  owner = await provisionAccount();
  client = await connect(owner.apiKey);
});

describe("launch_campaign", () => {
  it("creates, fills, schedules and starts a campaign in one call: ACTIVE with its leads, sequence and mailbox", async () => {
    const mailbox = await createMailbox(owner.apiKey);
    const launched = await callTool(client, "launch_campaign", {
      name: "Launched from MCP",
      sequences: STEPS,
      leads: leads(3, "launch.example"),
      email_account_ids: [mailbox.id],
      schedule: SCHEDULE,
    });
    expect(launched.isError).toBe(false);
    const result = launched.data as { campaign_id: number; completed_steps: string[]; campaign: { status: string }; leads: { upload_count: number } };
    expect(result.completed_steps).toEqual(["create_campaign", "save_sequence", "add_leads", "attach_mailboxes", "set_schedule", "start"]);
    expect(result.campaign.status).toBe("ACTIVE");
    expect(result.leads.upload_count).toBe(3);

    const id = result.campaign_id;
    const campaign = await callJson<{ name: string; status: string; scheduler_cron_value: { tz: string } }>(`/api/v1/campaigns/${id}`, { apiKey: owner.apiKey });
    expect(campaign.body).toMatchObject({ name: "Launched from MCP", status: "ACTIVE", scheduler_cron_value: { tz: "Europe/Paris" } });
    const page = await callJson<{ total_leads: string }>(`/api/v1/campaigns/${id}/leads`, { apiKey: owner.apiKey });
    expect(page.body.total_leads).toBe("3");
    const steps = await callJson<{ subject: string }[]>(`/api/v1/campaigns/${id}/sequences`, { apiKey: owner.apiKey });
    expect(steps.body.map((step) => step.subject)).toEqual(["Hello {{first_name}}", "Following up"]);
    const attached = await callJson<{ id: number }[]>(`/api/v1/campaigns/${id}/email-accounts`, { apiKey: owner.apiKey });
    expect(attached.body.map((m) => m.id)).toEqual([mailbox.id]);
  });

  it("adds more leads than one add-leads call takes, in batches", async () => {
    const mailbox = await createMailbox(owner.apiKey);
    const launched = await callTool(client, "launch_campaign", {
      sequences: STEPS.slice(0, 1),
      leads: leads(450, "batches.example"),
      email_account_ids: [mailbox.id],
      start: false,
    });
    const result = launched.data as { campaign_id: number; completed_steps: string[]; campaign: { status: string }; leads: { upload_count: number } };
    expect(result.leads.upload_count).toBe(450);
    expect(result.completed_steps).not.toContain("start");
    expect(result.campaign.status).toBe("DRAFTED");
    const page = await callJson<{ total_leads: string }>(`/api/v1/campaigns/${result.campaign_id}/leads`, { apiKey: owner.apiKey });
    expect(page.body.total_leads).toBe("450");
  });

  it("names the step that failed with the route's own answer, and leaves what was done DRAFTED", async () => {
    const stranger = await provisionAccount();
    const theirs = await createMailbox(stranger.apiKey);
    const launched = await callTool(client, "launch_campaign", { sequences: STEPS, leads: leads(2, "fail.example"), email_account_ids: [theirs.id] });
    expect(launched.isError).toBe(true);
    const failure = launched.data as { failed_step: string; status: number; body: unknown; campaign_id: number; completed_steps: string[]; message: string };
    expect(failure).toMatchObject({ failed_step: "attach_mailboxes", completed_steps: ["create_campaign", "save_sequence", "add_leads"] });
    expect(failure.message).toContain("attach_mailboxes");

    const rest = await callJson(`/api/v1/campaigns/${failure.campaign_id}/email-accounts`, {
      method: "POST",
      apiKey: owner.apiKey,
      body: { email_account_ids: [theirs.id] },
    });
    expect(rest.status).toBe(400);
    expect({ status: failure.status, body: failure.body }).toEqual({ status: rest.status, body: rest.body });
    const campaign = await callJson<{ status: string }>(`/api/v1/campaigns/${failure.campaign_id}`, { apiKey: owner.apiKey });
    expect(campaign.body.status).toBe("DRAFTED");
  });

  it("checks its own arguments before creating anything", async () => {
    const fresh = await provisionAccount();
    const freshClient = await connect(fresh.apiKey);
    const launched = await callTool(freshClient, "launch_campaign", { sequences: STEPS, leads: [], email_account_ids: [1] });
    expect(launched.isError).toBe(true);
    expect(launched.data).toMatchObject({ failed_step: "input", details: [expect.objectContaining({ path: "leads" })] });
    const campaigns = await callJson<unknown[]>("/api/v1/campaigns", { apiKey: fresh.apiKey });
    expect(campaigns.body).toEqual([]);
  });
});

describe("summarize_campaign_week", () => {
  const isoDay = (instant: number) => new Date(instant).toISOString().slice(0, 10);

  it("answers the last 7 days' figures of the analytics routes, day by day, and the replies waiting", async () => {
    const campaignId = await createCampaign(owner.apiKey, { name: "Weekly" });
    await addLeads(owner.apiKey, campaignId, ["ann@week.example", "bob@week.example"]);
    const recently = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    await ingestOk(owner.apiKey, campaignId, [
      { type: "SENT", lead_email: "ann@week.example", occurred_at: recently(60), sequence_number: 1 },
      { type: "SENT", lead_email: "bob@week.example", occurred_at: recently(60), sequence_number: 1 },
      { type: "OPEN", lead_email: "ann@week.example", occurred_at: recently(50) },
      { type: "REPLY", lead_email: "ann@week.example", occurred_at: recently(40), from_email: "ann@week.example" },
    ]);

    const summary = await callTool(client, "summarize_campaign_week", { campaign_id: campaignId });
    expect(summary.isError).toBe(false);
    const data = summary.data as {
      campaign: { id: number; name: string };
      window: { start_date: string; end_date: string; time_zone: string };
      totals: Record<string, number>;
      daily: unknown[];
      replies_waiting: number;
    };
    const now = Date.now();
    expect(data.window).toEqual({ start_date: isoDay(now - 6 * 86_400_000), end_date: isoDay(now), time_zone: "UTC" });
    expect(data.campaign).toMatchObject({ id: campaignId, name: "Weekly" });

    const query = `start_date=${data.window.start_date}&end_date=${data.window.end_date}&time_zone=UTC`;
    const figures = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaignId}/top-level-analytics-by-date?${query}`, { apiKey: owner.apiKey });
    for (const [key, value] of Object.entries(figures.body).filter(([key]) => key.endsWith("_count"))) expect(data.totals[key], key).toBe(Number(value));
    expect(data.totals).toMatchObject({ sent_count: 2, reply_count: 1 });

    const daily = await callJson<{ data: { day_wise_stats: unknown[] } }>(`/api/v1/analytics/day-wise-overall-stats?${query}&campaign_ids=${campaignId}`, {
      apiKey: owner.apiKey,
    });
    expect(data.daily).toEqual(daily.body.data.day_wise_stats);

    const unread = await callJson<{ total_count: number }>("/api/v1/master-inbox/unread-replies", { method: "POST", apiKey: owner.apiKey, body: { campaign_id: campaignId } });
    expect(data.replies_waiting).toBe(unread.body.total_count);
    expect(data.replies_waiting).toBe(1);
  });

  it("counts the days in the time zone it is given", async () => {
    const campaignId = await createCampaign(owner.apiKey);
    const timeZone = "Pacific/Kiritimati";
    const summary = await callTool(client, "summarize_campaign_week", { campaign_id: campaignId, time_zone: timeZone });
    const today = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
    expect((summary.data as { window: { end_date: string } }).window.end_date).toBe(today);
  });

  it("answers another tenant's campaign, or an unknown zone, with the analytics route's own refusal", async () => {
    const campaignId = await createCampaign(owner.apiKey);
    const stranger = await provisionAccount();
    const strangerClient = await connect(stranger.apiKey);
    const foreign = await callTool(strangerClient, "summarize_campaign_week", { campaign_id: campaignId });
    const today = isoDay(Date.now());
    const from = isoDay(Date.now() - 6 * 86_400_000);
    const rest = await callJson(`/api/v1/campaigns/${campaignId}/top-level-analytics-by-date?start_date=${from}&end_date=${today}`, { apiKey: stranger.apiKey });
    expect(rest.status).toBe(404);
    expect(foreign.isError).toBe(true);
    expect(foreign.data).toEqual({ failed_step: "campaign_figures", status: 404, body: rest.body });

    const badZone = await callTool(client, "summarize_campaign_week", { campaign_id: campaignId, time_zone: "Mars/Olympus_Mons" });
    const restZone = await callJson(`/api/v1/campaigns/${campaignId}/top-level-analytics-by-date?start_date=${from}&end_date=${today}&time_zone=Mars/Olympus_Mons`, {
      apiKey: owner.apiKey,
    });
    expect(restZone.status).toBeGreaterThanOrEqual(400);
    expect(badZone.data).toEqual({ failed_step: "campaign_figures", status: restZone.status, body: restZone.body });
  });
});
