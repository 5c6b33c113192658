// bench:engine's part 2 (scripts/bench-engine.mjs): one scheduler pass over 10k, 100k and 1M enrolled
// records. The probe campaigns and mailboxes are made through the API, their records bulk-loaded by SQL
// into the stopped dev server's D1 file, then the operator route runs passes that send at most one email
// each, and their own timings split finding work and claiming from sending.
import { DatabaseSync } from "node:sqlite";
import { api, localD1File, ms, percentile } from "./bench-tools.mjs";
import { campaignWithStep, labMailboxBody, waitForChecks } from "./bench-mail.mjs";

const DOMAIN = "lab.salvo.test";
const SIZES = (process.env.BENCH_ENGINE_SIZES ?? "10000,100000,1000000").split(",").map(Number);
const LEAD_ZONES = process.env.BENCH_ENGINE_LEAD_ZONES !== "false";
const VARIANTS = (process.env.BENCH_ENGINE_VARIANTS ?? (LEAD_ZONES ? "plain,zones,esp" : "plain")).split(",");
const ZONES = [
  "Pacific/Honolulu", "America/Los_Angeles", "America/New_York", "America/Sao_Paulo", "Europe/London", "Europe/Paris",
  "Europe/Moscow", "Asia/Dubai", "Asia/Kolkata", "Asia/Shanghai", "Asia/Tokyo", "Australia/Sydney",
];
const PROBES = 20;
const WARMUP = 3;
/** Probe mailboxes beyond those measured: the minute cron may wake one before its probe, and its alarm then sends its one email. */
const SPARES = 10;


/** Creates the probe campaigns and mailboxes through the API, then bulk-loads their records. */
export async function prepareSchedulerDatasets(server, apiKey, lab) {
  const senders = lab.mailboxes.filter((m) => m.role === "sender");
  const plan = [];
  for (const size of SIZES) {
    for (const variant of VARIANTS) {
      const leadZones = variant === "zones";
      const esp = variant === "esp";
      const label = `${size}${variant === "plain" ? "" : `-${variant}`}`;
      const campaignId = await campaignWithStep(server, apiKey, `bench-scheduler-${label}`);
      const mailboxIds = [];
      for (let i = 0; i < PROBES + WARMUP + SPARES; i += 1) {
        const login = senders[i % senders.length];
        // A cap of one: after its probe the mailbox's own alarm finds the cap reached and sends nothing more.
        const body = labMailboxBody(lab, `probe-${label}-${i}@${DOMAIN}`, login, { max_email_per_day: 1 });
        mailboxIds.push((await api(server, apiKey, "/api/v1/email-accounts/save", { method: "POST", body })).id);
      }
      await waitForChecks(server, apiKey, mailboxIds);
      await api(server, apiKey, `/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", body: { email_account_ids: mailboxIds } });
      plan.push({ size, leadZones, esp, label, campaignId, mailboxIds });
    }
  }
  return plan;
}

/** Whether a zone's clock reads 09:00-17:00 at an instant. */
function inHours(zone, instant) {
  const hour = Number(new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", hourCycle: "h23" }).format(instant));
  return hour >= 9 && hour < 17;
}

/**
 * Per zone (the campaign's UTC for leads without one), when its records are due: inside the window
 * now (due up to an hour ago), or from its next 09:00 (found minute by minute) onwards.
 */
function zoneDues(now) {
  return [...ZONES, "UTC"].map((zone) => {
    if (inHours(zone, now)) return { zone, open: true, base: now };
    let at = Math.ceil(now / 60_000) * 60_000;
    while (!inHours(zone, at)) at += 60_000;
    return { zone, open: false, base: at };
  });
}

export function loadRecords(file, accountId, plan) {
  const db = new DatabaseSync(file);
  const now = Date.now();
  db.exec("BEGIN");
  for (const { size, leadZones, esp, label, campaignId, mailboxIds } of plan) {
    // Suspended until their probe (then lifted in the file, not through the API, which would wake
    // them): after the restart every sender of an ACTIVE campaign wakes, and would spend its one email.
    db.prepare("UPDATE email_accounts SET is_suspended = 1 WHERE id IN (SELECT value FROM json_each(?))").run(JSON.stringify(mailboxIds));
    db.prepare(
      `WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < ?)
       INSERT INTO leads (account_id, email, first_name, created_at)
       SELECT ?, 'lead' || (value % 5 + 1) || '+s' || ? || '-' || value || '@lab.salvo.test', 'P' || value, ? FROM n`,
    ).run(size, accountId, label, now);
    if (esp) {
      // Providers as the background pass leaves them (the records copy their lead's by trigger on insert).
      db.prepare(`UPDATE leads SET email_provider = json_extract('["google","microsoft","other",null]', '$[' || (id % 4) || ']'), esp_checked_at = ?
                  WHERE account_id = ? AND email LIKE ?`).run(now, accountId, `%+s${label}-%`);
      db.prepare("UPDATE email_accounts SET esp_provider = 'google' WHERE id IN (SELECT value FROM json_each(?))").run(JSON.stringify(mailboxIds));
      db.prepare("UPDATE campaigns SET settings = json_set(coalesce(settings, '{}'), '$.stored.enable_ai_esp_matching', json('true')) WHERE id = ?").run(campaignId);
    }
    if (!leadZones) {
      db.prepare(
        `INSERT INTO campaign_leads (account_id, campaign_id, lead_id, next_step, due_at, created_at, updated_at)
         SELECT ?, ?, id, 1, ? - (id % 86400000), ?, ? FROM leads WHERE account_id = ? AND email LIKE ?`,
      ).run(accountId, campaignId, now, now, now, accountId, `%+s${label}-%`);
      db.prepare("UPDATE campaigns SET status = 'ACTIVE', schedule = json_set(schedule, '$.min_time_btw_emails', 0) WHERE id = ?").run(campaignId);
      const { due } = db.prepare("SELECT count(*) AS due FROM campaign_leads WHERE campaign_id = ? AND email_account_id IS NULL AND due_at <= ?").get(campaignId, now);
      if (due !== size) throw new Error(`campaign ${campaignId}: ${due} records due of ${size}`);
      if (esp) {
        const { matching } = db.prepare("SELECT json_extract(settings, '$.stored.enable_ai_esp_matching') IN (1, 'true') AS matching FROM campaigns WHERE id = ?").get(campaignId);
        const { known } = db.prepare("SELECT count(*) AS known FROM campaign_leads WHERE campaign_id = ? AND esp_provider IS NOT NULL").get(campaignId);
        if (matching !== 1 || known !== (size * 3) / 4) throw new Error(`campaign ${campaignId}: matching ${matching}, ${known} records with a provider`);
      }
      console.log(`   loaded ${size} records into campaign ${campaignId}${esp ? " with ESP matching" : ""}`);
      continue;
    }
    // One lead in 13 without a zone; due times inside each lead's window, as the engine stores them.
    const dues = zoneDues(now);
    db.prepare(`UPDATE leads SET timezone = json_extract(?, '$[' || (id % 13) || ']') WHERE account_id = ? AND email LIKE ?`).run(
      JSON.stringify([...ZONES, null]),
      accountId,
      `%+s${label}-%`,
    );
    db.prepare(
      `INSERT INTO campaign_leads (account_id, campaign_id, lead_id, next_step, due_at, created_at, updated_at)
       SELECT ?, ?, l.id, 1,
              CASE WHEN d.value ->> '$.open' THEN (d.value ->> '$.base') - (l.id % 3600000) ELSE (d.value ->> '$.base') + (l.id % 3600000) END, ?, ?
       FROM leads l JOIN json_each(?) d ON d.value ->> '$.zone' = coalesce(l.timezone, 'UTC')
       WHERE l.account_id = ? AND l.email LIKE ?`,
    ).run(accountId, campaignId, now, now, JSON.stringify(dues), accountId, `%+s${label}-%`);
    db.prepare(
      `UPDATE campaigns SET status = 'ACTIVE', schedule = json_set(schedule, '$.min_time_btw_emails', 0, '$.start_hour', '09:00', '$.end_hour', '17:00',
         '$.send_in_lead_timezone', json('true')) WHERE id = ?`,
    ).run(campaignId);
    const counted = db.prepare("SELECT count(*) AS n, count(*) FILTER (WHERE due_at <= ?) AS due FROM campaign_leads WHERE campaign_id = ?").get(now, campaignId);
    if (counted.n !== size) throw new Error(`campaign ${campaignId}: ${counted.n} records of ${size}`);
    const open = dues.filter((d) => d.open).map((d) => d.zone.split("/").at(-1));
    console.log(`   loaded ${size} records in lead zones into campaign ${campaignId}: ${counted.due} due now (windows open in ${open.join(", ")})`);
  }
  db.exec("COMMIT");
  db.exec("ANALYZE");
  db.close();
}

/** One pass of a probe mailbox that sends one email; null when the mailbox's own alarm already spent its cap. */
async function probe(server, mailboxId) {
  const db = new DatabaseSync(localD1File(server.stateDir));
  db.exec("PRAGMA busy_timeout = 5000");
  db.prepare("UPDATE email_accounts SET is_suspended = 0 WHERE id = ?").run(mailboxId);
  db.close();
  const started = performance.now();
  const response = await fetch(`${server.url}/admin/v1/email-accounts/${mailboxId}/sender-pass?max_sends=1`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.adminToken}` },
  });
  const body = await response.json();
  // Its own alarm (re-armed by the minute cron after the restart) sent its one email first: not a probe.
  if (response.ok && body.sent === 0 && body.timings.claim_ms === 0 && Date.parse(body.next_wake_at) > Date.now() + 60_000) return null;
  if (!response.ok || body.sent !== 1) throw new Error(`probe of mailbox ${mailboxId}: ${response.status} ${JSON.stringify(body)}`);
  return { total: performance.now() - started, scheduling: body.timings.find_ms + body.timings.claim_ms, send: body.timings.send_ms };
}

export async function schedulerPasses(server, plan) {
  console.log("\n2. One scheduler pass (find due work + claim), per enrolled records; each probe sends one email:");
  for (const { size, leadZones, esp, mailboxIds } of plan) {
    const results = [];
    let probed = 0;
    for (const id of mailboxIds) {
      const result = await probe(server, id);
      if (result === null) continue;
      probed += 1;
      if (probed > WARMUP) results.push(result);
      if (results.length === PROBES) break;
    }
    if (results.length < PROBES) throw new Error(`only ${results.length} probes of ${PROBES}: the mailboxes' own alarms sent first`);
    const p50 = (key) => percentile(results.map((r) => r[key]).sort((a, b) => a - b), 50);
    console.log(
      `   ${String(size).padStart(9)} records${leadZones ? " in lead zones" : esp ? " with ESP matching" : ""}: scheduling p50 ${ms(p50("scheduling"))}, p95 ${ms(percentile(results.map((r) => r.scheduling).sort((a, b) => a - b), 95))}; whole pass p50 ${ms(p50("total"))} (send ${ms(p50("send"))})`,
    );
  }
}
