// `npm run bench:capacity`: what one account's work costs in D1 bytes, measured on the local D1
// file of a dev server (SQLite's dbstat: the pages of each table and index), everything written
// through the API as a user's engine would: campaign records, sends with their bodies, opens and
// clicks, replies short and long, and the webhook deliveries (with their attempts) they cause, a
// local receiver answering each. Long replies are measured twice: with the default
// BODY_OFFLOAD_BYTES (their bodies in R2, a reference in D1) and with it at 0 (every body in D1),
// each on a fresh server. Then the retention pass: the minute cron fired as if 31 days later prunes
// the delivered deliveries, and more events are written into the pages SQLite freed.
// From these: events per 10 GB shard, and how many accounts of 150,000 events a day (the
// estimate of docs/ARCHITECTURE.md) one shard holds for a year with retention on.
import { DatabaseSync } from "node:sqlite";
import { api, localD1File, provisionBenchAccount } from "./lib/bench-tools.mjs";
import { startDevServer } from "./lib/dev-server.mjs";
import { startReceiver } from "./lib/webhook-receiver.mjs";

const RECORDS = 10_000;
const SENDS = 20_000;
const TRACKING = 40_000;
const REPLIES = 2_000;
const LONG_REPLY_BYTES = 10_000;
const PER_CALL = 1000;
const SHARD_BYTES = 10 * 1024 ** 3;
const DAY_MS = 86_400_000;
const TIMEOUT_MS = 600_000;
const verbose = process.env.BENCH_VERBOSE === "1";

// A personalised campaign email as the engine stores it (rendered HTML, about 1.2 KB).
const sendBody = (i) =>
  `<p>Hi Lead ${i},</p><p>I noticed Company ${i} is hiring for its sales team. ${"We help teams like yours book more meetings without adding headcount. ".repeat(8)}</p><p>Worth a short call next week?</p><p>Best,<br>Ann</p>`;
// A typical reply (about 300 bytes), and a long one (a reply with its quoted thread and signature).
const shortReply = (i) => `Thanks for reaching out (${i}). We are not looking at this right now, but please check back with me next quarter. Best regards, Pat from Company ${i}, Head of Sales Operations`;
const longReply = (i) => `Reply ${i}: ${"Happy to talk — here is what we use today and why it matters to us. ".repeat(Math.ceil(LONG_REPLY_BYTES / 70))}`.slice(0, LONG_REPLY_BYTES);

/** Bytes of each table with its indexes (dbstat pages), and the file's used and free pages. */
function footprint(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const owners = new Map(db.prepare("SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')").all().map((row) => [row.name, row.tbl_name]));
    const tables = new Map();
    for (const row of db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all()) {
      const table = owners.get(row.name) ?? row.name;
      tables.set(table, (tables.get(table) ?? 0) + Number(row.bytes));
    }
    const pageSize = Number(db.prepare("PRAGMA page_size").get().page_size);
    const pages = Number(db.prepare("PRAGMA page_count").get().page_count);
    const free = Number(db.prepare("PRAGMA freelist_count").get().freelist_count);
    return { tables, fileBytes: pages * pageSize, usedBytes: (pages - free) * pageSize, freeBytes: free * pageSize };
  } finally {
    db.close();
  }
}

const DELIVERY_TABLES = ["webhook_deliveries", "webhook_attempts"];
function delta(before, after, pick = () => true) {
  let bytes = 0;
  for (const [table, size] of after.tables) if (pick(table)) bytes += size - (before.tables.get(table) ?? 0);
  return bytes;
}
const isDelivery = (table) => DELIVERY_TABLES.includes(table);
const notDelivery = (table) => !isDelivery(table);

function count(file, sql) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number(Object.values(db.prepare(sql).get())[0]);
  } finally {
    db.close();
  }
}

async function waitUntil(what, check) {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > TIMEOUT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** A server, an account, a campaign of RECORDS leads and a webhook on every event kind that a local receiver answers. */
async function setting(receiver, vars) {
  let server;
  // A free port may be taken by another process before wrangler binds it: try again on another.
  for (let attempt = 1; !server; attempt += 1) {
    server = await startDevServer({ quiet: !verbose, mailLab: false, env: { SALVO_DEV_VARS: vars } }).catch((error) => {
      if (attempt >= 3 || !/Address already in use/.test(error.message)) throw error;
      return undefined;
    });
  }
  const account = await provisionBenchAccount(server, "capacity");
  const key = account.api_key;
  const campaign = await api(server, key, "/api/v1/campaigns/create", { method: "POST", body: { name: "capacity bench" } });
  await api(server, key, `/api/v1/campaigns/${campaign.id}/webhooks`, {
    method: "POST",
    body: { name: "crm", webhook_url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ["EMAIL_SENT", "EMAIL_OPEN", "EMAIL_LINK_CLICK", "EMAIL_REPLY"] },
  });
  return { server, key, campaign: campaign.id, file: localD1File(server.stateDir) };
}

async function addRecords(world) {
  const ids = [];
  for (let i = 0; i < RECORDS; i += 400) {
    const leads = Array.from({ length: Math.min(400, RECORDS - i) }, (_, j) => ({
      email: `lead${i + j}@company${i + j}.example`,
      first_name: `Lead${i + j}`,
      last_name: "Example",
      company_name: `Company ${i + j}`,
      website: `https://company${i + j}.example`,
    }));
    const added = await api(world.server, world.key, `/api/v1/campaigns/${world.campaign}/leads`, { method: "POST", body: { lead_list: leads, settings: { return_lead_ids: true } } });
    ids.push(...Object.values(added.emailToLeadIdMap));
  }
  return ids;
}

/** In calls of up to PER_CALL events, each under the API's 1 MiB request limit. */
async function ingest(world, events) {
  const perCall = Math.max(1, Math.min(PER_CALL, Math.floor(800_000 / Math.max(...events.map((event) => JSON.stringify(event).length)))));
  for (let i = 0; i < events.length; i += perCall) {
    await api(world.server, world.key, `/api/v1/campaigns/${world.campaign}/events`, { method: "POST", body: { events: events.slice(i, i + perCall) } });
  }
}

const at = (i) => new Date(Date.parse("2026-03-01T08:00:00Z") + i * 1000).toISOString();
const pending = (world) => count(world.file, "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'");

/** Writes `events`, waits until every delivery they caused was delivered, and answers their D1 cost (events side, deliveries side). */
async function measured(world, events) {
  const before = footprint(world.file);
  await ingest(world, events);
  await waitUntil("deliveries", () => pending(world) === 0);
  const after = footprint(world.file);
  return { events: delta(before, after, notDelivery) / events.length, deliveries: delta(before, after, isDelivery), after };
}

const mib = (bytes) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
const b = (bytes) => `${Math.round(bytes)} B`;

let arrivals = 0;
const receiver = await startReceiver({ secret: null, onDelivery: () => (arrivals += 1) });
const figures = {};
try {
  // 1. With the default threshold (4096 bytes).
  let world = await setting(receiver, "");
  try {
    const start = footprint(world.file);
    const records = await addRecords(world);
    const afterRecords = footprint(world.file);
    figures.record = delta(start, afterRecords) / RECORDS;
    console.log(`campaign record (lead + record + their indexes): ${b(figures.record)} each (${RECORDS} added in calls of 400)`);

    const sends = await measured(
      world,
      Array.from({ length: SENDS }, (_, i) => ({ event_id: `s${i}`, type: "SENT", email_lead_map_id: records[i % RECORDS], occurred_at: at(i), sequence_number: 1 + Math.floor(i / RECORDS), subject: `Quick question, Lead ${i}`, body: sendBody(i), message_id: `<s${i}@bench.example>` })),
    );
    figures.send = sends.events;
    figures.delivery = sends.deliveries / SENDS;
    console.log(`sent email with a ${b(sendBody(1).length)} body: ${b(figures.send)} an event (${SENDS} events)`);
    console.log(`webhook delivery, delivered (payload with the body, one attempt): ${b(figures.delivery)} each`);

    const tracking = await measured(
      world,
      Array.from({ length: TRACKING }, (_, i) =>
        i % 4 === 3
          ? { event_id: `c${i}`, type: "CLICK", email_lead_map_id: records[i % RECORDS], occurred_at: at(SENDS + i), link_url: `https://ourcompany.example/pricing?utm_source=email&lead=${i}` }
          : { event_id: `o${i}`, type: "OPEN", email_lead_map_id: records[i % RECORDS], occurred_at: at(SENDS + i) },
      ),
    );
    figures.tracking = tracking.events;
    figures.trackingDelivery = tracking.deliveries / TRACKING;
    console.log(`open or click (3:1, no body): ${b(figures.tracking)} an event (${TRACKING} events); their deliveries ${b(figures.trackingDelivery)} each`);

    const replyAt = SENDS + TRACKING;
    const short = await measured(
      world,
      Array.from({ length: REPLIES }, (_, i) => ({ event_id: `r${i}`, type: "REPLY", email_lead_map_id: records[i], occurred_at: at(replyAt + i), from_email: `lead${i}@company${i}.example`, subject: "Re: Quick question", body: shortReply(i), message_id: `<r${i}@company.example>` })),
    );
    figures.shortReply = short.events;
    figures.shortReplyDelivery = short.deliveries / REPLIES;
    console.log(`short reply (${b(shortReply(1).length)} body, in D1): ${b(figures.shortReply)} a stored reply (${REPLIES} replies); its delivery ${b(figures.shortReplyDelivery)}`);

    const long = await measured(
      world,
      Array.from({ length: REPLIES }, (_, i) => ({ event_id: `l${i}`, type: "REPLY", email_lead_map_id: records[REPLIES + i], occurred_at: at(replyAt + REPLIES + i), from_email: `lead${REPLIES + i}@company.example`, subject: "Re: Quick question", body: longReply(i), message_id: `<l${i}@company.example>` })),
    );
    figures.longReplyOffloaded = long.events;
    figures.longReplyDelivery = long.deliveries / REPLIES;
    console.log(`long reply (${b(LONG_REPLY_BYTES)} body) with BODY_OFFLOAD_BYTES=4096: ${b(figures.longReplyOffloaded)} a stored reply in D1 (+ ${b(LONG_REPLY_BYTES)} in R2); its delivery ${b(figures.longReplyDelivery)}`);

    // 2. Retention: delivered deliveries pruned by the minute cron, as if it fired 31 days later.
    const beforePrune = long.after;
    const delivered = count(world.file, "SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered'");
    const later = Date.now() + 31 * DAY_MS;
    let firings = 0;
    const pruneStarted = performance.now();
    while (count(world.file, "SELECT count(*) FROM webhook_deliveries") > 0) {
      await fetch(`${world.server.url}/cdn-cgi/mf/scheduled?cron=*+*+*+*+*&time=${later}`);
      firings += 1;
      if (firings > 100) throw new Error("the retention pass left deliveries behind");
    }
    const pruneSeconds = (performance.now() - pruneStarted) / 1000;
    const afterPrune = footprint(world.file);
    const attemptsLeft = count(world.file, "SELECT count(*) FROM webhook_attempts");
    const eventsKept = count(world.file, "SELECT count(*) FROM events");
    console.log(
      `retention: ${delivered} delivered deliveries pruned by ${firings} cron firings (${pruneSeconds.toFixed(1)} s), ${attemptsLeft} attempts left, ${eventsKept} events kept; ` +
        `used ${mib(beforePrune.usedBytes)} -> ${mib(afterPrune.usedBytes)} (${mib(beforePrune.usedBytes - afterPrune.usedBytes)} freed), file ${mib(afterPrune.fileBytes)} with ${mib(afterPrune.freeBytes)} free pages`,
    );
    await ingest(
      world,
      Array.from({ length: TRACKING / 2 }, (_, i) => ({ event_id: `o2-${i}`, type: "OPEN", email_lead_map_id: records[i % RECORDS], occurred_at: at(replyAt + 2 * REPLIES + i) })),
    );
    await waitUntil("deliveries", () => pending(world) === 0);
    const reused = footprint(world.file);
    console.log(
      `then ${TRACKING / 2} more opens (with their deliveries): file ${mib(afterPrune.fileBytes)} -> ${mib(reused.fileBytes)}, free pages ${mib(afterPrune.freeBytes)} -> ${mib(reused.freeBytes)} (SQLite reuses the freed pages before it grows the file)`,
    );
    figures.pruneFreed = beforePrune.usedBytes - afterPrune.usedBytes;
    figures.reuse = { fileBefore: afterPrune.fileBytes, fileAfter: reused.fileBytes };
  } finally {
    await world.server.stop();
  }

  // 3. The same long replies with every body in D1.
  world = await setting(receiver, "BODY_OFFLOAD_BYTES=0");
  try {
    const records = await addRecords(world);
    const long = await measured(
      world,
      Array.from({ length: REPLIES }, (_, i) => ({ event_id: `l${i}`, type: "REPLY", email_lead_map_id: records[REPLIES + i], occurred_at: at(i), from_email: `lead${REPLIES + i}@company.example`, subject: "Re: Quick question", body: longReply(i), message_id: `<l${i}@company.example>` })),
    );
    figures.longReplyInline = long.events;
    figures.longReplyInlineDelivery = long.deliveries / REPLIES;
    console.log(`long reply (${b(LONG_REPLY_BYTES)} body) with BODY_OFFLOAD_BYTES=0: ${b(figures.longReplyInline)} a stored reply in D1; its delivery ${b(figures.longReplyInlineDelivery)}`);
  } finally {
    await world.server.stop();
  }

  // 4. Sends with their bodies in R2 too (a threshold below a campaign email's size).
  world = await setting(receiver, "BODY_OFFLOAD_BYTES=256");
  try {
    const records = await addRecords(world);
    const sends = await measured(
      world,
      Array.from({ length: SENDS }, (_, i) => ({ event_id: `s${i}`, type: "SENT", email_lead_map_id: records[i % RECORDS], occurred_at: at(i), sequence_number: 1 + Math.floor(i / RECORDS), subject: `Quick question, Lead ${i}`, body: sendBody(i), message_id: `<s${i}@bench.example>` })),
    );
    figures.sendOffloaded = sends.events;
    figures.deliveryOffloaded = sends.deliveries / SENDS;
    console.log(`sent email with BODY_OFFLOAD_BYTES=256 (its body in R2): ${b(figures.sendOffloaded)} an event in D1; its delivery ${b(figures.deliveryOffloaded)}`);
  } finally {
    await world.server.stop();
  }
} finally {
  receiver.close();
}

// 5. Capacity. A busy account (docs/ARCHITECTURE.md): 50,000 emails a day, 150,000 events: the
// sends, 97,000 opens and clicks, 3,000 replies (1 in 10 long); two webhooks on every event (300,000
// deliveries a day), kept 30 days; a new campaign record for every third send (three-step sequences).
const day = {
  sends: 50_000,
  tracking: 97_000,
  shortReplies: 2_700,
  longReplies: 300,
  records: 50_000 / 3,
  deliveries: 300_000,
};
const eventsPerDay = day.sends + day.tracking + day.shortReplies + day.longReplies;
const gib = (bytes) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
console.log("");
console.log(`a busy account's day: ${eventsPerDay} events (${day.sends} sends, ${day.tracking} opens/clicks, ${day.shortReplies + day.longReplies} replies, 1 in 10 long), ${Math.round(day.records)} new records, ${day.deliveries} deliveries (two webhooks), kept 30 days`);
for (const [name, send, sendDelivery] of [
  ["BODY_OFFLOAD_BYTES=4096 (default)", figures.send, figures.delivery],
  ["BODY_OFFLOAD_BYTES=256 (sends in R2 too)", figures.sendOffloaded, figures.deliveryOffloaded],
]) {
  const eventBytesPerDay = day.sends * send + day.tracking * figures.tracking + day.shortReplies * figures.shortReply + day.longReplies * figures.longReplyOffloaded;
  const perEvent = eventBytesPerDay / eventsPerDay;
  const deliveryBytes = (day.sends * sendDelivery + day.tracking * figures.trackingDelivery + day.shortReplies * figures.shortReplyDelivery + day.longReplies * figures.longReplyDelivery) / eventsPerDay;
  const keptDeliveries = 30 * day.deliveries * deliveryBytes;
  const yearly = 365 * (eventBytesPerDay + day.records * figures.record);
  const accountYear = yearly + keptDeliveries;
  const accountYearNoRetention = yearly + 365 * day.deliveries * deliveryBytes;
  console.log(`${name}:`);
  console.log(`  ${b(perEvent)} an event on that mix: ${(SHARD_BYTES / perEvent / 1e6).toFixed(1)} million events per 10 GiB shard (opens and clicks alone: ${(SHARD_BYTES / figures.tracking / 1e6).toFixed(1)} million)`);
  console.log(`  one busy account a year: ${gib(accountYear)} with 30-day delivery retention (${gib(keptDeliveries)} of it deliveries), ${gib(accountYearNoRetention)} without`);
  console.log(`  busy accounts one 10 GiB shard holds for a year: ${(SHARD_BYTES / accountYear).toFixed(2)} with retention, ${(SHARD_BYTES / accountYearNoRetention).toFixed(2)} without`);
}
console.log(`long replies: ${b(figures.longReplyInline)} -> ${b(figures.longReplyOffloaded)} in D1 with R2 offload (x${(figures.longReplyInline / figures.longReplyOffloaded).toFixed(1)} less); their deliveries ${b(figures.longReplyInlineDelivery)} -> ${b(figures.longReplyDelivery)}`);
console.log(`${arrivals} deliveries arrived at the local receiver`);
