import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import type { RecordFlags } from "../../src/events/rules";
import { emailStatusOf, inboxConditions, inboxOrder, type InboxFilters } from "../../src/inbox/query";

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

  it("searches lead names and reply bodies with the folded needle, its LIKE wildcards escaped", () => {
    expect(filterPart({ search: "ÄNN_5%" })).toEqual({
      sql:
        " AND (cl.lead_id IN (SELECT id FROM leads WHERE account_id = ? AND search_folded LIKE ? ESCAPE '\\')" +
        " OR cl.id IN (SELECT r.campaign_lead_id FROM events r WHERE r.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ?)" +
        " AND r.type = 'REPLY' AND r.body_folded LIKE ? ESCAPE '\\'))",
      params: [3, "%änn\\_5\\%%", 3, "%änn\\_5\\%%"],
    });
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
