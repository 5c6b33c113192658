import { describe, expect, it } from "vitest";
import { namedReplies } from "../../src/triage/store";
import { fileEnv } from "../helpers";

/**
 * The replies an ingestion hands to triage are found pair by pair on the events' unique index, even
 * where SQLite's statistics say event ids repeat (a campaign whose events were pushed without one):
 * the plan that walks the whole index once per pair held a 2M-event shard for minutes (bench:shards).
 */

/** ANALYZE's figures for two campaigns of 1M events each (bench:shards' shard 0), their events pushed without event ids. */
const TWO_MILLION_EVENTS_WITHOUT_IDS = {
  events_record_reply_idx: "200000 3",
  events_reply_created_idx: "200000 100000",
  events_mailbox_type_time_idx: "2000000 500000 222223 111112 1",
  events_campaign_send_idx: "1601852 800926 133488 2 2",
  events_record_time_idx: "2000000 20 1",
  events_campaign_type_time_idx: "2000000 1000000 142858 1 1 1 1 1",
  events_campaign_event_id_idx: "2000000 1000000 1000000",
};

/** A D1 that answers every statement with its query plan instead of its rows. */
function planning(d1: D1Database): D1Database {
  return { prepare: (query: string) => d1.prepare(`EXPLAIN QUERY PLAN ${query}`) } as D1Database;
}

describe("finding named replies", () => {
  it("probes the (campaign_id, event_id) index once a pair whatever the statistics say", async () => {
    const db = fileEnv().DB;
    await db.prepare("ANALYZE").run();
    await db.batch([
      db.prepare("DELETE FROM sqlite_stat1 WHERE tbl = 'events'"),
      ...Object.entries(TWO_MILLION_EVENTS_WITHOUT_IDS).map(([idx, stat]) => db.prepare("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('events', ?, ?)").bind(idx, stat)),
      db.prepare("ANALYZE sqlite_schema"),
    ]);
    try {
      const plan = (await namedReplies(planning(db), undefined, [{ campaignId: 1, eventId: "a" }], [])) as unknown as { detail: string }[];
      const steps = plan.map((row) => row.detail);
      expect(steps).toContainEqual(expect.stringMatching(/^SEARCH x USING (COVERING )?INDEX events_campaign_event_id_idx \(campaign_id=\? AND event_id=\?\)/));
      expect(steps).not.toContainEqual(expect.stringMatching(/^SCAN x\b/));
    } finally {
      await db.batch([db.prepare("DELETE FROM sqlite_stat1"), db.prepare("ANALYZE sqlite_schema")]);
    }
  });
});
