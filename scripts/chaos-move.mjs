// `npm run chaos:move` (inside scripts/with-mail-lab.mjs): issue 30's move-under-load run. On a throwaway
// `npm run dev`, two accounts on shard 0 do the same work side by side: "control" (never moved) and
// "moved". Each has one lab mailbox (no gap) sending a one-step campaign to CHAOS_LEADS lab leads (distinct
// addresses per account), a campaign webhook subscribed to every event kind pointing at a local receiver,
// and a stream of ingestion calls (opens, clicks, replies for its leads, with fixed event ids and times:
// the two accounts' inputs differ only in addresses and ids). Each ingestion call for a lead waits until
// the lead's email is sent (an open before its send would be credited to no send, and a reply before it
// would stop the send, so both accounts' outcomes would hang on timing). While all three run, "moved" is
// moved to shard 1 through the operator route (POST /admin/v1/accounts/{id}/move, called again until
// `done`). A client refused with 503 during the move retries the same call after Retry-After, as the
// move's contract asks of API clients. When both accounts have settled (campaigns finished, ingestion
// done, no delivery pending; the minute cron is fired when nothing moves), the two are compared and every
// line printed: analytics routes, records, events, webhook deliveries (and what the receiver got), the
// emails in the lab's Maildirs, and where "moved"'s rows are (all on shard 1, none on shard 0, the
// directory says 1). Exit code 0 when everything compares equal.
//   CHAOS_MOVE=skip: the same run without the move (control and moved must then compare equal).
//   CHAOS_LEADS (default 100, at most 100: one page of the leads list): leads per account. CHAOS_SETTLE_MS (default 3 min): how long to wait to settle.
//   CHAOS_HISTORY_LEADS (default 20,000): leads of a campaign each account never starts, so the copy takes seconds and calls meet the pause.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { accountD1File, accountRowCounts, api, apiRetrying, directoryD1File, provisionBenchAccount, shardD1Files } from "./lib/bench-tools.mjs";
import { fireMinuteCron, startDevServer } from "./lib/dev-server.mjs";
import { campaignWithStep, labMailboxBody, settledLabDeliveries, waitForChecks, withoutGap } from "./lib/bench-mail.mjs";
import { startReceiver } from "./lib/webhook-receiver.mjs";

const root = join(import.meta.dirname, "..");
const lab = JSON.parse(readFileSync(process.env.MAIL_LAB_JSON ?? join(root, ".mail-lab.json"), "utf8"));
const DOMAIN = "lab.salvo.test";
const MOVE = process.env.CHAOS_MOVE !== "skip";
const LEADS = Number(process.env.CHAOS_LEADS ?? 100);
if (!(LEADS >= 4 && LEADS <= 100)) throw new Error("CHAOS_LEADS must be 4-100 (the sent leads are read from one page of the leads list)");
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_MS ?? 3 * 60_000);
const HISTORY_LEADS = Number(process.env.CHAOS_HISTORY_LEADS ?? 20_000);
const TARGET_SHARD = 1;
/** Events per ingestion call, and calls in flight at once: small calls, several at a time, so some fall inside the move's write pause. */
const EVENTS_PER_CALL = 3;
const INGESTION_IN_FLIGHT = 4;
/** The move starts once "moved" has sent this share of its emails (and made an ingestion call): sending is the quickest of the three. */
const MOVE_AT = 0.2;
/**
 * When nothing changes for this long while settling, the minute cron is fired as if NUDGE_AHEAD_MS
 * later: every delivery whose queue message was lost is overdue then (the cron sends it again after
 * 2 minutes), and the cron goes on with an unfinished move. Well short of the engine's 15-minute lease.
 */
const NUDGE_AFTER_MS = 10_000;
const NUDGE_AHEAD_MS = 5 * 60_000;
/** Every kind a campaign's webhook may take (EMAIL_ACCOUNT_DISCONNECTED has no campaign: a user or client webhook's). */
const WEBHOOK_KINDS = [
  "EMAIL_SENT", "FIRST_EMAIL_SENT", "EMAIL_OPEN", "EMAIL_LINK_CLICK", "EMAIL_REPLY", "EMAIL_BOUNCE", "LEAD_UNSUBSCRIBED",
  "LEAD_CATEGORY_UPDATED", "CAMPAIGN_STATUS_CHANGED", "UNTRACKED_REPLIES", "MANUAL_STEP_REACHED",
];
const tag = Date.now().toString(36);
const ROLES = [
  { role: "control", sender: "sender4@lab.salvo.test" },
  { role: "moved", sender: "sender5@lab.salvo.test" },
];
const marker = (role) => `+${tag}-${role}-`;
const leadAddress = (role, i) => `lead${(i % 5) + 1}${marker(role)}${i}@${DOMAIN}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const stateDir = mkdtempSync(join(tmpdir(), "salvo-chaos-move-"));
/** Every arrival at the receiver: its webhook-id header (the delivery's message_id) and event kind. */
const arrivals = [];
const receiver = await startReceiver({ secret: null, onDelivery: ({ headers, payload }) => arrivals.push({ id: headers["webhook-id"], kind: payload?.event_type }) });
const server = await startDevServer({ stateDir, quiet: true });

/** A read-only query of one shard's file (opened per call: the move rewrites both). */
function query(file, sql, ...params) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.prepare(sql).all(...params);
  } finally {
    db.close();
  }
}

/** Each shard's file, by shard number (known once the accounts are placed on shard 0). */
let shardFiles = [];

/** The shard the directory lists an account on. */
function directoryShard(account) {
  directoryFile ??= directoryD1File(stateDir);
  return query(directoryFile, "SELECT shard FROM directory_accounts WHERE account_id = ?", account.id)[0]?.shard;
}
let directoryFile;

/** The file of the shard that holds an account now, as the directory says (what the Worker reads too). */
const fileOf = (account) => shardFiles[directoryShard(account)];

/**
 * The ingestion stream of one account: per lead two opens and a click, and a reply from every fourth,
 * at fixed times shortly ahead of the run (after every send, so each is credited to its lead's send);
 * cut into calls of EVENTS_PER_CALL events. Event ids are the same for both accounts (unique per campaign).
 */
function ingestionCalls(role, eventBase) {
  const events = [];
  for (let i = 0; i < LEADS; i += 1) {
    const lead = leadAddress(role, i);
    const at = (k) => new Date(eventBase + i * 200 + k * 40).toISOString();
    events.push({ lead: i, event: { event_id: `chaos-${i}-open-1`, type: "OPEN", lead_email: lead, occurred_at: at(1) } });
    events.push({ lead: i, event: { event_id: `chaos-${i}-click`, type: "CLICK", lead_email: lead, occurred_at: at(2), link_url: "https://example.com/offer" } });
    events.push({ lead: i, event: { event_id: `chaos-${i}-open-2`, type: "OPEN", lead_email: lead, occurred_at: at(3) } });
    if (i % 4 === 0) {
      events.push({
        lead: i,
        event: { event_id: `chaos-${i}-reply`, type: "REPLY", lead_email: lead, occurred_at: at(4), from_email: lead, subject: "Re: hello", body: `Sounds good, lead ${i} here.` },
      });
    }
  }
  const calls = [];
  for (let i = 0; i < events.length; i += EVENTS_PER_CALL) {
    const part = events.slice(i, i + EVENTS_PER_CALL);
    calls.push({ leads: [...new Set(part.map((e) => e.lead))], events: part.map((e) => e.event) });
  }
  return calls;
}

/** The positions of the leads whose email is sent (their record COMPLETED), read through the API (reads work during a move). */
async function sentLeads(account) {
  const { body } = await apiRetrying(server, account.apiKey, `/api/v1/campaigns/${account.campaignId}/leads?limit=100&offset=0`);
  const sent = new Set();
  for (const row of body.data) if (row.status === "COMPLETED") sent.add(account.positionOf.get(row.lead.email.toLowerCase()));
  return sent;
}

/** The calls, INGESTION_IN_FLIGHT at a time, each once its leads' emails are sent. */
async function runIngestion(account, calls) {
  account.ingestion = { calls: calls.length, made: 0, retries: 0, accepted: 0, duplicates: 0, done: false };
  let sent = new Set();
  let polled = 0;
  /** The sent leads, read again when older than 200 ms (shared by the workers). */
  const refreshSent = async () => {
    if (Date.now() - polled < 200) return sleep(50);
    polled = Date.now();
    sent = await sentLeads(account);
  };
  const waiting = [...calls];
  const worker = async () => {
    while (waiting.length > 0) {
      // The first call whose leads are all sent (the engine does not send in lead order).
      const ready = waiting.findIndex((call) => call.leads.every((lead) => sent.has(lead)));
      if (ready === -1) {
        await refreshSent();
        continue;
      }
      const [call] = waiting.splice(ready, 1);
      const { body, retries } = await apiRetrying(server, account.apiKey, `/api/v1/campaigns/${account.campaignId}/events`, { method: "POST", body: { events: call.events } });
      account.ingestion.made += 1;
      account.ingestion.retries += retries;
      account.ingestion.accepted += body.accepted;
      account.ingestion.duplicates += body.duplicates;
      await sleep(50);
    }
  };
  await Promise.all(Array.from({ length: INGESTION_IN_FLIGHT }, worker));
  account.ingestion.done = true;
}

/** Calls the move route until the move is done; every answer's state is printed once. */
async function moveAccount(account) {
  const started = performance.now();
  const calls = [];
  for (;;) {
    const callStarted = performance.now();
    const response = await fetch(`${server.url}/admin/v1/accounts/${account.id}/move`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ shard: TARGET_SHARD }),
    });
    const text = await response.text();
    if (response.status !== 200) {
      throw new Error(
        `the move route answered ${response.status} ${text.slice(0, 300)}\n` +
          (response.status === 404 && calls.length === 0 && text === '{"error":"Not found"}'
            ? "  (POST /admin/v1/accounts/{id}/move is not in this checkout yet: the operator's move command of issue 30 item 2 must land first; CHAOS_MOVE=skip runs the rest)"
            : ""),
      );
    }
    const body = JSON.parse(text);
    calls.push(body);
    console.log(
      `move call ${calls.length}: ${body.state} (from shard ${body.from_shard} to ${body.to_shard}, ${body.copied_rows} rows copied, ${body.deleted_rows} deleted${body.error ? `; ${body.error}` : ""}) in ${((performance.now() - callStarted) / 1000).toFixed(1)} s`,
    );
    if (body.state === "done") break;
    if (body.state === "failed") throw new Error(`the move failed and was undone: ${body.error ?? "no reason given"}`);
    if (calls.length > 200) throw new Error("the move is not done after 200 calls");
  }
  const state = await fetch(`${server.url}/admin/v1/accounts/${account.id}/move`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
  const final = await state.json();
  console.log(`move done in ${((performance.now() - started) / 1000).toFixed(1)} s over ${calls.length} call(s); GET answers ${state.status} ${final.state}`);
  return { calls, final, getStatus: state.status };
}

/** What is still to happen for an account: records with work left, messages mid-send, pending deliveries, ingestion calls not made. */
function workLeft(account) {
  const file = fileOf(account);
  const [records] = query(file, "SELECT count(*) AS n FROM campaign_leads WHERE campaign_id = ? AND due_at IS NOT NULL AND state IN ('DRAFTED', 'STARTED', 'INPROGRESS')", account.campaignId);
  const [sending] = query(file, "SELECT count(*) AS n FROM messages WHERE campaign_id = ? AND status = 'sending'", account.campaignId);
  const [pending] = query(file, "SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = ? AND status = 'pending'", account.id);
  return { records: records.n, sending: sending.n, pending: pending.n, calls: account.ingestion.done ? 0 : account.ingestion.calls - account.ingestion.made };
}

/** An analytics answer with what differs by account taken out: ids, send times, and the role in addresses. */
function normalised(value, sendTimesBefore) {
  if (Array.isArray(value)) return value.map((item) => normalised(item, sendTimesBefore)).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (value && typeof value === "object") {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      if (/(^|_)ids?$|Ids?$|^user_id$|^created_at$|^updated_at$/.test(key)) continue;
      out[key] = normalised(item, sendTimesBefore);
    }
    return out;
  }
  if (typeof value === "string") {
    const time = /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : NaN;
    if (!Number.isNaN(time) && time < sendTimesBefore) return "<a time of the run>";
    return value.replace(/\+[a-z0-9]+-(control|moved)-/g, "+").replace(/sender[45]@/g, "sender@");
  }
  return value;
}

/** The campaign's answers of every analytics and statistics route, normalised. */
async function analyticsOf(account, eventBase) {
  const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const dated = `start_date=${day(-1)}&end_date=${day(1)}`;
  const base = `/api/v1/campaigns/${account.campaignId}`;
  const routes = {
    analytics: `${base}/analytics`,
    "analytics-by-date": `${base}/analytics-by-date?${dated}`,
    "top-level-analytics-by-date": `${base}/top-level-analytics-by-date?${dated}`,
    "sequence-analytics": `${base}/sequence-analytics?${dated}`,
    "mailbox-statistics": `${base}/mailbox-statistics`,
    statistics: `${base}/statistics?limit=1000`,
    "leads-statistics": `${base}/leads-statistics?limit=100`,
  };
  const out = {};
  for (const [name, path] of Object.entries(routes)) out[name] = normalised(await api(server, account.apiKey, path), eventBase);
  return out;
}

/** Each record of the campaign in lead order: its state and flags, and its events by type. */
function recordsOf(account) {
  const file = fileOf(account);
  const rows = query(
    file,
    `SELECT cl.id, l.email, cl.state, cl.next_step, cl.has_sent, cl.has_opened, cl.has_clicked, cl.has_replied, cl.has_bounced, cl.has_unsubscribed,
            cl.is_read, cl.is_important, cl.is_archived, cl.blocked_reason, cl.category_id IS NOT NULL AS categorised, cl.revenue_cents, cl.paused_from,
            cl.due_at IS NULL AS no_due, cl.claim_token IS NULL AS no_claim, cl.last_reply_at
       FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id WHERE cl.campaign_id = ?`,
    account.campaignId,
  );
  const events = query(file, "SELECT campaign_lead_id AS record, type, count(*) AS n, count(send_id) AS credited FROM events WHERE campaign_id = ? GROUP BY 1, 2", account.campaignId);
  const messages = query(file, "SELECT campaign_lead_id AS record, status, count(*) AS n FROM messages WHERE campaign_id = ? GROUP BY 1, 2", account.campaignId);
  const byRecord = (list, key, value) => {
    const map = new Map();
    for (const row of list) map.set(row.record, { ...map.get(row.record), [row[key]]: value(row) });
    return map;
  };
  const eventsOf = byRecord(events, "type", (row) => `${row.n} (${row.credited} credited)`);
  const messagesOf = byRecord(messages, "status", (row) => row.n);
  return rows
    .map(({ id, email, ...rest }) => ({ position: account.positionOf.get(email), ...rest, events: eventsOf.get(id) ?? {}, messages: messagesOf.get(id) ?? {} }))
    .sort((a, b) => a.position - b.position);
}

/** How many of these rows were made before the move started, while it ran, and after it finished. */
function whenMade(rows, move) {
  const [start, end] = [Date.parse(move.started_at), Date.parse(move.finished_at ?? move.updated_at ?? move.started_at)];
  return [rows.filter((r) => r.created_at < start).length, rows.filter((r) => r.created_at >= start && r.created_at <= end).length, rows.filter((r) => r.created_at > end).length].join("/");
}

/** The deliveries that arrived more than once: by kind, and when they were made (before/during/after the move). */
function describeRepeats(deliveries, arrived, move) {
  const times = new Map();
  for (const a of arrived) times.set(a.id, (times.get(a.id) ?? 0) + 1);
  const repeated = deliveries.filter((d) => (times.get(d.message_id) ?? 0) > 1);
  if (repeated.length === 0) return "";
  const kinds = Object.fromEntries(Object.entries(Object.groupBy(repeated, (d) => d.event_type)).map(([kind, list]) => [kind, list.length]));
  return ` (${repeated.length} deliveries: ${JSON.stringify(kinds)}, attempts ${[...new Set(repeated.map((d) => d.attempts))].join("/")}${move ? `, made before/during/after the move ${whenMade(repeated, move)}` : ""})`;
}

/** Events and deliveries of an account, and what the receiver got of its deliveries. */
function eventsAndDeliveries(account, calls, move) {
  const file = fileOf(account);
  const byType = Object.fromEntries(query(file, "SELECT type, count(*) AS n FROM events WHERE account_id = ? GROUP BY 1 ORDER BY 1", account.id).map((r) => [r.type, r.n]));
  const sentIds = calls.flatMap((call) => call.events.map((event) => event.event_id));
  const stored = query(file, "SELECT event_id, count(*) AS n FROM events WHERE campaign_id = ? AND event_id IN (SELECT value FROM json_each(?)) GROUP BY 1", account.campaignId, JSON.stringify(sentIds));
  const storedOnce = stored.filter((row) => row.n === 1).length;
  const deliveries = query(file, "SELECT id, message_id, event_type, status, attempts, created_at FROM webhook_deliveries WHERE account_id = ?", account.id);
  const unsettled = deliveries.filter((d) => d.status !== "delivered");
  const deliveriesByKind = Object.fromEntries(Object.entries(Object.groupBy(deliveries, (d) => d.event_type)).map(([kind, list]) => [kind, list.length]).sort());
  const deliveriesByStatus = Object.fromEntries(Object.entries(Object.groupBy(deliveries, (d) => d.status)).map(([status, list]) => [status, list.length]).sort());
  const ids = new Set(deliveries.map((d) => d.message_id));
  const arrived = arrivals.filter((a) => ids.has(a.id));
  const arrivedIds = new Set(arrived.map((a) => a.id));
  return {
    byType,
    sentIds: sentIds.length,
    storedOnce,
    storedTwice: stored.filter((row) => row.n > 1).length,
    deliveries: deliveries.length,
    deliveriesByKind,
    deliveriesByStatus,
    arrivals: arrivedIds.size,
    repeats: arrived.length - arrivedIds.size,
    repeated: describeRepeats(deliveries, arrived, move),
    lost: deliveries.filter((d) => !arrivedIds.has(d.message_id)).length,
    // What is not delivered, by kind and status, with its ids' span and attempts: where a fix would look.
    unsettled: unsettled.length === 0 ? "" : `; not delivered: ${JSON.stringify(Object.fromEntries(Object.entries(Object.groupBy(unsettled, (d) => `${d.status} ${d.event_type}`)).map(([k, list]) => [k, list.length])))}, ids ${Math.min(...unsettled.map((d) => d.id))}..${Math.max(...unsettled.map((d) => d.id))}, attempts ${[...new Set(unsettled.map((d) => d.attempts))].join("/")}${move ? `, made before/during/after the move ${whenMade(unsettled, move)}` : ""}`,
  };
}

/**
 * The move's own record on a shard (`account_moves`: the row the old shard keeps so that a link or
 * queue message naming an old id is sent on): not the account's data, shown apart.
 */
const MOVE_BOOKKEEPING = new Set(["account_moves"]);

/** Where an account's rows are: per shard file, the tables holding any (and the move's own rows apart), and the directory's shard. */
function placement(account) {
  const counted = shardFiles.map((file) => Object.entries(accountRowCounts(file, account.id)).filter(([, n]) => n > 0));
  return {
    perShard: counted.map((tables) => tables.filter(([table]) => !MOVE_BOOKKEEPING.has(table))),
    bookkeeping: counted.flatMap((tables, shard) => tables.filter(([table]) => MOVE_BOOKKEEPING.has(table)).map(([table, n]) => `shard ${shard} ${table} ${n}`)),
    directoryShard: directoryShard(account),
  };
}

/** Where two normalised answers first differ (a path and both values), or null when they are equal. */
function firstDifference(a, b, path = "") {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (a && b && typeof a === "object" && typeof b === "object") {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const found = firstDifference(a[key], b[key], `${path}.${key}`);
      if (found) return found;
    }
  }
  return `${path || "answer"}: control ${JSON.stringify(a)?.slice(0, 300)}, moved ${JSON.stringify(b)?.slice(0, 300)}`;
}

let ok;
const lines = [];
/** Prints one comparison and remembers whether it held. */
function check(name, holds, detail) {
  lines.push(holds);
  console.log(`${holds ? "ok  " : "DIFF"} ${name}: ${detail}`);
}

try {
  const accounts = [];
  for (const { role, sender } of ROLES) {
    const provisioned = await provisionBenchAccount(server, `chaos-move-${role}`, { shard: 0 });
    const apiKey = provisioned.api_key;
    const login = lab.mailboxes.find((m) => m.email === sender);
    const mailbox = await api(server, apiKey, "/api/v1/email-accounts/save", { method: "POST", body: labMailboxBody(lab, sender, login) });
    await waitForChecks(server, apiKey, [mailbox.id]);
    // The same name for both: the analytics answers carry it.
    const campaignId = await campaignWithStep(server, apiKey, "chaos-move");
    // Spintax by position (the k-th record takes option k), not by a hash of the record's id: the same subjects in both accounts.
    await api(server, apiKey, "/api/v1/campaigns/spintax-distribution-mode", { method: "POST", body: { campaignId, spintaxDistributionMode: 1 } });
    await api(server, apiKey, `/api/v1/campaigns/${campaignId}/leads`, {
      method: "POST",
      body: { lead_list: Array.from({ length: LEADS }, (_, i) => ({ email: leadAddress(role, i), first_name: `C${i}` })) },
    });
    await api(server, apiKey, `/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", body: { email_account_ids: [mailbox.id] } });
    await api(server, apiKey, `/api/v1/campaigns/${campaignId}/webhooks`, {
      method: "POST",
      body: { name: "chaos-move", webhook_url: `http://127.0.0.1:${receiver.port}/hook`, event_types: WEBHOOK_KINDS },
    });
    // History that makes the copy take seconds, so calls land in the pause: a campaign never started, with its leads.
    const history = await campaignWithStep(server, apiKey, "chaos-move-history");
    for (let i = 0; i < HISTORY_LEADS; i += 400) {
      await api(server, apiKey, `/api/v1/campaigns/${history}/leads`, {
        method: "POST",
        body: { lead_list: Array.from({ length: Math.min(400, HISTORY_LEADS - i) }, (_, k) => ({ email: `history${i + k}@${role}.history.example`, first_name: `H${i + k}` })) },
      });
    }
    const positionOf = new Map(Array.from({ length: LEADS }, (_, i) => [leadAddress(role, i).toLowerCase(), i]));
    accounts.push({ role, id: provisioned.id, apiKey, mailboxId: mailbox.id, campaignId, positionOf });
  }
  const [control, moved] = accounts;
  withoutGap(server, accounts.map((a) => a.campaignId));
  const shard0 = accountD1File(stateDir, control.id);
  shardFiles = [shard0, ...shardD1Files(stateDir).filter((file) => file !== shard0)];
  if (shardFiles.length !== 2) throw new Error(`expected two shard files, found ${shardFiles.length}`);

  const started = performance.now();
  // Event times: fixed for both accounts, after every send (sends take well under the 4 minutes), at most
  // 5 minutes ahead of the clock (the ingestion route's limit).
  const eventBase = Date.now() + 4 * 60_000;
  const calls = Object.fromEntries(accounts.map((a) => [a.role, ingestionCalls(a.role, eventBase)]));
  for (const account of accounts) await api(server, account.apiKey, `/api/v1/campaigns/${account.campaignId}/status`, { method: "POST", body: { status: "START" } });
  console.log(`${LEADS} leads per account, ${calls.moved.length} ingestion calls each (${calls.moved.reduce((n, c) => n + c.events.length, 0)} events); move: ${MOVE ? `account ${moved.id} to shard ${TARGET_SHARD}` : "skipped (CHAOS_MOVE=skip)"}`);
  // A stream that fails (a refusal other than 503) is reported with the rest, not left to end the process before the cleanup.
  const streams = accounts.map((account) =>
    runIngestion(account, calls[account.role]).catch((error) => {
      account.ingestion.error = error;
      account.ingestion.done = true;
      console.log(`INGESTION FAILED for ${account.role}: ${error.message}`);
    }),
  );

  let moveResult = null;
  let moveError = null;
  /** What "moved" had done when the move started and when it ended: the move must fall inside its work. */
  const overlap = {};
  if (MOVE) {
    // Mid-stream: once "moved" has sent a share of its emails and its ingestion has begun.
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(50)) {
      if ((await sentLeads(moved)).size >= LEADS * MOVE_AT && moved.ingestion.made > 0) break;
    }
    overlap.start = { sent: (await sentLeads(moved)).size, calls: moved.ingestion.made };
    console.log(`move starts after ${((performance.now() - started) / 1000).toFixed(1)} s: "moved" has sent ${overlap.start.sent} of ${LEADS} and made ${overlap.start.calls} of ${calls.moved.length} ingestion calls`);
    try {
      moveResult = await moveAccount(moved);
    } catch (error) {
      moveError = error;
      console.log(`MOVE FAILED: ${error.message}`);
    }
    overlap.end = { sent: (await sentLeads(moved)).size, calls: moved.ingestion.made };
  }

  // Settle: both streams finished, no record with work left, nothing mid-send, no delivery pending.
  const settleStart = Date.now();
  let last = "";
  let changedAt = Date.now();
  let nudges = 0;
  for (;;) {
    const left = accounts.map((account) => workLeft(account));
    const now = JSON.stringify(left);
    if (left.every((l) => l.records === 0 && l.sending === 0 && l.pending === 0 && l.calls === 0)) break;
    if (now !== last) {
      last = now;
      changedAt = Date.now();
    } else if (Date.now() - changedAt > NUDGE_AFTER_MS) {
      nudges += 1;
      changedAt = Date.now();
      await fireMinuteCron(server, NUDGE_AHEAD_MS);
    }
    if (Date.now() - settleStart > SETTLE_MS) {
      console.log(`not settled after ${SETTLE_MS / 1000} s: ${accounts.map((a, i) => `${a.role} ${JSON.stringify(left[i])}`).join("; ")}`);
      break;
    }
    await sleep(250);
  }
  await Promise.all(streams);
  const delivered = await settledLabDeliveries(lab, `+${tag}-`, DOMAIN);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`settled after ${seconds} s (the minute cron fired ${nudges} time(s), as if 5 minutes later, when nothing moved)`);
  for (const account of accounts) {
    const i = account.ingestion;
    console.log(`${account.role}: ${i.made} ingestion calls, ${i.accepted} events accepted, ${i.duplicates} duplicates, ${i.retries} retries after a refusal`);
  }
  console.log("");

  if (MOVE) {
    check("move", moveError === null && moveResult?.final.state === "done", moveError ? moveError.message.split("\n")[0] : `done, ${moveResult.final.copied_rows} rows copied, ${moveResult.final.deleted_rows} deleted`);
    check(
      "move mid-stream",
      overlap.start.sent < LEADS && overlap.start.calls < calls.moved.length,
      `at its start "moved" had sent ${overlap.start.sent} of ${LEADS} emails and made ${overlap.start.calls} of ${calls.moved.length} ingestion calls; at its end ${overlap.end.sent} and ${overlap.end.calls}; ${moved.ingestion.retries} calls were refused and retried`,
    );
  }
  for (const account of accounts) {
    if (account.ingestion.error) check(`ingestion of ${account.role}`, false, account.ingestion.error.message);
  }
  check("control untouched", control.ingestion.retries === 0, `control's calls were refused ${control.ingestion.retries} time(s)`);

  const [analyticsA, analyticsB] = [await analyticsOf(control, eventBase), await analyticsOf(moved, eventBase)];
  for (const name of Object.keys(analyticsA)) {
    const difference = firstDifference(analyticsA[name], analyticsB[name]);
    check(`analytics ${name}`, difference === null, difference ?? "equal");
  }

  // The ingested events are dated eventBase on: a send after that would be credited differently (the run's own premise, not the move's).
  for (const account of accounts) {
    const [last] = query(fileOf(account), "SELECT max(occurred_at) AS at FROM events WHERE campaign_id = ? AND type = 'SENT'", account.campaignId);
    check(`sends of ${account.role} before the ingested events`, last.at !== null && last.at < eventBase, `last send ${last.at === null ? "none" : `${((eventBase - last.at) / 1000).toFixed(0)} s before the first ingested event's time`}`);
  }

  const [recordsA, recordsB] = [recordsOf(control), recordsOf(moved)];
  const differing = recordsA.filter((record, i) => JSON.stringify(record) !== JSON.stringify(recordsB[i]));
  check(
    "records",
    recordsA.length === LEADS && recordsB.length === LEADS && differing.length === 0,
    differing.length === 0
      ? `${recordsA.length} and ${recordsB.length} records, equal lead by lead (state, flags, events by type, messages by status)`
      : `${differing.length} differ, first: control ${JSON.stringify(differing[0])} moved ${JSON.stringify(recordsB[differing[0].position])}`,
  );

  const [flowA, flowB] = [eventsAndDeliveries(control, calls.control, null), eventsAndDeliveries(moved, calls.moved, moveResult?.final ?? null)];
  check("events by type", JSON.stringify(flowA.byType) === JSON.stringify(flowB.byType), `control ${JSON.stringify(flowA.byType)}, moved ${JSON.stringify(flowB.byType)}`);
  for (const [account, flow] of [[control, flowA], [moved, flowB]]) {
    check(
      `events ingested by ${account.role}`,
      flow.storedOnce === flow.sentIds && flow.storedTwice === 0,
      `${flow.storedOnce} of ${flow.sentIds} event ids stored once, ${flow.storedTwice} more than once`,
    );
  }
  check("deliveries by kind", JSON.stringify(flowA.deliveriesByKind) === JSON.stringify(flowB.deliveriesByKind), `control ${JSON.stringify(flowA.deliveriesByKind)}, moved ${JSON.stringify(flowB.deliveriesByKind)}`);
  for (const [account, flow] of [[control, flowA], [moved, flowB]]) {
    const settled = Object.keys(flow.deliveriesByStatus).every((status) => status === "delivered");
    check(
      `deliveries of ${account.role}`,
      settled && flow.lost === 0 && flow.arrivals === flow.deliveries && flow.repeats === 0,
      `${flow.deliveries} deliveries ${JSON.stringify(flow.deliveriesByStatus)}; the receiver got ${flow.arrivals} of them, ${flow.lost} never arrived, ${flow.repeats} arrived again (same webhook-id)${flow.repeated}${flow.unsettled}`,
    );
  }

  for (const account of accounts) {
    const counts = Array.from({ length: LEADS }, (_, i) => delivered.get(leadAddress(account.role, i).toLowerCase()) ?? 0);
    const once = counts.filter((n) => n === 1).length;
    const twice = counts.filter((n) => n > 1).length;
    check(`sends of ${account.role}`, once === LEADS, `${once} of ${LEADS} leads got their email exactly once in the lab, ${twice} more than once, ${counts.filter((n) => n === 0).length} never`);
  }

  const expectedShard = { control: 0, moved: MOVE ? TARGET_SHARD : 0 };
  for (const account of accounts) {
    const { perShard, bookkeeping, directoryShard } = placement(account);
    const want = expectedShard[account.role];
    const elsewhere = perShard.flatMap((tables, shard) => (shard === want ? [] : tables.map(([table, n]) => `shard ${shard} ${table} ${n}`)));
    check(
      `rows of ${account.role}`,
      elsewhere.length === 0 && perShard[want].length > 0 && directoryShard === want,
      `${perShard[want].reduce((n, [, rows]) => n + rows, 0)} rows on shard ${want} (${perShard[want].map(([table, n]) => `${table} ${n}`).join(", ")}); elsewhere: ${elsewhere.join(", ") || "none"}; the directory says shard ${directoryShard}${bookkeeping.length ? `; the move's own record: ${bookkeeping.join(", ")}` : ""}`,
    );
  }

  ok = lines.every(Boolean);
  console.log(ok ? `\nOK: control and moved compare equal (${seconds} s)` : `\nFAILED: ${lines.filter((l) => !l).length} difference(s)`);
} finally {
  receiver.close();
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
