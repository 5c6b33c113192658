import { applyD1Migrations } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fileEnv } from "../helpers";

const MIGRATION = "0036_one_line_from_names.sql";
const db = () => fileEnv().MIGRATION_DB;

describe("migration 0036: from_names stored with line breaks become one line", () => {
  it("replaces each CR, LF and tab by a space, trims, and leaves other names alone", async () => {
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
    const names = ["Ann\r\nBcc: eve@evil.example", "Bob\n", "\tCy\tDee", "Zoë \"Z\" O'Neil"];
    await db().batch([
      db().prepare("INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')"),
      ...names.map((name, i) =>
        db()
          .prepare(
            `INSERT INTO email_accounts (account_id, from_name, from_email, username, smtp_host, smtp_port, smtp_port_type, imap_host, imap_port, imap_port_type)
             VALUES (1, ?, ?, 'u', 'smtp.example.com', 465, 'SSL', 'imap.example.com', 993, 'SSL')`,
          )
          .bind(name, `m${i}@legacy.example`),
      ),
    ]);
    await applyD1Migrations(db(), fileEnv().TEST_MIGRATIONS.filter((m) => m.name === MIGRATION));
    const rows = await db().prepare("SELECT from_name FROM email_accounts ORDER BY id").all<{ from_name: string }>();
    expect(rows.results.map((row) => row.from_name)).toEqual(["Ann  Bcc: eve@evil.example", "Bob", "Cy Dee", "Zoë \"Z\" O'Neil"]);
  });
});
