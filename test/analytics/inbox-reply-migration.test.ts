import { applyD1Migrations } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fileEnv } from "../helpers";

const MIGRATION = "0095_inbox_replies_no_step.sql";
const db = () => fileEnv().MIGRATION_DB;
const T = 1772445600000;
const HOUR = 3_600_000;

async function run(...statements: string[]) {
  await db().batch(statements.map((text) => db().prepare(text)));
}

async function rows<T>(text: string): Promise<T[]> {
  return (await db().prepare(text).all<T>()).results;
}

describe("migration 0095: inbox replies stored before are no step of the campaign", () => {
  it("files them under step 0, takes them out of the spans, the send credit and the records' sent flag and time", async () => {
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
    // Record 1000: the campaign's step 1, the lead's answer, a person's reply (filed under step 1), the lead again.
    // Record 1001: only a person's reply in a thread the campaign had not written to (filed under step 1).
    await run(
      "INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')",
      "INSERT INTO campaigns (id, account_id, name) VALUES (10, 1, 'first')",
      "INSERT INTO leads (id, account_id, email) VALUES (100, 1, 'pat@legacy.example'), (101, 1, 'sam@legacy.example')",
      `INSERT INTO campaign_leads (id, account_id, campaign_id, lead_id, has_sent, last_sent_at) VALUES
         (1000, 1, 10, 100, 1, ${T + 2 * HOUR}), (1001, 1, 10, 101, 1, ${T + 2 * HOUR})`,
      `INSERT INTO events (id, account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number, email_account_id) VALUES
         (1, 1, 10, 1000, 'esp-1', 'SENT', ${T}, 1, 5), (2, 1, 10, 1000, 'r-1', 'REPLY', ${T + HOUR}, 1, 5),
         (3, 1, 10, 1000, 'inbox-reply:<a@x>', 'SENT', ${T + 2 * HOUR}, 1, 5), (4, 1, 10, 1000, 'r-2', 'REPLY', ${T + 3 * HOUR}, 1, 5),
         (5, 1, 10, 1001, 'inbox-reply:<b@x>', 'SENT', ${T + 2 * HOUR}, 1, 5)`,
    );
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name === MIGRATION));

    expect(await rows("SELECT id, sequence_number, send_id FROM events ORDER BY id")).toEqual([
      { id: 1, sequence_number: 1, send_id: 1 },
      { id: 2, sequence_number: 1, send_id: 1 },
      { id: 3, sequence_number: 0, send_id: null },
      { id: 4, sequence_number: 1, send_id: 1 },
      { id: 5, sequence_number: 0, send_id: null },
    ]);
    expect(await rows("SELECT campaign_lead_id AS record, kind, first_at, last_at FROM event_spans WHERE kind IN ('SENT', 'SENT1') ORDER BY 1, 2")).toEqual([
      { record: 1000, kind: "SENT", first_at: T, last_at: T },
      { record: 1000, kind: "SENT1", first_at: T, last_at: T },
    ]);
    expect(await rows("SELECT sequence_number, sum(total) AS n FROM event_hour_counts WHERE type = 'SENT' GROUP BY 1 ORDER BY 1")).toEqual([
      { sequence_number: 0, n: 2 },
      { sequence_number: 1, n: 1 },
    ]);
    expect(await rows("SELECT type, sum(total) AS n FROM credit_mailbox_hours GROUP BY 1 ORDER BY 1")).toEqual([
      { type: "REPLY", n: 2 },
      { type: "SENT", n: 1 },
    ]);
    expect(await rows("SELECT id, has_sent, last_sent_at FROM campaign_leads ORDER BY id")).toEqual([
      { id: 1000, has_sent: 1, last_sent_at: T },
      { id: 1001, has_sent: 0, last_sent_at: null },
    ]);

    // The triggers it installs: a person's SENT written after is no send either.
    await run(
      `INSERT INTO events (id, account_id, campaign_id, campaign_lead_id, event_id, type, occurred_at, sequence_number, email_account_id) VALUES
         (6, 1, 10, 1000, 'inbox-reply:<c@x>', 'SENT', ${T + 4 * HOUR}, 0, 5), (7, 1, 10, 1000, 'r-3', 'REPLY', ${T + 5 * HOUR}, 1, 5)`,
    );
    expect(await rows("SELECT id, send_id FROM events WHERE id IN (6, 7) ORDER BY id")).toEqual([
      { id: 6, send_id: null },
      { id: 7, send_id: 1 },
    ]);
    expect(await rows("SELECT last_at FROM event_spans WHERE campaign_lead_id = 1000 AND kind = 'SENT'")).toEqual([{ last_at: T }]);
  });
});
