// The analytics benchmarks' dataset (bench:analytics, bench:shards): campaigns of N events each over
// 50k leads and a 30-day window, bulk-loaded by SQL straight into a shard's local D1 file (far
// faster than the API; the triggers of migration 0020 keep the counters as they do for every write).
import { DatabaseSync } from "node:sqlite";
import { mulberry32 } from "./bench-tools.mjs";

export const MAILBOXES = 5;
export const LEADS = 50_000;
export const WINDOW = { start_date: "2026-03-01", end_date: "2026-03-30" };
export const WINDOW_START = Date.parse("2026-03-01T00:00:00Z");
export const WINDOW_MS = 30 * 86_400_000;
export const TYPES = ["SENT", "SENT", "SENT", "OPEN", "OPEN", "CLICK", "REPLY", "BOUNCE", "BLOCK", "UNSUBSCRIBE"];

/**
 * Loads, in one transaction, LEADS leads for the account and one campaign per size named
 * `${prefix}${size}` with that many events (sends spread over MAILBOXES mailboxes), then ANALYZE.
 * The same seed every time, so every run builds the same datasets. `file` must be the database of
 * the account's shard: ids come from that file's counters (its shard's range once claimed). Every
 * event gets an event_id, as every event Salvo stores has one (the engine's `salvo:sent:…`, the
 * tracking routes', the caller's): with them all NULL, ANALYZE finds (campaign_id, event_id)
 * unselective and the planner scans the whole index where a query seeks by event id (the triage
 * consumer's lookup of ingested replies, which then held the shard for minutes).
 */
export function loadEventDatasets(file, accountId, { sizes, prefix = "bench-" }) {
  const db = new DatabaseSync(file);
  const now = Date.now();
  db.exec("BEGIN");
  const insertLead = db.prepare("INSERT INTO leads (account_id, email, created_at) VALUES (?, ?, ?)");
  for (let i = 0; i < LEADS; i += 1) insertLead.run(accountId, `lead${i}@bench.example`, now);
  const leadIds = db.prepare("SELECT id FROM leads WHERE account_id = ? ORDER BY id").all(accountId).map((r) => r.id);
  const random = mulberry32(42);
  for (const size of sizes) {
    const { lastInsertRowid: campaignId } = db
      .prepare("INSERT INTO campaigns (account_id, name, status, created_at, updated_at) VALUES (?, ?, 'ACTIVE', ?, ?)")
      .run(accountId, `${prefix}${size}`, now, now);
    const insertRecord = db.prepare(
      "INSERT INTO campaign_leads (account_id, campaign_id, lead_id, state, created_at, updated_at) VALUES (?, ?, ?, 'INPROGRESS', ?, ?)",
    );
    const recordIds = leadIds.map((leadId) => Number(insertRecord.run(accountId, campaignId, leadId, now, now).lastInsertRowid));
    const insertEvent = db.prepare(
      "INSERT INTO events (account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number, ignored, email_account_id, from_email, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (let i = 0; i < size; i += 1) {
      const type = TYPES[i % TYPES.length];
      insertEvent.run(
        accountId,
        campaignId,
        recordIds[Math.floor(random() * recordIds.length)],
        `salvo:${type.toLowerCase()}:${i}`,
        type,
        WINDOW_START + Math.floor(random() * WINDOW_MS),
        1 + (i % 3),
        type === "REPLY" && i % 7 === 0 ? 1 : 0,
        type === "SENT" ? 1 + (i % MAILBOXES) : null,
        type === "SENT" ? `mailbox${1 + (i % MAILBOXES)}@bench.example` : null,
        now,
      );
    }
    console.log(`loaded campaign ${campaignId}: ${LEADS} leads, ${size} events`);
  }
  db.exec("COMMIT");
  db.exec("ANALYZE");
  db.close();
}

/**
 * analytics-by-date's statements for one campaign and the 30-day window, as src/analytics/store.ts
 * campaignCounts builds them (hour counters, record spans, out-of-office replies, records).
 */
export function countStatements(db, campaignId) {
  const start = WINDOW_START;
  const end = WINDOW_START + WINDOW_MS;
  const ids = JSON.stringify([campaignId]);
  const types = JSON.stringify(["SENT", "OPEN", "CLICK", "REPLY", "BOUNCE", "BLOCK", "UNSUBSCRIBE"]);
  const kinds = JSON.stringify(["SENT1", "OPEN", "OPEN_HUMAN", "CLICK", "CLICK_HUMAN"]);
  const bound = (text, ...params) => {
    const statement = db.prepare(text);
    return { all: () => statement.all(...params) };
  };
  return [
    bound(
      `SELECT campaign_id, type, sum(total), sum(human), sum(counted) FROM event_hour_counts
       WHERE campaign_id IN (SELECT value FROM json_each(?)) AND type IN (SELECT value FROM json_each(?)) AND hour >= ? AND hour < ?
       GROUP BY campaign_id, type`,
      ids, types, start, end,
    ),
    bound(
      `SELECT sp.campaign_id, sp.kind, count(*) FROM event_spans sp INDEXED BY event_spans_last_idx
       WHERE sp.campaign_id IN (SELECT value FROM json_each(?)) AND sp.kind IN (SELECT value FROM json_each(?))
         AND sp.last_at >= ? AND sp.first_at < ?
         AND (sp.first_at >= ? OR EXISTS (SELECT 1 FROM event_span_kinds k JOIN events e INDEXED BY events_record_time_idx
           WHERE e.campaign_lead_id = sp.campaign_lead_id AND e.occurred_at >= ? AND e.occurred_at < ?
             AND k.kind = sp.kind AND e.type = k.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)))
       GROUP BY sp.campaign_id, sp.kind`,
      ids, kinds, start, end, start, start, end,
    ),
    bound(
      `SELECT cl.campaign_id, count(*), sum(e.ignored = 0) FROM campaign_leads cl INDEXED BY campaign_leads_campaign_category_idx
       JOIN events e INDEXED BY events_record_time_idx ON e.campaign_lead_id = cl.id
       WHERE cl.campaign_id IN (SELECT value FROM json_each(?)) AND cl.category_id IN (SELECT value FROM json_each('[6]'))
         AND e.occurred_at >= ? AND e.occurred_at < ? AND e.type = 'REPLY' GROUP BY cl.campaign_id`,
      ids, start, end,
    ),
    bound(
      `SELECT campaign_id, sum(state <> 'STOPPED'), sum(state = 'DRAFTED') FROM campaign_leads INDEXED BY campaign_leads_campaign_state_idx
       WHERE campaign_id IN (SELECT value FROM json_each(?)) GROUP BY campaign_id`,
      ids,
    ),
  ];
}

/** The account's dataset campaigns in `file`, id by size (from names `${prefix}${size}`). */
export function datasetCampaigns(file, { prefix = "bench-", accountId } = {}) {
  const db = new DatabaseSync(file, { readOnly: true });
  const rows = db
    .prepare("SELECT id, name FROM campaigns WHERE name LIKE ?1 AND (?2 IS NULL OR account_id = ?2)")
    .all(`${prefix}%`, accountId ?? null);
  db.close();
  return Object.fromEntries(rows.map((row) => [Number(row.name.slice(prefix.length)), Number(row.id)]));
}
