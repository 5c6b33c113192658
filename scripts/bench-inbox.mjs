// `npm run bench:inbox`: p50/p95 of every master-inbox listing (the three of section 4, the views of
// section 15, their filters, the search) over one account each of 10k, 100k and 1M conversations,
// and how each grows with the data (the sizes measured in turn, request by request, so a shared
// machine's load weighs on each alike; BENCH_INBOX_SIZES picks other sizes). Datasets are bulk-loaded once by SQL straight into the local D1
// file (the triggers of migrations 0050 and 0051 keep the counters and the search index as they do
// for every write) and persist in .wrangler/bench-inbox-v2 (delete it to reload).
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, datasetAccount, localD1File, ms, mulberry32, percentile, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";

const stateDir = join(import.meta.dirname, "..", ".wrangler", "bench-inbox-v2");
const SIZES = (process.env.BENCH_INBOX_SIZES ?? "10000,100000,1000000").split(",").map(Number);
const DAY = 86_400_000;
const CHUNK = 20_000;
const MAILBOXES = 50;
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo", "lima", "mike"];
mkdirSync(stateDir, { recursive: true });

const prefix = (size) => `inbox-bench-${size}-`;

/**
 * One account's dataset: `size` conversations (and a tenth more records sent to without a reply)
 * over size/1000 campaigns (a fifth of them a client's, each tagged, one in ten with a team member),
 * 50 mailboxes; per record a random category, team member, read/archived/snoozed/important state,
 * opens, clicks, bounces; 1% with a reminder, 0.5% with a scheduled reply; one REPLY event per
 * conversation. JSON chunks through json_each, so SQLite does the work.
 */
function load(db, accountId, size) {
  const random = mulberry32(7);
  const now = Date.now();
  const p = prefix(size);
  const campaignsCount = Math.max(10, Math.round(size / 1000));
  db.exec("BEGIN");
  const one = (text, ...params) => Number(db.prepare(text).run(...params).lastInsertRowid);
  const clientId = one("INSERT INTO clients (account_id, name, email, created_at) VALUES (?, ?, ?, ?)", accountId, `${p}client`, `${p}client@bench.example`, now);
  const tagIds = [0, 1, 2, 3, 4].map((t) => one("INSERT INTO tags (account_id, name, created_at) VALUES (?, ?, ?)", accountId, `${p}tag-${t}`, now));
  const campaignIds = [];
  for (let c = 0; c < campaignsCount; c += 1) {
    const id = one(
      "INSERT INTO campaigns (account_id, client_id, name, status, team_member_id, created_at, updated_at) VALUES (?, ?, ?, 'ACTIVE', ?, ?, ?)",
      accountId, c % 5 === 0 ? clientId : null, `${p}${c}`, c % 10 === 3 ? 100 + (c % 3) : null, now, now,
    );
    campaignIds.push(id);
    db.prepare("INSERT INTO campaign_tags (campaign_id, tag_id) VALUES (?, ?)").run(id, tagIds[c % 5]);
  }
  const mailboxIds = [];
  for (let m = 0; m < MAILBOXES; m += 1) {
    mailboxIds.push(one(
      `INSERT INTO email_accounts (account_id, from_name, from_email, username, smtp_host, smtp_port, smtp_port_type, imap_host, imap_port,
         imap_port_type, created_at, updated_at) VALUES (?, 'Bench', ?, ?, 'smtp.bench.example', 587, 'STARTTLS', 'imap.bench.example', 993, 'SSL', ?, ?)`,
      accountId, `${p}box${m}@bench.example`, `${p}box${m}`, now, now,
    ));
  }
  // search_folded and body_folded as the API writes them (foldText); these values are ASCII.
  const insertLeads = db.prepare(`INSERT INTO leads (account_id, email, first_name, last_name, search_folded, created_at)
    SELECT ?, value ->> 0, value ->> 1, value ->> 2, lower((value ->> 0) || char(10) || (value ->> 1) || char(10) || (value ->> 2)), ?
    FROM json_each(?) WHERE true RETURNING id`);
  const insertRecords = db.prepare(`INSERT INTO campaign_leads (account_id, campaign_id, lead_id, state, category_id, team_member_id,
      email_account_id, is_read, is_important, is_archived, snoozed_until, last_sent_at, last_reply_at, has_sent, has_opened, has_clicked,
      has_replied, has_bounced, has_unsubscribed, created_at, updated_at)
    SELECT ?1, value ->> 0, value ->> 1, 'INPROGRESS', value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7,
      value ->> 8, value ->> 9, value ->> 10, 1, value ->> 11, value ->> 12, value ->> 10 IS NOT NULL, value ->> 13, 0, ?2, ?2
    FROM json_each(?3) WHERE true RETURNING id, campaign_id, last_reply_at, email_account_id`);
  const insertReplies = db.prepare(`INSERT INTO events (account_id, campaign_id, campaign_lead_id, type, occurred_at, sequence_number,
      from_email, body, body_folded, created_at)
    SELECT ?, value ->> 0, value ->> 1, 'REPLY', value ->> 2, 1, value ->> 3, value ->> 4, lower(value ->> 4), ? FROM json_each(?) WHERE true`);
  const insertReminders = db.prepare(`INSERT INTO reminders (account_id, campaign_lead_id, remind_at, message, created_at)
    SELECT ?, value ->> 0, value ->> 1, 'Follow up', ? FROM json_each(?) WHERE true`);
  const insertScheduled = db.prepare(`INSERT INTO outbound_replies (account_id, campaign_id, campaign_lead_id, email_account_id,
      answers_stats_id, message_id, to_email, cc, bcc, subject, html, attachments, status, scheduled_at, created_at, updated_at)
    SELECT ?1, value ->> 0, value ->> 1, value ->> 2, 0, '<bench-' || (value ->> 1) || '@bench.example>', 'lead@bench.example', '[]', '[]',
      'Re: hello', '<p>Later</p>', '[]', 'SCHEDULED', value ->> 3, ?2, ?2 FROM json_each(?3) WHERE true`);
  const records = Math.round(size * 1.1);
  for (let start = 0; start < records; start += CHUNK) {
    const end = Math.min(records, start + CHUNK);
    const leadRows = [];
    for (let i = start; i < end; i += 1) leadRows.push([`person${i}@inbox.example`, `First${i}`, `Last${i}`]);
    const leadIds = insertLeads.all(accountId, now, JSON.stringify(leadRows)).map((row) => row.id);
    const recordRows = leadIds.map((leadId, k) => {
      const i = start + k;
      const replied = i % 11 !== 10;
      const sentAt = now - Math.floor(random() * 60 * DAY);
      const roll = random();
      return [
        campaignIds[Math.floor(random() * campaignsCount)],
        leadId,
        !replied || random() < 0.3 ? null : 1 + Math.floor(random() * 7),
        random() < 0.3 ? 1 + Math.floor(random() * 10) : null,
        mailboxIds[i % MAILBOXES],
        replied && random() < 0.5 ? 1 : 0,
        random() < 0.02 ? 1 : 0,
        replied && roll < 0.1 ? 1 : 0,
        replied && roll >= 0.1 && roll < 0.2 ? now + Math.floor(random() * 30 * DAY) : null,
        sentAt,
        replied ? sentAt + Math.floor(random() * 5 * DAY) : null,
        random() < 0.6 ? 1 : 0,
        random() < 0.3 ? 1 : 0,
        random() < 0.05 ? 1 : 0,
      ];
    });
    const made = insertRecords.all(accountId, now, JSON.stringify(recordRows));
    const replies = [];
    const reminders = [];
    const scheduled = [];
    for (const [k, record] of made.entries()) {
      const i = start + k;
      if (record.last_reply_at !== null) {
        replies.push([record.campaign_id, record.id, record.last_reply_at, `person${i}@inbox.example`,
          `Reply number ${i} about Pricing and timing, ${WORDS[i % WORDS.length]}`]);
      }
      if (random() < 0.01) reminders.push([record.id, now + Math.floor((random() - 0.3) * 20 * DAY)]);
      if (random() < 0.005) scheduled.push([record.campaign_id, record.id, record.email_account_id, now + Math.floor(random() * 10 * DAY)]);
    }
    insertReplies.run(accountId, now, JSON.stringify(replies));
    if (reminders.length) insertReminders.run(accountId, now, JSON.stringify(reminders));
    if (scheduled.length) insertScheduled.run(accountId, now, JSON.stringify(scheduled));
  }
  db.exec("COMMIT");
}

/** What the cases need to know of a dataset: its campaigns, client, tags, mailboxes and latest reply. */
function describe(file, accountId) {
  const db = new DatabaseSync(file, { readOnly: true });
  const ids = (text) => db.prepare(text).all(accountId).map((row) => row.id);
  const campaigns = ids("SELECT id FROM campaigns WHERE account_id = ? ORDER BY id");
  const dataset = {
    campaigns,
    clientId: db.prepare("SELECT id FROM clients WHERE account_id = ?").get(accountId).id,
    tags: ids("SELECT id FROM tags WHERE account_id = ? ORDER BY id"),
    mailboxes: ids("SELECT id FROM email_accounts WHERE account_id = ? ORDER BY id"),
    lastReply: db.prepare("SELECT max(last_reply_at) AS at FROM campaign_leads WHERE account_id = ?").get(accountId).at,
  };
  db.close();
  return dataset;
}

function cases(dataset) {
  const filtered = { campaignId: dataset.campaigns.slice(0, 3), emailStatus: ["Opened", "Clicked"], leadCategories: { categoryIdsNotIn: [6] } };
  const lastWeek = [new Date(dataset.lastReply - 7 * DAY).toISOString(), new Date(dataset.lastReply).toISOString()];
  return [
    ["inbox-replies", {}],
    ["inbox-replies", { filters: filtered }],
    ["inbox-replies", { filters: filtered, sortBy: "SENT_TIME_DESC", offset: 100 }],
    ["inbox-replies", { filters: { campaignId: [dataset.campaigns[5]] } }],
    ["inbox-replies", { filters: { leadCategories: { categoryIdsIn: [2] } } }],
    ["inbox-replies", { filters: { emailStatus: ["Bounced"] } }],
    ["inbox-replies", { filters: { emailAccountId: [dataset.mailboxes[3]] } }],
    ["inbox-replies", { filters: { replyTimeBetween: lastWeek } }],
    ["inbox-replies", { filters: { campaignTagId: [dataset.tags[1]] } }],
    ["inbox-replies", { filters: { campaignClientId: [dataset.clientId] } }],
    ["inbox-replies", { filters: { campaignTeamMemberId: [3, 100] } }],
    ["inbox-replies", { filters: { search: "person4242@" } }],
    ["inbox-replies", { filters: { search: "first7777" } }],
    ["inbox-replies", { filters: { search: "number 42" } }],
    ["inbox-replies", { filters: { search: "pricing" } }],
    ["inbox-replies", { filters: { search: "n7" } }],
    ["inbox-replies", { offset: 1000 }],
    ["archived", {}],
    ["archived", { filters: filtered }],
    ["snoozed", {}],
    ["snoozed", { filters: filtered }],
    ["snoozed", { filters: { search: "person4242@" } }],
    ["unread-replies", {}],
    ["important", {}],
    ["scheduled", {}],
    ["scheduled", { sortBy: "REPLY_TIME_DESC" }],
    ["reminders", {}],
    ["sent", {}],
    ["sent", { sortBy: "REPLY_TIME_DESC" }],
    ["sent", { filters: { campaignId: dataset.campaigns.slice(0, 3), emailStatus: ["Not Replied"] } }],
    ["assigned-me", {}],
    ["assigned-me", { filters: { campaignTeamMemberId: [3] } }],
    ["views", { filters: { subSequenceId: [dataset.campaigns[7]] } }],
    ["inbox-replies (client key)", {}],
  ];
}

let server = await startDevServer({ stateDir, quiet: true });
const accounts = {};
for (const size of SIZES) accounts[size] = await datasetAccount(server, prefix(size));
const missing = SIZES.filter((size) => !accounts[size].existing);
if (missing.length > 0) {
  await server.stop();
  const db = new DatabaseSync(localD1File(stateDir));
  // A large page cache keeps the load in memory until it commits.
  db.exec("PRAGMA cache_size = -1000000");
  for (const size of missing) {
    const started = performance.now();
    load(db, accounts[size].id, size);
    console.log(`loaded ${size} conversations in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  db.exec("ANALYZE");
  db.close();
  server = await startDevServer({ stateDir, quiet: true });
}

/** A case's name without the dataset's own ids (campaigns, tags, mailboxes differ per size). */
function nameOf(path, body, dataset) {
  const aliases = {
    campaignId: dataset.campaigns.map((id, i) => [id, `campaign${i}`]),
    subSequenceId: dataset.campaigns.map((id, i) => [id, `campaign${i}`]),
    campaignTagId: dataset.tags.map((id, i) => [id, `tag${i}`]),
    emailAccountId: dataset.mailboxes.map((id, i) => [id, `mailbox${i}`]),
    campaignClientId: [[dataset.clientId, "client"]],
  };
  const filters = body.filters
    ? JSON.stringify(body.filters, (key, value) => {
        if (key === "replyTimeBetween") return "last 7 days";
        const alias = aliases[key] && new Map(aliases[key]);
        return alias ? value.map((id) => alias.get(id) ?? id) : value;
      })
    : "";
  return [path, filters, body.sortBy ?? "", body.offset ? `offset ${body.offset}` : ""].filter(Boolean).join(" ");
}

const percentiles = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};

// The minute cron clears snoozes whose time has come (src/inbox/store.ts releaseSnoozes); no cron runs
// here, so a dataset loaded days ago would hold every one of them: clear them as the cron would.
{
  const db = new DatabaseSync(localD1File(stateDir));
  const now = Date.now();
  const { changes } = db.prepare("UPDATE campaign_leads SET snoozed_until = NULL, updated_at = ? WHERE snoozed_until IS NOT NULL AND snoozed_until <= ?").run(now, now);
  db.close();
  if (changes > 0) console.log(`released ${changes} snoozes whose time had come, as the minute cron does`);
}

try {
  const results = [];
  const RUNS = 20;
  console.log(`\nlistings, limit 20: per case ${RUNS} rounds after 3 warm-up rounds, each round one request per size in turn, so the`);
  console.log(`machine's load (shared, 2 cores) weighs on every size alike; load average before: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  const datasets = {};
  const keys = {};
  for (const size of SIZES) {
    datasets[size] = describe(localD1File(stateDir), accounts[size].id);
    const client = await api(server, accounts[size].api_key, "/api/v1/client/api-key", { method: "POST", body: { clientId: datasets[size].clientId, keyName: "bench" } });
    keys[size] = { account: accounts[size].api_key, client: client.data.api_key };
  }
  const casesBySize = Object.fromEntries(SIZES.map((size) => [size, cases(datasets[size])]));
  // The floor: the same route over an account with nothing in it (one of the bench's own: the demo
  // account's key has the default budget, 60 a minute, which a quiet machine's pace overruns).
  const floorKey = (await provisionBenchAccount(server, "inbox-floor")).api_key;
  const floorTimes = [];
  const request = async (key, path, body) => {
    const started = performance.now();
    const answer = await api(server, key, `/api/v1/master-inbox/${path.split(" ")[0]}`, { method: "POST", body });
    return { ms: performance.now() - started, total: answer.total_count };
  };
  for (const [i, [path]] of casesBySize[SIZES[0]].entries()) {
    const times = Object.fromEntries(SIZES.map((size) => [size, []]));
    const totals = {};
    for (let round = -3; round < RUNS; round += 1) {
      for (const size of SIZES) {
        const [, body] = casesBySize[size][i];
        const key = path.endsWith("(client key)") ? keys[size].client : keys[size].account;
        const { ms: took, total } = await request(key, path, body);
        if (round >= 0) times[size].push(took);
        totals[size] = total;
      }
      if (round >= 0 && i % 6 === 0) floorTimes.push((await request(floorKey, "inbox-replies", {})).ms);
    }
    results[i] = { name: nameOf(path, casesBySize[SIZES.at(-1)][i][1], datasets[SIZES.at(-1)]) };
    for (const size of SIZES) results[i][size] = { ...percentiles(times[size]), total: totals[size] };
  }
  const floor = percentiles(floorTimes);
  console.log(`floor (inbox-replies over an empty account, ${floorTimes.length} requests among the others): p50 ${ms(floor.p50)}, p95 ${ms(floor.p95)}`);
  const header = SIZES.map((size) => `${String(size).padStart(7)} p50`).join(" ");
  const growth = SIZES.slice(1).map((size, i) => `x${size / SIZES[i]}`.padStart(6)).join(" ");
  console.log(`\n${header}  growth ${growth}   p95 (largest)  total (largest)  listing`);
  let worst = 0;
  let worstGrowth = 0;
  for (const result of results) {
    const p50s = SIZES.map((size) => result[size].p50);
    const ratios = p50s.slice(1).map((p50, i) => p50 / p50s[i]);
    const largest = result[SIZES.at(-1)];
    worst = Math.max(worst, largest.p50);
    worstGrowth = Math.max(worstGrowth, ...ratios);
    console.log(`${p50s.map((p50) => ms(p50).padStart(11)).join(" ")}  ${ratios.map((r) => `x${r.toFixed(2)}`.padStart(6)).join(" ")}   ${ms(largest.p95).padStart(12)}  ${String(largest.total).padStart(15)}  ${result.name}`);
  }
  console.log(`\nslowest p50 at ${SIZES.at(-1)} conversations: ${ms(worst)} (target <= 100 ms); largest growth for x10 data: x${worstGrowth.toFixed(2)} (target <= x2)`);
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (2 cores, shared)`);
} finally {
  await server.stop();
}
