import { applyD1Migrations } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { fileEnv } from "../helpers";

const MIGRATION = "0021_webhook_scopes.sql";
const db = () => fileEnv().MIGRATION_DB;

async function rows<T>(query: string): Promise<T[]> {
  return (await db().prepare(query).all<T>()).results;
}

/** A campaign webhook with a delivery and an attempt, as the schema before 0021 stored them. */
beforeAll(async () => {
  await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
  await db().batch(
    [
      `INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')`,
      `INSERT INTO campaigns (id, account_id, name) VALUES (10, 1, 'c')`,
      `INSERT INTO webhooks (id, account_id, campaign_id, name, url, event_types, category_ids, secret_ciphertext)
         VALUES (5, 1, 10, 'CRM', 'https://hooks.example.com/a', '["EMAIL_REPLY"]', '[]', 'v1.x')`,
      `INSERT INTO webhook_deliveries (id, account_id, webhook_id, campaign_id, message_id, event_type, payload, status, attempts)
         VALUES (7, 1, 5, 10, 'msg_1', 'EMAIL_REPLY', '{}', 'failed', 1)`,
      `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, status_code, outcome, duration_ms) VALUES (9, 7, 1, 500, 'failed', 12)`,
    ].map((text) => db().prepare(text)),
  );
  await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS);
});

describe("migration 0021 (webhook scopes)", () => {
  it("keeps every webhook as campaign scope, with its deliveries and attempts", async () => {
    expect(await rows(`SELECT id, association_type, client_id, campaign_id, name, secret_ciphertext FROM webhooks`)).toEqual([
      { id: 5, association_type: "campaign", client_id: null, campaign_id: 10, name: "CRM", secret_ciphertext: "v1.x" },
    ]);
    expect(await rows(`SELECT id, webhook_id, campaign_id, status FROM webhook_deliveries`)).toEqual([{ id: 7, webhook_id: 5, campaign_id: 10, status: "failed" }]);
    expect(await rows(`SELECT id, delivery_id, status_code FROM webhook_attempts`)).toEqual([{ id: 9, delivery_id: 7, status_code: 500 }]);
  });

  it("still cascades: deleting the webhook removes its deliveries and attempts", async () => {
    await db().prepare(`DELETE FROM webhooks WHERE id = 5`).run();
    expect(await rows(`SELECT id FROM webhook_deliveries`)).toEqual([]);
    expect(await rows(`SELECT id FROM webhook_attempts`)).toEqual([]);
  });

  it("refuses a scope without its target", async () => {
    await expect(
      db().prepare(`INSERT INTO webhooks (account_id, association_type, name, url, event_types, category_ids) VALUES (1, 'client', 'x', 'u', '[]', '[]')`).run(),
    ).rejects.toThrow(/CHECK/);
  });
});
