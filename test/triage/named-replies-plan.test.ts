import { describe, expect, it } from "vitest";
import { namedReplies } from "../../src/triage/store";
import { fileEnv } from "../helpers";

/**
 * The replies an ingestion hands to triage are found pair by pair on the events' unique index, even
 * where SQLite's statistics say event ids repeat (a campaign whose events were pushed without one):
 * the plan that walks the whole index once per pair held a 2M-event shard for minutes (bench:shards).
 */

/** A D1 that answers every statement with its query plan instead of its rows. */
function planning(d1: D1Database): D1Database {
  return { prepare: (query: string) => d1.prepare(`EXPLAIN QUERY PLAN ${query}`) } as D1Database;
}

describe("finding named replies", () => {
  it("probes the (campaign_id, event_id) index once a pair whatever the statistics say", async () => {
    const db = fileEnv().DB;
    await db.prepare("ANALYZE").run();
    await db.batch([
      db.prepare("DELETE FROM sqlite_stat1 WHERE idx = 'events_campaign_event_id_idx'"),
      db.prepare("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('events', 'events_campaign_event_id_idx', '2000000 1000000 1000000')"),
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
