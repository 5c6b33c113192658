import { describe, expect, it } from "vitest";
import { mailboxCount, setMailbox } from "../db";
import { call, callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { callWithEnv } from "../webhooks/fixtures";
import { createMailbox, mailboxBody, readMailbox, save, storedMailbox, type EmailAccount } from "./fixtures";

const NOT_FOUND = { error: "Email account not found" };

describe("saving a mailbox", () => {
  it("creates one and answers the contract's EmailAccount, with defaults and port types from the ports", async () => {
    const account = await provisionAccount();
    const body = mailboxBody({ from_email: "Ada.Sender@Sender.Example.com", smtp_port: 587, imap_port: 993 });
    const { status, body: saved } = await save(account.apiKey, body);
    expect(status).toBe(200);
    expect(saved).toMatchObject({ ok: true, success: true, message: "Email account added successfully", id: saved.data.id });
    expect(Object.keys(saved.data).sort()).toEqual(
      [
        "id", "created_at", "updated_at", "user_id", "client_id", "from_name", "from_email", "username", "password", "smtp_host",
        "smtp_port", "smtp_port_type", "imap_username", "imap_password", "imap_host", "imap_port", "imap_port_type",
        "is_different_imap_account", "different_reply_to_address", "type", "message_per_day", "time_to_wait_in_mins",
        "minTimeToWaitInMins", "signature", "custom_tracking_domain", "bcc_email", "is_smtp_success", "is_imap_success",
        "smtp_failure_error", "imap_failure_error", "is_suspended", "daily_sent_count", "campaign_count", "warmup_details",
        // CONTRACT 18.5
        "auth_type", "connection_state", "needs_reconnect", "disconnect_reason", "oauth",
        // Extension: its server's hold on its sending
        "send_hold",
      ].sort(),
    );
    expect(saved.data).toMatchObject({
      user_id: account.id,
      client_id: null,
      from_email: "ada.sender@sender.example.com",
      username: "ada-login",
      password: "********",
      smtp_port_type: "TLS",
      imap_port_type: "SSL",
      imap_username: "ada-login",
      imap_password: null,
      is_different_imap_account: false,
      type: "SMTP",
      message_per_day: 100,
      time_to_wait_in_mins: 0,
      minTimeToWaitInMins: 0,
      is_smtp_success: null,
      is_imap_success: null,
      smtp_failure_error: null,
      imap_failure_error: null,
      is_suspended: false,
      daily_sent_count: 0,
      campaign_count: 0,
      bcc_email: null,
      custom_tracking_domain: null,
    });
    expect(saved.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(saved.data.warmup_details).toMatchObject({ id: saved.data.id, status: "INACTIVE", is_warmup_blocked: false, warmup_reputation: null, total_sent_count: 0 });
    const read = await readMailbox(account.apiKey, saved.id);
    // A read by id adds why the mailbox sends nothing now: never checked here, and only a passed check sends.
    const { sending_status, ...rest } = read.body as typeof saved.data & { sending_status: unknown };
    expect(rest).toEqual(saved.data);
    expect(sending_status).toEqual({ code: "connection_failing", message: "The mailbox has not passed its connection check (SMTP, and IMAP once checked)", next_send_at: null, warnings: [] });
  });

  it("accepts the aliases (the canonical name winning), ids as strings, and normalises the tracking domain", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey, {
      user_name: undefined,
      username: "alias-login",
      smtp_username: "ignored",
      password: undefined,
      smtp_password: "via-alias",
      imap_username: "imap-login",
      imap_password: "imap-secret",
      custom_tracking_domain: "https://track.example.org/",
      bcc: "copy@example.org",
      different_reply_to_address: "replies@example.org",
      max_email_per_day: 40,
      time_to_wait_in_mins: 12,
      type: "GMAIL",
      signature: "<p>Ada</p>",
    });
    expect(data).toMatchObject({
      username: "alias-login",
      password: "********",
      imap_username: "imap-login",
      imap_password: "********",
      is_different_imap_account: true,
      custom_tracking_domain: "track.example.org",
      bcc_email: "copy@example.org",
      different_reply_to_address: "replies@example.org",
      message_per_day: 40,
      time_to_wait_in_mins: 12,
      minTimeToWaitInMins: 12,
      type: "GMAIL",
      signature: "<p>Ada</p>",
    });
    const both = await createMailbox(account.apiKey, { user_name: "canonical", username: "alias", custom_tracking_url: "a.example.org", custom_tracking_domain: "b.example.org" });
    expect(both).toMatchObject({ username: "canonical", custom_tracking_domain: "a.example.org" });
    const updated = await save(account.apiKey, { id: String(both.id), from_name: "Renamed" });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ message: "Email account updated successfully", id: both.id, data: { from_name: "Renamed", username: "canonical" } });
  });

  it("defaults the login to from_email", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey, { user_name: undefined });
    expect(data.username).toBe(data.from_email);
  });

  it("names every field a create lacks (422)", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<{ details: { path: string }[] }>("/api/v1/email-accounts/save", { method: "POST", apiKey: account.apiKey, body: { from_name: "X" } });
    expect(status).toBe(422);
    expect(body.details.map((d) => d.path).sort()).toEqual(["from_email", "imap_host", "imap_port", "password", "smtp_host", "smtp_port"]);
  });

  it("refuses a from_name with a line break or control character in every route that writes it (422), storing nothing", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const token = { access_token: "ya29.a", expiry_date: 1_900_000_000_000, scope: "https://mail.google.com/" };
    for (const from_name of ["Ann\r\nBcc: eve@evil.example", "Ann\nSmith", "Ann\rSmith", "Ann\u0000", "Ann\tSmith"]) {
      const label = JSON.stringify(from_name);
      const refusal = { status: 422, body: { details: [{ path: "from_name", message: "from_name must be one line without control characters" }] } };
      expect(await save(account.apiKey, mailboxBody({ from_name })), label).toMatchObject(refusal);
      expect(await save(account.apiKey, { id: mailbox.id, from_name }), label).toMatchObject(refusal);
      expect(await callJson(`/api/v1/email-accounts/${mailbox.id}`, { method: "POST", apiKey: account.apiKey, body: { from_name } }), label).toMatchObject(refusal);
      const oauth = { from_name, from_email: "gail@gmail.example.com", username: "gail@gmail.example.com", type: "GMAIL", token };
      expect(await callJson("/api/v1/email-accounts/save-oauth", { method: "POST", apiKey: account.apiKey, body: oauth }), label).toMatchObject(refusal);
    }
    expect((await storedMailbox(mailbox.id)).fromName).toBe("Ada Sender");
    expect(await mailboxCount(account.id)).toBe(1);
    // Any other character is a name: accents, quotes, emoji.
    expect(await save(account.apiKey, { id: mailbox.id, from_name: 'Zoë "Z" O\'Neil 🚀' })).toMatchObject({ status: 200, body: { data: { from_name: 'Zoë "Z" O\'Neil 🚀' } } });
  });

  it("refuses port 25 and local or private hosts (422), and stores a host normalised", async () => {
    const account = await provisionAccount();
    const refused = async (overrides: Record<string, unknown>, path: string) => {
      const { status, body } = await callJson<{ details: { path: string }[] }>("/api/v1/email-accounts/save", { method: "POST", apiKey: account.apiKey, body: mailboxBody(overrides) });
      expect(status, JSON.stringify(overrides)).toBe(422);
      expect(body.details.map((d) => d.path)).toContain(path);
    };
    await refused({ smtp_port: 25 }, "smtp_port");
    for (const host of ["localhost", "LOCALHOST.", "mail.local", "smtp.corp.internal", "127.0.0.1", "10.1.2.3", "192.168.0.10", "172.16.5.5", "169.254.169.254", "0x7f.1", "::1", "[fe80::1]", "fd00::5", "::ffff:127.0.0.1", "intranet", "smtp.example.com:465", "user@smtp.example.com"]) {
      await refused({ smtp_host: host }, "smtp_host");
    }
    await refused({ imap_host: "imap.localhost" }, "imap_host");
    const ok = await createMailbox(account.apiKey, { smtp_host: "SMTP.Example.COM.", imap_host: "93.184.216.34" });
    expect(ok).toMatchObject({ smtp_host: "smtp.example.com", imap_host: "93.184.216.34" });
  });

  it("admits local hosts when ALLOW_LOCAL_MAIL_HOSTS=true", async () => {
    const account = await provisionAccount();
    const { status, body } = await callWithEnv<{ data: EmailAccount }>({ ALLOW_LOCAL_MAIL_HOSTS: "true" }, "/api/v1/email-accounts/save", {
      method: "POST",
      apiKey: account.apiKey,
      body: mailboxBody({ smtp_host: "127.0.0.1", imap_host: "localhost" }),
    });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ smtp_host: "127.0.0.1", imap_host: "localhost" });
  });
});

describe("mailbox credentials", () => {
  it("stores no plaintext, reads back as the mask, and keeps the secret when the mask (or nothing) is posted back", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey, { password: "smtp-plain-9f2c", imap_password: "imap-plain-4b7d" });
    const row = await storedMailbox(data.id);
    expect(row.passwordCiphertext).toMatch(/^v1\.test\.[^.]+\.[^.]+$/);
    expect(row.imapPasswordCiphertext).toMatch(/^v1\.test\.[^.]+\.[^.]+$/);
    expect(JSON.stringify(row)).not.toMatch(/smtp-plain-9f2c|imap-plain-4b7d/);

    for (const password of ["********", "", null]) {
      const { status } = await save(account.apiKey, { id: data.id, password, imap_password: "********", from_name: "Still Ada" });
      expect(status).toBe(200);
    }
    const update = await callJson(`/api/v1/email-accounts/${data.id}`, { method: "POST", apiKey: account.apiKey, body: { password: "********", signature: "hi" } });
    expect(update.status).toBe(200);
    const after = await storedMailbox(data.id);
    expect(after.passwordCiphertext).toBe(row.passwordCiphertext);
    expect(after.imapPasswordCiphertext).toBe(row.imapPasswordCiphertext);

    const list = await callJson<EmailAccount[]>("/api/v1/email-accounts", { apiKey: account.apiKey });
    expect(JSON.stringify(list.body)).not.toMatch(/smtp-plain|imap-plain|v1\.test/);
    expect(list.body[0]).toMatchObject({ password: "********", imap_password: "********" });

    const changed = await callJson(`/api/v1/email-accounts/${data.id}`, { method: "POST", apiKey: account.apiKey, body: { password: "new-secret-77" } });
    expect(changed.status).toBe(200);
    const rotated = await storedMailbox(data.id);
    expect(rotated.passwordCiphertext).not.toBe(row.passwordCiphertext);
    expect(JSON.stringify(rotated)).not.toContain("new-secret-77");
  });

  it("keeps the stored password when the canonical password is null, whatever its alias says (the canonical name wins)", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey, { password: "smtp-plain-1" });
    const before = (await storedMailbox(data.id)).passwordCiphertext;
    const update = await callJson(`/api/v1/email-accounts/${data.id}`, { method: "POST", apiKey: account.apiKey, body: { password: null, smtp_password: "alias-plain-2" } });
    expect(update.status).toBe(200);
    expect((await save(account.apiKey, { id: data.id, password: null, smtp_password: "alias-plain-3" })).status).toBe(200);
    expect((await storedMailbox(data.id)).passwordCiphertext).toBe(before);
  });

  it("binds each ciphertext to its row and purpose", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey, { password: "same", imap_password: "same" });
    const row = await storedMailbox(data.id);
    expect(row.passwordCiphertext).not.toBe(row.imapPasswordCiphertext);
  });

  it("answers 503 without SECRETS_KEY and writes nothing", async () => {
    const account = await provisionAccount();
    for (const SECRETS_KEY of [undefined, "", "change-me"]) {
      const created = await callWithEnv({ SECRETS_KEY }, "/api/v1/email-accounts/save", { method: "POST", apiKey: account.apiKey, body: mailboxBody() });
      expect(created, String(SECRETS_KEY)).toEqual({ status: 503, body: { error: "Credential storage is not configured" } });
    }
    expect((await callJson("/api/v1/email-accounts", { apiKey: account.apiKey })).body).toEqual([]);
  });
});

describe("addresses are unique per account", () => {
  it("updates the caller's mailbox saved again without id, and refuses one another client holds", async () => {
    const account = await provisionAccount();
    const first = await createMailbox(account.apiKey, { from_email: "dup@sender.example.com" });
    const again = await save(account.apiKey, { from_email: "DUP@sender.example.com", from_name: "Again" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ message: "Email account updated successfully", id: first.id, data: { from_name: "Again" } });

    const client = await createClient(account.apiKey, "Acme", "ops@acme.example");
    const clientKey = await createClientKey(account.apiKey, client);
    const held = await save(clientKey.api_key, mailboxBody({ from_email: "dup@sender.example.com" }));
    expect(held).toMatchObject({ status: 400, body: { error: "Email account already exists" } });

    const other = await createMailbox(account.apiKey);
    const moved = await callJson(`/api/v1/email-accounts/${other.id}`, { method: "POST", apiKey: account.apiKey, body: { from_email: "dup@sender.example.com" } });
    expect(moved).toMatchObject({ status: 400, body: { error: "Email account already exists" } });

    const otherAccount = await provisionAccount();
    expect((await save(otherAccount.apiKey, mailboxBody({ from_email: "dup@sender.example.com" }))).status).toBe(200);
  });
});

describe("addresses are unique per account, under concurrent saves", () => {
  it("makes two saves of one new address at once one mailbox, the second an update, and refuses a rename racing onto it", async () => {
    const account = await provisionAccount();
    const body = mailboxBody({ from_email: "race@sender.example.com" });
    const both = await Promise.all([save(account.apiKey, { ...body, from_name: "First" }), save(account.apiKey, { ...body, from_name: "Second" })]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(new Set(both.map((r) => r.body.id)).size).toBe(1);
    expect(both.map((r) => r.body.message).sort()).toEqual(["Email account added successfully", "Email account updated successfully"]);
    expect(await mailboxCount(account.id)).toBe(1);

    const others = await Promise.all(Array.from({ length: 12 }, () => createMailbox(account.apiKey)));
    const renames = await Promise.all(
      others.map((m) => callJson(`/api/v1/email-accounts/${m.id}`, { method: "POST", apiKey: account.apiKey, body: { from_email: "taken@sender.example.com" } })),
    );
    expect(renames.map((r) => r.status).sort()).toEqual([200, ...Array(11).fill(400)]);
    expect(renames.find((r) => r.status === 400)?.body).toEqual({ error: "Email account already exists" });
  });
});

describe("listing mailboxes", () => {
  it("filters and pages by id", async () => {
    const account = await provisionAccount();
    const client = await createClient(account.apiKey, "Acme", "ops@acme.example");
    const a = await createMailbox(account.apiKey, { from_email: "alpha@one.example.com", type: "GMAIL" });
    const b = await createMailbox(account.apiKey, { from_email: "bravo@two.example.com", user_name: "Special_Login", client_id: client });
    const c = await createMailbox(account.apiKey, { from_email: "charlie@three.example.com", warmup_enabled: true });
    const campaign = await createCampaign(account.apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey: account.apiKey, body: { email_account_ids: [a.id] } });

    const ids = async (query: string) => (await callJson<EmailAccount[]>(`/api/v1/email-accounts/${query}`, { apiKey: account.apiKey })).body.map((m) => m.id);
    expect(await ids("")).toEqual([a.id, b.id, c.id]);
    expect(await ids("?offset=1&limit=1")).toEqual([b.id]);
    expect(await ids("?isInUse=true")).toEqual([a.id]);
    expect(await ids("?isInUse=0")).toEqual([b.id, c.id]);
    expect(await ids("?emailWarmupStatus=ACTIVE")).toEqual([c.id]);
    expect(await ids("?esp=GMAIL")).toEqual([a.id]);
    expect(await ids("?username=special_")).toEqual([b.id]);
    expect(await ids("?username=THREE")).toEqual([c.id]);
    expect(await ids(`?client_id=${client}`)).toEqual([b.id]);
    expect(await ids("?isWarmupBlocked=true")).toEqual([]);
    expect(await ids("?isSmtpSuccess=true")).toEqual([]);
    const inUse = (await callJson<EmailAccount[]>("/api/v1/email-accounts?isInUse=true", { apiKey: account.apiKey })).body[0]!;
    expect(inUse.campaign_count).toBe(1);
    expect((await callJson("/api/v1/email-accounts?limit=101", { apiKey: account.apiKey })).status).toBe(422);
    expect((await callJson("/api/v1/email-accounts?offset=-1", { apiKey: account.apiKey })).status).toBe(422);
  });

  it("shows a hold its server put on a mailbox's sending, in the list and by id, while it holds", async () => {
    const account = await provisionAccount();
    const held = await createMailbox(account.apiKey, { from_email: "held@one.example.com" });
    const other = await createMailbox(account.apiKey, { from_email: "other@two.example.com" });
    const until = Date.now() + 5 * 60_000;
    await setMailbox(held.id, { sendHeldUntil: new Date(until), sendHeldReason: "421 4.7.0 Try again later" });
    const hold = { until: new Date(until).toISOString(), reason: "421 4.7.0 Try again later" };
    const listed = async () => (await callJson<EmailAccount[]>("/api/v1/email-accounts", { apiKey: account.apiKey })).body.map((m) => [m.id, m.send_hold]);
    expect(await listed()).toEqual([[held.id, hold], [other.id, null]]);
    expect((await readMailbox(account.apiKey, held.id)).body.send_hold).toEqual(hold);
    // One that ran out holds nothing, though the row still carries it until the mailbox's next send.
    await setMailbox(held.id, { sendHeldUntil: new Date(Date.now() - 1000) });
    expect(await listed()).toEqual([[held.id, null], [other.id, null]]);
  });
});

describe("suspend, warmup, delete", () => {
  it("suspends and unsuspends idempotently", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey);
    for (let i = 0; i < 2; i += 1) {
      const suspended = await callJson(`/api/v1/email-accounts/suspend/${data.id}`, { method: "PUT", apiKey: account.apiKey });
      expect(suspended).toMatchObject({ status: 200, body: { ok: true, success: true, data: { accountId: data.id, isSuspended: true } } });
    }
    expect((await readMailbox(account.apiKey, data.id)).body.is_suspended).toBe(true);
    for (let i = 0; i < 2; i += 1) {
      const unsuspended = await callJson(`/api/v1/email-accounts/unsuspend/${data.id}/`, { method: "DELETE", apiKey: account.apiKey });
      expect(unsuspended).toMatchObject({ status: 200, body: { ok: true, data: { accountId: data.id, isSuspended: false } } });
    }
    expect((await readMailbox(account.apiKey, data.id)).body.is_suspended).toBe(false);
    await callJson(`/api/v1/email-accounts/${data.id}`, { method: "POST", apiKey: account.apiKey, body: { is_suspended: true } });
    expect((await readMailbox(account.apiKey, data.id)).body.is_suspended).toBe(true);
    expect(await callJson("/api/v1/email-accounts/suspend/999999999", { method: "PUT", apiKey: account.apiKey })).toMatchObject({ status: 404, body: NOT_FOUND });
  });

  it("stores warmup settings and shows them in warmup_details; warmup stats are 7 empty days", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey);
    const stored = await callJson(`/api/v1/email-accounts/${data.id}/warmup`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { warmup_enabled: true, total_warmup_per_day: 30, daily_rampup: 2, reply_rate_percentage: 35, warmup_key_id: "key-9", is_rampup_enabled: true },
    });
    expect(stored).toMatchObject({ status: 200, body: { ok: true, success: true, message: "Warmup settings updated successfully" } });
    const read = await readMailbox(account.apiKey, data.id);
    expect(read.body.warmup_details).toMatchObject({
      status: "ACTIVE",
      total_warmup_per_day: 30,
      daily_rampup: 2,
      reply_rate_percentage: 35,
      warmup_key_id: "key-9",
      is_rampup_enabled: true,
      auto_adjust_warmup: false,
      warmup_max_count: 30,
      max_email_per_day: 100,
    });
    expect((await callJson(`/api/v1/email-accounts/${data.id}/warmup`, { method: "POST", apiKey: account.apiKey, body: {} })).status).toBe(422);
    const stats = await callJson<{ daily_stats: { date: string }[] }>(`/api/v1/email-accounts/${data.id}/warmup-stats`, { apiKey: account.apiKey });
    expect(stats.body).toMatchObject({ ok: true, total_sent: 0, sent_count: 0, inbox_count: 0, reputation_score: null });
    expect(stats.body.daily_stats).toHaveLength(7);
    expect(stats.body.daily_stats.at(-1)!.date).toBe(new Date().toISOString().slice(0, 10));
  });

  it("deletes a mailbox: it leaves its campaigns and reads as missing", async () => {
    const account = await provisionAccount();
    const data = await createMailbox(account.apiKey);
    const campaign = await createCampaign(account.apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey: account.apiKey, body: { email_account_id: data.id } });
    const deleted = await callJson(`/api/v1/email-accounts/${data.id}`, { method: "DELETE", apiKey: account.apiKey });
    expect(deleted).toMatchObject({ status: 200, body: { ok: true, success: true, emailAccountId: data.id } });
    expect(await readMailbox(account.apiKey, data.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { apiKey: account.apiKey })).body).toEqual([]);
  });

  it("counts the mailboxes a reconnect queues for a re-check", async () => {
    const account = await provisionAccount();
    const a = await createMailbox(account.apiKey);
    const b = await createMailbox(account.apiKey);
    const named = await callJson("/api/v1/email-accounts/reconnect-failed-email-accounts", { method: "POST", apiKey: account.apiKey, body: { email_account_ids: [a.id, String(b.id), 999999999] } });
    expect(named).toMatchObject({ status: 200, body: { ok: true, data: { queued: 2 } } });
    const failed = await call("/api/v1/email-accounts/reconnect-failed-email-accounts", { method: "POST", apiKey: account.apiKey });
    expect(failed.status).toBe(200);
    expect(await failed.json()).toMatchObject({ ok: true, data: { queued: 0 } });
  });
});

describe("mailbox tenancy", () => {
  it("answers another account's and another client's mailbox exactly like a missing one", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const clientA = await createClient(owner.apiKey, "A", "a@a.example");
    const clientB = await createClient(owner.apiKey, "B", "b@b.example");
    const keyA = await createClientKey(owner.apiKey, clientA);
    const keyB = await createClientKey(owner.apiKey, clientB);
    const ofA = await createMailbox(keyA.api_key, { client_id: String(clientA) });
    expect(ofA.client_id).toBe(clientA);
    const forced = await createMailbox(keyA.api_key);
    expect(forced.client_id).toBe(clientA);
    expect((await save(keyA.api_key, mailboxBody({ client_id: clientB }))).body).toEqual({ error: "Client not found" });

    for (const apiKey of [stranger.apiKey, keyB.api_key]) {
      for (const [method, path, body] of [
        ["GET", `/api/v1/email-accounts/${ofA.id}`, undefined],
        ["POST", `/api/v1/email-accounts/${ofA.id}`, { from_name: "Taken" }],
        ["DELETE", `/api/v1/email-accounts/${ofA.id}`, undefined],
        ["PUT", `/api/v1/email-accounts/suspend/${ofA.id}`, undefined],
        ["GET", `/api/v1/email-accounts/${ofA.id}/warmup-stats`, undefined],
        ["POST", "/api/v1/email-accounts/save", { id: ofA.id, from_name: "Taken" }],
      ] as const) {
        const foreign = await callJson(path, { method, apiKey, body });
        expect(foreign, `${method} ${path}`).toEqual(expect.objectContaining({ status: 404, body: NOT_FOUND }));
      }
      expect((await callJson<EmailAccount[]>("/api/v1/email-accounts", { apiKey })).body.map((m) => m.id)).not.toContain(ofA.id);
    }
    expect((await readMailbox(owner.apiKey, ofA.id)).body).toMatchObject({ from_name: "Ada Sender", client_id: clientA });
    expect((await callJson<EmailAccount[]>("/api/v1/email-accounts", { apiKey: keyA.api_key })).body.map((m) => m.id)).toEqual([ofA.id, forced.id]);
  });
});

describe("OAuth mailboxes (save-oauth)", () => {
  const token = { access_token: "ya29.access-7c1e", refresh_token: "1//refresh-93ab", expiry_date: 1_900_000_000_000, scope: "https://mail.google.com/", token_type: "Bearer" };

  it("stores the token encrypted, never answers it, sets the provider's servers and reads as not connected", async () => {
    const account = await provisionAccount();
    const { status, body } = await callJson<{ id: number; message: string; data: EmailAccount }>("/api/v1/email-accounts/save-oauth/", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Gail", from_email: "gail@gmail.example.com", username: "gail@gmail.example.com", type: "GMAIL", token, use_whitelabel_credentials: true },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ message: "Email account added successfully", id: body.data.id });
    expect(body.data).toMatchObject({
      type: "GMAIL",
      smtp_host: "smtp.gmail.com",
      smtp_port: 465,
      imap_host: "imap.gmail.com",
      password: null,
      auth_type: "OAUTH",
      oauth: { provider: "google", app_level: "deployment" },
      // Checks are off in this suite: the mailbox is saved, unchecked, with the deployment's app (CONTRACT 18.4).
      is_smtp_success: null,
      connection_state: "unchecked",
      is_imap_success: null,
    });
    const row = await storedMailbox(body.id);
    expect(row.oauthTokenCiphertext).toMatch(/^v1\.test\.[^.]+\.[^.]+$/);
    expect(JSON.stringify(row)).not.toMatch(/access-7c1e|refresh-93ab/);
    const read = await readMailbox(account.apiKey, body.id, "?fetch_tags=true&fetch_campaigns=true");
    expect(JSON.stringify(read.body)).not.toMatch(/access-7c1e|refresh-93ab|token/);

    const again = await callJson<{ message: string; id: number; data: EmailAccount }>("/api/v1/email-accounts/save-oauth", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Gail O", from_email: "gail@gmail.example.com", username: "gail@gmail.example.com", type: "OUTLOOK", token },
    });
    // No Microsoft app in this deployment: CONTRACT 18.1's 400, and nothing written.
    expect(again.response.status).toBe(400);
    expect(again.body).toMatchObject({
      message: "No Microsoft OAuth app is configured: set MICROSOFT_OAUTH_CLIENT_ID and MICROSOFT_OAUTH_CLIENT_SECRET, or PUT /email-accounts/oauth/microsoft/app",
    });
    expect((await readMailbox(account.apiKey, body.id)).body).toMatchObject({ type: "GMAIL", smtp_host: "smtp.gmail.com" });
    const updated = await callJson<{ message: string; id: number; data: EmailAccount }>("/api/v1/email-accounts/save-oauth", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Gail O", from_email: "gail@gmail.example.com", username: "gail@gmail.example.com", type: "GMAIL", token },
    });
    expect(updated.body).toMatchObject({ message: "Email account updated successfully", id: body.id, data: { from_name: "Gail O", smtp_host: "smtp.gmail.com" } });
    const failed = await callJson("/api/v1/email-accounts/reconnect-failed-email-accounts", { method: "POST", apiKey: account.apiKey, body: {} });
    // Unchecked is not failing: nothing to re-check.
    expect(failed.body).toMatchObject({ data: { queued: 0 } });
  });

  it("answers 503 without SECRETS_KEY", async () => {
    const account = await provisionAccount();
    const created = await callWithEnv({ SECRETS_KEY: undefined }, "/api/v1/email-accounts/save-oauth", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: "Gail", from_email: "gail@gmail.example.com", username: "gail", type: "GMAIL", token },
    });
    expect(created).toEqual({ status: 503, body: { error: "Credential storage is not configured" } });
  });
});

describe("paths", () => {
  it("answer with or without a trailing slash", async () => {
    const account = await provisionAccount();
    const saved = await callJson<{ id: number }>("/api/v1/email-accounts/save/", { method: "POST", apiKey: account.apiKey, body: mailboxBody() });
    expect(saved.status).toBe(200);
    expect((await readMailbox(account.apiKey, saved.body.id, "/")).status).toBe(200);
    expect((await callJson(`/api/v1/email-accounts/${saved.body.id}/`, { method: "POST", apiKey: account.apiKey, body: { from_name: "B" } })).status).toBe(200);
    expect((await callJson(`/api/v1/email-accounts/${saved.body.id}/warmup-stats/`, { apiKey: account.apiKey })).status).toBe(200);
    expect((await callJson("/api/v1/email-accounts/abc", { apiKey: account.apiKey })).status).toBe(422);
  });
});
