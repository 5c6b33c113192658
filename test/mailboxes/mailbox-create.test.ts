import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { config } from "../../src/config";
import { insertMailbox, storedPassword } from "../../src/mailboxes/store";
import { loadKeyring } from "../../src/platform/crypto";
import { database } from "../../src/platform/db";
import { blockOfId } from "../../src/platform/shards";
import { mailboxRow, schema, testDb } from "../db";
import { fileEnv, fileShard, provisionAccount } from "../helpers";
import { mailboxBody, save } from "./fixtures";

/**
 * The file's D1 as a Worker that dies once it has sent the statement inserting a mailbox: any
 * statement prepared after it fails, as it would never run.
 */
function dyingAfterMailboxInsert(d1: D1Database): D1Database {
  let dead = false;
  return {
    prepare(query: string) {
      if (dead) throw new Error("the Worker died");
      if (/^insert into "email_accounts"/i.test(query)) dead = true;
      return d1.prepare(query);
    },
    batch: (statements) => d1.batch(statements),
    exec: (query) => d1.exec(query),
    dump: () => d1.dump(),
    withSession: (constraint) => d1.withSession(constraint),
  } as D1Database;
}

describe("creating a mailbox", () => {
  it("stores its row and its secrets together: a Worker that dies after the row's insert leaves none without them", async () => {
    const env = fileEnv();
    const account = await provisionAccount();
    const keyring = await loadKeyring(config(env).secretsKey);
    const values = {
      accountId: account.id,
      fromName: "Ada",
      fromEmail: `ada-${crypto.randomUUID().slice(0, 8)}@sender.example.com`,
      username: "ada",
      smtpHost: "smtp.example.com",
      smtpPort: 465,
      smtpPortType: "SSL",
      imapHost: "imap.example.com",
      imapPort: 993,
      imapPortType: "SSL",
    } as const;

    const outcome = await insertMailbox(database(dyingAfterMailboxInsert(env.DB)), keyring, values, { password: "smtp-secret", imapPassword: "imap-secret" }).then(
      (row) => row.id,
      (error: Error) => error.message,
    );

    const rows = await testDb().select().from(schema.emailAccounts).where(eq(schema.emailAccounts.accountId, account.id));
    const stored = await Promise.all(
      rows.map(async (row) => ({ id: row.id, smtp: await storedPassword(keyring, row, "smtp"), imap: await storedPassword(keyring, row, "imap") })),
    );
    expect(stored).toEqual([{ id: outcome, smtp: "smtp-secret", imap: "imap-secret" }]);
  });

  it("gives concurrent creates of different addresses each their own id, in the shard's range, with secrets sealed under it", async () => {
    const account = await provisionAccount();
    const keyring = await loadKeyring(config(fileEnv()).secretsKey);
    const saves = await Promise.all(Array.from({ length: 8 }, (_, i) => save(account.apiKey, mailboxBody({ password: `smtp-secret-${i}`, imap_password: `imap-secret-${i}` }))));
    expect(saves.map((r) => [r.status, r.body.message])).toEqual(Array(8).fill([200, "Email account added successfully"]));
    const ids = saves.map((r) => r.body.id);
    expect(new Set(ids).size).toBe(8);
    expect(ids.map(blockOfId)).toEqual(Array(8).fill(fileShard()));
    const secrets = await Promise.all(
      ids.map(async (id) => {
        const row = await mailboxRow(id);
        return [await storedPassword(keyring, row, "smtp"), await storedPassword(keyring, row, "imap")];
      }),
    );
    expect(secrets).toEqual(Array.from({ length: 8 }, (_, i) => [`smtp-secret-${i}`, `imap-secret-${i}`]));
  });
});
