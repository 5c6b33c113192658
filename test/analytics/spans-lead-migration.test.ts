import { applyD1Migrations } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fileEnv } from "../helpers";

const MIGRATION = "0090_event_spans_lead.sql";
const db = () => fileEnv().MIGRATION_DB;

async function run(...statements: string[]) {
  await db().batch(statements.map((text) => db().prepare(text)));
}

async function spans(): Promise<{ record: number; kind: string; lead: number | null }[]> {
  const { results } = await db()
    .prepare("SELECT campaign_lead_id AS record, kind, lead_id AS lead FROM event_spans ORDER BY campaign_lead_id, kind")
    .all<{ record: number; kind: string; lead: number | null }>();
  return results;
}

describe("migration 0090: each span names its record's lead", () => {
  it("fills the spans stored before it, leaves a deleted record's without one, and names the leads of spans written after", async () => {
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
    // Two campaigns reach lead 100; record 1002's lead was removed from its campaign since (its events stay).
    await run(
      "INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')",
      "INSERT INTO campaigns (id, account_id, name) VALUES (10, 1, 'first'), (11, 1, 'second')",
      "INSERT INTO leads (id, account_id, email) VALUES (100, 1, 'pat@legacy.example'), (101, 1, 'sam@legacy.example')",
      "INSERT INTO campaign_leads (id, account_id, campaign_id, lead_id) VALUES (1000, 1, 10, 100), (1001, 1, 11, 100), (1002, 1, 11, 101)",
      `INSERT INTO events (account_id, campaign_id, campaign_lead_id, type, occurred_at, sequence_number) VALUES
         (1, 10, 1000, 'SENT', 1772445600000, 1), (1, 10, 1000, 'OPEN', 1772449200000, 1),
         (1, 11, 1001, 'SENT', 1772532000000, 2), (1, 11, 1002, 'SENT', 1772532000000, 1)`,
      "DELETE FROM campaign_leads WHERE id = 1002",
    );
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name === MIGRATION));
    expect(await spans()).toEqual([
      { record: 1000, kind: "OPEN", lead: 100 },
      { record: 1000, kind: "OPEN_HUMAN", lead: 100 },
      { record: 1000, kind: "SENT", lead: 100 },
      { record: 1000, kind: "SENT1", lead: 100 },
      { record: 1001, kind: "SENT", lead: 100 },
      { record: 1002, kind: "SENT", lead: null },
      { record: 1002, kind: "SENT1", lead: null },
    ]);
    // The triggers it installs: an event of a record that exists names its lead.
    await run(
      "INSERT INTO campaign_leads (id, account_id, campaign_id, lead_id) VALUES (1003, 1, 10, 101)",
      "INSERT INTO events (account_id, campaign_id, campaign_lead_id, type, occurred_at, sequence_number) VALUES (1, 10, 1003, 'SENT', 1772535600000, 1)",
    );
    expect((await spans()).filter((span) => span.record === 1003)).toEqual([
      { record: 1003, kind: "SENT", lead: 101 },
      { record: 1003, kind: "SENT1", lead: 101 },
    ]);
  });
});
