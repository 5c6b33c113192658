import { applyD1Migrations } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fileEnv } from "../helpers";

const MIGRATION = "0094_campaign_folder_scope.sql";
const db = () => fileEnv().MIGRATION_DB;

describe("migration 0094: campaigns leave folders of another client", () => {
  it("unfiles a campaign from a folder of another client than its own, and keeps every other filing", async () => {
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
    await db().batch(
      [
        "INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')",
        "INSERT INTO clients (id, account_id, name, email) VALUES (1, 1, 'X', 'x@x.example'), (2, 1, 'Y', 'y@y.example')",
        "INSERT INTO campaign_folders (id, account_id, client_id, name) VALUES (70, 1, 1, 'X folder'), (71, 1, NULL, 'account folder')",
        // 10: X's in X's folder; 11: Y's in X's folder; 12: the account's own in X's folder; 13: Y's in the account's; 14: none.
        `INSERT INTO campaigns (id, account_id, client_id, name, folder_id) VALUES
           (10, 1, 1, 'x', 70), (11, 1, 2, 'y', 70), (12, 1, NULL, 'own', 70), (13, 1, 2, 'y2', 71), (14, 1, 1, 'x2', NULL)`,
      ].map((text) => db().prepare(text)),
    );
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name === MIGRATION));
    const { results } = await db().prepare("SELECT id, folder_id AS folder FROM campaigns ORDER BY id").all<{ id: number; folder: number | null }>();
    expect(results).toEqual([
      { id: 10, folder: 70 },
      { id: 11, folder: null },
      { id: 12, folder: null },
      { id: 13, folder: 71 },
      { id: 14, folder: null },
    ]);
  });
});
