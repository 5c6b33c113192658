import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { mailboxRow, setMailbox } from "../db";
import { createMailbox, readMailbox, storedMailbox } from "./fixtures";

async function createTag(apiKey: string, name: string) {
  const { body } = await callJson<{ data: { id: number } }>("/api/v1/tags", { method: "POST", apiKey, body: { name } });
  return body.data.id;
}

describe("a mailbox by address (CONTRACT 21.2)", () => {
  it("answers the by-id shape for the caller's mailbox, case-insensitively, with campaigns and tags when asked", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const byId = await readMailbox(account.apiKey, mailbox.id, "?fetch_campaigns=true&fetch_tags=true");
    const upper = mailbox.from_email.toUpperCase();
    const { status, body } = await callJson(`/api/v1/email-accounts/fetch-email-account-details?email=${encodeURIComponent(upper)}&fetch_campaigns=true&fetch_tags=true`, {
      apiKey: account.apiKey,
    });
    expect(status).toBe(200);
    expect(body).toEqual(byId.body);
    expect(body).toMatchObject({ id: mailbox.id, campaign_ids: [], tags: [] });
  });

  it("answers 404 for none or another tenant's, and 422 for a missing or invalid address", async () => {
    const owner = await provisionAccount();
    const intruder = await provisionAccount();
    const mailbox = await createMailbox(owner.apiKey);
    const foreign = await callJson(`/api/v1/email-accounts/fetch-email-account-details?email=${encodeURIComponent(mailbox.from_email)}`, { apiKey: intruder.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: "Email account not found" });
    const clientKey = await createClientKey(owner.apiKey, await createClient(owner.apiKey));
    expect((await callJson(`/api/v1/email-accounts/fetch-email-account-details?email=${encodeURIComponent(mailbox.from_email)}`, { apiKey: clientKey.api_key })).status).toBe(404);
    expect((await callJson("/api/v1/email-accounts/fetch-email-account-details", { apiKey: owner.apiKey })).status).toBe(422);
    expect((await callJson("/api/v1/email-accounts/fetch-email-account-details?email=not-an-address", { apiKey: owner.apiKey })).status).toBe(422);
  });
});

describe("bulk mailbox settings (CONTRACT 21.2)", () => {
  it("changes every named mailbox's settings and warmup, replaces their tags, and skips ids the caller cannot see", async () => {
    const account = await provisionAccount();
    const other = await provisionAccount();
    const [a, b] = [await createMailbox(account.apiKey), await createMailbox(account.apiKey)];
    const foreign = await createMailbox(other.apiKey);
    const oldTag = await createTag(account.apiKey, "old");
    const newTag = await createTag(account.apiKey, "new");
    await callJson("/api/v1/email-accounts/tag-mapping", { method: "POST", apiKey: account.apiKey, body: { email_account_ids: [a.id], tag_ids: [oldTag] } });
    const { status, body } = await callJson("/api/v1/email-accounts/bulk-update-email-account-config", {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        emailAccountIds: [a.id, String(b.id), foreign.id, 999_999_999],
        updateData: {
          messagePerDay: 40,
          minTimeToWaitInMins: 7,
          fromName: "Team Acme",
          signature: "<p>Acme</p>",
          status: "ACTIVE",
          maxEmailPerDay: 30,
          warmupMinCount: 10,
          replyRate: 35,
          isRampupEnabled: true,
          rampupValue: 3,
          autoAdjustWarmup: true,
          warmupTagIdentifier: "blue-fox",
          sendWarmupsOnlyOnWeekdays: true,
          dailyReplyLimit: 20,
          useCustomDomain: false,
          tags: [newTag],
        },
      },
    });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, message: "Email account(s) and warmup details are updated successfully!", updated: 2, skipped_ids: [foreign.id, 999_999_999] });
    for (const id of [a.id, b.id]) {
      const read = await readMailbox(account.apiKey, id, "?fetch_tags=true");
      expect(read.body).toMatchObject({
        from_name: "Team Acme",
        message_per_day: 40,
        time_to_wait_in_mins: 7,
        signature: "<p>Acme</p>",
        tags: [expect.objectContaining({ id: newTag })],
        warmup_details: expect.objectContaining({ status: "ACTIVE", total_warmup_per_day: 30, reply_rate_percentage: 35, daily_rampup: 3, warmup_key_id: "blue-fox", auto_adjust_warmup: true, is_rampup_enabled: true }),
      });
    }
    const untouched = await storedMailbox(foreign.id);
    expect(untouched.maxEmailPerDay).not.toBe(40);
  });

  it("turns warmup on as one mailbox's switch does (the ramp restarts, each mailbox gets its own identifier), except a blocked one, which stays INACTIVE and blocked", async () => {
    const account = await provisionAccount();
    const [a, b, c, on] = [await createMailbox(account.apiKey), await createMailbox(account.apiKey), await createMailbox(account.apiKey), await createMailbox(account.apiKey)];
    const long = new Date(Date.now() - 30 * 86_400_000);
    await setMailbox(a.id, { warmupEnabledAt: long, warmupBlockedReason: "550 5.7.1 blocked", warmupKeyId: null });
    await setMailbox(b.id, { warmupEnabledAt: long, warmupKeyId: "kept-key", warmupBouncedReason: "550 5.1.1 unknown user" });
    await setMailbox(c.id, { warmupEnabledAt: long, warmupKeyId: null });
    await setMailbox(on.id, { warmupEnabled: true, warmupEnabledAt: long, warmupKeyId: "running-key" });
    const before = Date.now();
    const { status } = await callJson("/api/v1/email-accounts/bulk-update-email-account-config", {
      method: "POST",
      apiKey: account.apiKey,
      body: { emailAccountIds: [a.id, b.id, c.id, on.id], updateData: { status: "ACTIVE" } },
    });
    expect(status).toBe(200);
    const [rowA, rowB, rowOn] = [await mailboxRow(a.id), await mailboxRow(b.id), await mailboxRow(on.id)];
    expect(rowA).toMatchObject({ warmupEnabled: false, warmupEnabledAt: long, warmupBlockedReason: "550 5.7.1 blocked", warmupKeyId: null });
    const rowC = await mailboxRow(c.id);
    for (const row of [rowB, rowC]) {
      expect(row.warmupEnabled).toBe(true);
      expect(row.warmupEnabledAt!.getTime()).toBeGreaterThanOrEqual(before);
      expect(row.warmupBouncedReason).toBeNull();
    }
    expect(rowB.warmupKeyId).toBe("kept-key");
    expect(rowC.warmupKeyId).toMatch(/^[a-z]+-[a-z]+$/);
    // Already on: its ramp goes on from where it was.
    expect(rowOn.warmupEnabledAt).toEqual(long);
    expect(rowOn.warmupKeyId).toBe("running-key");
  });

  it("refuses bad input with 422, a tag or client the caller cannot use with 400, and changes nothing then", async () => {
    const account = await provisionAccount();
    const other = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const foreignTag = await createTag(other.apiKey, "theirs");
    const post = (body: unknown) => callJson<{ error: string; details?: { path: string }[] }>("/api/v1/email-accounts/bulk-update-email-account-config", { method: "POST", apiKey: account.apiKey, body });
    for (const bad of [
      {},
      { emailAccountIds: [], updateData: { messagePerDay: 5 } },
      { emailAccountIds: [mailbox.id], updateData: {} },
      { emailAccountIds: [mailbox.id], updateData: { messagePerDay: 0 } },
      { emailAccountIds: [mailbox.id], updateData: { warmupTagIdentifier: "has space" } },
      { emailAccountIds: [mailbox.id], updateData: { dailyReplyLimit: 5 } },
      { emailAccountIds: [mailbox.id], updateData: { maxEmailPerDay: 10, warmupMinCount: 11 } },
      { emailAccountIds: [mailbox.id], updateData: { status: "PAUSED" } },
      { emailAccountIds: [mailbox.id], updateData: { tags: [] } },
      { emailAccountIds: [mailbox.id], updateData: { unknownField: 1 } },
      { emailAccountIds: Array.from({ length: 1001 }, (_, i) => i + 1), updateData: { messagePerDay: 5 } },
    ]) {
      expect((await post(bad)).status, JSON.stringify(bad).slice(0, 120)).toBe(422);
    }
    const tag = await post({ emailAccountIds: [mailbox.id], updateData: { messagePerDay: 5, tags: [foreignTag] } });
    expect(tag.status).toBe(400);
    expect(tag.body).toEqual({ error: `Tag not found: ${foreignTag}` });
    const client = await post({ emailAccountIds: [mailbox.id], updateData: { messagePerDay: 5, clientId: 999_999_999 } });
    expect(client.status).toBe(400);
    expect((await storedMailbox(mailbox.id)).maxEmailPerDay).toBe(100);
  });

  it("keeps each mailbox's warmup minimum within its maximum, as the mailbox's own warmup settings do (19.1)", async () => {
    const account = await provisionAccount();
    const [low, high] = [await createMailbox(account.apiKey), await createMailbox(account.apiKey)];
    await setMailbox(low.id, { totalWarmupPerDay: 20, warmupMinCount: 15 });
    await setMailbox(high.id, { totalWarmupPerDay: 100, warmupMinCount: 15 });
    const post = (updateData: unknown) =>
      callJson<{ error: string }>("/api/v1/email-accounts/bulk-update-email-account-config", { method: "POST", apiKey: account.apiKey, body: { emailAccountIds: [low.id, high.id], updateData } });
    // A minimum above one mailbox's stored maximum: refused, nothing changed.
    const above = await post({ warmupMinCount: 30 });
    expect(above.status).toBe(400);
    expect(above.body.error).toContain(String(low.id));
    expect((await mailboxRow(low.id)).warmupMinCount).toBe(15);
    expect((await mailboxRow(high.id)).warmupMinCount).toBe(15);
    // A smaller maximum pulls a stored minimum down with it; a minimum already below it stays.
    expect((await post({ maxEmailPerDay: 10 })).status).toBe(200);
    expect((await mailboxRow(low.id)).warmupMinCount).toBe(10);
    await setMailbox(high.id, { warmupMinCount: 5 });
    expect((await post({ maxEmailPerDay: 12 })).status).toBe(200);
    expect((await mailboxRow(high.id)).warmupMinCount).toBe(5);
    // Raised again, the maximum leaves the minimum where the rule put it.
    expect((await post({ maxEmailPerDay: 100 })).status).toBe(200);
    expect((await readMailbox(account.apiKey, low.id)).body).toMatchObject({ warmup_details: expect.objectContaining({ warmup_min_count: 10, total_warmup_per_day: 100 }) });
  });

  it("lets a client key change only its client's mailboxes", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const key = await createClientKey(account.apiKey, clientId);
    const own = await createMailbox(key.api_key);
    const accountWide = await createMailbox(account.apiKey);
    const { body } = await callJson("/api/v1/email-accounts/bulk-update-email-account-config", {
      method: "POST",
      apiKey: key.api_key,
      body: { emailAccountIds: [own.id, accountWide.id], updateData: { messagePerDay: 12 } },
    });
    expect(body).toMatchObject({ updated: 1, skipped_ids: [accountWide.id] });
    expect((await storedMailbox(own.id)).maxEmailPerDay).toBe(12);
    expect((await storedMailbox(accountWide.id)).maxEmailPerDay).toBe(100);
  });
});

describe("fetch replies now (CONTRACT 21.2)", () => {
  it("answers no mailbox when none passed its IMAP check", async () => {
    const account = await provisionAccount();
    await createMailbox(account.apiKey);
    const { status, body } = await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: account.apiKey, body: {} });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, message: "No email account found!" });
  });

  it("queues the caller's connected mailboxes, refuses a second fetch while one still runs, and is per tenant", async () => {
    const account = await provisionAccount();
    const other = await provisionAccount();
    const mailboxes = [await createMailbox(account.apiKey), await createMailbox(account.apiKey), await createMailbox(account.apiKey)];
    const theirs = await createMailbox(other.apiKey);
    // Two pass their IMAP check; one failed it. (These hosts answer nothing, so the reads the wake starts find no mail.)
    for (const id of [mailboxes[0]!.id, mailboxes[1]!.id, theirs.id]) await fileEnv().DB.prepare("UPDATE email_accounts SET is_imap_success = 1 WHERE id = ?").bind(id).run();
    await fileEnv().DB.prepare("UPDATE email_accounts SET is_imap_success = 0 WHERE id = ?").bind(mailboxes[2]!.id).run();
    // Held as if the readers had not run yet (the test asks what a caller sees meanwhile).
    const first = await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: account.apiKey });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, message: "2 Email account(s) are added to the queue to fetch live reply." });
    // A fetch still running: a mark its reader cannot clear meanwhile (the woken readers clear theirs as they finish).
    await fileEnv().DB.prepare("UPDATE email_accounts SET live_fetch_requested_at = ? WHERE id = ?").bind(Date.now(), mailboxes[2]!.id).run();
    const second = await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: account.apiKey, body: {} });
    expect(second.status).toBe(406);
    expect(second.body).toEqual({ message: "Live fetch is already in-progress. Please try later.", error: "Live fetch is already in-progress. Please try later." });
    // Another account's fetch is its own.
    const theirsFetch = await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: other.apiKey });
    expect(theirsFetch.body).toEqual({ ok: true, message: "1 Email account(s) are added to the queue to fetch live reply." });
    // A request older than 30 minutes no longer blocks.
    await fileEnv().DB.prepare("UPDATE email_accounts SET live_fetch_requested_at = ? WHERE account_id = ?").bind(Date.now() - 31 * 60_000, account.id).run();
    expect((await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: account.apiKey })).status).toBe(200);
  });

  it("clears the mark once each woken reader has run, so the next fetch is allowed", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    await fileEnv().DB.prepare("UPDATE email_accounts SET is_imap_success = 1 WHERE id = ?").bind(mailbox.id).run();
    expect((await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: account.apiKey })).status).toBe(200);
    let mark: unknown = "set";
    for (let i = 0; i < 200 && mark !== null; i++) {
      mark = (await storedMailbox(mailbox.id)).liveFetchRequestedAt;
      if (mark !== null) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(mark).toBeNull();
    expect((await callJson("/api/v1/email-accounts/fetch-account-reply", { method: "POST", apiKey: account.apiKey })).status).toBe(200);
  });
});
