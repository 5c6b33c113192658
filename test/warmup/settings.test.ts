import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { schema, testDb } from "../db";
import { createMailbox, readMailbox } from "../mailboxes/fixtures";
import { database } from "../../src/platform/db";
import { poolMembers } from "../../src/warmup/store";
import { fileEnv } from "../helpers";

type Details = Record<string, unknown>;

function setWarmup(apiKey: string, id: number, body: Record<string, unknown>) {
  return callJson<{ ok?: boolean; message?: string; error?: string; details?: { path: string }[] }>(`/api/v1/email-accounts/${id}/warmup`, { method: "POST", apiKey, body });
}

async function details(apiKey: string, id: number): Promise<Details> {
  return (await readMailbox(apiKey, id)).body.warmup_details;
}

/** Both connection checks passed (the lab-free suite runs no checks). */
async function connect(...ids: number[]) {
  await testDb().update(schema.emailAccounts).set({ isSmtpSuccess: true, isImapSuccess: true }).where(inArray(schema.emailAccounts.id, ids));
}

describe("warmup settings (CONTRACT 19.1)", () => {
  it("stores the new fields, reads the bulk page's camel-case names (snake-case wins) and shows them", async () => {
    const account = await provisionAccount();
    const box = await createMailbox(account.apiKey);
    const stored = await setWarmup(account.apiKey, box.id, {
      warmup_enabled: true,
      total_warmup_per_day: 200,
      warmup_min_count: 40,
      send_warmups_only_on_weekdays: true,
      daily_reply_limit: 12,
      use_custom_domain: true,
      replyRate: 45,
      rampupValue: 4,
      isRampupEnabled: true,
      autoAdjustWarmup: true,
      reply_rate_percentage: 30,
    });
    expect(stored).toMatchObject({ status: 200, body: { ok: true, message: "Warmup settings updated successfully" } });
    expect(await details(account.apiKey, box.id)).toMatchObject({
      status: "ACTIVE",
      total_warmup_per_day: 200,
      warmup_max_count: 200,
      warmup_min_count: 40,
      send_warmups_only_on_weekdays: true,
      daily_reply_limit: 12,
      use_custom_domain: true,
      reply_rate_percentage: 30,
      reply_rate: 30,
      daily_rampup: 4,
      is_rampup_enabled: true,
      auto_adjust_warmup: true,
      is_warmup_blocked: false,
      blocked_reason: null,
      warmup_reputation: null,
      total_sent_count: 0,
      total_spam_count: 0,
      today_sent: 0,
    });
    await setWarmup(account.apiKey, box.id, { warmup_enabled: true, maxEmailPerDay: 60, warmupMinCount: 10, warmupTagIdentifier: "north-ridge", dailyReplyLimit: 20 });
    expect(await details(account.apiKey, box.id)).toMatchObject({ total_warmup_per_day: 60, warmup_min_count: 10, warmup_key_id: "north-ridge", daily_reply_limit: 20 });
  });

  it("defaults the minimum to max(1, total - 5) and generates a two-word identifier on first enable", async () => {
    const account = await provisionAccount();
    const box = await createMailbox(account.apiKey);
    expect(box.warmup_details).toMatchObject({ warmup_key_id: null, state: "off", today_target: 0 });
    await setWarmup(account.apiKey, box.id, { warmup_enabled: true, total_warmup_per_day: 20 });
    const on = await details(account.apiKey, box.id);
    expect(on.warmup_min_count).toBe(15);
    expect(on.warmup_key_id).toMatch(/^[a-z]+-[a-z]+$/);
    // Off and on again keeps it.
    await setWarmup(account.apiKey, box.id, { warmup_enabled: false });
    await setWarmup(account.apiKey, box.id, { warmup_enabled: true });
    expect((await details(account.apiKey, box.id)).warmup_key_id).toBe(on.warmup_key_id);
    // A mailbox saved with warmup on gets one too.
    const saved = await createMailbox(account.apiKey, { warmup_enabled: true });
    expect(saved.warmup_details.warmup_key_id).toMatch(/^[a-z]+-[a-z]+$/);
  });

  it("answers bad input: 422 for types and ranges, 400 for a minimum above the maximum, 404 for another tenant's mailbox", async () => {
    const account = await provisionAccount();
    const other = await provisionAccount();
    const box = await createMailbox(account.apiKey);
    for (const body of [
      {},
      { warmup_enabled: "yes" },
      { warmup_enabled: true, total_warmup_per_day: 251 },
      { warmup_enabled: true, total_warmup_per_day: 0 },
      { warmup_enabled: true, warmup_min_count: 0 },
      { warmup_enabled: true, daily_reply_limit: 7 },
      { warmup_enabled: true, daily_reply_limit: 81 },
      { warmup_enabled: true, maxEmailPerDay: 300 },
    ]) {
      const answer = await setWarmup(account.apiKey, box.id, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body).toMatchObject({ error: "Validation failed" });
    }
    const tooHigh = await setWarmup(account.apiKey, box.id, { warmup_enabled: true, total_warmup_per_day: 10, warmup_min_count: 11 });
    expect(tooHigh).toMatchObject({ status: 400, body: { error: "warmup_min_count must not exceed total_warmup_per_day" } });
    const foreign = await setWarmup(other.apiKey, box.id, { warmup_enabled: true });
    expect(foreign).toMatchObject({ status: 404, body: { error: "Email account not found" } });
    expect((await details(account.apiKey, box.id)).status).toBe("INACTIVE");
  });
});

describe("the pool (CONTRACT 19.4)", () => {
  it("holds the account's connected, unsuspended, unblocked warmup mailboxes (its clients' too); one alone waits for the pool", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const a = await createMailbox(account.apiKey, { warmup_enabled: true });
    expect((await details(account.apiKey, a.id)).state).toBe("out_of_pool");
    await connect(a.id);
    expect(await details(account.apiKey, a.id)).toMatchObject({ state: "waiting_for_pool", pool_size: 1, today_target: 0 });
    const clientKey = await createClientKey(account.apiKey, clientId);
    const b = await createMailbox(clientKey.api_key, { warmup_enabled: true });
    const off = await createMailbox(account.apiKey);
    const suspended = await createMailbox(account.apiKey, { warmup_enabled: true, is_suspended: true });
    await connect(b.id, off.id, suspended.id);
    const db = database(fileEnv().DB);
    expect((await poolMembers(db, "account", account.id)).map((m) => m.id)).toEqual([a.id, b.id]);
    const shown = await details(account.apiKey, a.id);
    expect(shown).toMatchObject({ state: "warming", pool_size: 2 });
    expect(shown.today_target as number).toBeGreaterThan(0);

    // A member that starts failing its check leaves at once; turning warmup off leaves too.
    await testDb().update(schema.emailAccounts).set({ isImapSuccess: false }).where(eq(schema.emailAccounts.id, b.id));
    expect((await poolMembers(db, "account", account.id)).map((m) => m.id)).toEqual([a.id]);
    expect((await details(account.apiKey, b.id)).state).toBe("out_of_pool");
    await connect(b.id);
    await setWarmup(account.apiKey, a.id, { warmup_enabled: false });
    expect((await poolMembers(db, "account", account.id)).map((m) => m.id)).toEqual([b.id]);

    // Blocked: out of the pool, shown as such, and the list filter finds it; off and on clears it.
    await setWarmup(account.apiKey, a.id, { warmup_enabled: true });
    await testDb().update(schema.emailAccounts).set({ warmupBlockedReason: "550 5.7.1 rejected by policy" }).where(eq(schema.emailAccounts.id, a.id));
    expect(await details(account.apiKey, a.id)).toMatchObject({ state: "blocked", is_warmup_blocked: true, blocked_reason: "550 5.7.1 rejected by policy" });
    const blocked = await callJson<{ id: number }[]>("/api/v1/email-accounts/?isWarmupBlocked=true", { apiKey: account.apiKey });
    expect(blocked.body.map((m) => m.id)).toEqual([a.id]);
    expect((await poolMembers(db, "account", account.id)).map((m) => m.id)).toEqual([b.id]);
    await setWarmup(account.apiKey, a.id, { warmup_enabled: false });
    await setWarmup(account.apiKey, a.id, { warmup_enabled: true });
    expect((await details(account.apiKey, a.id)).is_warmup_blocked).toBe(false);
    expect((await poolMembers(db, "account", account.id)).map((m) => m.id)).toEqual([a.id, b.id]);
  });

  it("keeps accounts apart, unless the deployment scope and the operator's flag join them", async () => {
    const one = await provisionAccount();
    const two = await provisionAccount();
    const three = await provisionAccount();
    const boxes = [await createMailbox(one.apiKey, { warmup_enabled: true }), await createMailbox(two.apiKey, { warmup_enabled: true }), await createMailbox(three.apiKey, { warmup_enabled: true })];
    await connect(...boxes.map((b) => b.id));
    const db = database(fileEnv().DB);
    expect((await poolMembers(db, "deployment", one.id)).map((m) => m.id)).toEqual([boxes[0]!.id]);
    for (const account of [one, two]) {
      const flagged = await callJson(`/admin/v1/accounts/${account.id}`, { method: "PATCH", headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { warmup_shared_pool: true } });
      expect(flagged).toMatchObject({ status: 200, body: { id: account.id, disabled: false, warmup_shared_pool: true } });
    }
    const shared = (await poolMembers(db, "deployment", one.id)).map((m) => m.id);
    expect(shared).toContain(boxes[0]!.id);
    expect(shared).toContain(boxes[1]!.id);
    expect(shared).not.toContain(boxes[2]!.id);
    // The account scope ignores the flag; an unflagged account keeps its own pool.
    expect((await poolMembers(db, "account", one.id)).map((m) => m.id)).toEqual([boxes[0]!.id]);
    expect((await poolMembers(db, "deployment", three.id)).map((m) => m.id)).toEqual([boxes[2]!.id]);
    const empty = await callJson(`/admin/v1/accounts/${one.id}`, { method: "PATCH", headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: {} });
    expect(empty.status).toBe(422);
  });
});
