import { describe, expect, it } from "vitest";
import type { ConnectionChecker, ConnectionTarget } from "../../src/mailboxes/connection-check";
import { RECHECK_AFTER_MS, recheckMailboxes, recheckMailboxesDaily } from "../../src/mailboxes/recheck";
import { mailboxesDueForRecheck } from "../../src/mailboxes/store";
import { database } from "../../src/platform/db";
import { MINUTE_JOBS } from "../../src/scheduled";
import { setMailbox } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createMailbox, readMailbox, storedMailbox } from "./fixtures";

const DAY = 24 * 60 * 60 * 1000;
const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
const db = database(fileEnv().DB);

/**
 * Ages a mailbox as if its last check (null: never checked) and last change were that long ago.
 * Far in the past, so no mailbox another test just made is older.
 */
async function age(id: number, checkedDaysAgo: number | null, changedDaysAgo: number, now: number) {
  const at = (days: number) => now - 1000 * DAY - days * DAY;
  await setMailbox(id, { checkedAt: checkedDaysAgo === null ? null : new Date(at(checkedDaysAgo)), updatedAt: new Date(at(changedDaysAgo)) });
}

/** Takes whatever an earlier test left due, so a test sees only its own mailboxes. */
async function drain(now: number) {
  await recheckMailboxes(fileEnv(), now, recordingChecker().check, 1000);
}

/** A checker that records what it was asked and answers SMTP ok, IMAP refused. */
function recordingChecker() {
  const targets: ConnectionTarget[] = [];
  const check: ConnectionChecker = async (target) => {
    targets.push(target);
    return { smtp: { ok: true, error: null }, imap: { ok: false, error: "[AUTHENTICATIONFAILED] Authentication failed." } };
  };
  return { targets, check };
}

describe("daily mailbox re-check (minute cron)", () => {
  it("is one of the minute cron's jobs, and does nothing while connection checks are off", async () => {
    expect(MINUTE_JOBS).toContain(recheckMailboxesDaily);
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const now = Date.now();
    await age(mailbox.id, 5, 5, now);
    const before = await storedMailbox(mailbox.id);
    // This suite runs with MAILBOX_CONNECTION_CHECKS=false.
    await recheckMailboxesDaily(fileEnv(), new Date(now));
    expect((await storedMailbox(mailbox.id)).checkedAt).toEqual(before.checkedAt);
  });

  it("takes the mailboxes unchecked for over a day, oldest first, in bounded batches, each once", async () => {
    const account = await provisionAccount();
    const now = Date.now();
    await drain(now);
    const stale = await createMailbox(account.apiKey, { user_name: "stale-login" });
    const never = await createMailbox(account.apiKey, { user_name: "never-login", imap_user_name: "never-imap", imap_password: "imap-secret-B2" });
    const oldest = await createMailbox(account.apiKey, { user_name: "oldest-login" });
    const fresh = await createMailbox(account.apiKey);
    const oauth = await callJson<{ id: number }>("/api/v1/email-accounts/save-oauth", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Gail", from_email: `gail-${crypto.randomUUID()}@gmail.example.com`, username: "gail", type: "GMAIL", token: { access_token: "a", refresh_token: "r", expiry_date: 1, scope: "s" } },
    });
    expect(oauth.status).toBe(200);
    await age(stale.id, 2, 3, now);
    await age(never.id, null, 1.5, now);
    await age(oldest.id, 9, 9, now);
    await age(oauth.body.id, 30, 30, now);
    // Checked 23 hours before `now`: not due yet.
    await setMailbox(fresh.id, { checkedAt: new Date(now - RECHECK_AFTER_MS + 3_600_000) });

    const { targets, check } = recordingChecker();
    // The OAuth mailbox is due too (its agent's token logs in); oldest first.
    const first = await recheckMailboxes(fileEnv(), now, check, 2);
    expect(sorted(first)).toEqual(sorted([oauth.body.id, oldest.id]));
    const second = await recheckMailboxes(fileEnv(), now, check, 2);
    expect(sorted(second)).toEqual(sorted([stale.id, never.id]));
    // Claimed: a second firing in the same minute takes nothing.
    expect(await recheckMailboxes(fileEnv(), now, check, 2)).toEqual([]);

    // The stored passwords, decrypted; IMAP with its own login and password where they are set.
    expect(targets.find((target) => target.mailboxId === stale.id)).toMatchObject({
      smtp: { username: "stale-login", credential: { password: "smtp-secret-A1" }, host: "smtp.example.com", port: 465, portType: "SSL" },
      imap: { username: "stale-login", credential: { password: "smtp-secret-A1" }, host: "imap.example.com", port: 993, portType: "SSL" },
    });
    expect(targets.find((target) => target.mailboxId === never.id)).toMatchObject({
      smtp: { username: "never-login", credential: { password: "smtp-secret-A1" } },
      imap: { username: "never-imap", credential: { password: "imap-secret-B2" } },
    });
    expect(sorted(targets.map((target) => target.mailboxId))).toEqual(sorted([oldest.id, stale.id, never.id]));

    // The outcome is recorded as the check of a save would be.
    const read = await readMailbox(account.apiKey, never.id);
    expect(read.body).toMatchObject({ is_smtp_success: true, is_imap_success: false, imap_failure_error: "[AUTHENTICATIONFAILED] Authentication failed." });
    expect(Number((await storedMailbox(never.id)).checkedAt)).toBeGreaterThanOrEqual(now);
    // Not due: untouched. OAuth: its provider cannot be reached from here, so the check waits (nothing recorded, nothing guessed).
    expect((await readMailbox(account.apiKey, fresh.id)).body.is_smtp_success).toBeNull();
    expect((await readMailbox(account.apiKey, oauth.body.id)).body).toMatchObject({ is_smtp_success: null, connection_state: "unchecked" });
  });

  it("takes the oldest first", async () => {
    const account = await provisionAccount();
    const now = Date.now();
    await drain(now);
    const newer = await createMailbox(account.apiKey);
    const older = await createMailbox(account.apiKey);
    await age(newer.id, 1, 1, now);
    await age(older.id, 100, 100, now);
    const { check } = recordingChecker();
    expect(await recheckMailboxes(fileEnv(), now, check, 1)).toEqual([older.id]);
    expect(await recheckMailboxes(fileEnv(), now, check, 1)).toEqual([newer.id]);
  });

  it("goes on past a mailbox whose password no longer decrypts, which waits for the next day", async () => {
    const account = await provisionAccount();
    const now = Date.now();
    await drain(now);
    const broken = await createMailbox(account.apiKey);
    const sound = await createMailbox(account.apiKey);
    await age(broken.id, 50, 50, now);
    await age(sound.id, 40, 40, now);
    await setMailbox(broken.id, { passwordCiphertext: "v1.test.AAAAAAAAAAAAAAAA.AAAA" });
    const { targets, check } = recordingChecker();
    expect(sorted(await recheckMailboxes(fileEnv(), now, check, 5))).toEqual(sorted([broken.id, sound.id]));
    expect(targets.map((target) => target.mailboxId)).toEqual([sound.id]);
    expect(Number((await storedMailbox(broken.id)).checkedAt)).toBe(now);
    expect(await recheckMailboxes(fileEnv(), now, check, 5)).toEqual([]);
  });

  it("takes the mailboxes a reconnect named in the next minute, whenever they were last checked", async () => {
    const account = await provisionAccount();
    const now = Date.now();
    await drain(now);
    const named = await createMailbox(account.apiKey);
    const other = await createMailbox(account.apiKey);
    const { status } = await callJson("/api/v1/email-accounts/reconnect-failed-email-accounts", {
      method: "POST",
      apiKey: account.apiKey,
      body: { email_account_ids: [named.id] },
    });
    expect(status).toBe(200);
    const { targets, check } = recordingChecker();
    expect(await recheckMailboxes(fileEnv(), Date.now(), check)).toEqual([named.id]);
    expect(targets.map((target) => target.mailboxId)).toEqual([named.id]);
    expect((await readMailbox(account.apiKey, named.id)).body).toMatchObject({ is_smtp_success: true, is_imap_success: false });
    expect((await readMailbox(account.apiKey, other.id)).body).toMatchObject({ is_smtp_success: null });
  });

  it("finds due mailboxes through its index, not by scanning", async () => {
    const query = mailboxesDueForRecheck(db, Date.now() - RECHECK_AFTER_MS, 20).toSQL();
    const plan = await fileEnv().DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...query.params)
      .all<{ detail: string }>();
    const details = plan.results.map((row) => row.detail).join("\n");
    expect(details).toMatch(/USING INDEX email_accounts_recheck_idx/);
    expect(details).not.toMatch(/TEMP B-TREE/);
  });
});
