import { describe, expect, it } from "vitest";
import { eventRowId, setEvent } from "../db";
import { provisionAccount } from "../helpers";
import { addLeads, analytics, createCampaign, ingestOk } from "./fixtures";

const ZERO_WINDOW = {
  sent_count: "0",
  unique_sent_count: "0",
  open_count: "0",
  unique_open_count: "0",
  human_open_count: "0",
  unique_human_open_count: "0",
  click_count: "0",
  unique_click_count: "0",
  human_click_count: "0",
  unique_human_click_count: "0",
  reply_count: "0",
  total_reply_count: "0",
  non_ooo_reply_count: "0",
  block_count: "0",
  bounce_count: "0",
  unsubscribed_count: "0",
};

const MARCH = { start_date: "2026-03-01", end_date: "2026-03-10" };

/**
 * Seven leads, events worked out by hand:
 * L1 sent (seq 1 and 2), opened twice, clicked, replied twice (the second ignored by hand);
 * L2 sent, reply forwarded by a colleague (ignored); L3 sent, out-of-office reply (category 6);
 * L4 sent before the window then bounced; L5 blocked then unsubscribed (STOPPED); L6, L7 drafted.
 */
async function seedCampaign(apiKey: string) {
  const campaign = await createCampaign(apiKey, { name: "Spring" });
  const emails = ["l1@an.example", "l2@an.example", "l3@an.example", "l4@an.example", "l5@an.example", "l6@an.example", "l7@an.example"];
  await addLeads(apiKey, campaign, emails);
  const at = (day: string, time = "10:00:00") => `2026-${day}T${time}Z`;
  await ingestOk(apiKey, campaign, [
    { type: "SENT", lead_email: "l1@an.example", occurred_at: at("03-01"), sequence_number: 1 },
    { type: "SENT", lead_email: "l1@an.example", occurred_at: at("03-03"), sequence_number: 2 },
    { type: "OPEN", lead_email: "l1@an.example", occurred_at: at("03-02") },
    { type: "OPEN", lead_email: "l1@an.example", occurred_at: at("03-02", "11:00:00") },
    { type: "CLICK", lead_email: "l1@an.example", occurred_at: at("03-02") },
    { type: "REPLY", lead_email: "l1@an.example", occurred_at: at("03-04"), from_email: "l1@an.example" },
    { event_id: "by-hand", type: "REPLY", lead_email: "l1@an.example", occurred_at: at("03-05"), from_email: "l1@an.example" },
    { type: "SENT", lead_email: "l2@an.example", occurred_at: at("03-01") },
    { type: "REPLY", lead_email: "l2@an.example", occurred_at: at("03-02"), from_email: "boss@an.example" },
    { type: "SENT", lead_email: "l3@an.example", occurred_at: at("03-01") },
    { type: "REPLY", lead_email: "l3@an.example", occurred_at: at("03-02"), from_email: "l3@an.example", is_ooo: true, category_id: 6 },
    { type: "SENT", lead_email: "l4@an.example", occurred_at: at("02-20") },
    { type: "BOUNCE", lead_email: "l4@an.example", occurred_at: at("03-01") },
    { type: "BLOCK", lead_email: "l5@an.example", occurred_at: at("03-01") },
    { type: "UNSUBSCRIBE", lead_email: "l5@an.example", occurred_at: at("03-02") },
  ]);
  // Rule 3's third cause (ignored by hand in the inbox), set directly on the stored reply.
  await setEvent(await eventRowId(campaign, "by-hand"), { ignored: true, ignoredByHand: true });
  return campaign;
}

describe("analytics by date", () => {
  it("returns every field of the record, counts as strings, worked out by hand (rules 2, 3, 4, 7)", async () => {
    const account = await provisionAccount();
    const campaign = await seedCampaign(account.apiKey);
    const { status, body } = await analytics(account.apiKey, campaign, MARCH);
    expect(status).toBe(200);
    expect(body).toEqual({
      id: campaign,
      user_id: account.id,
      created_at: expect.stringMatching(/Z$/),
      status: "DRAFTED",
      name: "Spring",
      start_date: "2026-03-01",
      end_date: "2026-03-10",
      sent_count: "4", // L1 x2, L2, L3 (L4's send is before the window)
      unique_sent_count: "3", // sequence-1 sends: L1, L2, L3
      open_count: "2",
      unique_open_count: "1",
      human_open_count: "2", // nothing ingested says is_machine
      unique_human_open_count: "1",
      click_count: "1",
      unique_click_count: "1",
      human_click_count: "1",
      unique_human_click_count: "1",
      reply_count: "2", // 5 replies minus the forward (L2) and the one ignored by hand (L1); the OOO one counts (toggle off)
      total_reply_count: "4",
      non_ooo_reply_count: "3", // all but L3's: higher than reply_count (rule 4)
      block_count: "1",
      bounce_count: "1",
      unsubscribed_count: "1",
      total_count: "6", // 7 records, L5 STOPPED
      drafted_count: "2", // L6, L7
    });
    // Rule 2: the out-of-office replies are total minus non-OOO.
    expect(Number(body.total_reply_count) - Number(body.non_ooo_reply_count)).toBe(1);
  });

  it("drops out-of-office replies from reply_count when the account ignores them (rule 3)", async () => {
    const account = await provisionAccount({ ignore_ooo_replies: true });
    const campaign = await seedCampaign(account.apiKey);
    const { body } = await analytics(account.apiKey, campaign, MARCH);
    expect(body).toMatchObject({ reply_count: "1", total_reply_count: "4", non_ooo_reply_count: "3" });
  });

  it("counts every reply as non-OOO for an uncategorised campaign (rule 5)", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["u1@an.example", "u2@an.example"]);
    await ingestOk(account.apiKey, campaign, [
      { type: "REPLY", lead_email: "u1@an.example", occurred_at: "2026-03-02T10:00:00Z" },
      { type: "REPLY", lead_email: "u2@an.example", occurred_at: "2026-03-03T10:00:00Z", from_email: "fwd@an.example" },
    ]);
    const { body } = await analytics(account.apiKey, campaign, MARCH);
    expect(body).toMatchObject({ total_reply_count: "2", non_ooo_reply_count: "2", reply_count: "1" });
  });

  it("counts a lead's OOO reply as non-OOO once a later genuine reply recategorises it (rule 6)", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["back@an.example"]);
    await ingestOk(account.apiKey, campaign, [
      { type: "REPLY", lead_email: "back@an.example", occurred_at: "2026-03-02T10:00:00Z", is_ooo: true, category_id: 6 },
    ]);
    expect((await analytics(account.apiKey, campaign, MARCH)).body).toMatchObject({ total_reply_count: "1", non_ooo_reply_count: "0" });
    await ingestOk(account.apiKey, campaign, [
      { type: "REPLY", lead_email: "back@an.example", occurred_at: "2026-03-06T10:00:00Z", category_id: 2 },
    ]);
    expect((await analytics(account.apiKey, campaign, MARCH)).body).toMatchObject({ total_reply_count: "2", non_ooo_reply_count: "2" });
  });

  it("keeps total_count and drafted_count to the campaign's lifetime, whatever the range (rule 7)", async () => {
    const account = await provisionAccount();
    const campaign = await seedCampaign(account.apiKey);
    const { body } = await analytics(account.apiKey, campaign, { start_date: "2025-01-01", end_date: "2025-01-02" });
    expect(body).toMatchObject({ ...ZERO_WINDOW, total_count: "6", drafted_count: "2" });
  });

  describe("windows in time zones", () => {
    async function sendsAt(instants: string[]) {
      const account = await provisionAccount();
      const campaign = await createCampaign(account.apiKey);
      await addLeads(account.apiKey, campaign, ["tz@an.example"]);
      await ingestOk(
        account.apiKey,
        campaign,
        instants.map((occurred_at) => ({ type: "SENT", lead_email: "tz@an.example", occurred_at })),
      );
      return (query: Record<string, string>) => analytics(account.apiKey, campaign, query).then((r) => r.body.sent_count);
    }

    it("spans the 23-hour day when New York springs forward (2026-03-08)", async () => {
      const sent = await sendsAt([
        "2026-03-08T04:59:59.999Z", // 23:59:59.999 EST on the 7th: out
        "2026-03-08T05:00:00.000Z", // 00:00 EST on the 8th: in
        "2026-03-09T03:59:59.999Z", // 23:59:59.999 EDT on the 8th: in
        "2026-03-09T04:00:00.000Z", // 00:00 EDT on the 9th: out
      ]);
      expect(await sent({ start_date: "2026-03-08", end_date: "2026-03-08", time_zone: "America/New_York" })).toBe("2");
      expect(await sent({ start_date: "2026-03-08", end_date: "2026-03-08" })).toBe("2"); // the UTC day holds the first two
    });

    it("spans the 25-hour day when New York falls back (2026-11-01)", async () => {
      const sent = await sendsAt([
        "2026-11-01T03:59:59.999Z", // 23:59:59.999 EDT on Oct 31: out
        "2026-11-01T04:00:00.000Z", // 00:00 EDT: in
        "2026-11-02T04:30:00.000Z", // 23:30 EST on Nov 1: in
        "2026-11-02T05:00:00.000Z", // 00:00 EST on Nov 2: out
      ]);
      expect(await sent({ start_date: "2026-11-01", end_date: "2026-11-01", time_zone: "America/New_York" })).toBe("2");
    });

    it("starts the day at 18:15 UTC in Asia/Kathmandu (+05:45)", async () => {
      const sent = await sendsAt([
        "2026-03-09T18:14:59.999Z",
        "2026-03-09T18:15:00.000Z",
        "2026-03-10T18:14:59.999Z",
        "2026-03-10T18:15:00.000Z",
      ]);
      expect(await sent({ start_date: "2026-03-10", end_date: "2026-03-10", time_zone: "Asia/Kathmandu" })).toBe("2");
    });
  });

  describe("the range and its inputs", () => {
    it("allows 30 days between the dates and refuses 31 with the exact 400 body (rule 1)", async () => {
      const account = await provisionAccount();
      const campaign = await createCampaign(account.apiKey);
      expect((await analytics(account.apiKey, campaign, { start_date: "2026-01-01", end_date: "2026-01-31" })).status).toBe(200);
      const wide = await analytics(account.apiKey, campaign, { start_date: "2026-01-01", end_date: "2026-02-01" });
      expect(wide.status).toBe(400);
      expect(wide.body).toEqual({ error: "Invalid start_date & end_date range. Date difference should be max of 30days." });
    });

    it("refuses an end before the start with 400", async () => {
      const account = await provisionAccount();
      const campaign = await createCampaign(account.apiKey);
      const { status, body } = await analytics(account.apiKey, campaign, { start_date: "2026-01-05", end_date: "2026-01-04" });
      expect(status).toBe(400);
      expect(body).toEqual({ error: "end_date must not be before start_date" });
    });

    it("answers bad dates and zones with 422 naming the parameter", async () => {
      const account = await provisionAccount();
      const campaign = await createCampaign(account.apiKey);
      const cases: [Record<string, string>, string][] = [
        [{ start_date: "2026-02-30", end_date: "2026-03-01" }, "start_date"],
        [{ start_date: "2026-1-1", end_date: "2026-01-02" }, "start_date"],
        [{ start_date: "2026-01-01", end_date: "tomorrow" }, "end_date"],
        [{ end_date: "2026-01-02" }, "start_date"],
        [{ start_date: "2026-01-01", end_date: "2026-01-02", time_zone: "Mars/Olympus_Mons" }, "time_zone"],
        [{ start_date: "2026-01-01", end_date: "2026-01-02", time_zone: "" }, "time_zone"],
      ];
      for (const [query, path] of cases) {
        const { status, body } = await analytics(account.apiKey, campaign, query);
        expect(status, JSON.stringify(query)).toBe(422);
        expect(body).toMatchObject({ error: "Validation failed", details: [expect.objectContaining({ path })] });
      }
    });
  });
});
