import { describe, expect, it } from "vitest";
import { deleteEvents, eventsOf, setEvent } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { parseCalendarDate, zonedDayRange } from "../../src/platform/zoned-time";
import { seededRandom } from "./seeded-random";

type Body = Record<string, unknown>;

/**
 * The per-mailbox, by-sent-time and per-send figures read the send each event is credited to
 * (events.send_id/send_at/send_mailbox_id and the counters of migration 0027, kept by triggers).
 * These tests hold them to the definition — an outcome belongs to the record's latest send at or
 * before it, ties to the later id — searched straight from the events, after sends that arrive
 * late, replies ignored after the fact and sends deleted.
 */
const ANSWERED = `(SELECT s.id FROM events s WHERE s.campaign_lead_id = e.campaign_lead_id AND s.occurred_at <= e.occurred_at
  AND s.type = 'SENT' ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)`;
const CREDITED = `JOIN events s ON s.id = CASE WHEN e.type = 'SENT' THEN e.id ELSE ${ANSWERED} END`;

async function all<T = Body>(query: string, ...binds: unknown[]): Promise<T[]> {
  return (await fileEnv().DB.prepare(query).bind(...binds).all<T>()).results;
}

/** Per mailbox, the window's figures searched from events (the query the counters replaced). */
async function mailboxOracle(campaign: number, start: number, end: number) {
  const rows = await all(
    `SELECT s.email_account_id AS email_account_id,
       sum(e.type = 'SENT') AS sent_count, count(DISTINCT CASE WHEN e.type = 'SENT' THEN e.campaign_lead_id END) AS unique_sent_count,
       sum(e.type = 'OPEN') AS open_count, count(DISTINCT CASE WHEN e.type = 'OPEN' THEN e.campaign_lead_id END) AS unique_open_count,
       sum(e.type = 'CLICK') AS click_count, count(DISTINCT CASE WHEN e.type = 'CLICK' THEN e.campaign_lead_id END) AS unique_click_count,
       sum(e.type = 'REPLY' AND e.ignored = 0) AS reply_count, sum(e.type = 'BOUNCE') AS bounce_count,
       sum(e.type = 'UNSUBSCRIBE') AS unsubscribed_count
     FROM events e ${CREDITED}
     WHERE e.campaign_id = ?1 AND e.type IN ('SENT', 'OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE')
       AND e.occurred_at >= ?2 AND e.occurred_at < ?3 AND s.email_account_id IS NOT NULL
     GROUP BY s.email_account_id ORDER BY s.email_account_id`,
    campaign,
    start,
    end,
  );
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)])));
}

/** The sends in [start, end) and the opens, counted replies and bounces answering them. */
async function bySendOracle(campaign: number, start: number, end: number) {
  const [row] = await all<Record<string, number>>(
    `SELECT coalesce(sum(e.type = 'SENT'), 0) AS sent, coalesce(sum(e.type = 'OPEN'), 0) AS opened,
       coalesce(sum(e.type = 'REPLY' AND e.ignored = 0), 0) AS replied, coalesce(sum(e.type = 'BOUNCE'), 0) AS bounced
     FROM events e ${CREDITED}
     WHERE e.campaign_id = ?1 AND e.type IN ('SENT', 'OPEN', 'REPLY', 'BOUNCE') AND s.occurred_at >= ?2 AND s.occurred_at < ?3`,
    campaign,
    start,
    end,
  );
  return row!;
}

const TYPES = ["SENT", "SENT", "SENT", "OPEN", "OPEN", "CLICK", "REPLY", "BOUNCE", "UNSUBSCRIBE"];

/** Three mailboxes of the account, ids ascending. */
async function mailboxesOf(apiKey: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < 3; i += 1) ids.push((await createMailbox(apiKey)).id);
  return ids;
}
const ZONES = ["UTC", "Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham"];
const WINDOW = { start_date: "2026-03-01", end_date: "2026-03-06" };

async function expectAgreement(apiKey: string, campaign: number) {
  for (const time_zone of ZONES) {
    const { start, end } = zonedDayRange(parseCalendarDate(WINDOW.start_date)!, parseCalendarDate(WINDOW.end_date)!, time_zone);
    const stats = await callJson<Body>(`/api/v1/campaigns/${campaign}/mailbox-statistics?${new URLSearchParams({ ...WINDOW, time_zone })}`, { apiKey });
    expect(stats.status).toBe(200);
    const figures = (stats.body.data as Body[]).map(({ from_email: _from, from_name: _name, ...rest }) => rest);
    expect({ time_zone, figures }).toEqual({ time_zone, figures: await mailboxOracle(campaign, start, end) });

    const days = await callJson<{ data: { day_wise_stats: Body[] } }>(
      `/api/v1/analytics/day-wise-overall-stats-by-sent-time?${new URLSearchParams({ ...WINDOW, timezone: time_zone, campaign_ids: String(campaign) })}`,
      { apiKey },
    );
    expect(days.status).toBe(200);
    for (const day of days.body.data.day_wise_stats) {
      const date = parseCalendarDate(String(day.date))!;
      const range = zonedDayRange(date, date, time_zone);
      expect({ time_zone, ...day }).toEqual({ time_zone, date: day.date, ...(await bySendOracle(campaign, range.start, range.end)) });
    }
  }
  // Every event names the send the definition gives it, and the counters are the events' sums.
  expect(await all(`SELECT e.id FROM events e WHERE e.campaign_id = ? AND e.type <> 'SENT' AND e.type <> 'BLOCK' AND e.send_id IS NOT ${ANSWERED}`, campaign)).toEqual([]);
  expect(await all(`SELECT * FROM credit_mailbox_hours WHERE campaign_id = ?1 AND total <> 0 ORDER BY type, hour, mailbox_id`, campaign)).toEqual(
    await all(
      `SELECT campaign_id, type, occurred_at - ((occurred_at % 3600000) + 3600000) % 3600000 AS hour, send_mailbox_id AS mailbox_id,
         count(*) AS total, sum(ignored = 0) AS counted
       FROM events WHERE campaign_id = ?1 AND send_mailbox_id IS NOT NULL GROUP BY 2, 3, 4 ORDER BY type, hour, mailbox_id`,
      campaign,
    ),
  );
  expect(await all(`SELECT * FROM credit_spans WHERE campaign_id = ?1 ORDER BY campaign_lead_id, mailbox_id, type`, campaign)).toEqual(
    await all(
      `SELECT campaign_lead_id, send_mailbox_id AS mailbox_id, type, campaign_id, min(occurred_at) AS first_at, max(occurred_at) AS last_at
       FROM events WHERE campaign_id = ?1 AND send_mailbox_id IS NOT NULL AND type IN ('SENT', 'OPEN', 'CLICK')
       GROUP BY 1, 2, 3 ORDER BY campaign_lead_id, mailbox_id, type`,
      campaign,
    ),
  );
}

describe("send credit", () => {
  it("credits every outcome to the send it answers, through late sends, ignored replies and deleted sends", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const mailboxes = await mailboxesOf(apiKey);
    const emails = Array.from({ length: 8 }, (_, i) => `k${i}@credit.example`);
    await addLeads(apiKey, campaign, emails);
    const next = seededRandom(11);
    const base = Date.parse("2026-02-28T18:00:00Z");
    const events = Array.from({ length: 260 }, (_, i) => {
      const type = TYPES[Math.floor(next() * TYPES.length)]!;
      return {
        event_id: `k${i}`,
        type,
        lead_email: emails[Math.floor(next() * emails.length)],
        // Whole seconds in a few buckets, so sends and outcomes often share an instant.
        occurred_at: new Date(base + Math.floor(next() * 7 * 24) * 3_600_000 + Math.floor(next() * 4) * 900_000).toISOString(),
        sequence_number: 1 + Math.floor(next() * 3),
        ...(type === "SENT" ? { email_account_id: mailboxes[Math.floor(next() * mailboxes.length)] } : {}),
        ...(type === "REPLY" ? { from_email: emails[0] } : {}),
      };
    });
    // Outcomes first, sends last: every send arrives after outcomes it answers.
    const sends = events.filter((event) => event.type === "SENT");
    const outcomes = events.filter((event) => event.type !== "SENT");
    await ingestOk(apiKey, campaign, outcomes);
    await ingestOk(apiKey, campaign, sends.slice(0, 40));
    await ingestOk(apiKey, campaign, sends.slice(40).reverse());
    await expectAgreement(apiKey, campaign);

    for (const reply of (await eventsOf(campaign, "REPLY")).slice(0, 4)) await setEvent(reply.id, { ignored: true, ignoredByHand: true });
    const sentEvents = (await eventsOf(campaign, "SENT")).sort((x, y) => x.occurredAt.getTime() - y.occurredAt.getTime());
    await deleteEvents(sentEvents.slice(5, 30).map((e) => e.id));
    await deleteEvents((await eventsOf(campaign, "OPEN")).slice(0, 10).map((e) => e.id));
    await expectAgreement(apiKey, campaign);
  });

  it("filters statistics rows by the outcome credited to each send", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const [m1, m2, m3] = await mailboxesOf(apiKey);
    await addLeads(apiKey, campaign, ["a@credit.example", "b@credit.example"]);
    await ingestOk(apiKey, campaign, [
      { type: "OPEN", lead_email: "a@credit.example", occurred_at: "2026-03-02T09:00:00Z" },
      { type: "SENT", lead_email: "a@credit.example", occurred_at: "2026-03-01T09:00:00Z", email_account_id: m1 },
      { type: "SENT", lead_email: "a@credit.example", occurred_at: "2026-03-03T09:00:00Z", sequence_number: 2, email_account_id: m1 },
      { type: "REPLY", lead_email: "a@credit.example", from_email: "a@credit.example", occurred_at: "2026-03-04T09:00:00Z" },
      { type: "SENT", lead_email: "b@credit.example", occurred_at: "2026-03-01T10:00:00Z", email_account_id: m2 },
      { type: "OPEN", lead_email: "b@credit.example", occurred_at: "2026-03-05T10:00:00Z" },
    ]);
    // A send written late, between b's send and its open, takes the open over.
    await ingestOk(apiKey, campaign, [{ type: "SENT", lead_email: "b@credit.example", occurred_at: "2026-03-02T10:00:00Z", sequence_number: 2, email_account_id: m3 }]);
    const rows = async (status: string) => {
      const { body } = await callJson<{ total_stats: string; data: Body[] }>(`/api/v1/campaigns/${campaign}/statistics?email_status=${status}`, { apiKey });
      return { total: body.total_stats, rows: body.data.map((row) => [row.lead_email, row.sequence_number, row.open_count, row.reply_time !== null]) };
    };
    expect(await rows("opened")).toEqual({
      total: "2",
      rows: [
        ["a@credit.example", 1, 1, false],
        ["b@credit.example", 2, 1, false],
      ],
    });
    expect(await rows("replied")).toEqual({ total: "1", rows: [["a@credit.example", 2, 0, true]] });
    expect(await rows("opened&sent_time_start_date=2026-03-01 09:30:00")).toEqual({ total: "1", rows: [["b@credit.example", 2, 1, false]] });
    expect(await rows("opened&email_sequence_number=1")).toEqual({ total: "1", rows: [["a@credit.example", 1, 1, false]] });
    const mailboxes = await callJson<{ data: Body[] }>(`/api/v1/campaigns/${campaign}/mailbox-statistics`, { apiKey });
    expect(mailboxes.body.data.map((row) => [row.email_account_id, row.sent_count, row.open_count, row.reply_count])).toEqual([
      [m1, 2, 1, 1],
      [m2, 1, 0, 0],
      [m3, 1, 1, 0],
    ]);
  });

  it("credits a hit by one seek of the record's sends, however many hits the record had before", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const [mailbox] = await mailboxesOf(apiKey);
    await addLeads(apiKey, campaign, ["busy@credit.example", "quiet@credit.example"]);
    const sentAt = Date.parse("2026-03-01T09:00:00Z");
    await ingestOk(apiKey, campaign, ["busy@credit.example", "quiet@credit.example"].map((lead_email) => ({ type: "SENT", lead_email, occurred_at: new Date(sentAt).toISOString(), email_account_id: mailbox })));
    const [busy, quiet] = await all<{ id: number; account_id: number }>(`SELECT id, account_id FROM campaign_leads WHERE campaign_id = ?1 ORDER BY id`, campaign);
    // A pixel loaded 3,000 times (a forwarded email, a proxy re-fetching it), one second apart.
    await fileEnv()
      .DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO events (account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number, created_at)
         SELECT ?1, ?2, ?3, 'hit-' || i, 'OPEN', ?4 + i * 1000, 1, ?4 FROM n`,
      )
      .bind(busy!.account_id, campaign, busy!.id, sentAt)
      .run();
    const hit = async (record: number, eventId: string) =>
      fileEnv()
        .DB.prepare(
          `INSERT INTO events (account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number, created_at)
           VALUES (?1, ?2, ?3, ?4, 'OPEN', ?5, 1, ?5)`,
        )
        .bind(busy!.account_id, campaign, record, eventId, sentAt + 3_600_000)
        .run();
    await hit(quiet!.id, "first");
    const onBusy = await hit(busy!.id, "one-more");
    const onQuiet = await hit(quiet!.id, "second");
    // Rows read by the insert and its triggers: the same after 3,000 hits as after one (the lookup once walked back through all of them).
    expect(onBusy.meta.rows_read).toBe(onQuiet.meta.rows_read);
    const credited = await all<{ campaign_lead_id: number; send_id: number; sent: number }>(
      `SELECT e.campaign_lead_id, e.send_id, (SELECT s.id FROM events s WHERE s.campaign_lead_id = e.campaign_lead_id AND s.type = 'SENT') AS sent
       FROM events e WHERE e.campaign_id = ?1 AND e.event_id IN ('one-more', 'first', 'second', 'hit-1', 'hit-3000') ORDER BY e.id`,
      campaign,
    );
    expect(credited.map((row) => row.send_id)).toEqual(credited.map((row) => row.sent));
    await expectAgreement(apiKey, campaign);
  });
});
