// The inbox benchmarks' dataset: 100k conversations of one account in 10 campaigns, bulk-loaded by
// SQL into a stopped dev server's D1 file (.wrangler/bench-inbox), shared by bench:inbox and bench:web.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { datasetAccount, localD1File, mulberry32 } from "./bench-tools.mjs";
import { startDevServer } from "./dev-server.mjs";

export const stateDir = join(import.meta.dirname, "..", "..", ".wrangler", "bench-inbox");
export const CONVERSATIONS = 100_000;
const CAMPAIGNS = 10;
const DAY = 86_400_000;
mkdirSync(stateDir, { recursive: true });

function load(file, accountId) {
  const db = new DatabaseSync(file);
  const random = mulberry32(7);
  const now = Date.now();
  db.exec("BEGIN");
  const campaignIds = [];
  for (let c = 0; c < CAMPAIGNS; c += 1) {
    const { lastInsertRowid } = db
      .prepare("INSERT INTO campaigns (account_id, name, status, created_at, updated_at) VALUES (?, ?, 'ACTIVE', ?, ?)")
      .run(accountId, `inbox-bench-${c}`, now, now);
    campaignIds.push(Number(lastInsertRowid));
  }
  const lead = db.prepare("INSERT INTO leads (account_id, email, first_name, last_name, search_folded, created_at) VALUES (?, ?, ?, ?, ?, ?)");
  const record = db.prepare(`INSERT INTO campaign_leads (account_id, campaign_id, lead_id, state, category_id, team_member_id,
      email_account_id, is_read, is_archived, snoozed_until, last_sent_at, last_reply_at, has_sent, has_opened, has_clicked,
      has_replied, has_bounced, has_unsubscribed, created_at, updated_at)
    VALUES (?, ?, ?, 'INPROGRESS', ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, 1, ?, 0, ?, ?)`);
  const reply = db.prepare(`INSERT INTO events (account_id, campaign_id, campaign_lead_id, type, occurred_at, sequence_number,
      from_email, body, body_folded, created_at) VALUES (?, ?, ?, 'REPLY', ?, 1, ?, ?, ?, ?)`);
  for (let i = 0; i < CONVERSATIONS; i += 1) {
    const email = `person${i}@inbox.example`;
    // search_folded and body_folded as the API writes them (foldText); these values are ASCII.
    const folded = `${email}\nfirst${i}\nlast${i}`;
    const leadId = Number(lead.run(accountId, email, `First${i}`, `Last${i}`, folded, now).lastInsertRowid);
    const campaignId = campaignIds[i % CAMPAIGNS];
    const sentAt = now - Math.floor(random() * 60 * DAY);
    const repliedAt = sentAt + Math.floor(random() * 5 * DAY);
    const roll = random();
    const archived = roll < 0.1 ? 1 : 0;
    const snoozedUntil = roll >= 0.1 && roll < 0.2 ? now + Math.floor(random() * 30 * DAY) : null;
    const category = random() < 0.3 ? null : 1 + Math.floor(random() * 7);
    const recordId = Number(
      record.run(accountId, campaignId, leadId, category, 1 + (i % 20), 1 + (i % 50), i % 2, archived, snoozedUntil, sentAt,
        repliedAt, random() < 0.6 ? 1 : 0, random() < 0.3 ? 1 : 0, random() < 0.05 ? 1 : 0, now, now).lastInsertRowid,
    );
    const body = `Reply number ${i} about pricing and timing`;
    reply.run(accountId, campaignId, recordId, repliedAt, email, body, body.toLowerCase(), now);
  }
  db.exec("COMMIT");
  db.exec("ANALYZE");
  db.close();
  console.log(`loaded ${CONVERSATIONS} conversations in ${CAMPAIGNS} campaigns`);
}

export function datasetCampaigns(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  const rows = db.prepare("SELECT id FROM campaigns WHERE name LIKE 'inbox-bench-%' ORDER BY id").all();
  db.close();
  return rows.map((row) => row.id);
}

/** A dev server on the dataset (loaded on first use) and the key of the account that owns it. */
export async function inboxDataset() {
  let server = await startDevServer({ stateDir, quiet: true });
  const account = await datasetAccount(server, "inbox-bench-");
  if (!account.existing) {
    await server.stop();
    load(localD1File(stateDir), account.id);
    server = await startDevServer({ stateDir, quiet: true });
  }
  return { server, account, campaigns: datasetCampaigns(localD1File(stateDir)) };
}
