import { createExecutionContext, createMessageBatch, evictDurableObject, getQueueResult } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { advanceMove, continueMoves, requestMove } from "../../src/moves/run";
import { loadPlan, readChunk } from "../../src/moves/store";
import { blockOfId } from "../../src/platform/shards";
import type { TrackedEvent } from "../../src/tracking/queue-message";
import { openHit } from "../tracking/fixtures";
import type { DeliveryMessage } from "../../src/webhooks/queue-message";
import { addLeads, analytics, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createWebhook, interceptReceiver, RECEIVER, storeDelivery } from "../webhooks/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { ADMIN_TOKEN, callJson, env, fileShard, provisionAccount, type TestAccount } from "../helpers";
import { tenants } from "../security-matrix/world";
import { envOfId } from "../db";
import { releaseDueSnoozes } from "../../src/inbox/snooze-release";
import { resumePausedRecords } from "../../src/replies/resume";
import { requeueOverdue } from "../../src/webhooks/outbox";
import { pruneWebhookDeliveries } from "../../src/webhooks/retention";
import { onShard } from "../../src/platform/shards";
import { loadKeyring } from "../../src/platform/crypto";
import { signToken } from "../../src/tracking/tokens";
import { triageReplies } from "../../src/triage/consumer";

/**
 * Moving an account between shards (src/moves/): everything it has goes, reads the same after, what
 * named its rows by id still finds them, writes during the copy are refused (never lost), a copy that
 * does not check out is undone, and a shard taking in higher ids goes on in a fresh id block.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const shardDb = (shard: number) => (shard === 0 ? env.DB : env.DB_1);
const DAY = 86_400_000;
const start = Date.parse("2026-11-01T09:00:00Z");

/** An account with a campaign of a two-step sequence (spintax), leads, their sends, opens, clicks, replies and an unsubscribe, and a webhook with deliveries. */
async function busyAccount(name: string) {
  const account = await provisionAccount({ shard: 0 });
  const campaign = await createCampaign(account.apiKey, { name });
  const sequences = await callJson(`/api/v1/campaigns/${campaign}/sequences`, {
    method: "POST",
    apiKey: account.apiKey,
    body: {
      sequences: [
        { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "{Hi|Hello} {{first_name}}", email_body: "<p>First</p>" },
        { seq_number: 2, seq_delay_details: { delay_in_days: 2 }, subject: "", email_body: "<p>Second</p>" },
      ],
    },
  });
  expect(sequences.status).toBe(200);
  const emails = Array.from({ length: 25 }, (_, i) => `lead${i}-${crypto.randomUUID()}@moves.example`);
  const records = await addLeads(account.apiKey, campaign, emails);
  await createWebhook(account.apiKey, campaign, { event_types: ["EMAIL_SENT", "EMAIL_OPEN", "EMAIL_REPLY"] });
  const events = emails.flatMap((email, i) => [
    { type: "SENT", lead_email: email, occurred_at: new Date(start + i * 60_000).toISOString(), sequence_number: 1, event_id: `sent-${i}` },
    ...(i % 2 === 0 ? [{ type: "OPEN", lead_email: email, occurred_at: new Date(start + DAY + i * 60_000).toISOString(), sequence_number: 1, event_id: `open-${i}` }] : []),
    ...(i % 5 === 0 ? [{ type: "REPLY", lead_email: email, occurred_at: new Date(start + 2 * DAY + i * 60_000).toISOString(), sequence_number: 1, event_id: `reply-${i}`, body: `Thanks, number ${i}` }] : []),
    ...(i === 24 ? [{ type: "UNSUBSCRIBE", lead_email: email, occurred_at: new Date(start + 3 * DAY).toISOString(), event_id: "unsubscribe-24" }] : []),
  ]);
  await ingestOk(account.apiKey, campaign, events);
  return { account, campaign, records, emails };
}

/** What the account's key reads: the numbers and lists a move must not change. */
async function readings(account: TestAccount, campaign: number) {
  const read = async (path: string) => {
    const answer = await callJson(path, { apiKey: account.apiKey });
    expect(answer.status, path).toBe(200);
    return answer.body;
  };
  return {
    analytics: (await analytics(account.apiKey, campaign, { start_date: "2026-10-30", end_date: "2026-11-10" })).body,
    topLevel: await read(`/api/v1/campaigns/${campaign}/top-level-analytics-by-date?start_date=2026-10-30&end_date=2026-11-10`),
    statistics: await read(`/api/v1/campaigns/${campaign}/statistics?limit=100`),
    leads: await read(`/api/v1/campaigns/${campaign}/leads?limit=100`),
    sequences: await read(`/api/v1/campaigns/${campaign}/sequences`),
    campaigns: await read("/api/v1/campaigns"),
    inbox: await callJson("/api/v1/master-inbox/inbox-replies", { method: "POST", apiKey: account.apiKey, body: { limit: 50 } }).then((answer) => answer.body),
  };
}

async function accountRows(shard: number, accountId: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ["accounts", "campaigns", "campaign_leads", "leads", "events", "webhooks", "webhook_deliveries", "account_keys"]) {
    const column = table === "accounts" ? "id" : "account_id";
    counts[table] = (await shardDb(shard).prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`).bind(accountId).first<{ n: number }>())!.n;
  }
  counts.sequence_steps = (await shardDb(shard).prepare("SELECT count(*) AS n FROM sequence_steps WHERE campaign_id IN (SELECT id FROM campaigns WHERE account_id = ?)").bind(accountId).first<{ n: number }>())!.n;
  return counts;
}

async function move(accountId: number, shard: number) {
  for (let call = 0; call < 10; call += 1) {
    const answer = await callJson<{ state: string; error: string | null }>(`/admin/v1/accounts/${accountId}/move`, { method: "POST", headers: admin, body: { shard } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    if (answer.body.state === "done" || answer.body.state === "failed") return answer.body;
  }
  throw new Error(`the move did not finish: ${JSON.stringify(await callJson(`/admin/v1/accounts/${accountId}/move`, { headers: admin }))}`);
}

/** An open of a record's email sent at `start`, three days later. */
const openAfterStart = (recordId: number): TrackedEvent => openHit(recordId, start, start + 3 * DAY);

describe("moving an account between shards", () => {
  // Before any account is placed on shard 1 in this file (test/fresh-storage.ts claims its block; a
  // deployment's shard with no account yet has not).
  it("gives a shard no account was ever placed on its own ids before it takes an account in", async () => {
    await env.DB_1.prepare("DELETE FROM sqlite_sequence").run();
    const { account } = await busyAccount("First on shard 1");
    expect(await move(account.id, 1)).toMatchObject({ state: "done" });
    expect(blockOfId(await createCampaign(account.apiKey, { name: "Made on shard 1" }))).toBe(1);
  });

  // First: the matrix's seeding finds rows' shards from their ids' first blocks, before a move back to shard 0 hands out a fresh one.
  it("moves an account with one object of every kind (the security matrix's tenant), there and back, each copy checked row for row", async () => {
    const world = await tenants();
    const db = (shard: number) => shardDb(shard);
    const home = fileShard();
    const { id } = (await db(home).prepare("SELECT account_id AS id FROM campaigns WHERE id = ?").bind(world.aObjects.campaign).first<{ id: number }>())!;
    const rowsOf = async (shard: number) =>
      (await db(shard).prepare("SELECT (SELECT count(*) FROM campaigns WHERE account_id = ?1) + (SELECT count(*) FROM leads WHERE account_id = ?1) + (SELECT count(*) FROM email_accounts WHERE account_id = ?1) + (SELECT count(*) FROM clients WHERE account_id = ?1) AS n").bind(id).first<{ n: number }>())!.n;
    const before = await rowsOf(home);
    expect(await move(id, 1 - home)).toMatchObject({ state: "done", error: null });
    expect(await rowsOf(1 - home)).toBe(before);
    expect(await move(id, home)).toMatchObject({ state: "done", error: null });
    expect(await rowsOf(home)).toBe(before);
    expect(await rowsOf(1 - home)).toBe(0);
  });

  it("moves everything, reads the same after, and finds old ids where the account went", async () => {
    const moved = await busyAccount("Moved");
    const bystander = await busyAccount("Stays");
    const delivery = (await storeDelivery(moved.account.id, (await callJson<{ id: number }[]>(`/api/v1/campaigns/${moved.campaign}/webhooks`, { apiKey: moved.account.apiKey })).body[0]!.id, moved.campaign)).deliveryId;
    const before = await readings(moved.account, moved.campaign);
    const bystanderBefore = await readings(bystander.account, bystander.campaign);
    const rowsBefore = await accountRows(0, moved.account.id);
    expect(rowsBefore.events).toBeGreaterThan(25);
    // The stop keeps its time (stopped_at goes in as it was: its trigger watches updates only).
    expect(before.topLevel).toMatchObject({ stopped_count: "1" });

    expect(await move(moved.account.id, 1)).toMatchObject({ state: "done", error: null });

    expect(await accountRows(1, moved.account.id)).toEqual(rowsBefore);
    expect(Object.values(await accountRows(0, moved.account.id)).every((n) => n === 0)).toBe(true);
    expect(await env.DIRECTORY.prepare("SELECT shard FROM directory_accounts WHERE account_id = ?").bind(moved.account.id).first()).toEqual({ shard: 1 });
    expect(await readings(moved.account, moved.campaign)).toEqual(before);
    expect(await readings(bystander.account, bystander.campaign)).toEqual(bystanderBefore);
    // Spintax keeps each record's variant: the numbers its trigger gave as the rows went in are set back.
    const spintax = (shard: number) =>
      shardDb(shard).prepare("SELECT json_group_array(spintax_modulo_index) AS idx, (SELECT spintax_records FROM campaigns WHERE id = ?1) AS n FROM (SELECT spintax_modulo_index FROM campaign_leads WHERE campaign_id = ?1 ORDER BY id)").bind(moved.campaign).first();
    expect(await spintax(1)).toEqual({ idx: JSON.stringify(Array.from({ length: 25 }, (_, i) => i)), n: 25 });

    // A tracking link in mail sent before the move names a record by its old id: recorded where the account is now.
    const record = moved.records[moved.emails[1]!]!;
    const hits = createMessageBatch<TrackedEvent>("salvo-tracking", [{ id: "a", timestamp: new Date(), attempts: 1, body: openAfterStart(record) }]);
    await worker.queue(hits, env);
    expect((await getQueueResult(hits, createExecutionContext())).retryMessages).toEqual([]);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND type = 'OPEN'").bind(record).first()).toEqual({ n: 1 });
    // So does a queue message in flight: the dead-letter consumer marks the delivery failed on shard 1.
    const dead = createMessageBatch<DeliveryMessage>("salvo-webhooks-dlq", [{ id: "d", timestamp: new Date(), attempts: 7, body: { deliveryId: delivery } }]);
    await worker.queue(dead, env);
    expect(await env.DB_1.prepare("SELECT status FROM webhook_deliveries WHERE id = ?").bind(delivery).first()).toEqual({ status: "failed" });

    // A writer that still thinks the account is on shard 0 is refused there, not lost.
    await expect(env.DB.prepare("INSERT INTO campaigns (account_id, name, status, created_at, updated_at) VALUES (?, 'stray', 'DRAFTED', 0, 0)").bind(moved.account.id).run()).rejects.toThrow(/account moving/);
    // The account's key writes on its new shard.
    const added = await createCampaign(moved.account.apiKey, { name: "After the move" });
    expect((await envOfId(added)).DB).toBe(env.DB_1);

    // Back to shard 0, whose ids are below the account's new ones: shard 0 goes on in a fresh block.
    const beforeBack = await readings(moved.account, moved.campaign);
    expect(await move(moved.account.id, 0)).toMatchObject({ state: "done" });
    expect(await readings(moved.account, moved.campaign)).toEqual(beforeBack);
    const fresh = await createCampaign(bystander.account.apiKey, { name: "Fresh block" });
    expect(blockOfId(fresh)).toBeGreaterThanOrEqual(64);
    expect(await env.DIRECTORY.prepare("SELECT shard FROM directory_id_blocks WHERE block = ?").bind(blockOfId(fresh)).first()).toEqual({ shard: 0 });
    // An id of the fresh block finds its shard through the directory.
    const freshRecord = (await addLeads(bystander.account.apiKey, fresh, [`fresh-${crypto.randomUUID()}@moves.example`]));
    const freshId = Object.values(freshRecord)[0]!;
    const freshHits = createMessageBatch<TrackedEvent>("salvo-tracking", [{ id: "f", timestamp: new Date(), attempts: 1, body: openAfterStart(freshId) }]);
    await worker.queue(freshHits, env);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND type = 'OPEN'").bind(freshId).first()).toEqual({ n: 1 });
    // And the record sent from shard 1 and moved back still records: its id's shard forwards nowhere now, shard 0 holds it.
    const again = createMessageBatch<TrackedEvent>("salvo-tracking", [{ id: "g", timestamp: new Date(), attempts: 1, body: openAfterStart(record) }]);
    await worker.queue(again, env);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND type = 'OPEN'").bind(record).first()).toEqual({ n: 2 });
  });

  it("moves the leads the spans name, none for a record deleted since, so account-wide distinct leads read the same", async () => {
    const { account, campaign, records, emails } = await busyAccount("Spans");
    // Two leads the second campaign reaches too, and a record deleted from the first (its events stay).
    const second = await createCampaign(account.apiKey, { name: "Spans too" });
    await addLeads(account.apiKey, second, emails.slice(0, 2));
    await ingestOk(account.apiKey, second, emails.slice(0, 2).map((email, i) => ({ type: "SENT", lead_email: email, occurred_at: new Date(start + DAY + i * 60_000).toISOString() })));
    const deleted = records[emails[2]!]!;
    const { person } = (await env.DB.prepare("SELECT lead_id AS person FROM campaign_leads WHERE id = ?").bind(deleted).first<{ person: number }>())!;
    expect((await callJson(`/api/v1/campaigns/${campaign}/leads/${person}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    const overall = async () => (await callJson(`/api/v1/analytics/overall-stats-v2?start_date=2026-10-30&end_date=2026-11-10`, { apiKey: account.apiKey })).body;
    const before = await overall();
    // 25 leads: the 24 still in the first campaign (two of them in both) and the deleted record, a lead of its own.
    expect(before).toMatchObject({ data: { overall_stats: { sent: 27, unique_lead_count: 25 } } });
    const named = (shard: number) =>
      shardDb(shard).prepare("SELECT count(*) AS n, count(lead_id) AS named FROM event_spans WHERE campaign_lead_id = ?").bind(deleted).first();
    expect(await named(0)).toEqual({ n: 4, named: 0 });

    expect(await move(account.id, 1)).toMatchObject({ state: "done", error: null });
    expect(await named(1)).toEqual({ n: 4, named: 0 });
    expect(await overall()).toEqual(before);
  });

  it("refuses the account's writes while it is copied, and answers its reads", async () => {
    const { account, campaign, records, emails } = await busyAccount("Paused");
    expect((await requestMove(env, account.id, 1, Date.now())).ok).toBe(true);
    // Two steps: the fence goes up, one chunk is copied.
    await advanceMove(env, account.id, 0);
    await advanceMove(env, account.id, 0);
    const write = await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { track_settings: ["DONT_TRACK_EMAIL_OPEN"] } });
    expect(write.status).toBe(503);
    expect(write.response.headers.get("Retry-After")).toBe("5");
    expect((await callJson(`/api/v1/campaigns/${campaign}`, { apiKey: account.apiKey })).status).toBe(200);
    // A hit queued now is asked again after the pause (the platform's own retries come at once and run
    // out); another account's hit in the same batch is recorded at once.
    const record = records[emails[0]!]!;
    const hit = openAfterStart(record);
    const bystander = await provisionAccount({ shard: 0 });
    const otherRecord = Object.values(await addLeads(bystander.apiKey, await createCampaign(bystander.apiKey, { name: "Bystander" }), ["b@moves.example"]))[0]!;
    const queued = createMessageBatch<TrackedEvent>("salvo-tracking", [
      { id: "p", timestamp: new Date(), attempts: 1, body: hit },
      { id: "b", timestamp: new Date(), attempts: 1, body: openAfterStart(otherRecord) },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(queued, env);
    // (The test runtime does not report the delay it was asked for.)
    expect(await getQueueResult(queued, ctx)).toMatchObject({ outcome: "ok", retryMessages: [{ msgId: "p" }] });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND occurred_at = ?").bind(otherRecord, start + 3 * DAY).first()).toEqual({ n: 1 });
    // The one-click unsubscribe, recorded before its answer, is asked again too.
    const unsubscribe = await signToken(await loadKeyring(env.SECRETS_KEY), { kind: "unsubscribe", recordId: record, step: 1, mailboxId: null, sentAt: start });
    const refusedUnsubscribe = await exports.default.fetch(new Request(`https://salvo.test/u/${unsubscribe}`, { method: "POST" }));
    expect(refusedUnsubscribe.status).toBe(503);
    expect(refusedUnsubscribe.headers.get("Retry-After")).toBe("5");
    // A webhook delivery is not sent while its outcome could not be written (it would be sent again after).
    const receiver = interceptReceiver();
    const webhook = (await callJson<{ id: number }[]>(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: account.apiKey })).body[0]!.id;
    await env.DB.batch([
      env.DB.prepare("UPDATE account_moves SET open = 1 WHERE account_id = ?").bind(account.id),
      env.DB.prepare("UPDATE webhooks SET url = ? WHERE id = ?").bind(RECEIVER, webhook),
      env.DB.prepare("UPDATE account_moves SET open = 0 WHERE account_id = ?").bind(account.id),
    ]);
    const [delivery] = (await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' LIMIT 1").bind(webhook).all<{ id: number }>()).results;
    const webhooks = createMessageBatch<DeliveryMessage>("salvo-webhooks", [{ id: "w", timestamp: new Date(), attempts: 1, body: { deliveryId: delivery!.id } }]);
    await worker.queue(webhooks, env);
    expect(await getQueueResult(webhooks, createExecutionContext())).toMatchObject({ outcome: "ok", retryMessages: [{ msgId: "w" }] });
    expect(receiver.received).toHaveLength(0);
    // A post in flight when the fence rose records its outcome (the fence lets a recorded attempt
    // through, and deliveries are copied last), so the new shard does not send it again.
    const [inFlight] = (await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' AND id <> ? LIMIT 1").bind(webhook, delivery!.id).all<{ id: number }>()).results;
    await expect(env.DB.prepare("UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ?").bind(inFlight!.id).run()).rejects.toThrow(/account moving/);
    await env.DB.batch([
      env.DB.prepare("INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, outcome, duration_ms) VALUES (?, ?, 200, 'delivered', 5)").bind(inFlight!.id, Date.now()),
      env.DB.prepare("UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1 WHERE id = ?").bind(inFlight!.id),
    ]);
    expect(await move(account.id, 1)).toMatchObject({ state: "done" });
    expect(await env.DB_1.prepare("SELECT status, attempts FROM webhook_deliveries WHERE id = ?").bind(inFlight!.id).first()).toEqual({ status: "delivered", attempts: 1 });
    const redelivered = createMessageBatch<DeliveryMessage>("salvo-webhooks", [{ id: "w", timestamp: new Date(), attempts: 2, body: { deliveryId: delivery!.id } }]);
    await worker.queue(redelivered, env);
    expect(receiver.received).toHaveLength(1);
    expect(await env.DB_1.prepare("SELECT status FROM webhook_deliveries WHERE id = ?").bind(delivery!.id).first()).toEqual({ status: "delivered" });
    receiver.restore();
    const again = createMessageBatch<TrackedEvent>("salvo-tracking", [{ id: "p", timestamp: new Date(), attempts: 2, body: hit }]);
    await worker.queue(again, env);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND occurred_at = ?").bind(record, start + 3 * DAY).first()).toEqual({ n: 1 });
    expect((await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { track_settings: ["DONT_TRACK_EMAIL_OPEN"] } })).status).toBe(200);
  });

  it("sends a queued hit to the new shard as soon as the directory has switched, while the old rows are still being deleted", async () => {
    const { account, records, emails } = await busyAccount("Switched");
    expect((await requestMove(env, account.id, 1, Date.now())).ok).toBe(true);
    let state = "copying";
    while (state !== "deleting") state = (await advanceMove(env, account.id, 0))!.state;
    const record = records[emails[0]!]!;
    expect(await env.DB.prepare("SELECT count(*) AS n FROM campaign_leads WHERE id = ?").bind(record).first()).toEqual({ n: 1 });
    const hits = createMessageBatch<TrackedEvent>("salvo-tracking", [{ id: "s", timestamp: new Date(), attempts: 1, body: openAfterStart(record) }]);
    await worker.queue(hits, env);
    expect((await getQueueResult(hits, createExecutionContext())).retryMessages).toEqual([]);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND occurred_at = ?").bind(record, start + 3 * DAY).first()).toEqual({ n: 1 });
    expect(await move(account.id, 1)).toMatchObject({ state: "done" });
  });

  it("undoes a move whose copy does not check out, and the account stays where it was", async () => {
    const { account, campaign } = await busyAccount("Undone");
    const before = await readings(account, campaign);
    expect((await requestMove(env, account.id, 1, Date.now())).ok).toBe(true);
    // Copy everything, then damage one copied row on the target (the fence opened for it, as the mover does).
    let state = "copying";
    while (state === "copying") state = (await advanceMove(env, account.id, 0))!.state;
    expect(state).toBe("verifying");
    await env.DB_1.batch([
      env.DB_1.prepare("UPDATE account_moves SET open = 1 WHERE account_id = ?").bind(account.id),
      env.DB_1.prepare("UPDATE leads SET first_name = 'Tampered' WHERE id = (SELECT min(id) FROM leads WHERE account_id = ?)").bind(account.id),
      env.DB_1.prepare("UPDATE account_moves SET open = 0 WHERE account_id = ?").bind(account.id),
    ]);
    expect(await move(account.id, 1)).toMatchObject({ state: "failed", error: "leads differs after the copy" });
    expect(Object.values(await accountRows(1, account.id)).every((n) => n === 0)).toBe(true);
    expect(await readings(account, campaign)).toEqual(before);
    expect((await callJson(`/api/v1/campaigns/${campaign}/settings`, { method: "POST", apiKey: account.apiKey, body: { track_settings: ["DONT_TRACK_EMAIL_OPEN"] } })).status).toBe(200);
    for (const db of [env.DB, env.DB_1]) expect(await db.prepare("SELECT count(*) AS n FROM account_moves WHERE account_id = ?").bind(account.id).first()).toEqual({ n: 0 });
  });

  it("holds the account's mailboxes during the copy and moves them, and its web sessions, with it", async () => {
    const { account } = await busyAccount("Mailboxes");
    const mailbox = (await createMailbox(account.apiKey)).id;
    const origin = "http://localhost";
    const signIn = await exports.default.fetch(new Request(`${origin}/api/v1/sessions`, { method: "POST", headers: { "X-API-Key": account.apiKey, "Sec-Fetch-Site": "same-origin" } }));
    const cookie = signIn.headers.get("Set-Cookie")!.split(";")[0]!;
    expect(cookie).toMatch(/=s0\./);
    const pass = () => callJson<{ next_wake_at: string | null }>(`/admin/v1/email-accounts/${mailbox}/sender-pass?max_sends=0`, { method: "POST", headers: admin });
    const wakeOn = async (shard: number) => (await shardDb(shard).prepare("SELECT engine_wake_at AS at FROM email_accounts WHERE id = ?").bind(mailbox).first<{ at: number | null }>())?.at;
    expect((await pass()).status).toBe(200);
    await env.DB.prepare("UPDATE email_accounts SET engine_wake_at = NULL WHERE id = ?").bind(mailbox).run();

    // The session's last use a while ago: its next request touches it.
    await env.DB.prepare("UPDATE web_sessions SET last_seen_at = last_seen_at - 120000 WHERE account_id = ?").bind(account.id).run();

    expect((await requestMove(env, account.id, 1, Date.now())).ok).toBe(true);
    await advanceMove(env, account.id, 0);
    // Held: a pass does nothing, so nothing meets the fence (and no email is left in doubt).
    expect((await pass()).body.next_wake_at).toBeNull();
    expect(await wakeOn(0)).toBeNull();
    // A read through the session goes on; its touch, a write, waits for a request after the move.
    const during = await exports.default.fetch(new Request(`${origin}/api/v1/campaigns`, { headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" } }));
    expect(during.status).toBe(200);

    expect(await move(account.id, 1)).toMatchObject({ state: "done" });
    // The mailbox's object works on shard 1 now, also once restarted: its pass records its wake there.
    await evictDurableObject(env.MAILBOX_SENDER.get(env.MAILBOX_SENDER.idFromName(String(mailbox))));
    expect((await pass()).status).toBe(200);
    expect(await wakeOn(1)).not.toBeNull();
    expect(await wakeOn(0)).toBeUndefined();
    // The session made on shard 0 is found where its account went.
    const me = await exports.default.fetch(new Request(`${origin}/api/v1/campaigns`, { headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" } }));
    expect(me.status).toBe(200);
    expect(((await me.json()) as { name: string }[]).map((c) => c.name)).toEqual(["Mailboxes"]);
  });

  it("leaves a moving account's due work to the cron after the move, and does every other account's on time", async () => {
    const receiver = interceptReceiver();
    try {
      const moving = await busyAccount("Moving");
      const staying = await busyAccount("Staying");
      const now = Date.now();
      const due = async (shard: number, accountId: number) => {
        const db = shardDb(shard);
        const one = async (query: string) => (await db.prepare(query).bind(accountId).first<{ n: number }>())!.n;
        return {
          snoozed: await one("SELECT count(*) AS n FROM campaign_leads WHERE account_id = ? AND snoozed_until IS NOT NULL"),
          paused: await one("SELECT count(*) AS n FROM campaign_leads WHERE account_id = ? AND resume_at IS NOT NULL"),
          overdue: await one(`SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = ? AND status = 'pending' AND next_attempt_at < ${now - 3_600_000}`),
          old: await one(`SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = ? AND status = 'delivered' AND delivered_at < ${now - 100 * DAY}`),
        };
      };
      for (const { account } of [moving, staying]) {
        // Due work of four minute jobs, each picked across accounts: a snooze ended, an out-of-office pause
        // ended, a delivery whose message was lost, a delivery past its retention.
        const [first, second] = (await env.DB.prepare("SELECT id FROM campaign_leads WHERE account_id = ? ORDER BY id LIMIT 2").bind(account.id).all<{ id: number }>()).results;
        await env.DB.prepare("UPDATE campaign_leads SET snoozed_until = ?2 WHERE id = ?1").bind(first!.id, now - 60_000).run();
        await env.DB.prepare("UPDATE campaign_leads SET state = 'PAUSED', resume_at = ?2 WHERE id = ?1").bind(second!.id, now - 60_000).run();
        const deliveries = (await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE account_id = ? ORDER BY id LIMIT 2").bind(account.id).all<{ id: number }>()).results;
        await env.DB.prepare("UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?2 WHERE account_id = ?1").bind(account.id, now - 6 * 3_600_000).run();
        await env.DB.prepare("UPDATE webhook_deliveries SET status = 'delivered', delivered_at = ?2 WHERE id IN (?3, ?4)").bind(account.id, now - 400 * DAY, deliveries[0]!.id, deliveries[1]!.id).run();
      }
      const before = await due(0, moving.account.id);
      expect(before).toMatchObject({ snoozed: 1, paused: 1, old: 2 });
      expect(before.overdue).toBeGreaterThan(0);
      expect(await due(0, staying.account.id)).toEqual(before);

      expect((await requestMove(env, moving.account.id, 1, now)).ok).toBe(true);
      await advanceMove(env, moving.account.id, 0);
      const at = new Date(now);
      for (const job of [releaseDueSnoozes, resumePausedRecords, pruneWebhookDeliveries]) await job(env, at);
      await requeueOverdue(env, now);
      expect(await due(0, staying.account.id)).toEqual({ snoozed: 0, paused: 0, overdue: 0, old: 0 });
      expect(await due(0, moving.account.id)).toEqual(before);

      expect(await move(moving.account.id, 1)).toMatchObject({ state: "done" });
      const moved = onShard(env, 1);
      for (const job of [releaseDueSnoozes, resumePausedRecords, pruneWebhookDeliveries]) await job(moved, at);
      await requeueOverdue(moved, now);
      expect(await due(1, moving.account.id)).toEqual({ snoozed: 0, paused: 0, overdue: 0, old: 0 });
    } finally {
      receiver.restore();
    }
  });

  it("categorises other accounts' replies while one account moves, and leaves the moving account's to the sweep after the move", async () => {
    const moving = await busyAccount("Replying");
    const bystander = await busyAccount("Bystanding");
    const replies = async (accountId: number, shard = 0) =>
      (await shardDb(shard).prepare("SELECT id FROM events WHERE account_id = ? AND type = 'REPLY' ORDER BY id").bind(accountId).all<{ id: number }>()).results.map((row) => row.id);
    const ids = [...(await replies(moving.account.id)), ...(await replies(bystander.account.id))];
    // Not categorised yet: the triage queue's consumer categorises them after ingestion, so its
    // batches are waited for before they are undone (one arriving later, during the move, would
    // categorise the moving account's replies before the sweep this test asks of the new shard).
    const both = "SELECT count(*) AS n FROM reply_categorisations WHERE event_id IN (SELECT id FROM events WHERE account_id IN (?, ?))";
    await vi.waitFor(async () => expect((await env.DB.prepare(both).bind(moving.account.id, bystander.account.id).first<{ n: number }>())!.n).toBe(ids.length), { timeout: 15_000, interval: 20 });
    await env.DB.prepare("DELETE FROM reply_categorisations WHERE event_id IN (SELECT id FROM events WHERE account_id IN (?, ?))").bind(moving.account.id, bystander.account.id).run();
    const rules = { ...env, CATEGORISER: "rules" } as typeof env;
    expect((await requestMove(env, moving.account.id, 1, Date.now())).ok).toBe(true);
    await advanceMove(env, moving.account.id, 0);
    expect(await triageReplies(rules, [], ids)).toBe((await replies(bystander.account.id)).length);
    const categorised = async (shard: number, accountId: number) =>
      (await shardDb(shard).prepare("SELECT count(*) AS n FROM reply_categorisations WHERE event_id IN (SELECT id FROM events WHERE account_id = ?)").bind(accountId).first<{ n: number }>())!.n;
    expect(await categorised(0, bystander.account.id)).toBe(5);
    expect(await categorised(0, moving.account.id)).toBe(0);
    expect(await move(moving.account.id, 1)).toMatchObject({ state: "done" });
    expect(await triageReplies({ ...onShard(env, 1), CATEGORISER: "rules" } as typeof env, [], await replies(moving.account.id, 1))).toBe(5);
    expect(await categorised(1, moving.account.id)).toBe(5);
  });

  it("lifts the old shard's fence ten minutes after a move, and drops the fence's triggers once no account is fenced, while old ids still find the account", async () => {
    const { account, records, emails } = await busyAccount("Lifted");
    expect(await move(account.id, 1)).toMatchObject({ state: "done" });
    const fences = (db: D1Database) => db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'account_fence_%'").first<{ n: number }>();
    expect((await fences(env.DB))!.n).toBeGreaterThan(0);
    await continueMoves(env, new Date(Date.now() + 5 * 60_000));
    expect(await env.DB.prepare("SELECT state, open FROM account_moves WHERE account_id = ?").bind(account.id).first()).toEqual({ state: "moved", open: 0 });
    // A move whose step fails (here: to a shard whose binding went away) holds up neither the others nor the lifting.
    const stuck = await provisionAccount({ shard: 0 });
    await env.DIRECTORY.prepare("INSERT INTO directory_moves (account_id, from_shard, to_shard, state, started_at, updated_at) VALUES (?, 0, 9, 'copying', ?, ?)")
      .bind(stuck.id, Date.now(), Date.now())
      .run();
    try {
      await expect(continueMoves(env, new Date(Date.now() + 11 * 60_000))).rejects.toThrow();
    } finally {
      await env.DIRECTORY.prepare("DELETE FROM directory_moves WHERE account_id = ?").bind(stuck.id).run();
    }
    expect(await env.DB.prepare("SELECT state, open FROM account_moves WHERE account_id = ?").bind(account.id).first()).toEqual({ state: "moved", open: 1 });
    // Every move of this file ended by now, the one undone included: no account is fenced on either shard.
    expect(await fences(env.DB)).toEqual({ n: 0 });
    const record = records[emails[2]!]!;
    const hits = createMessageBatch<TrackedEvent>("salvo-tracking", [{ id: "l", timestamp: new Date(), attempts: 1, body: openAfterStart(record) }]);
    await worker.queue(hits, env);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM events WHERE campaign_lead_id = ? AND occurred_at = ?").bind(record, start + 3 * DAY).first()).toEqual({ n: 1 });
  });

  it("lets one worker at a time step a move: a call while another holds the move's lease answers where it stands", async () => {
    const { account } = await busyAccount("Leased");
    expect((await requestMove(env, account.id, 1, Date.now())).ok).toBe(true);
    await env.DIRECTORY.prepare("UPDATE directory_moves SET lease_token = 'other', lease_until = ? WHERE account_id = ?").bind(Date.now() + 60_000, account.id).run();
    const held = await callJson<{ state: string; copied_rows: number }>(`/admin/v1/accounts/${account.id}/move`, { method: "POST", headers: admin, body: { shard: 1 } });
    expect(held.body).toMatchObject({ state: "copying", copied_rows: 0 });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM account_moves WHERE account_id = ?").bind(account.id).first()).toEqual({ n: 0 });
    // The other worker died: its lease runs out, and the next call goes on.
    await env.DIRECTORY.prepare("UPDATE directory_moves SET lease_until = ? WHERE account_id = ?").bind(Date.now() - 1, account.id).run();
    expect(await move(account.id, 1)).toMatchObject({ state: "done" });
  });

  it("reads a table of large rows in smaller chunks: no more rows than start within the chunk's bytes", async () => {
    const { account, emails } = await busyAccount("Chunks");
    const leads = (await loadPlan(env.DB)).copied.find((table) => table.name === "leads")!;
    const all = await readChunk(env.DB, leads, account.id, null);
    expect(all.rows).toHaveLength(emails.length);
    const oneRow = JSON.stringify(all.rows[0]).length;
    // Bytes for two rows and a bit: each chunk holds three rows (the third starts within the bound).
    const seen: unknown[][] = [];
    for (let after: unknown[] | null = null, chunks = 0; ; chunks += 1) {
      const chunk = await readChunk(env.DB, leads, account.id, after, undefined, 2 * oneRow + 10);
      if (chunk.rows.length === 0) break;
      expect(chunk.rows.length).toBeLessThanOrEqual(3);
      seen.push(...chunk.rows);
      after = chunk.last;
      expect(chunks).toBeLessThan(emails.length);
    }
    expect(seen).toEqual(all.rows);
  });

  it("answers the operator's mistakes", async () => {
    const account = await provisionAccount({ shard: 0 });
    const post = (shard: number, id = account.id) => callJson(`/admin/v1/accounts/${id}/move`, { method: "POST", headers: admin, body: { shard } });
    expect((await post(0)).status).toBe(400);
    expect((await post(9)).status).toBe(400);
    expect((await post(1, 987_654)).status).toBe(404);
    expect((await callJson(`/admin/v1/accounts/${account.id}/move`, { headers: admin })).status).toBe(404);
    expect((await callJson(`/admin/v1/accounts/${account.id}/move`, { method: "POST", body: { shard: 1 } })).status).toBe(401);
  });
});
