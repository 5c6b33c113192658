import { beforeAll, describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { addLeads, analytics, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { act } from "../inbox/fixtures";

type Body = Record<string, unknown>;
const WINDOW = { start_date: "2026-03-01", end_date: "2026-03-10" };

async function get(apiKey: string, path: string, query: Record<string, string> = {}) {
  return callJson<Body>(`/api/v1/${path}?${new URLSearchParams(query)}`, { apiKey });
}

async function assignCampaign(apiKey: string, campaign: number, teamMemberId: number) {
  expect((await callJson(`/api/v1/campaigns/${campaign}/team-member`, { method: "POST", apiKey, body: { teamMemberId } })).status).toBe(200);
}

/**
 * One campaign, worked out by hand (all March 2026, UTC):
 * L1 step 1 sent 03-01, opened twice, clicked, replied 03-03 (Interested); step 2 sent 03-04, opened.
 * L2 step 1 sent 03-01, bounced. L3 step 1 sent 02-20 (before the window), out-of-office reply
 * 03-02 (category 6), unsubscribed 03-06. L4 drafted. The sending mailbox is deleted since (its
 * sends keep its id; reports name it by what its sends say).
 */
async function seed(apiKey: string, body: Body = {}) {
  const mailbox = (await createMailbox(apiKey)).id;
  const campaign = await createCampaign(apiKey, { name: "Families", ...body });
  const ids = await addLeads(apiKey, campaign, ["l1@fam.example", "l2@fam.example", "l3@fam.example", "l4@fam.example"]);
  const sent = (lead: string, at: string, seq = 1) => ({
    type: "SENT", lead_email: lead, occurred_at: at, sequence_number: seq, email_account_id: mailbox, from_email: "sender@out.example",
    subject: `Step ${seq}`, body: `Hello ${lead}`,
  });
  await ingestOk(apiKey, campaign, [
    sent("l1@fam.example", "2026-03-01T10:00:00Z"),
    { type: "OPEN", lead_email: "l1@fam.example", occurred_at: "2026-03-01T11:00:00Z" },
    { type: "OPEN", lead_email: "l1@fam.example", occurred_at: "2026-03-02T09:00:00Z" },
    { type: "CLICK", lead_email: "l1@fam.example", occurred_at: "2026-03-02T09:05:00Z" },
    { type: "REPLY", lead_email: "l1@fam.example", from_email: "l1@fam.example", occurred_at: "2026-03-03T08:00:00Z", category_id: 1 },
    sent("l1@fam.example", "2026-03-04T10:00:00Z", 2),
    { type: "OPEN", lead_email: "l1@fam.example", occurred_at: "2026-03-05T10:00:00Z", sequence_number: 2 },
    sent("l2@fam.example", "2026-03-01T12:00:00Z"),
    { type: "BOUNCE", lead_email: "l2@fam.example", occurred_at: "2026-03-01T12:05:00Z" },
    sent("l3@fam.example", "2026-02-20T10:00:00Z"),
    { type: "REPLY", lead_email: "l3@fam.example", from_email: "l3@fam.example", occurred_at: "2026-03-02T10:00:00Z", is_ooo: true, category_id: 6 },
    { type: "UNSUBSCRIBE", lead_email: "l3@fam.example", occurred_at: "2026-03-06T10:00:00Z" },
  ]);
  expect((await callJson(`/api/v1/email-accounts/${mailbox}`, { method: "DELETE", apiKey })).status).toBe(200);
  return { campaign, ids, mailbox };
}

describe("analytics families (CONTRACT section 13)", () => {
  let apiKey: string;
  let campaign: number;
  let ids: Record<string, number>;
  let mailbox: number;

  beforeAll(async () => {
    ({ apiKey } = await provisionAccount());
    ({ campaign, ids, mailbox } = await seed(apiKey));
  });

  it("agree with analytics-by-date on the same window", async () => {
    const byDate = (await analytics(apiKey, campaign, WINDOW)).body;
    expect(byDate).toMatchObject({ sent_count: "3", unique_sent_count: "2", open_count: "3", unique_open_count: "1", reply_count: "2", bounce_count: "1" });

    const top = await get(apiKey, `campaigns/${campaign}/top-level-analytics-by-date`, WINDOW);
    expect(top.status).toBe(200);
    for (const field of ["sent_count", "unique_sent_count", "open_count", "unique_open_count", "click_count", "unique_click_count", "reply_count", "bounce_count", "unsubscribed_count", "total_count"]) {
      expect({ field, value: top.body[field] }).toEqual({ field, value: byDate[field] });
    }
    expect(top.body).toMatchObject({ positive_reply_count: "1", skipped_count: "0", stopped_count: "1", start_date: WINDOW.start_date });

    const sequences = await get(apiKey, `campaigns/${campaign}/sequence-analytics`, WINDOW);
    expect(sequences.status).toBe(200);
    const steps = sequences.body.data as Body[];
    const sum = (rows: Body[], field: string) => rows.reduce((total, row) => total + Number(row[field]), 0);
    expect(steps.map((row) => row.seq_number)).toEqual([1, 2]);
    expect(String(sum(steps, "sent_count"))).toBe(byDate.sent_count);
    expect(String(sum(steps, "open_count"))).toBe(byDate.open_count);
    expect(String(sum(steps, "reply_count"))).toBe(byDate.reply_count);
    expect(String(sum(steps, "bounce_count"))).toBe(byDate.bounce_count);
    expect(sum(steps, "positive_reply_count")).toBe(1);

    const mailboxes = await get(apiKey, `campaigns/${campaign}/mailbox-statistics`, WINDOW);
    expect(mailboxes.body).toEqual({
      ok: true,
      data: [
        {
          email_account_id: mailbox, from_email: "sender@out.example", from_name: null,
          // The window's 3 sends; L3's reply answers its February send, so it counts too.
          sent_count: 3, unique_sent_count: 2, open_count: 3, unique_open_count: 1, click_count: 1, unique_click_count: 1,
          reply_count: 2, bounce_count: 1, unsubscribed_count: 1,
        },
      ],
    });

    const stats = await get(apiKey, `campaigns/${campaign}/statistics`, { sent_time_start_date: "2026-03-01 00:00:00", sent_time_end_date: "2026-03-10 23:59:59" });
    expect(stats.body.total_stats).toBe(byDate.sent_count);

    const overall = await get(apiKey, "analytics/overall-stats-v2", { ...WINDOW, campaign_ids: String(campaign) });
    expect(overall.body).toEqual({
      ok: true,
      data: {
        overall_stats: {
          sent: 3, opened: 3, replied: 2, bounced: 1, unique_lead_count: 2, unique_open_count: 1, positive_replied: 1,
          open_rate: "100%", reply_rate: "66.67%", positive_reply_rate: "33.33%", bounce_rate: "33.33%",
        },
      },
    });
    const days = ((await get(apiKey, "analytics/day-wise-overall-stats", { ...WINDOW, campaign_ids: String(campaign) })).body.data as Body)
      .day_wise_stats as Body[];
    expect(days).toHaveLength(10);
    expect(days[0]).toEqual({ date: "2026-03-01", sent: 2, opened: 1, replied: 0, bounced: 1 });
    for (const field of ["sent", "opened", "replied", "bounced"]) {
      expect(sum(days, field)).toBe((overall.body.data as { overall_stats: Body }).overall_stats[field]);
    }
  });

  it("answers lifetime analytics with records by state, revenue and tags", async () => {
    const revenue = async (email: string, value: string) =>
      callJson("/api/v1/master-inbox/update-revenue", { method: "PATCH", apiKey, body: { email_lead_map_id: ids[email], revenue: value } });
    expect((await revenue("l1@fam.example", "1200.50")).status).toBe(200);
    expect((await revenue("l2@fam.example", "99.25")).status).toBe(200);
    const { status, body } = await get(apiKey, `campaigns/${campaign}/analytics`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: campaign, name: "Families", client_company_name: null, parent_campaign_id: null, send_as_plain_text: false,
      sent_count: "4", unique_sent_count: "3", reply_count: "2", total_reply_count: "2", non_ooo_reply_count: "1",
      unsubscribed_count: "1", total_count: "3", drafted_count: "1", sequence_count: "0", tags: [],
      campaign_lead_stats: { total: 4, blocked: 1, stopped: 1, completed: 1, inprogress: 0, notStarted: 1, paused: 0, interested: 1, revenue: 1299.75 },
    });
  });

  it("credits each outcome to the send it answers, one row per send (13.2)", async () => {
    const { body } = await get(apiKey, `campaigns/${campaign}/statistics`);
    const rows = body.data as Body[];
    expect(body.total_stats).toBe("4");
    expect(rows.map((row) => [row.lead_email, row.sequence_number])).toEqual([
      ["l3@fam.example", 1], ["l1@fam.example", 1], ["l2@fam.example", 1], ["l1@fam.example", 2],
    ]);
    expect(rows[1]).toMatchObject({ open_count: 2, click_count: 1, reply_time: "2026-03-03T08:00:00.000Z", lead_category: "Interested", email_subject: "Step 1" });
    expect(rows[3]).toMatchObject({ open_count: 1, reply_time: null, open_time: "2026-03-05T10:00:00.000Z" });
    const replied = await get(apiKey, `campaigns/${campaign}/statistics`, { email_status: "replied", limit: "1", offset: "1" });
    expect(replied.body).toMatchObject({ total_stats: "2", offset: 1, limit: 1 });
    expect((replied.body.data as Body[]).map((row) => row.lead_email)).toEqual(["l1@fam.example"]);
  });

  it("pages records with history, also under /lead-statistics (13.4)", async () => {
    const first = await get(apiKey, `campaigns/${campaign}/leads-statistics`, { limit: "1" });
    expect(first.body).toMatchObject({ hasMore: true, skip: 0, offset: 0, limit: 1 });
    const [l1] = first.body.data as Body[];
    expect(l1).toMatchObject({ email_lead_map_id: ids["l1@fam.example"], to: "l1@fam.example", sent_count: 2, open_count: 3, reply_count: 1, status: "COMPLETED" });
    expect((l1!.history as Body[])[0]).toMatchObject({ type: "SENT", email_seq_number: 1, subject: "Step 1" });
    const after = await get(apiKey, `campaigns/${campaign}/lead-statistics`, { event_time_gt: "2026-03-05" });
    expect((after.body.data as Body[]).map((row) => row.lead_email)).toEqual(["l1@fam.example", "l3@fam.example"]);
    // CONTRACT 0, in: any ISO 8601 (the shared reading, `parseInstant`): the same instant in other spellings.
    for (const event_time_gt of ["2026-03-05T00:00", "2026-03-05 00:00:00", "2026-03-05T01:00+01", "2026-03-04T23:00:00.000-0100"]) {
      const same = await get(apiKey, `campaigns/${campaign}/lead-statistics`, { event_time_gt });
      expect((same.body.data as Body[]).map((row) => row.lead_email), event_time_gt).toEqual(["l1@fam.example", "l3@fam.example"]);
    }
    expect(await get(apiKey, `campaigns/${campaign}/lead-statistics`, { event_time_gt: "2026-03-05T00:00 CET" })).toMatchObject({
      status: 400,
      body: { error: "event_time_gt must be an ISO 8601 date or date-time" },
    });
  });

  it("validates windows and hides other tenants' campaigns", async () => {
    expect((await get(apiKey, `campaigns/${campaign}/top-level-analytics-by-date`, { start_date: "2026-03-10", end_date: "2026-03-01" })).status).toBe(400);
    expect((await get(apiKey, `campaigns/${campaign}/top-level-analytics-by-date`, { start_date: "2025-01-01", end_date: "2026-03-01" })).status).toBe(400);
    expect((await get(apiKey, `campaigns/${campaign}/top-level-analytics-by-date`, { start_date: "2025-03-02", end_date: "2026-03-01" })).status).toBe(200);
    expect((await get(apiKey, `campaigns/${campaign}/mailbox-statistics`, { start_date: "2026-03-01" })).status).toBe(400);
    expect((await get(apiKey, "analytics/overall-stats-v2", { start_date: "2026-03-01" })).status).toBe(422);
    const other = await provisionAccount();
    for (const path of ["analytics", "statistics", "leads-statistics", "mailbox-statistics"]) {
      expect((await get(other.apiKey, `campaigns/${campaign}/${path}`)).body).toEqual({ error: "Campaign not found" });
    }
    const theirs = await get(other.apiKey, "analytics/overall-stats-v2", { ...WINDOW, campaign_ids: String(campaign) });
    expect((theirs.body.data as { overall_stats: Body }).overall_stats.sent).toBe(0);
  });

  it("counts a record's stop in the window it turned STOPPED, whatever is written to it after (13.3, 13.6)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const own = await createCampaign(owner);
    const records = await addLeads(owner, own, ["s1@fam.example", "s2@fam.example", "s3@fam.example", "s4@fam.example"]);
    // s1 stops in the window after its step 1, s2 after its step 2; s3 stopped before the window.
    await ingestOk(owner, own, [
      { type: "SENT", lead_email: "s1@fam.example", occurred_at: "2026-03-02T10:00:00Z", sequence_number: 1 },
      { type: "UNSUBSCRIBE", lead_email: "s1@fam.example", occurred_at: "2026-03-05T10:00:00Z" },
      { type: "SENT", lead_email: "s2@fam.example", occurred_at: "2026-03-01T10:00:00Z", sequence_number: 1 },
      { type: "SENT", lead_email: "s2@fam.example", occurred_at: "2026-03-04T10:00:00Z", sequence_number: 2 },
      { type: "UNSUBSCRIBE", lead_email: "s2@fam.example", occurred_at: "2026-03-08T10:00:00Z", sequence_number: 2 },
      { type: "SENT", lead_email: "s3@fam.example", occurred_at: "2026-02-10T10:00:00Z", sequence_number: 1 },
      { type: "UNSUBSCRIBE", lead_email: "s3@fam.example", occurred_at: "2026-02-20T10:00:00Z" },
    ]);
    // Today's window (a day either side, so UTC midnight cannot split it).
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const TODAY = { start_date: day(-1), end_date: day(1) };
    const stops = async (window: Record<string, string>) => {
      const top = await get(owner, `campaigns/${own}/top-level-analytics-by-date`, window);
      const steps = (await get(owner, `campaigns/${own}/sequence-analytics`, window)).body.data as Body[];
      return { top: top.body.stopped_count, steps: steps.filter((row) => Number(row.stopped_count) > 0).map((row) => [row.seq_number, row.stopped_count]) };
    };
    const setState = (email: string, state: string) =>
      callJson(`/api/v1/campaigns/${own}/leads/${records[email]}`, { method: "PATCH", apiKey: owner, body: { state } });

    // Written after the window: a category from the inbox, a revenue.
    expect((await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: owner, body: { email_lead_map_id: records["s1@fam.example"], category_id: 1 } })).status).toBe(200);
    expect((await callJson("/api/v1/master-inbox/update-revenue", { method: "PATCH", apiKey: owner, body: { email_lead_map_id: records["s2@fam.example"], revenue: "10" } })).status).toBe(200);
    // s4 is stopped by hand today, before anything was sent to it (step 1).
    expect((await setState("s4@fam.example", "STOPPED")).status).toBe(200);
    expect(await stops(WINDOW)).toEqual({ top: "2", steps: [[1, 1], [2, 1]] });
    expect(await stops(TODAY)).toEqual({ top: "1", steps: [[1, 1]] });
    expect(await stops({ start_date: "2026-02-01", end_date: "2026-02-28" })).toEqual({ top: "1", steps: [[1, 1]] });
    // The window's local days: 2026-03-08T10:00Z is already 03-09 in Kiritimati (UTC+14).
    expect(await stops({ start_date: "2026-03-01", end_date: "2026-03-08", time_zone: "Pacific/Kiritimati" })).toEqual({ top: "1", steps: [[1, 1]] });

    // A record that leaves STOPPED keeps the stop it made; stopped again, it counts once, at its last stop.
    expect((await setState("s1@fam.example", "INPROGRESS")).status).toBe(200);
    expect(await stops(WINDOW)).toEqual({ top: "2", steps: [[1, 1], [2, 1]] });
    expect((await setState("s1@fam.example", "STOPPED")).status).toBe(200);
    expect(await stops(WINDOW)).toEqual({ top: "1", steps: [[2, 1]] });
    expect(await stops(TODAY)).toEqual({ top: "2", steps: [[1, 2]] });
  });

  it("reads repeated campaign_ids and client_ids as the comma-separated list (13.7)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const [first, second] = [await createClient(owner, "One"), await createClient(owner, "Two")];
    const a = (await seed(owner, { client_id: first })).campaign;
    const b = (await seed(owner, { client_id: second })).campaign;
    await seed(owner);
    const sent = async (search: string) => {
      const { status, body } = await callJson<Body>(`/api/v1/analytics/overall-stats-v2?start_date=2026-03-01&end_date=2026-03-10&${search}`, { apiKey: owner });
      expect({ search, status }).toEqual({ search, status: 200 });
      return (body.data as { overall_stats: Body }).overall_stats.sent;
    };
    expect(await sent(`campaign_ids=${a},${b}`)).toBe(6);
    expect(await sent(`campaign_ids=${a}&campaign_ids=${b}`)).toBe(6);
    expect(await sent(`client_ids=${first}&client_ids=${second}`)).toBe(6);
    expect(await sent(`client_ids=${first}`)).toBe(3);
  });

  it("leaves ignored replies out of the leads that replied (leads-take-for-first-reply)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const own = await createCampaign(owner);
    await addLeads(owner, own, ["r1@fam.example", "r2@fam.example", "r3@fam.example", "r4@fam.example"]);
    await ingestOk(owner, own, [
      ...["r1", "r2", "r3", "r4"].map((lead) => ({ type: "SENT", lead_email: `${lead}@fam.example`, occurred_at: "2026-03-02T10:00:00Z" })),
      { type: "REPLY", lead_email: "r1@fam.example", from_email: "r1@fam.example", occurred_at: "2026-03-03T10:00:00Z" },
      // A colleague's forward: flagged ignored, so r2 has not replied.
      { type: "REPLY", lead_email: "r2@fam.example", from_email: "boss@fam.example", occurred_at: "2026-03-03T10:00:00Z" },
    ]);
    const { body } = await get(owner, "analytics/campaign/leads-take-for-first-reply", { ...WINDOW, campaign_ids: String(own) });
    expect(body).toEqual({ ok: true, data: { leads_take_for_first_reply: 4 } });
  });

  it("times the lead's first counted reply, not an ignored one (lead-to-reply-time)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const own = await createCampaign(owner);
    await addLeads(owner, own, ["t1@fam.example", "t2@fam.example"]);
    await ingestOk(owner, own, [
      { type: "SENT", lead_email: "t1@fam.example", occurred_at: "2026-03-02T10:00:00Z" },
      // A colleague's forward within the hour (ignored), then the lead's own reply two days on.
      { type: "REPLY", lead_email: "t1@fam.example", from_email: "boss@fam.example", occurred_at: "2026-03-02T10:30:00Z" },
      { type: "REPLY", lead_email: "t1@fam.example", from_email: "t1@fam.example", occurred_at: "2026-03-04T10:00:00Z" },
      // Only a forward: the lead never replied.
      { type: "SENT", lead_email: "t2@fam.example", occurred_at: "2026-03-02T10:00:00Z" },
      { type: "REPLY", lead_email: "t2@fam.example", from_email: "boss@fam.example", occurred_at: "2026-03-02T12:00:00Z" },
    ]);
    const { body } = await get(owner, "analytics/campaign/lead-to-reply-time", { ...WINDOW, campaign_ids: String(own) });
    expect((body.data as { lead_to_reply_time: Body[] }).lead_to_reply_time).toEqual([
      { time_range: "0-1h", count: 0 }, { time_range: "1-6h", count: 0 }, { time_range: "6-24h", count: 0 },
      { time_range: "1-3d", count: 1 }, { time_range: "3-7d", count: 0 }, { time_range: "7d+", count: 0 },
    ]);
  });

  it("counts a lead two campaigns reached as one lead in the account-wide distinct counts (13.7)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const client = await createClient(owner);
    const [first, second] = [await createCampaign(owner, { client_id: client }), await createCampaign(owner, { client_id: client })];
    const third = await createCampaign(owner, { client_id: client });
    await addLeads(owner, first, ["both@fam.example", "one@fam.example"]);
    await addLeads(owner, second, ["both@fam.example"]);
    await addLeads(owner, third, ["both@fam.example"]);
    await ingestOk(owner, first, [
      { type: "SENT", lead_email: "both@fam.example", occurred_at: "2026-03-02T10:00:00Z" },
      { type: "OPEN", lead_email: "both@fam.example", occurred_at: "2026-03-02T11:00:00Z" },
      { type: "SENT", lead_email: "one@fam.example", occurred_at: "2026-03-02T10:00:00Z" },
    ]);
    await ingestOk(owner, second, [
      { type: "SENT", lead_email: "both@fam.example", occurred_at: "2026-03-03T10:00:00Z" },
      { type: "OPEN", lead_email: "both@fam.example", occurred_at: "2026-03-03T11:00:00Z" },
    ]);
    // Sent to before the window and after it: its span reaches over the window, none of its events is in it.
    await ingestOk(owner, third, [
      { type: "SENT", lead_email: "both@fam.example", occurred_at: "2026-02-20T10:00:00Z" },
      { type: "SENT", lead_email: "both@fam.example", occurred_at: "2026-03-20T10:00:00Z", sequence_number: 2 },
    ]);
    // Three sends and two opens in the window, to two people of whom one opened; both got step 1.
    for (const path of ["analytics/overall-stats-v2", "analytics/overview"]) {
      const { body } = await get(owner, path, WINDOW);
      expect({ path, ...(body.data as { overall_stats: Body }).overall_stats }).toMatchObject({ path, sent: 3, opened: 2, unique_lead_count: 2, unique_open_count: 1 });
    }
    const leads = await get(owner, "analytics/lead/overall-stats", WINDOW);
    expect((leads.body.data as { lead_stats: Body }).lead_stats).toEqual({
      count: { total: 2, new: 2, follow_up: 0 }, percentage: { new: "100%", follow_up: "0%" },
    });
    const clients = await get(owner, "analytics/client/overall-stats", WINDOW);
    expect((clients.body.data as { client_wise_performance: Body[] }).client_wise_performance).toMatchObject([
      { client_id: client, total_campaigns_count: 3, campaign_stats: { sent: 3, opened: 2, unique_lead_count: 2, unique_open_count: 1 } },
    ]);
    // Each campaign on its own still counts its own records.
    const own = await get(owner, "analytics/campaign/overall-stats", WINDOW);
    expect((own.body.data as { campaign_wise_performance: Body[] }).campaign_wise_performance.map((row) => [row.id, row.unique_lead_count, row.unique_open_count])).toEqual([
      [first, 2, 1], [second, 1, 1], [third, 0, 0],
    ]);
  });

  it("counts a lead two campaigns reached, and who replied in both, as one lead in leads-take-for-first-reply (13.7)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const [first, second] = [await createCampaign(owner), await createCampaign(owner)];
    await addLeads(owner, first, ["both@take.example", "one@take.example", "two@take.example"]);
    await addLeads(owner, second, ["both@take.example"]);
    const sentAndReplied = (day: string) => [
      { type: "SENT", lead_email: "both@take.example", occurred_at: `2026-03-0${day}T10:00:00Z` },
      { type: "REPLY", lead_email: "both@take.example", from_email: "both@take.example", occurred_at: `2026-03-0${day}T12:00:00Z` },
    ];
    await ingestOk(owner, first, [
      ...sentAndReplied("2"),
      { type: "SENT", lead_email: "one@take.example", occurred_at: "2026-03-02T10:00:00Z" },
      { type: "SENT", lead_email: "two@take.example", occurred_at: "2026-03-02T10:00:00Z" },
    ]);
    await ingestOk(owner, second, sentAndReplied("3"));
    // Three people sent to, one of whom replied (in both campaigns): 3, where the records gave 4 / 2.
    const { body } = await get(owner, "analytics/campaign/leads-take-for-first-reply", WINDOW);
    expect(body).toEqual({ ok: true, data: { leads_take_for_first_reply: 3 } });
  });

  it("counts a lead in two of a team member's campaigns, who opened in both, as one lead and one opener on the team board (13.7)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const [first, second] = [await createCampaign(owner), await createCampaign(owner)];
    await addLeads(owner, first, ["both@team.example", "one@team.example"]);
    await addLeads(owner, second, ["both@team.example"]);
    for (const campaign of [first, second]) await assignCampaign(owner, campaign, 7);
    const sentAndOpened = (lead: string, day: string) => [
      { type: "SENT", lead_email: lead, occurred_at: `2026-03-0${day}T10:00:00Z` },
      { type: "OPEN", lead_email: lead, occurred_at: `2026-03-0${day}T11:00:00Z` },
    ];
    await ingestOk(owner, first, [...sentAndOpened("both@team.example", "2"), ...sentAndOpened("one@team.example", "2")]);
    await ingestOk(owner, second, sentAndOpened("both@team.example", "3"));
    const { body } = await get(owner, "analytics/team-board/overall-stats", WINDOW);
    expect((body.data as { team_board_stats: Body[] }).team_board_stats).toMatchObject([{ id: 7, lead_count: 2, campaign_count: 2, unique_open_count: 2 }]);
  });

  it("gives one team-board entry per campaign team member, over that member's campaigns, whatever team member the records carry (13.7)", async () => {
    const { apiKey: owner } = await provisionAccount();
    const [mine, alsoMine, empty, unassigned] = [await createCampaign(owner), await createCampaign(owner), await createCampaign(owner), await createCampaign(owner)];
    await addLeads(owner, mine, ["ann@board.example", "bob@board.example"]);
    const inAlsoMine = await addLeads(owner, alsoMine, ["cat@board.example"]);
    const inUnassigned = await addLeads(owner, unassigned, ["dan@board.example"]);
    await assignCampaign(owner, mine, 7);
    await assignCampaign(owner, alsoMine, 7);
    await assignCampaign(owner, empty, 8);
    // Inbox assignments of records: neither moves its record off its campaign's member nor adds a member.
    await act(owner, "update-team-member", { email_lead_map_id: inAlsoMine["cat@board.example"], team_member_id: 9 });
    await act(owner, "update-team-member", { email_lead_map_id: inUnassigned["dan@board.example"], team_member_id: 9 });
    const sentAndReplied = (lead: string) => [
      { type: "SENT", lead_email: lead, occurred_at: "2026-03-02T10:00:00Z" },
      { type: "REPLY", lead_email: lead, from_email: lead, occurred_at: "2026-03-02T12:00:00Z" },
    ];
    await ingestOk(owner, mine, [...sentAndReplied("ann@board.example"), { type: "SENT", lead_email: "bob@board.example", occurred_at: "2026-03-02T10:00:00Z" }]);
    await ingestOk(owner, alsoMine, sentAndReplied("cat@board.example"));
    await ingestOk(owner, unassigned, sentAndReplied("dan@board.example"));
    const { body } = await get(owner, "analytics/team-board/overall-stats", WINDOW);
    expect((body.data as { team_board_stats: Body[] }).team_board_stats).toEqual([
      {
        id: 7, name: null, profile_pic_url: null, lead_count: 3, campaign_count: 2, reply_count: 2, positive_reply_count: 0,
        reply_rate: "66.67%", positive_reply_rate: "0%", average_reply_time: 2, unique_open_count: 0,
      },
      {
        id: 8, name: null, profile_pic_url: null, lead_count: 0, campaign_count: 1, reply_count: 0, positive_reply_count: 0,
        reply_rate: "0%", positive_reply_rate: "0%", average_reply_time: null, unique_open_count: 0,
      },
    ]);
  });

  it("gives a client key its client's campaigns only", async () => {
    const { apiKey: owner } = await provisionAccount();
    const clientId = await createClient(owner);
    await seed(owner, { client_id: clientId });
    await seed(owner);
    const clientKey = await createClientKey(owner, clientId);
    const all = await get(owner, "analytics/overall-stats-v2", WINDOW);
    const mine = await get(clientKey.api_key, "analytics/overall-stats-v2", WINDOW);
    expect((all.body.data as { overall_stats: Body }).overall_stats.sent).toBe(6);
    expect((mine.body.data as { overall_stats: Body }).overall_stats.sent).toBe(3);
    const list = await get(clientKey.api_key, "analytics/campaign/list");
    expect((list.body.data as { campaign_list: Body[] }).campaign_list).toHaveLength(1);
    const clients = await get(clientKey.api_key, "analytics/client/overall-stats", WINDOW);
    expect((clients.body.data as { client_wise_performance: Body[] }).client_wise_performance).toMatchObject([
      { client_id: clientId, total_campaigns_count: 1, campaign_stats: { sent: 3, replied: 2, positive_replied: 1, client_health: "66.67%" } },
    ]);
  });

  it("answers every global report in the docs' envelope", async () => {
    const query = { ...WINDOW, campaign_ids: String(campaign) };
    const data = async (path: string, extra: Record<string, string> = {}) => {
      const { status, body } = await get(apiKey, `analytics/${path}`, { ...query, ...extra });
      expect({ path, status, ok: body.ok }).toEqual({ path, status: 200, ok: true });
      return body.data as Body;
    };
    expect(await data("campaign/response-stats")).toEqual({
      campaign_wise_response_stats: [{ campaign_id: campaign, campaign_name: "Families", positive_reply: 1, neutral_reply: 1, negative_reply: 0 }],
    });
    expect(await data("campaign/follow-up-reply-rate")).toEqual({ followup_reply_rate: 0 });
    expect(await data("campaign/leads-take-for-first-reply")).toEqual({ leads_take_for_first_reply: 1 });
    expect(await data("campaign/lead-to-reply-time")).toEqual({
      lead_to_reply_time: [
        { time_range: "0-1h", count: 0 }, { time_range: "1-6h", count: 0 }, { time_range: "6-24h", count: 0 },
        { time_range: "1-3d", count: 1 }, { time_range: "3-7d", count: 0 }, { time_range: "7d+", count: 1 },
      ],
    });
    expect(await data("lead/overall-stats")).toEqual({
      lead_stats: { count: { total: 2, new: 2, follow_up: 0 }, percentage: { new: "100%", follow_up: "0%" } },
    });
    expect(await data("lead/category-wise-response")).toEqual({
      lead_responses_by_category: [
        { category: "Interested", total_response: 1, percentage: "50%" },
        { category: "Out Of Office", total_response: 1, percentage: "50%" },
      ],
    });
    expect(await data("day-wise-positive-reply-stats", { timezone: "Asia/Kathmandu" })).toMatchObject({
      day_wise_stats: expect.arrayContaining([{ date: "2026-03-03", positive_replied: 1 }]),
    });
    const bySend = (await data("day-wise-overall-stats-by-sent-time")).day_wise_stats as Body[];
    expect(bySend[0]).toEqual({ date: "2026-03-01", sent: 2, opened: 2, replied: 1, bounced: 1 });
    expect(await data("mailbox/domain-wise-health-metrics")).toEqual({
      domain_health_metrics: [{ domain: "out.example", sent: 3, opened: 3, replied: 2, bounced: 1 }],
    });
    expect(await data("mailbox/name-wise-health-metrics", { is_bounced: "true" })).toEqual({
      email_health_metrics: [{ email_account: "sender@out.example", sent: 3, opened: 3, replied: 2, bounced: 1 }],
    });
    expect(await data("campaign/status-stats")).toEqual({ campaign_status_stats: [{ status: "DRAFTED", count: 1 }] });
    for (const path of ["overview", "campaign/overall-stats", "client/list", "client/month-wise-count", "mailbox/provider-wise-overall-performance", "mailbox/overall-stats", "team-board/overall-stats", "day-wise-positive-reply-stats-by-sent-time"]) {
      await data(path);
    }
  });

  it("adds sentiment_type to every lead category", async () => {
    const { body } = await callJson<Body[]>("/api/v1/leads/fetch-categories", { apiKey });
    expect(body.slice(0, 7).map((row) => [row.id, row.sentiment_type])).toEqual([
      [1, "positive"], [2, "positive"], [3, "negative"], [4, "negative"], [5, "positive"], [6, "neutral"], [7, "negative"],
    ]);
  });
});
