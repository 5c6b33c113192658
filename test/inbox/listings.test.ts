import { describe, expect, it } from "vitest";
import { clientsOf, leadByEmail } from "../db";
import { callJson, createClientKey, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { at, emails, list, world } from "./fixtures";

describe("master inbox listings", () => {
  it("lists conversations newest reply first with every field of a message", async () => {
    const { k, a, ids, account, m1 } = await world();
    const { status, body } = await list(k, "inbox-replies");
    expect(status).toBe(200);
    expect(body.total_count).toBe(5);
    expect(body.offset).toBe(0);
    expect(body.limit).toBe(20);
    expect(body.messages.map((m) => m.lead.email)).toEqual(["dan@in.example", "ann@in.example", "bob@in.example", "cat@in.example", "eve@in.example"]);
    const ann = body.messages[1]!;
    const annLead = await leadByEmail(account.id, "ann@in.example");
    expect(ann).toEqual({
      campaign_lead_map_id: String(ids["ann@in.example"]),
      email_lead_map_id: ids["ann@in.example"],
      lead: { id: annLead.id, email: "ann@in.example", first_name: "Annabel", last_name: "Smythe" },
      campaign: { id: a, name: "Alpha" },
      email_account_id: m1,
      email_status: "Replied",
      lead_category_id: 1,
      team_member_id: 7,
      is_read: false,
      is_important: false,
      is_archived: false,
      is_snoozed: false,
      snoozed_until: null,
      last_sent_time: at(1),
      last_reply_time: at(5),
      revenue: "0.00",
      is_pushed_to_sub_sequence: false,
      sub_sequence_id: null,
      current_sequence_number: 1,
      // Ann's reply came with its category (CONTRACT section 20.5).
      category_source: "event",
      needs_review: false,
    });
    expect(body.messages.map((m) => m.email_status)).toEqual(["Unsubscribed", "Replied", "Replied", "Bounced", "Replied"]);
  });

  it("includes the thread only when fetch_message_history is set", async () => {
    const { k } = await world();
    const without = await list(k, "inbox-replies", { filters: { search: "bob@" } });
    expect(without.body.messages[0]!.email_history).toBeUndefined();
    const withHistory = await list(k, "inbox-replies", { filters: { search: "bob@" } }, true);
    expect(withHistory.body.messages[0]!.email_history).toEqual([
      expect.objectContaining({ type: "SENT", from: null, time: at(2), sequence_number: 1, ignored: false, stats_id: expect.stringMatching(/^\d+$/), message_id: "<step1-bob@in.example>" }),
      expect.objectContaining({ type: "REPLY", from: "bob@in.example", email_body: "Pricing please, and the onboarding timeline for a team of forty people", time: at(4), ignored: false }),
    ]);
    const falsy = await list(k, "inbox-replies", { filters: { search: "bob@" } });
    expect(falsy.body.messages[0]!.email_history).toBeUndefined();
    const zero = await callJson<{ messages: { email_history?: unknown }[] }>("/api/v1/master-inbox/inbox-replies?fetch_message_history=0", {
      method: "POST",
      apiKey: k,
      body: {},
    });
    expect(zero.body.messages[0]!.email_history).toBeUndefined();
  });

  describe("filters", () => {
    it("applies each member alone", async () => {
      const { k, a, b, clientId, tagId, m1 } = await world();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ search: "SMYTHE" }, ["ann@in.example"]],
        [{ search: "annab" }, ["ann@in.example"]],
        [{ search: "pricing" }, ["bob@in.example"]],
        [{ search: "in.example" }, ["dan@in.example", "ann@in.example", "bob@in.example", "cat@in.example", "eve@in.example"]],
        [{ search: "100%" }, []],
        [{ search: "_" }, []],
        // A needle too long for a D1 LIKE pattern (50 bytes) takes the other road to the same answer.
        [{ search: "AND THE ONBOARDING TIMELINE FOR A TEAM OF FORTY PEOPLE" }, ["bob@in.example"]],
        [{ search: "and the onboarding timeline for a team of forty peoplx" }, []],
        [{ search: "PRICING PLEASE" }, ["bob@in.example"]],
        [{ campaignId: b }, ["dan@in.example", "eve@in.example"]],
        [{ campaignId: [a] }, ["ann@in.example", "bob@in.example", "cat@in.example"]],
        [{ emailAccountId: m1 }, ["dan@in.example", "ann@in.example"]],
        [{ emailStatus: "Opened" }, ["ann@in.example"]],
        [{ emailStatus: "Clicked" }, ["ann@in.example"]],
        [{ emailStatus: "Bounced" }, ["cat@in.example"]],
        [{ emailStatus: "Unsubscribed" }, ["dan@in.example"]],
        [{ emailStatus: "Accepted" }, ["dan@in.example", "ann@in.example", "bob@in.example"]],
        [{ emailStatus: "Replied" }, ["dan@in.example", "ann@in.example", "bob@in.example", "cat@in.example", "eve@in.example"]],
        [{ emailStatus: "Not Replied" }, []],
        [{ leadCategories: { categoryIdsIn: [1, 3] } }, ["dan@in.example", "ann@in.example"]],
        [{ leadCategories: { categoryIdsNotIn: [6] } }, ["dan@in.example", "ann@in.example", "bob@in.example", "eve@in.example"]],
        [{ leadCategories: { unassigned: true } }, ["bob@in.example", "eve@in.example"]],
        [{ leadCategories: { isAssigned: true } }, ["dan@in.example", "ann@in.example", "cat@in.example"]],
        [{ campaignTeamMemberId: [7] }, ["dan@in.example", "ann@in.example"]],
        [{ campaignTagId: tagId }, ["dan@in.example", "eve@in.example"]],
        [{ campaignClientId: [clientId] }, ["dan@in.example", "eve@in.example"]],
        [{ replyTimeBetween: ["2026-03-03", "2026-03-04"] }, ["bob@in.example", "cat@in.example"]],
        [{ replyTimeBetween: [at(4), at(5)] }, ["ann@in.example", "bob@in.example"]],
      ];
      for (const [filters, expected] of cases) expect(await emails(k, "inbox-replies", { filters }), JSON.stringify(filters)).toEqual(expected);
    });

    it("ANDs members together and ORs values within a member", async () => {
      const { k, a, b, m1, m2 } = await world();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ emailStatus: ["Bounced", "Unsubscribed"] }, ["dan@in.example", "cat@in.example"]],
        [{ campaignId: [a, b], emailAccountId: [m1] }, ["dan@in.example", "ann@in.example"]],
        [{ campaignId: a, emailAccountId: [m1, m2] }, ["ann@in.example", "bob@in.example"]],
        [{ campaignId: a, emailStatus: ["Clicked", "Bounced"], leadCategories: { categoryIdsNotIn: [6] } }, ["ann@in.example"]],
        [{ leadCategories: { categoryIdsIn: [1], unassigned: true } }, ["ann@in.example", "bob@in.example", "eve@in.example"]],
        [{ search: "in.example", campaignId: b, replyTimeBetween: ["2026-03-01", "2026-03-02"] }, ["eve@in.example"]],
      ];
      for (const [filters, expected] of cases) expect(await emails(k, "inbox-replies", { filters }), JSON.stringify(filters)).toEqual(expected);
    });

    it("accepts each array at its maximum and answers one over with 422", async () => {
      const { k } = await world();
      const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
      const limits: [string, (n: number) => Record<string, unknown>, number][] = [
        ["filters.campaignId", (n) => ({ campaignId: ids(n) }), 5],
        ["filters.emailAccountId", (n) => ({ emailAccountId: ids(n) }), 10],
        ["filters.campaignTeamMemberId", (n) => ({ campaignTeamMemberId: ids(n) }), 10],
        ["filters.campaignTagId", (n) => ({ campaignTagId: ids(n) }), 10],
        ["filters.campaignClientId", (n) => ({ campaignClientId: ids(n) }), 10],
        ["filters.leadCategories.categoryIdsIn", (n) => ({ leadCategories: { categoryIdsIn: ids(n) } }), 10],
        ["filters.leadCategories.categoryIdsNotIn", (n) => ({ leadCategories: { categoryIdsNotIn: ids(n) } }), 10],
        ["filters.search", (n) => ({ search: "x".repeat(n) }), 100],
      ];
      for (const [path, filters, max] of limits) {
        expect((await list(k, "inbox-replies", { filters: filters(max) })).status, path).toBe(200);
        const over = await list(k, "inbox-replies", { filters: filters(max + 1) });
        expect(over.status, path).toBe(422);
        expect(over.body).toMatchObject({ error: "Validation failed", details: [expect.objectContaining({ path })] });
      }
    });

    it("refuses bad filter values, sorts and pages with 422", async () => {
      const { k } = await world();
      const bad: Record<string, unknown>[] = [
        { filters: { emailStatus: "Delivered" } },
        { filters: { replyTimeBetween: ["2026-03-05", "2026-03-01"] } },
        { filters: { replyTimeBetween: ["2026-03-05"] } },
        { filters: { campaignId: "3" } },
        { sortBy: "NAME_ASC" },
        { limit: 21 },
        { limit: 0 },
        { offset: -1 },
      ];
      for (const body of bad) expect((await list(k, "inbox-replies", body)).status, JSON.stringify(body)).toBe(422);
    });
  });

  it("sorts by reply or sent time, newest first, ties broken by id, and pages stably", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    const people = ["p1", "p2", "p3", "p4", "p5"].map((p) => `${p}@sort.example`);
    const ids = await addLeads(k, campaign, people);
    await ingestOk(k, campaign, [
      ...people.map((email, i) => ({ type: "SENT", lead_email: email, occurred_at: at(1 + (i % 2)) })),
      // p2, p3 and p4 replied at the same instant
      ...people.map((email, i) => ({ type: "REPLY", lead_email: email, occurred_at: i >= 1 && i <= 3 ? at(9) : at(5 + i) })),
    ]);
    const byId = (list: string[]) => list.sort((x, y) => ids[y]! - ids[x]!);
    expect(await emails(k, "inbox-replies")).toEqual(["p5@sort.example", ...byId(["p2@sort.example", "p3@sort.example", "p4@sort.example"]), "p1@sort.example"]);
    expect(await emails(k, "inbox-replies", { sortBy: "SENT_TIME_DESC" })).toEqual([
      ...byId(["p2@sort.example", "p4@sort.example"]),
      ...byId(["p1@sort.example", "p3@sort.example", "p5@sort.example"]),
    ]);

    const pages = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const { body } = await list(k, "inbox-replies", { offset, limit: 2 });
      expect(body.total_count).toBe(5);
      expect(body.offset).toBe(offset);
      expect(body.limit).toBe(2);
      pages.push(...body.messages.map((m) => m.lead.email));
    }
    expect(pages).toEqual(await emails(k, "inbox-replies"));
    const past = await list(k, "inbox-replies", { offset: 40, limit: 20 });
    expect(past.body).toMatchObject({ messages: [], total_count: 5, offset: 40 });
  });

  it("shows a client key only its client's conversations", async () => {
    const { k, account } = await world();
    const clientId = (await clientsOf(account.id))[0]!.id;
    const key = await createClientKey(k, clientId);
    expect(await emails(key.api_key, "inbox-replies")).toEqual(["dan@in.example", "eve@in.example"]);
    const other = await provisionAccount();
    expect(await emails(other.apiKey, "inbox-replies")).toEqual([]);
  });
});
