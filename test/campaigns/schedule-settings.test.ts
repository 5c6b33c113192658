import { describe, expect, it } from "vitest";
import { createCampaign, sleepingActiveCampaign } from "./fixtures";
import { callJson, createClient, provisionAccount } from "../helpers";

async function setup() {
  const account = await provisionAccount();
  return { k: account.apiKey, campaign: await createCampaign(account.apiKey) };
}

const post = (k: string, campaign: number, what: "schedule" | "settings", body: unknown) =>
  callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaign}/${what}`, { method: "POST", apiKey: k, body });
const read = (k: string, campaign: number) => callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaign}`, { apiKey: k });

describe("campaign schedule", () => {
  it("takes the flat form, fills a first schedule's defaults, and shows it on the campaign", async () => {
    const { k, campaign } = await setup();
    const { status, body } = await post(k, campaign, "schedule", { timezone: "America/New_York", days_of_the_week: [5, 1, 7, 1], start_hour: "08:30" });
    expect(status).toBe(200);
    expect(body).toEqual({
      ok: true,
      data: {
        timezone: "America/New_York",
        days_of_the_week: [0, 1, 5],
        start_hour: "08:30",
        end_hour: "17:00",
        min_time_btw_emails: 10,
        max_new_leads_per_day: 100,
        schedule_start_time: null,
        send_in_lead_timezone: false,
      },
    });
    expect((await read(k, campaign)).body).toMatchObject({
      scheduler_cron_value: { tz: "America/New_York", days: [0, 1, 5], startHour: "08:30", endHour: "17:00" },
      min_time_btwn_emails: 10,
      max_leads_per_day: 100,
    });
  });

  it("takes the nested form and aliases, and keeps absent fields", async () => {
    const { k, campaign } = await setup();
    await post(k, campaign, "schedule", { tz: "Europe/Paris", days: [1, 2], startHour: "09:00", endHour: "12:00", max_new_leads_per_day: 20 });
    const { body } = await post(k, campaign, "schedule", { schedule: { end_hour: "18:00", min_time_btw_emails: 3, use_lead_timezone: true }, schedule_start_time: "2026-12-01T08:00:00Z" });
    expect(body).toEqual({
      ok: true,
      data: {
        timezone: "Europe/Paris",
        days_of_the_week: [1, 2],
        start_hour: "09:00",
        end_hour: "18:00",
        min_time_btw_emails: 3,
        max_new_leads_per_day: 20,
        schedule_start_time: "2026-12-01T08:00:00.000Z",
        send_in_lead_timezone: true,
      },
    });
    expect((await read(k, campaign)).body).toMatchObject({ send_in_lead_timezone: true });
    // Absent, it keeps its value; given, it is set.
    expect((await post(k, campaign, "schedule", { start_hour: "08:00" })).body.data).toMatchObject({ send_in_lead_timezone: true });
    expect((await post(k, campaign, "schedule", { send_in_lead_timezone: false })).body.data).toMatchObject({ send_in_lead_timezone: false });
  });

  it("answers schedule_start_time as section 0's timestamps leave: UTC with milliseconds, whatever offset it came with", async () => {
    const { k, campaign } = await setup();
    const { status, body } = await post(k, campaign, "schedule", { timezone: "Europe/Berlin", schedule_start_time: "2026-12-01T10:00:00+02:00" });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ schedule_start_time: "2026-12-01T08:00:00.000Z" });
    expect((await read(k, campaign)).body).toMatchObject({ schedule_start_time: "2026-12-01T08:00:00.000Z" });
  });

  it("reads schedule_start_time in any ISO 8601 form, one without a zone as UTC (not in the schedule's zone)", async () => {
    const { k, campaign } = await setup();
    for (const given of ["2026-12-01T09:00:00", "2026-12-01T09:00", "2026-12-01 09:00:00", "2026-12-01T10:00+01", "2026-12-01T10:00:00.000000+0100", "20261201T090000Z"]) {
      const { status, body } = await post(k, campaign, "schedule", { timezone: "America/New_York", schedule_start_time: given });
      expect(status, given).toBe(200);
      expect(body.data, given).toMatchObject({ schedule_start_time: "2026-12-01T09:00:00.000Z" });
    }
    expect((await read(k, campaign)).body).toMatchObject({ schedule_start_time: "2026-12-01T09:00:00.000Z" });
    for (const given of ["2026-12-01", "tomorrow at nine", "2026-12-01T25:00:00", "2026-12-01T09:00:00 EST"]) {
      const { status, body } = await post(k, campaign, "schedule", { schedule_start_time: given });
      expect(status, given).toBe(422);
      expect(body, given).toEqual({ error: "Validation failed", details: [{ path: "schedule_start_time", message: "Must be an ISO 8601 date-time" }] });
    }
    expect((await read(k, campaign)).body).toMatchObject({ schedule_start_time: "2026-12-01T09:00:00.000Z" });
  });

  it("refuses a first schedule without a zone, offsets as zones, bad hours and out-of-range values with 422", async () => {
    const { k, campaign } = await setup();
    const cases: [Record<string, unknown>, string][] = [
      [{ days_of_the_week: [1] }, "timezone"],
      [{ timezone: "+05:00" }, "timezone"],
      [{ timezone: "UTC", start_hour: "9:00" }, "start_hour"],
      [{ timezone: "UTC", start_hour: "10:00", end_hour: "09:00" }, "end_hour"],
      [{ timezone: "UTC", days_of_the_week: [8] }, "days_of_the_week.0"],
      [{ timezone: "UTC", min_time_btw_emails: 0 }, "min_time_btw_emails"],
      [{ timezone: "UTC", max_new_leads_per_day: 10_001 }, "max_new_leads_per_day"],
      [{ timezone: "UTC", send_in_lead_timezone: "yes" }, "send_in_lead_timezone"],
    ];
    for (const [body, path] of cases) {
      const answer = await post(k, campaign, "schedule", body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect((answer.body.details as { path: string }[]).map((d) => d.path), JSON.stringify(body)).toContain(path);
    }
    expect((await read(k, campaign)).body.scheduler_cron_value).toBeNull();
  });
});

describe("campaign settings", () => {
  it("stores what it is given, maps write names to read names, and keeps the rest", async () => {
    const { k, campaign } = await setup();
    const first = await post(k, campaign, "settings", {
      name: "Renamed",
      track_settings: ["DONT_TRACK_EMAIL_OPEN", "DONT_LINK_CLICK"],
      stop_lead_settings: "CLICK_ON_A_LINK",
      unsubscribe_text: "Stop these emails",
      follow_up_percentage: "60",
      out_of_office_detection_settings: { ignoreOOOasReply: true },
      autoReactivateOOO: true,
      bounce_autopause_threshold: "5",
      ai_esp_matching: true,
    });
    expect(first.body).toEqual({ ok: true, success: true, message: "Campaign settings updated successfully" });
    await post(k, campaign, "settings", { send_as_plain_text: true });
    expect((await read(k, campaign)).body).toMatchObject({
      name: "Renamed",
      track_settings: ["DONT_EMAIL_OPEN", "DONT_LINK_CLICK"],
      stop_lead_settings: "CLICK_ON_A_LINK",
      unsubscribe_text: "Stop these emails",
      follow_up_percentage: 60,
      send_as_plain_text: true,
      bounce_autopause_threshold: 5,
      enable_ai_esp_matching: true,
      out_of_office_detection_settings: { ignoreOOOasReply: true, autoReactivateOOO: true, reactivateOOOwithDelay: 7, autoCategorizeOOO: false },
    });
  });

  it("refuses bad values with 422 and a foreign client with 400", async () => {
    const { k, campaign } = await setup();
    expect((await post(k, campaign, "settings", { follow_up_percentage: 101 })).status).toBe(422);
    expect((await post(k, campaign, "settings", { stop_lead_settings: "NEVER" })).status).toBe(422);
    expect((await post(k, campaign, "settings", { track_settings: ["DONT_TRACK_EVERYTHING"] })).status).toBe(422);
    const stranger = await provisionAccount();
    const theirs = await createClient(stranger.apiKey);
    expect(await post(k, campaign, "settings", { client_id: theirs })).toMatchObject({ status: 400, body: { error: "Client not found" } });
    const mine = await createClient(k);
    expect((await post(k, campaign, "settings", { client_id: mine })).status).toBe(200);
    expect((await read(k, campaign)).body.client_id).toBe(mine);
  });

  it("takes client_id as a decimal string, as every id in a body", async () => {
    const { k, campaign } = await setup();
    const mine = await createClient(k);
    expect(await post(k, campaign, "settings", { client_id: String(mine) })).toMatchObject({ status: 200, body: { ok: true } });
    expect((await read(k, campaign)).body.client_id).toBe(mine);
  });
});

/**
 * Posts at once that set different fields must all be stored: each writes only what it was given,
 * so none puts back another's old value (writing back the whole value read before lost them).
 */
describe("concurrent schedule and settings posts", () => {
  const PAIRS = 20;
  const spintax = (k: string, campaign: number, mode: 1 | 2) =>
    callJson(`/api/v1/campaigns/spintax-distribution-mode`, { method: "POST", apiKey: k, body: { campaignId: campaign, spintaxDistributionMode: mode } });

  it("keeps every settings post's fields, and the spintax mode set beside them", async () => {
    const { k, campaign } = await setup();
    for (let i = 0; i < PAIRS; i++) {
      const answers = await Promise.all([
        post(k, campaign, "settings", { unsubscribe_text: `Stop ${i}`, track_settings: i % 2 ? ["DONT_EMAIL_OPEN"] : [] }),
        post(k, campaign, "settings", { follow_up_percentage: i, stop_lead_settings: i % 2 ? "OPEN_AN_EMAIL" : "CLICK_ON_A_LINK", autoCategorizeOOO: i % 2 === 1 }),
        post(k, campaign, "settings", { out_of_office_detection_settings: { reactivateOOOwithDelay: i }, domain_level_rate_limit: i }),
        spintax(k, campaign, i % 2 ? 1 : 2),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      expect((await read(k, campaign)).body, `pair ${i}`).toMatchObject({
        unsubscribe_text: `Stop ${i}`,
        track_settings: i % 2 ? ["DONT_EMAIL_OPEN"] : [],
        follow_up_percentage: i,
        stop_lead_settings: i % 2 ? "OPEN_AN_EMAIL" : "CLICK_ON_A_LINK",
        out_of_office_detection_settings: { autoCategorizeOOO: i % 2 === 1, reactivateOOOwithDelay: i },
        spintax_distribution_mode: i % 2 ? 1 : 2,
      });
    }
  });

  it("keeps every schedule post's fields", async () => {
    const { k, campaign } = await setup();
    await post(k, campaign, "schedule", { timezone: "UTC" });
    for (let i = 0; i < PAIRS; i++) {
      const answers = await Promise.all([
        post(k, campaign, "schedule", { max_new_leads_per_day: i + 1, days_of_the_week: i % 2 ? [1, 3] : [2] }),
        post(k, campaign, "schedule", { min_time_btw_emails: i + 1, send_in_lead_timezone: i % 2 === 1 }),
        post(k, campaign, "schedule", { schedule: { tz: i % 2 ? "Europe/Paris" : "UTC" }, schedule_start_time: `2030-01-${String(i + 1).padStart(2, "0")}T00:00:00Z` }),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect((await read(k, campaign)).body, `pair ${i}`).toMatchObject({
        max_leads_per_day: i + 1,
        min_time_btwn_emails: i + 1,
        send_in_lead_timezone: i % 2 === 1,
        scheduler_cron_value: { tz: i % 2 ? "Europe/Paris" : "UTC", days: i % 2 ? [1, 3] : [2] },
        schedule_start_time: `2030-01-${String(i + 1).padStart(2, "0")}T00:00:00.000Z`,
      });
    }
  });

  it("refuses the one of a start and an end posted at once that would put the end first, and stores the other", async () => {
    const { k } = await setup();
    // Pairs on four campaigns in one Promise.all: a lone pair overlaps in about one of five, these overlapped in every run tried.
    const campaigns = await Promise.all([1, 2, 3, 4].map(() => createCampaign(k)));
    for (let i = 0; i < PAIRS; i++) {
      const reset = await Promise.all(campaigns.map((campaign) => post(k, campaign, "schedule", { timezone: "UTC", start_hour: "09:00", end_hour: "17:00" })));
      expect(reset.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const answers = await Promise.all(
        campaigns.flatMap((campaign) => [post(k, campaign, "schedule", { start_hour: "16:00" }), post(k, campaign, "schedule", { end_hour: "15:00" })]),
      );
      for (const [n, campaign] of campaigns.entries()) {
        const [start, end] = answers.slice(2 * n, 2 * n + 2) as [(typeof answers)[number], (typeof answers)[number]];
        const stored = (await read(k, campaign)).body.scheduler_cron_value as { startHour: string; endHour: string };
        expect([start.status, end.status].sort(), `pair ${i}`).toEqual([200, 422]);
        const refused = start.status === 422 ? start : end;
        expect((refused.body.details as { path: string }[]).map((d) => d.path)).toEqual(["end_hour"]);
        expect(stored, `pair ${i}`).toMatchObject(start.status === 200 ? { startHour: "16:00", endHour: "17:00" } : { startHour: "09:00", endHour: "15:00" });
        expect((start.status === 200 ? start : end).body.data).toMatchObject({ start_hour: stored.startHour, end_hour: stored.endHour });
      }
    }
  });
});

describe("a schedule change of an ACTIVE campaign", () => {
  it("wakes its senders, which may have hours open now that their last pass slept past", async () => {
    const { apiKey, campaign, woken } = await sleepingActiveCampaign("lead@schedule.example");
    const moved = await callJson(`/api/v1/campaigns/${campaign}/schedule`, { method: "POST", apiKey, body: { schedule_start_time: "2031-03-04T10:00:00Z" } });
    expect(moved.status).toBe(200);
    await woken();
  });
});
