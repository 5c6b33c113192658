import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import type { RecordFlags } from "../../src/events/rules";
import { emailStatusOf, ftsPhrase, inboxConditions, inboxOrder, indexedNeedle, needleKind, prefixEnd, type InboxFilters } from "../../src/inbox/query";
import { choosePlan, countOverHits, planOptions, type Figures, type PlanInput } from "../../src/inbox/listing-plan";
import { filterFlags, listingFlags } from "../../src/inbox/counts";

const dialect = new SQLiteAsyncDialect();
const compile = (query: SQL) => {
  const { sql, params } = dialect.sqlToQuery(query);
  return { sql: sql.replace(/\s+/g, " "), params };
};

const NOW = 1_000;
const account = { accountId: 3, clientId: null };
const BASE = "cl.account_id = ? AND cl.has_replied = 1 AND cl.is_archived = 0 AND NOT (cl.snoozed_until IS NOT NULL AND cl.snoozed_until > ?)";

/** The conditions a filter object adds after the inbox listing's own. */
function filterPart(filters: InboxFilters): { sql: string; params: unknown[] } {
  const { sql, params } = compile(inboxConditions(account, "inbox", filters, NOW));
  expect(sql.startsWith(BASE)).toBe(true);
  expect(params.slice(0, 2)).toEqual([3, NOW]);
  return { sql: sql.slice(BASE.length), params: params.slice(2) };
}

function flags(more: Partial<RecordFlags> = {}): RecordFlags {
  return { hasSent: false, hasOpened: false, hasClicked: false, hasReplied: false, hasBounced: false, hasUnsubscribed: false, ...more };
}

describe("emailStatusOf", () => {
  it("gives the furthest status in the order Bounced, Unsubscribed, Replied, Clicked, Opened, Accepted", () => {
    const all = flags({ hasSent: true, hasOpened: true, hasClicked: true, hasReplied: true, hasBounced: true, hasUnsubscribed: true });
    expect(emailStatusOf(all)).toBe("Bounced");
    expect(emailStatusOf({ ...all, hasBounced: false })).toBe("Unsubscribed");
    expect(emailStatusOf({ ...all, hasBounced: false, hasUnsubscribed: false })).toBe("Replied");
    expect(emailStatusOf(flags({ hasSent: true, hasOpened: true, hasClicked: true }))).toBe("Clicked");
    expect(emailStatusOf(flags({ hasSent: true, hasOpened: true }))).toBe("Opened");
    expect(emailStatusOf(flags({ hasSent: true }))).toBe("Accepted");
  });

  it("has no status for a record never sent to", () => {
    expect(emailStatusOf(flags())).toBeNull();
    expect(emailStatusOf(flags({ hasOpened: true }))).toBe("Opened");
  });
});

describe("inboxConditions", () => {
  it("scopes to the account's replied conversations, and splits listings by archive and snooze at now", () => {
    expect(compile(inboxConditions(account, "inbox", {}, NOW))).toEqual({ sql: BASE, params: [3, NOW] });
    expect(compile(inboxConditions(account, "snoozed", {}, NOW))).toEqual({
      sql: "cl.account_id = ? AND cl.has_replied = 1 AND cl.is_archived = 0 AND (cl.snoozed_until IS NOT NULL AND cl.snoozed_until > ?)",
      params: [3, NOW],
    });
    expect(compile(inboxConditions(account, "archived", {}, NOW))).toEqual({
      sql: "cl.account_id = ? AND cl.has_replied = 1 AND cl.is_archived = 1",
      params: [3],
    });
  });

  it("limits a client's caller to its own campaigns", () => {
    expect(compile(inboxConditions({ accountId: 3, clientId: 9 }, "archived", {}, NOW))).toEqual({
      sql: "cl.account_id = ? AND cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ? AND client_id = ?) AND cl.has_replied = 1 AND cl.is_archived = 1",
      params: [3, 3, 9],
    });
  });

  it("adds nothing for empty filter lists", () => {
    const empty: InboxFilters = {
      search: "",
      campaignId: [],
      emailAccountId: [],
      emailStatus: [],
      leadCategories: {},
      campaignTeamMemberId: [],
      campaignTagId: [],
      campaignClientId: [],
    };
    expect(filterPart(empty)).toEqual({ sql: "", params: [] });
  });

  it("tests the search record by record last, on the lead's folded names and its replies' folded bodies, LIKE wildcards escaped", () => {
    expect(filterPart({ search: "ÄNN_5%", campaignId: [1] })).toEqual({
      sql:
        " AND cl.campaign_id IN (SELECT value FROM json_each(?))" +
        " AND (EXISTS (SELECT 1 FROM leads sl WHERE sl.id = cl.lead_id AND sl.search_folded LIKE ? ESCAPE '\\')" +
        " OR EXISTS (SELECT 1 FROM events sr INDEXED BY events_record_reply_idx" +
        " WHERE sr.campaign_lead_id = cl.id AND sr.type = 'REPLY' AND sr.body_folded LIKE ? ESCAPE '\\'))",
      params: ["[1]", "%änn\\_5\\%%", "%änn\\_5\\%%"],
    });
  });

  it("leaves the search out for records the search's index found", () => {
    const { sql } = compile(inboxConditions(account, "inbox", { search: "ann" }, NOW, "index"));
    expect(sql).toBe(BASE);
  });

  it("ORs the email statuses asked for, each once", () => {
    expect(filterPart({ emailStatus: ["Not Replied", "Clicked", "Not Replied"] })).toEqual({
      sql: " AND ((cl.has_sent = 1 AND cl.has_replied = 0) OR cl.has_clicked = 1)",
      params: [],
    });
    expect(filterPart({ emailStatus: ["Accepted", "Bounced", "Unsubscribed", "Replied", "Opened"] }).sql).toBe(
      " AND ((cl.has_sent = 1 AND cl.has_bounced = 0) OR cl.has_bounced = 1 OR cl.has_unsubscribed = 1 OR cl.has_replied = 1 OR cl.has_opened = 1)",
    );
  });

  it("widens by the admitting category selectors and narrows by categoryIdsNotIn (which keeps unassigned)", () => {
    expect(filterPart({ leadCategories: { categoryIdsIn: [4, 6], unassigned: true, isAssigned: true, categoryIdsNotIn: [5] } })).toEqual({
      sql:
        " AND (cl.category_id IN (SELECT value FROM json_each(?)) OR cl.category_id IS NULL OR cl.category_id IS NOT NULL)" +
        " AND (cl.category_id IS NULL OR NOT cl.category_id IN (SELECT value FROM json_each(?)))",
      params: ["[4,6]", "[5]"],
    });
    expect(filterPart({ leadCategories: { unassigned: false, isAssigned: true } })).toEqual({
      sql: " AND (cl.category_id IS NOT NULL)",
      params: [],
    });
  });

  it("filters by campaign, sending account, team member, tag and client as id lists, and reply time as [from, to)", () => {
    expect(
      filterPart({
        campaignId: [1, 2],
        emailAccountId: [8],
        campaignTeamMemberId: [30],
        campaignTagId: [40, 41],
        campaignClientId: [50],
        replyTimeBetween: [100, 200],
      }),
    ).toEqual({
      sql:
        " AND cl.campaign_id IN (SELECT value FROM json_each(?))" +
        " AND cl.email_account_id IN (SELECT value FROM json_each(?))" +
        " AND (cl.team_member_id IN (SELECT value FROM json_each(?)) OR cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ? AND team_member_id IN (SELECT value FROM json_each(?))))" +
        " AND cl.campaign_id IN (SELECT campaign_id FROM campaign_tags WHERE tag_id IN (SELECT value FROM json_each(?)))" +
        " AND cl.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ? AND client_id IN (SELECT value FROM json_each(?)))" +
        " AND cl.last_reply_at >= ? AND cl.last_reply_at < ?",
      params: ["[1,2]", "[8]", "[30]", 3, "[30]", "[40,41]", 3, "[50]", 100, 200],
    });
  });
});

describe("inboxOrder", () => {
  it("sorts newest first by reply or send time, ties broken by id", () => {
    expect(compile(inboxOrder("REPLY_TIME_DESC", "inbox"))).toEqual({ sql: "cl.last_reply_at DESC, cl.id DESC", params: [] });
    expect(compile(inboxOrder("SENT_TIME_DESC", "inbox"))).toEqual({ sql: "cl.last_sent_at DESC, cl.id DESC", params: [] });
  });

  it("puts the sent view's unreplied records after the replied ones, newest send first", () => {
    expect(compile(inboxOrder("REPLY_TIME_DESC", "sent"))).toEqual({ sql: "cl.last_reply_at DESC, cl.last_sent_at DESC, cl.id DESC", params: [] });
  });
});

describe("the search's index", () => {
  it("takes needles of three characters or more once folded, as one quoted phrase", () => {
    expect(indexedNeedle("ab")).toBe(false);
    expect(indexedNeedle("abc")).toBe(true);
    // NFKC folds the ligature to two letters, the Roman numeral to three.
    expect(indexedNeedle("ﬁ")).toBe(false);
    expect(indexedNeedle("Ⅻ")).toBe(true);
    expect(indexedNeedle("😀😀")).toBe(false);
    expect(ftsPhrase('Say "HI" * OR')).toBe('"say ""hi"" * or"');
  });

  it("finds one or two characters through the trigrams they begin, and leaves the documents' end mark to the record-by-record test", () => {
    expect(["abc", "ab", "A", "ﬁ", "x\u0001y", "a\uFFFFb", "\uFFFD", ""].map(needleKind)).toEqual(["phrase", "short", "short", "short", "none", "none", "none", "none"]);
    expect(prefixEnd("ab")).toBe("ac");
    expect(prefixEnd("a\uD7FF")).toBe("a\uE000");
    expect(prefixEnd("a\uFFFF")).toBe("a\u{10000}");
    expect(prefixEnd("a\u{10FFFF}")).toBe("b");
    expect(prefixEnd("\u{10FFFF}\u{10FFFF}")).toBeNull();
  });
});

describe("the counters' tests", () => {
  it("reads each listing's records from the flag bits (a snooze counts while set)", () => {
    expect(compile(listingFlags("inbox")).sql).toBe("(k.flags & 7) = 1");
    expect(compile(listingFlags("inbox", true)).sql).toBe("(k.flags & 3) = 1");
    expect(compile(listingFlags("snoozed")).sql).toBe("(k.flags & 7) = 5");
    expect(compile(listingFlags("unread")).sql).toBe("(k.flags & 15) = 1");
    expect(compile(listingFlags("important")).sql).toBe("(k.flags & 18) = 16");
    expect(compile(listingFlags("reminders")).sql).toBe("(k.flags & 1024) = 1024");
  });

  it("keeps category 0 for none, so ids that cannot exist match nothing", () => {
    const [admit, notIn] = filterFlags({ leadCategories: { categoryIdsIn: [0, 4], unassigned: true, categoryIdsNotIn: [-1, 5] } }).map(compile);
    expect(admit).toEqual({ sql: "(k.category_id IN (SELECT value FROM json_each(?)) OR k.category_id = 0)", params: ["[4]"] });
    expect(notIn).toEqual({ sql: "NOT k.category_id IN (SELECT value FROM json_each(?))", params: ["[5]"] });
  });
});

describe("choosePlan", () => {
  const input = (more: Partial<PlanInput> = {}): PlanInput => ({ listing: "inbox", sort: "REPLY_TIME_DESC", filters: {}, offset: 0, limit: 20, ...more });
  const figures = (more: Partial<Figures> = {}): Figures => ({ walkRange: 1_000_000, matches: 800_000, counted: 800_000, exact: true, ...more });
  const totals = (value: number | null, range: number, matches: number) => ({ value, range, matches, candidates: matches });

  it("walks the listing's own index when matches are dense, and reads nothing past an exact total", () => {
    expect(choosePlan(input(), figures())).toEqual({ kind: "walk", walk: { index: "campaign_leads_inbox_reply_idx", range: { mask: 3, value: 1 }, ordered: true } });
    expect(choosePlan(input({ listing: "snoozed", sort: "SENT_TIME_DESC" }), figures())).toMatchObject({ walk: { index: "campaign_leads_inbox_snoozed_sent_idx" } });
    expect(choosePlan(input({ offset: 40 }), figures({ matches: 40 }))).toEqual({ kind: "empty" });
  });

  it("merges the ordered ranges of the few campaigns or categories that hold the matches", () => {
    const campaigns = [totals(1, 300, 12), totals(2, 900_000, 0)];
    expect(choosePlan(input({ filters: { campaignId: [1, 2] } }), figures({ matches: 12, campaigns }))).toMatchObject({ kind: "merge", merge: { column: "campaign_id" }, values: [1] });
    const categories = [totals(null, 200, 150), totals(4, 50, 50)];
    expect(choosePlan(input({ filters: { leadCategories: { unassigned: true, categoryIdsIn: [4] } } }), figures({ matches: 200, categories }))).toMatchObject({
      kind: "merge",
      merge: { column: "category_id" },
      values: [null, 4],
    });
    // Dense matches: the walk reads less than a merge of many ranges.
    const many = Array.from({ length: 10 }, (_, i) => totals(i + 1, 80_000, 79_000));
    expect(choosePlan(input({ filters: { campaignId: [1] } }), figures({ matches: 790_000, campaigns: many }))).toMatchObject({ kind: "walk" });
  });

  it("merges the named mailboxes (the counters do not hold them), and reads a narrow search through its index", () => {
    expect(choosePlan(input({ filters: { emailAccountId: [5] } }), figures({ exact: false }))).toMatchObject({ kind: "merge", merge: { column: "email_account_id" }, values: [5] });
    expect(choosePlan(input({ filters: { search: "ann@" } }), figures({ exact: false, matches: 3, searchHits: 3 }))).toEqual({ kind: "search" });
    expect(planOptions(input({ filters: { search: "common" } }), figures({ exact: false, searchHits: 20_001 })).map((o) => o.plan.kind)).toEqual(["walk"]);
    // One or two characters: the probe of the walk's first records tells common (walk) from rare (index).
    expect(planOptions(input({ filters: { search: "a" } }), figures({ exact: false, probe: { scanned: 300, found: 120 } })).map((o) => o.plan.kind)).toEqual(["walk"]);
    expect(choosePlan(input({ filters: { search: "wu" } }), figures({ exact: false, probe: { scanned: 300, found: 1 } }))).toEqual({ kind: "search" });
    // A listing shorter than the probe was read whole: walking it is enough.
    expect(planOptions(input({ filters: { search: "wu" } }), figures({ exact: false, walkRange: 150, probe: { scanned: 150, found: 1 } })).map((o) => o.plan.kind)).toEqual(["walk"]);
  });

  it("reads the sent view by reply time as its replied records, then the others", () => {
    expect(choosePlan(input({ listing: "sent" }), figures())).toEqual({ kind: "sentByReply" });
  });
});

describe("countOverHits", () => {
  const figures = (more: Partial<Figures>): Figures => ({ walkRange: 1_000_000, matches: 800_000, counted: 800_000, exact: false, ...more });

  it("counts a search over its hits unless the other filters keep few records", () => {
    // A common needle in the whole inbox: the hits reach the cap at once.
    expect(countOverHits(figures({ searchHits: 20_002 }), 10_000, false)).toBe(true);
    // A needle in 1% of the records: its hits, not a walk testing every record.
    expect(countOverHits(figures({ searchHits: 9_000 }), 10_000, false)).toBe(true);
    // A common needle, but archived bounced records only: test those few.
    expect(countOverHits(figures({ searchHits: 20_002, walkRange: 100_000, counted: 5_000 }), 10_000, false)).toBe(false);
  });
});
