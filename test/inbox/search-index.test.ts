import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { needleKind, searchCondition, searchHits, searchHitStream } from "../../src/inbox/query";
import { foldText } from "../../src/platform/text-search";
import { leadsOf } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createCampaign, ingestOk } from "../campaigns/fixtures";
import { list } from "./fixtures";
import { oldSearchStatement, oracle, statement } from "./oracle";

/**
 * The search through its index (FTS5 trigrams, migration 0051) and record by record finds exactly
 * what the old scan (LIKE over the folded columns) found, over a random corpus of names and reply
 * bodies built from characters Unicode folding treats specially, and after names change and leads go.
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

// Composed and decomposed accents, sharp s, dotted and dotless i, final sigma, a ligature, a
// Roman numeral (NFKC: "xii"), an astral emoji, LIKE's and FTS5's special characters.
const ALPHABET = ["a", "b", "c", "e", "é", "e\u0301", "É", "ß", "ẞ", "İ", "ı", "i", "I", "σ", "Σ", "ς", "ﬁ", "Ⅻ", "😀", "%", "_", "\\", '"', "*", "@", ".", " ", "x", "0", "1", "-", "\uFFFF", "\uFFFD", "\u{10FFFF}", "\uD7FF"];

/**
 * Runs the statements in batches (one round trip each rather than one per statement, which cost
 * most of this test's time) and answers each one's `id`s in ascending order.
 */
async function idsOf(statements: D1PreparedStatement[]): Promise<number[][]> {
  const answers: number[][] = [];
  for (let i = 0; i < statements.length; i += BATCH) {
    const results = await fileEnv().DB.batch<{ id: number }>(statements.slice(i, i + BATCH));
    answers.push(...results.map((result) => result.results.map((row) => row.id).sort((x, y) => x - y)));
  }
  return answers;
}
const BATCH = 200;

describe("inbox search index", () => {
  it("finds what the old scan found, for needles of every length, through the index and record by record", { timeout: 600_000 }, async () => {
    const random = mulberry32(20261126);
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
    const word = (min: number, max: number) => Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => pick(ALPHABET)).join("");

    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    const leads = Array.from({ length: 60 }, (_, i) => ({ email: `p${i}x${word(0, 3).replace(/[^a-z0-9]/g, "")}@srch.example`, first_name: word(2, 8), last_name: word(0, 6) }));
    const added = await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey: k, body: { lead_list: leads } });
    expect(added.status).toBe(200);
    const bodies: string[] = [];
    await ingestOk(
      k,
      campaign,
      leads.flatMap((lead, i) =>
        i % 3 === 2
          ? [{ type: "SENT", lead_email: lead.email, occurred_at: new Date(Date.UTC(2026, 2, 1, 0, i)).toISOString() }]
          : Array.from({ length: 1 + (i % 2) }, (_, r) => {
              const body = `${word(3, 20)} ${word(0, 12)}`;
              bodies.push(body);
              return { type: "REPLY", lead_email: lead.email, occurred_at: new Date(Date.UTC(2026, 2, 2, r, i)).toISOString(), body };
            }),
      ),
    );
    const texts = [...leads.flatMap((lead) => [lead.email, lead.first_name, lead.last_name]), ...bodies];

    /** Needles cut from the corpus (re-cased or decomposed sometimes), and made up. */
    function needle(): string {
      if (random() < 0.2) return word(1, 5);
      const text = pick(texts);
      const chars = [...text];
      const start = Math.floor(random() * Math.max(chars.length, 1));
      let cut = chars.slice(start, start + 1 + Math.floor(random() * 7)).join("");
      if (random() < 0.3) cut = cut.toUpperCase();
      if (random() < 0.2) cut = cut.normalize("NFD");
      return cut || "a";
    }

    async function compareAll(round: string, count: number) {
      const needles = Array.from({ length: count }, needle);
      // Per needle: the old scan, the search condition, and for an indexed needle the hit stream
      // (a record may come more than once) and the hits (a deleted record's replies stay, since
      // events outlive records, so hits are records that still exist, as in a listing).
      const checks = needles.map((n) => ({
        n,
        statements: [
          oldSearchStatement(account.id, n),
          statement(sql`SELECT cl.id FROM campaign_leads cl WHERE cl.account_id = ${account.id} AND ${searchCondition(n)}`),
          ...(needleKind(n) === "none"
            ? []
            : [
                statement(sql`SELECT DISTINCT cl.id FROM (${searchHitStream(account.id, n)}) h JOIN campaign_leads cl ON cl.id = h.id`),
                statement(sql`SELECT cl.id FROM (${searchHits(account.id, n)}) h JOIN campaign_leads cl ON cl.id = h.id`),
              ]),
        ],
      }));
      const answers = await idsOf(checks.flatMap((check) => check.statements));
      let next = 0;
      for (const { n, statements } of checks) {
        const [expected, ...found] = answers.slice(next, next + statements.length);
        next += statements.length;
        const what = `${round}: ${JSON.stringify(n)} (folded ${JSON.stringify(foldText(n))})`;
        for (const ids of found) expect(ids, what).toEqual(expected);
      }
      // Most needles go through the index (phrases and one- or two-character ones alike).
      expect(checks.filter((check) => check.statements.length > 2).length).toBeGreaterThan(count * 0.7);
    }

    await compareAll("as loaded", 400);

    // Through the API: the listing's pages and total, against the old scan's.
    for (let i = 0; i < 25; i += 1) {
      const n = needle();
      for (const [path, listing] of [["inbox-replies", "inbox"], ["sent", "sent"]] as const) {
        const sort = listing === "sent" ? "SENT_TIME_DESC" : "REPLY_TIME_DESC";
        const expected = await oracle({ scope: { accountId: account.id, clientId: null }, listing, filters: { search: n }, sort, offset: 0, limit: 20, now: Date.now() });
        const { status, body } = await list(k, path, { filters: { search: n } });
        expect(status).toBe(200);
        expect({ total: body.total_count, ids: body.messages.map((m) => m.email_lead_map_id) }, `${path} ${JSON.stringify(n)}`).toEqual(expected);
      }
    }

    // Names change and leads go: the index follows (triggers on leads and events).
    const leadIds = await leadsOf(account.id);
    for (const [i, lead] of leadIds.slice(0, 15).entries()) {
      const first = word(2, 8);
      expect((await callJson(`/api/v1/leads/${lead.id}`, { method: "PUT", apiKey: k, body: { first_name: first, last_name: i % 2 ? null : word(1, 4) } })).status).toBe(200);
      texts.push(first);
    }
    for (const lead of leadIds.slice(15, 20)) expect((await callJson(`/api/v1/leads/${lead.id}`, { method: "DELETE", apiKey: k })).status).toBe(200);
    await compareAll("after updates and deletes", 300);
  });
});
