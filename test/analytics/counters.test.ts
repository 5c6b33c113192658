import { describe, expect, it } from "vitest";
import { addEvents, addRecords, deleteEvents, deleteRecord, eventsOf, personOf, recordRow, setEvent, spanLeads } from "../db";
import { provisionAccount, fileEnv } from "../helpers";
import { addLeads, analytics, createCampaign, ingestOk } from "../campaigns/fixtures";
import { zonedDayRange, parseCalendarDate } from "../../src/platform/zoned-time";
import { seededRandom } from "./seeded-random";

/**
 * analytics-by-date reads hour counters and record spans that triggers keep beside `events`.
 * These tests hold its answer to the figures counted straight from the events (the query the
 * counters replaced), for events ingested out of order, re-ingested, ignored by hand, deleted,
 * and for zones 30 and 45 minutes off UTC whose days do not start on a UTC hour.
 */
async function fromEvents(campaignId: number, start: number, end: number): Promise<Record<string, string>> {
  const w = "campaign_id = ?1 AND occurred_at >= ?2 AND occurred_at < ?3";
  const row = await fileEnv().DB.prepare(
    `SELECT
       (SELECT count(*) FROM events WHERE ${w} AND type = 'SENT') AS sent_count,
       (SELECT count(DISTINCT campaign_lead_id) FROM events WHERE ${w} AND type = 'SENT' AND sequence_number = 1) AS unique_sent_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'OPEN') AS open_count,
       (SELECT count(DISTINCT campaign_lead_id) FROM events WHERE ${w} AND type = 'OPEN') AS unique_open_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'OPEN' AND is_machine = 0) AS human_open_count,
       (SELECT count(DISTINCT campaign_lead_id) FROM events WHERE ${w} AND type = 'OPEN' AND is_machine = 0) AS unique_human_open_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'CLICK') AS click_count,
       (SELECT count(DISTINCT campaign_lead_id) FROM events WHERE ${w} AND type = 'CLICK') AS unique_click_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'CLICK' AND is_machine = 0) AS human_click_count,
       (SELECT count(DISTINCT campaign_lead_id) FROM events WHERE ${w} AND type = 'CLICK' AND is_machine = 0) AS unique_human_click_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'REPLY' AND ignored = 0) AS reply_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'REPLY') AS total_reply_count,
       (SELECT count(*) FROM events e WHERE ${w} AND type = 'REPLY'
          AND coalesce((SELECT category_id FROM campaign_leads WHERE id = e.campaign_lead_id), 0) <> 6) AS non_ooo_reply_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'BLOCK') AS block_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'BOUNCE') AS bounce_count,
       (SELECT count(*) FROM events WHERE ${w} AND type = 'UNSUBSCRIBE') AS unsubscribed_count`,
  )
    .bind(campaignId, start, end)
    .first<Record<string, number>>();
  return Object.fromEntries(Object.entries(row!).map(([key, value]) => [key, String(value)]));
}

const FIELDS = [
  "sent_count", "unique_sent_count", "open_count", "unique_open_count", "human_open_count", "unique_human_open_count",
  "click_count", "unique_click_count", "human_click_count", "unique_human_click_count", "reply_count", "total_reply_count",
  "non_ooo_reply_count", "block_count", "bounce_count", "unsubscribed_count",
];

function pick(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((field) => [field, body[field]]));
}

const TYPES = ["SENT", "SENT", "OPEN", "OPEN", "CLICK", "REPLY", "BOUNCE", "BLOCK", "UNSUBSCRIBE"];
const ZONES = ["UTC", "Asia/Kathmandu", "Asia/Kolkata", "America/St_Johns", "Australia/Eucla", "Pacific/Chatham", "America/New_York"];

async function expectAgreement(apiKey: string, campaign: number, window: { start_date: string; end_date: string }) {
  for (const time_zone of ZONES) {
    const { status, body } = await analytics(apiKey, campaign, { ...window, time_zone });
    expect(status).toBe(200);
    const { start, end } = zonedDayRange(parseCalendarDate(window.start_date)!, parseCalendarDate(window.end_date)!, time_zone);
    expect({ time_zone, ...pick(body) }).toEqual({ time_zone, ...(await fromEvents(campaign, start, end)) });
  }
}

describe("analytics-by-date from counters", () => {
  it("agrees with the events for out-of-order, repeated and edge-of-day events in zones off the hour", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const emails = Array.from({ length: 12 }, (_, i) => `c${i}@counters.example`);
    await addLeads(apiKey, campaign, emails);
    const next = seededRandom(7);
    // Instants cluster around local midnights of the window's edges (2026-03-01 and 2026-03-10)
    // in every zone, where a UTC-hour bucket straddles the window's start or end.
    const edges = ["2026-03-01", "2026-03-11", "2026-02-20", "2026-03-05"].flatMap((day) =>
      ZONES.map((zone) => zonedDayRange(parseCalendarDate(day)!, parseCalendarDate(day)!, zone).start),
    );
    const events = Array.from({ length: 240 }, (_, i) => {
      const type = TYPES[Math.floor(next() * TYPES.length)]!;
      const base = edges[Math.floor(next() * edges.length)]!;
      return {
        event_id: `e${i}`,
        type,
        lead_email: emails[Math.floor(next() * emails.length)],
        occurred_at: new Date(base + Math.floor((next() - 0.5) * 2 * 3_600_000)).toISOString(),
        sequence_number: 1 + Math.floor(next() * 2),
        is_machine: (type === "OPEN" || type === "CLICK") && next() < 0.3,
        ...(type === "REPLY" ? { category_id: next() < 0.4 ? 6 : 1, from_email: next() < 0.2 ? "colleague@counters.example" : undefined } : {}),
      };
    });
    // Newest first (out of order), in two calls, then the first call again (all duplicates).
    const shuffled = [...events].reverse();
    await ingestOk(apiKey, campaign, shuffled.slice(0, 120));
    await ingestOk(apiKey, campaign, shuffled.slice(120));
    const again = await ingestOk(apiKey, campaign, shuffled.slice(0, 120));
    expect(again.duplicates).toBe(120);

    await expectAgreement(apiKey, campaign, { start_date: "2026-03-01", end_date: "2026-03-10" });
    await expectAgreement(apiKey, campaign, { start_date: "2026-02-25", end_date: "2026-03-05" });
  });

  it("follows replies ignored by hand and events deleted with their record", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const ids = await addLeads(apiKey, campaign, ["a@counters.example", "b@counters.example"]);
    await ingestOk(apiKey, campaign, [
      { type: "SENT", lead_email: "a@counters.example", occurred_at: "2026-02-27T10:00:00Z" },
      { type: "SENT", lead_email: "a@counters.example", occurred_at: "2026-03-02T10:00:00Z" },
      { type: "OPEN", lead_email: "a@counters.example", occurred_at: "2026-02-28T10:00:00Z" },
      { type: "OPEN", lead_email: "a@counters.example", occurred_at: "2026-03-03T10:00:00Z" },
      { type: "REPLY", lead_email: "a@counters.example", from_email: "a@counters.example", occurred_at: "2026-03-04T10:00:00Z" },
      { type: "SENT", lead_email: "b@counters.example", occurred_at: "2026-03-02T11:00:00Z" },
      { type: "OPEN", lead_email: "b@counters.example", occurred_at: "2026-03-02T12:00:00Z" },
    ]);
    const window = { start_date: "2026-03-01", end_date: "2026-03-10" };
    const before = (await analytics(apiKey, campaign, window)).body;
    expect(pick(before)).toMatchObject({ sent_count: "2", unique_sent_count: "2", unique_open_count: "2", reply_count: "1" });

    const [reply] = await eventsOf(campaign, "REPLY");
    await setEvent(reply!.id, { ignored: true, ignoredByHand: true });
    expect((await analytics(apiKey, campaign, window)).body).toMatchObject({ reply_count: "0", total_reply_count: "1" });

    // Lead a's March open goes: its span still starts in February, so its window figure must come
    // from its events. Deleting the record from the campaign keeps its events (CONTRACT section 12),
    // so the window's figures keep them too.
    const marchOpens = (await eventsOf(campaign, "OPEN")).filter((e) => e.campaignLeadId === ids["a@counters.example"] && e.occurredAt.getTime() > Date.parse("2026-03-01T00:00:00Z"));
    await deleteEvents(marchOpens.map((e) => e.id));
    expect((await analytics(apiKey, campaign, window)).body).toMatchObject({ open_count: "1", unique_open_count: "1" });
    await deleteRecord(ids["a@counters.example"]!);
    expect(pick((await analytics(apiKey, campaign, window)).body)).toEqual(
      await fromEvents(campaign, Date.parse("2026-03-01T00:00:00Z"), Date.parse("2026-03-11T00:00:00Z")),
    );
    expect((await analytics(apiKey, campaign, window)).body).toMatchObject({ sent_count: "2", unique_sent_count: "2", open_count: "1" });
  });

  it("names each span's lead: the record's while it exists, none once it is deleted, whichever is written first", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const ids = await addLeads(apiKey, campaign, ["a@counters.example", "b@counters.example", "c@counters.example"]);
    const [a, b, c] = [ids["a@counters.example"]!, ids["b@counters.example"]!, ids["c@counters.example"]!];
    await ingestOk(apiKey, campaign, [
      { type: "SENT", lead_email: "a@counters.example", occurred_at: "2026-02-27T10:00:00Z" },
      { type: "SENT", lead_email: "a@counters.example", occurred_at: "2026-03-02T10:00:00Z", sequence_number: 2 },
      { type: "OPEN", lead_email: "a@counters.example", occurred_at: "2026-03-03T10:00:00Z" },
      { type: "SENT", lead_email: "b@counters.example", occurred_at: "2026-03-02T11:00:00Z" },
    ]);
    const [personA, personB, personC] = [await personOf(a), await personOf(b), await personOf(c)];
    expect(await spanLeads(campaign)).toEqual({ [a]: [personA], [b]: [personB] });

    // Rebuilt from the events when one changes or goes.
    const [open] = await eventsOf(campaign, "OPEN");
    await setEvent(open!.id, { isMachine: true });
    const [firstSend] = await eventsOf(campaign, "SENT");
    await deleteEvents([firstSend!.id]);
    expect(await spanLeads(campaign)).toEqual({ [a]: [personA], [b]: [personB] });

    // A record's events written before the record itself (a move copies rows with their ids kept).
    const record = await recordRow(c);
    await deleteRecord(c);
    await addEvents([{ accountId: record.accountId, campaignId: campaign, campaignLeadId: c, type: "SENT", occurredAt: new Date("2026-03-04T10:00:00Z") }]);
    expect((await spanLeads(campaign))[c]).toEqual([null]);
    await addRecords([record]);
    expect((await spanLeads(campaign))[c]).toEqual([personC]);

    // A record deleted from its campaign keeps its events and spans, which name no lead any more.
    await deleteRecord(a);
    expect(await spanLeads(campaign)).toEqual({ [a]: [null], [b]: [personB], [c]: [personC] });
  });
});
