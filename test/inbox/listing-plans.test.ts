import { describe, expect, it } from "vitest";
import { planOptions, type Plan } from "../../src/inbox/listing-plan";
import { readFigures, readPage, type ListingQuery } from "../../src/inbox/listing-store";
import { LISTING_SORTS, type EmailStatus, type InboxFilters, type Listing } from "../../src/inbox/query";
import { provisionAccount, fileEnv } from "../helpers";
import { oracle } from "./oracle";

/**
 * Every way a listing can read its page (walks, merges per campaign, category or mailbox, the
 * search's index, the sent view's two walks) gives the old scan's page and total, over a random,
 * skewed dataset and random listings, filters, sorts and pages, for an account's key and a client's.
 */

function mulberry32(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const LISTINGS: Listing[] = ["inbox", "archived", "snoozed", "unread", "important", "scheduled", "reminders", "sent", "assigned", "views"];
const STATUSES: EmailStatus[] = ["Opened", "Clicked", "Replied", "Unsubscribed", "Bounced", "Accepted", "Not Replied"];
const DAY = 86_400_000;

async function dataset(random: () => number) {
  const account = await provisionAccount();
  const db = fileEnv().DB;
  const one = async (text: string, ...params: unknown[]) => (await db.prepare(`${text} RETURNING id`).bind(...params).first<{ id: number }>())!.id;
  const clients = [await one("INSERT INTO clients (account_id, name, email) VALUES (?, 'c1', 'c1@plan.example')", account.id), await one("INSERT INTO clients (account_id, name, email) VALUES (?, 'c2', 'c2@plan.example')", account.id)];
  const tags = [await one("INSERT INTO tags (account_id, name) VALUES (?, 'plan-a')", account.id), await one("INSERT INTO tags (account_id, name) VALUES (?, 'plan-b')", account.id)];
  const campaigns: number[] = [];
  for (let c = 0; c < 8; c += 1) {
    const id = await one(
      "INSERT INTO campaigns (account_id, client_id, name, status, team_member_id) VALUES (?, ?, ?, 'ACTIVE', ?)",
      account.id,
      c % 3 === 1 ? clients[0] : c === 5 ? clients[1] : null,
      `plan-${c}`,
      c === 2 ? 7 : null,
    );
    campaigns.push(id);
    if (c % 2 === 0) await db.prepare("INSERT INTO campaign_tags (campaign_id, tag_id) VALUES (?, ?)").bind(id, tags[c % 4 === 0 ? 0 : 1]).run();
  }
  const mailbox = await one(
    `INSERT INTO email_accounts (account_id, from_name, from_email, username, smtp_host, smtp_port, smtp_port_type, imap_host, imap_port, imap_port_type)
     VALUES (?, 'P', ?, 'p', 'smtp.plan.example', 587, 'STARTTLS', 'imap.plan.example', 993, 'SSL')`,
    account.id,
    `box-${account.id}@plan.example`,
  );
  // Skewed on purpose: most records in one campaign, category and mailbox, so each plan wins somewhere.
  const skewed = (values: (number | null)[]) => values[Math.min(values.length - 1, Math.floor(random() ** 3 * values.length))]!;
  const now = Date.now();
  const statements = [];
  for (let i = 0; i < 260; i += 1) {
    const replied = random() < 0.75;
    const sent = replied ? random() < 0.9 : true;
    const sentAt = sent ? now - Math.floor(random() * 40 * DAY) : null;
    // Ties on purpose: several records share a reply time.
    const replyAt = replied ? now - Math.floor(random() * 20) * DAY : null;
    const snoozeRoll = random();
    const snoozed = replied && snoozeRoll < 0.15 ? (snoozeRoll < 0.04 ? now - 60_000 : now + Math.floor(random() * 5 * DAY)) : null;
    statements.push(
      db
        .prepare(
          `INSERT INTO leads (account_id, email, first_name, last_name, search_folded) VALUES (?1, ?2, ?3, ?4, lower(?2 || char(10) || ?3 || char(10) || ?4))`,
        )
        .bind(account.id, `lead${i}@plan.example`, `Name${i % 37}`, `Fam${i % 11}x`),
      db
        .prepare(
          `INSERT INTO campaign_leads (account_id, campaign_id, lead_id, state, category_id, team_member_id, email_account_id, is_read, is_important,
             is_archived, snoozed_until, last_sent_at, last_reply_at, has_sent, has_opened, has_clicked, has_replied, has_bounced, has_unsubscribed)
           VALUES (?, ?, (SELECT id FROM leads WHERE account_id = ? AND email = ?), 'INPROGRESS', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .bind(
          account.id,
          skewed(campaigns),
          account.id,
          `lead${i}@plan.example`,
          skewed([null, 1, 2, 3, 4, 5, 6, 7]),
          random() < 0.2 ? skewed([7, 9, 11]) : null,
          skewed([mailbox, 501, 502, 503, null]),
          random() < 0.5 ? 1 : 0,
          random() < 0.08 ? 1 : 0,
          replied && random() < 0.15 ? 1 : 0,
          snoozed,
          sentAt,
          replyAt,
          sent ? 1 : 0,
          random() < 0.5 ? 1 : 0,
          random() < 0.2 ? 1 : 0,
          replied ? 1 : 0,
          random() < 0.06 ? 1 : 0,
          random() < 0.04 ? 1 : 0,
        ),
    );
  }
  await db.batch(statements);
  const records = (await db.prepare("SELECT id, campaign_id, lead_id, has_replied, last_reply_at FROM campaign_leads WHERE account_id = ?").bind(account.id).all<{ id: number; campaign_id: number; lead_id: number; has_replied: number; last_reply_at: number | null }>()).results;
  const more = [];
  for (const record of records) {
    if (record.has_replied) {
      more.push(
        db
          .prepare("INSERT INTO events (account_id, campaign_id, campaign_lead_id, type, occurred_at, sequence_number, body, body_folded) VALUES (?, ?, ?, 'REPLY', ?, 1, ?, lower(?))")
          .bind(account.id, record.campaign_id, record.id, record.last_reply_at, `About topic${record.id % 13} and more`, `About topic${record.id % 13} and more`),
      );
    }
    if (random() < 0.1) more.push(db.prepare("INSERT INTO reminders (account_id, campaign_lead_id, remind_at, message) VALUES (?, ?, ?, 'r')").bind(account.id, record.id, now + Math.floor((random() - 0.5) * 10) * DAY));
    if (random() < 0.08) {
      more.push(
        db
          .prepare(
            `INSERT INTO outbound_replies (account_id, campaign_id, campaign_lead_id, email_account_id, answers_stats_id, message_id, to_email, cc, bcc, subject, html, attachments, status, scheduled_at)
             VALUES (?, ?, ?, ?, 0, ?, 't@plan.example', '[]', '[]', 's', 'h', '[]', ?, ?)`,
          )
          .bind(account.id, record.campaign_id, record.id, mailbox, `<m${record.id}@plan.example>`, random() < 0.8 ? "SCHEDULED" : "COMPLETED", now + Math.floor(random() * 5) * DAY),
      );
    }
  }
  await db.batch(more);
  return { account, clients, tags, campaigns, mailbox, now };
}

describe("listing plans", () => {
  it("every way to read a page gives the old scan's page and total", { timeout: 600_000 }, async () => {
    const random = mulberry32(27);
    const world = await dataset(random);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const some = <T>(items: readonly T[], max: number) => [...new Set(Array.from({ length: 1 + Math.floor(random() * max) }, () => pick(items)))];

    function filters(listing: Listing): InboxFilters {
      const f: InboxFilters = {};
      if (random() < 0.3) f.campaignId = some(world.campaigns, 3);
      if (random() < 0.2) f.emailAccountId = some([world.mailbox, 501, 502, 999], 2);
      if (random() < 0.25) f.emailStatus = some(STATUSES, 2);
      if (random() < 0.3) {
        f.leadCategories = pick([
          { categoryIdsIn: some([1, 2, 3, 4, 5, 6, 7, 0], 3) },
          { unassigned: true },
          { isAssigned: true, categoryIdsNotIn: some([1, 2, 6], 2) },
          { categoryIdsIn: [7], unassigned: true },
          { categoryIdsNotIn: some([1, 2, 6, -1], 2) },
        ]);
      }
      if (random() < 0.15) f.campaignTeamMemberId = some([7, 9, 11, 0], 2);
      if (random() < 0.12) f.campaignTagId = some(world.tags, 2);
      if (random() < 0.12) f.campaignClientId = some(world.clients, 2);
      if (random() < 0.12) f.replyTimeBetween = [world.now - Math.floor(random() * 15) * DAY, world.now - Math.floor(random() * 5) * DAY + 1];
      if (listing === "views" && random() < 0.5) f.subSequenceId = some(world.campaigns, 2);
      if (random() < 0.2) f.search = pick(["name1", "fam3x", "topic1", "lead2", "e", "x", "a@", "topic12 and", "plan.example", "zz"]);
      return f;
    }

    const kinds = new Set<string>();
    for (let i = 0; i < 220; i += 1) {
      const listing = pick(LISTINGS);
      const clientId = random() < 0.25 ? pick(world.clients) : null;
      const query: ListingQuery = {
        scope: { accountId: world.account.id, clientId },
        listing,
        filters: filters(listing),
        sort: pick(LISTING_SORTS[listing].sorts),
        offset: pick([0, 0, 0, 3, 20, 40, Math.floor(random() * 90)]),
        limit: pick([20, 20, 5, 1]),
        now: Date.now(),
      };
      const expected = await oracle(query);
      const figures = await readFigures(fileEnv().DB, query);
      for (const { plan } of planOptions(query, figures)) {
        kinds.add(kindOf(plan));
        const page = await readPage(fileEnv().DB, query, figures, plan);
        expect({ ids: page.rows.map((row) => row.id), total: page.total }, `${kindOf(plan)} ${JSON.stringify(query)}`).toEqual(expected);
      }
    }
    expect([...kinds].sort()).toEqual(["empty", "merge campaign_id", "merge category_id", "merge email_account_id", "search", "sentByReply", "walk"]);
  });
});

function kindOf(plan: Plan): string {
  return plan.kind === "merge" ? `merge ${plan.merge.column}` : plan.kind;
}
