import { applyD1Migrations } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { fileEnv } from "../helpers";

const MIGRATION = "0010_client_isolation.sql";
const db = () => fileEnv().MIGRATION_DB;

async function run(...statements: string[]) {
  await db().batch(statements.map((text) => db().prepare(text)));
}

async function rows<T>(query: string): Promise<T[]> {
  return (await db().prepare(query).all<T>()).results;
}

const SPAM_TEST_COLUMNS = `(id, account_id, client_id, campaign_id, folder_id, test_name, test_type, spam_filters, spam_filter_names,
  link_checker, sequence_mapping_id, provider_ids, all_email_sent_without_time_gap, min_time_btwn_emails, min_time_unit,
  is_warmup, email_track_id)`;
const spamTest = (id: number, clientId: string, campaignId: number, folderId: number) =>
  `(${id}, 1, ${clientId}, ${campaignId}, ${folderId}, 't${id}', 'manual', 1, '[]', 0, '1', '["gmail"]', 0, 10, 'minutes', 0, 'track-${id}')`;

/**
 * Data as the old model stored it: one lead row per email per account, used by the account's own
 * campaign (10) and by campaigns of client 1 (11, 12) and client 2 (13); one tag shared likewise;
 * client 2's spam test filed in client 1's folder.
 */
async function buildLegacyState() {
  await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
  await run(
    `INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')`,
    `INSERT INTO clients (id, account_id, name, email) VALUES (1, 1, 'X', 'x@x.example'), (2, 1, 'Y', 'y@y.example')`,
    `INSERT INTO campaigns (id, account_id, client_id, name) VALUES (10, 1, NULL, 'own'), (11, 1, 1, 'x1'), (12, 1, 1, 'x2'), (13, 1, 2, 'y1')`,
    `INSERT INTO leads (id, account_id, email, first_name, phone_number, custom_fields) VALUES
       (100, 1, 'pat@shared.example', 'Pat', '+1 555 0100', '{"deal":"big"}'),
       (101, 1, 'only-y@y.example', 'Yan', NULL, NULL),
       (102, 1, 'lonely@nowhere.example', 'Lone', NULL, NULL),
       (103, 1, 'only-x@x.example', 'Xia', NULL, NULL)`,
    `INSERT INTO campaign_leads (id, account_id, campaign_id, lead_id, state) VALUES
       (1000, 1, 10, 100, 'DRAFTED'), (1001, 1, 11, 100, 'INPROGRESS'), (1002, 1, 12, 100, 'DRAFTED'),
       (1003, 1, 13, 100, 'BLOCKED'), (1004, 1, 13, 101, 'DRAFTED'), (1005, 1, 11, 103, 'DRAFTED')`,
    `INSERT INTO events (id, account_id, campaign_id, campaign_lead_id, type, occurred_at) VALUES (1, 1, 13, 1003, 'BOUNCE', 1767225600000)`,
    `INSERT INTO tags (id, account_id, name) VALUES (50, 1, 'q1'), (51, 1, 'x-only'), (52, 1, 'unused')`,
    `INSERT INTO campaign_tags (campaign_id, tag_id) VALUES (10, 50), (11, 50), (12, 50), (13, 50), (11, 51)`,
    `INSERT INTO spam_test_folders (id, account_id, client_id, name) VALUES (70, 1, 1, 'X folder'), (71, 1, NULL, 'account folder')`,
    `INSERT INTO spam_tests ${SPAM_TEST_COLUMNS} VALUES ${spamTest(80, "2", 13, 70)}, ${spamTest(81, "1", 11, 70)}, ${spamTest(82, "2", 13, 71)}`,
  );
}

describe("migration 0010 (client scopes)", () => {
  beforeAll(async () => {
    await buildLegacyState();
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS);
  });

  it("leaves no lead used by campaigns of two client scopes", async () => {
    const mismatched = await rows(
      `SELECT cl.id FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id JOIN campaigns c ON c.id = cl.campaign_id
       WHERE coalesce(l.client_id, 0) <> coalesce(c.client_id, 0) OR l.account_id <> c.account_id`,
    );
    expect(mismatched).toEqual([]);
  });

  it("splits a shared lead into one row per scope with the same fields, keeping records, states and events", async () => {
    const records = await rows<Record<string, unknown>>(
      `SELECT cl.id, cl.campaign_id, cl.state, l.id AS lead_id, l.client_id, l.email, l.first_name, l.phone_number, l.custom_fields
       FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id WHERE l.email = 'pat@shared.example' ORDER BY cl.id`,
    );
    const fields = { email: "pat@shared.example", first_name: "Pat", phone_number: "+1 555 0100", custom_fields: '{"deal":"big"}' };
    expect(records).toEqual([
      { id: 1000, campaign_id: 10, state: "DRAFTED", lead_id: 100, client_id: null, ...fields },
      { id: 1001, campaign_id: 11, state: "INPROGRESS", lead_id: expect.any(Number), client_id: 1, ...fields },
      { id: 1002, campaign_id: 12, state: "DRAFTED", lead_id: records[1]!.lead_id, client_id: 1, ...fields },
      { id: 1003, campaign_id: 13, state: "BLOCKED", lead_id: expect.any(Number), client_id: 2, ...fields },
    ]);
    expect(new Set(records.map((r) => r.lead_id)).size).toBe(3);
    expect(await rows(`SELECT count(*) AS n FROM leads WHERE email = 'pat@shared.example'`)).toEqual([{ n: 3 }]);
    expect(await rows(`SELECT campaign_lead_id FROM events WHERE id = 1`)).toEqual([{ campaign_lead_id: 1003 }]);
  });

  it("gives a lead of one scope that scope, and an unused lead the account's", async () => {
    expect(await rows(`SELECT id, client_id FROM leads WHERE id IN (101, 102, 103) ORDER BY id`)).toEqual([
      { id: 101, client_id: 2 },
      { id: 102, client_id: null },
      { id: 103, client_id: 1 },
    ]);
  });

  it("splits shared tags the same way", async () => {
    const mismatched = await rows(
      `SELECT ct.campaign_id FROM campaign_tags ct JOIN tags t ON t.id = ct.tag_id JOIN campaigns c ON c.id = ct.campaign_id
       WHERE coalesce(t.client_id, 0) <> coalesce(c.client_id, 0)`,
    );
    expect(mismatched).toEqual([]);
    const byCampaign = await rows<{ campaign_id: number; tag_id: number; name: string; client_id: number | null }>(
      `SELECT ct.campaign_id, t.id AS tag_id, t.name, t.client_id FROM campaign_tags ct JOIN tags t ON t.id = ct.tag_id
       ORDER BY ct.campaign_id, t.name`,
    );
    const q1 = (campaign: number) => byCampaign.find((r) => r.campaign_id === campaign && r.name === "q1")!;
    expect(q1(10)).toMatchObject({ tag_id: 50, client_id: null });
    expect(q1(11)).toMatchObject({ client_id: 1, tag_id: q1(12).tag_id });
    expect(q1(13)).toMatchObject({ client_id: 2 });
    expect(new Set([q1(10), q1(11), q1(13)].map((r) => r.tag_id)).size).toBe(3);
    expect(byCampaign.find((r) => r.name === "x-only")).toMatchObject({ campaign_id: 11, tag_id: 51, client_id: 1 });
    expect(await rows(`SELECT client_id FROM tags WHERE id = 52`)).toEqual([{ client_id: null }]);
  });

  it("takes another client's test out of a client's folder and keeps the rest filed", async () => {
    expect(await rows(`SELECT id, folder_id FROM spam_tests ORDER BY id`)).toEqual([
      { id: 80, folder_id: null },
      { id: 81, folder_id: 70 },
      { id: 82, folder_id: 71 },
    ]);
  });

  it("enforces one lead per email per scope from now on", async () => {
    await expect(run(`INSERT INTO leads (account_id, client_id, email) VALUES (1, 1, 'pat@shared.example')`)).rejects.toThrow(/UNIQUE/);
    await expect(run(`INSERT INTO leads (account_id, client_id, email) VALUES (1, NULL, 'pat@shared.example')`)).rejects.toThrow(/UNIQUE/);
    await expect(run(`INSERT INTO tags (account_id, client_id, name) VALUES (1, NULL, 'q1')`)).rejects.toThrow(/UNIQUE/);
  });
});
