import { createScheduledController } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { InboxFilters, Listing } from "../../src/inbox/query";
import { inboxCounterTotal, mailboxConnected, outboundRepliesOf, personOf, recordEventId, recordRow, setOutboundReply, setRecord } from "../db";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { act, at, list, type Listing as Path } from "./fixtures";
import { counterDrift, oracles } from "./oracle";

/**
 * The inbox counters (migration 0050) stay exact through every way a record changes: after each
 * write, the counters equal a recount of the records, and every listing's total (and first page)
 * equals the old scan's, for the account's key and for its client's.
 */

const PATHS: [Path, Listing][] = [
  ["inbox-replies", "inbox"],
  ["archived", "archived"],
  ["snoozed", "snoozed"],
  ["unread-replies", "unread"],
  ["important", "important"],
  ["scheduled", "scheduled"],
  ["reminders", "reminders"],
  ["sent", "sent"],
  ["assigned-me", "assigned"],
  ["views", "views"],
];

const DEFAULT_SORT = { scheduled: "SCHEDULED_TIME_ASC", reminders: "REMINDER_TIME_ASC", sent: "SENT_TIME_DESC" } as const;

interface World {
  accountId: number;
  k: string;
  clientKey: string;
  clientId: number;
  a: number;
  b: number;
  ids: Record<string, number>;
}

/** Counters exact, and every listing (the active ones with counted filters too) as the old scan has it, for both keys. */
async function expectExact(world: World, step: string) {
  expect(await counterDrift(world.accountId), `counters after ${step}`).toEqual([]);
  const filterSets: InboxFilters[] = [
    {},
    { campaignId: [world.a] },
    { emailStatus: ["Opened", "Bounced"], leadCategories: { categoryIdsNotIn: [6] } },
    { leadCategories: { unassigned: true } },
    { campaignTeamMemberId: [7] },
    { campaignClientId: [world.clientId] },
  ];
  const cases = [...PATHS.map(([path, listing]) => [path, listing, {}] as const), ...filterSets.slice(1).flatMap((filters) => [
    ["inbox-replies", "inbox", filters] as const,
    ["assigned-me", "assigned", filters] as const,
  ])];
  const checks = cases.flatMap(([path, listing, filters]) =>
    (
      [
        [world.k, null],
        [world.clientKey, world.clientId],
      ] as const
    ).map(([key, clientId]) => ({ path, listing, filters, key, clientId })),
  );
  // The listings are reads: all of them at once, and the old scan's answers in one batch.
  const now = Date.now();
  const [pages, expected] = await Promise.all([
    Promise.all(checks.map(({ key, path, filters }) => list(key, path, { filters, limit: 2 }))),
    oracles(
      checks.map(({ listing, filters, clientId }) => ({
        scope: { accountId: world.accountId, clientId },
        listing,
        filters,
        sort: DEFAULT_SORT[listing as keyof typeof DEFAULT_SORT] ?? "REPLY_TIME_DESC",
        offset: 0,
        limit: 2,
        now,
      })),
    ),
  ]);
  for (const [i, { path, filters, clientId }] of checks.entries()) {
    const { status, body } = pages[i]!;
    expect(status).toBe(200);
    const what = `${path} ${JSON.stringify(filters)} (${clientId ? "client" : "account"} key) after ${step}`;
    expect(body.total_count, what).toBe(expected[i]!.total);
    expect(body.messages.map((m) => m.email_lead_map_id), what).toEqual(expected[i]!.ids);
  }
}

function runCron(at: number) {
  return worker.scheduled(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), fileEnv());
}

async function world(): Promise<World> {
  const account = await provisionAccount();
  const k = account.apiKey;
  const clientId = await createClient(k);
  const clientKey = (await createClientKey(k, clientId)).api_key;
  const a = await createCampaign(k, { name: "Alpha" });
  const b = await createCampaign(k, { name: "Beta", client_id: clientId });
  const ids = {
    ...(await addLeads(k, a, ["ann@count.example", "bob@count.example", "cat@count.example", "dan@count.example"])),
    ...(await addLeads(k, b, ["eve@count.example", "fay@count.example", "gus@count.example"])),
  };
  return { accountId: account.id, k, clientKey, clientId, a, b, ids };
}

describe("inbox counters", () => {
  it("stay exact through every write path, and every listing agrees with the old scan", { timeout: 600_000 }, async () => {
    const w = await world();
    const { k, a, b, ids } = w;
    await expectExact(w, "adding leads");

    // Events may name only the caller's own mailboxes.
    const sender = await createMailbox(k);
    await ingestOk(k, a, [
      { type: "SENT", lead_email: "ann@count.example", occurred_at: at(1), email_account_id: sender.id },
      { type: "OPEN", lead_email: "ann@count.example", occurred_at: at(1, 12) },
      { type: "SENT", lead_email: "bob@count.example", occurred_at: at(1) },
      { type: "SENT", lead_email: "cat@count.example", occurred_at: at(2) },
      { type: "BOUNCE", lead_email: "cat@count.example", occurred_at: at(2, 11) },
      { type: "SENT", lead_email: "dan@count.example", occurred_at: at(2) },
    ]);
    await expectExact(w, "sends, an open and a bounce");

    await ingestOk(k, a, [
      { type: "REPLY", lead_email: "ann@count.example", occurred_at: at(3), category_id: 1, body: "Sounds good" },
      { type: "REPLY", lead_email: "bob@count.example", occurred_at: at(4), body: "Pricing?" },
      { type: "REPLY", lead_email: "cat@count.example", occurred_at: at(5), category_id: 6, is_ooo: true },
    ]);
    await ingestOk(k, b, [
      { type: "SENT", lead_email: "eve@count.example", occurred_at: at(2) },
      { type: "REPLY", lead_email: "eve@count.example", occurred_at: at(6), category_id: 3 },
      { type: "REPLY", lead_email: "fay@count.example", occurred_at: at(7) },
    ]);
    await expectExact(w, "replies ingested (one categorised later, one without a send)");

    await act(k, "change-read-status", { email_lead_map_id: ids["ann@count.example"], read_status: true }, "PATCH");
    await act(k, "change-read-status", { email_lead_map_id: ids["eve@count.example"], read_status: true }, "PATCH");
    await act(k, "change-read-status", { email_lead_map_id: ids["eve@count.example"], read_status: false }, "PATCH");
    await expectExact(w, "read and unread");

    await act(k, "archive", { email_lead_map_id: ids["bob@count.example"] });
    await act(k, "archive", { email_lead_map_id: ids["fay@count.example"] });
    await act(k, "unarchive", { email_lead_map_id: ids["fay@count.example"] });
    await expectExact(w, "archive and unarchive");

    const soon = Date.now() + 3 * 60_000;
    await act(k, "snooze", { email_lead_map_id: ids["cat@count.example"], snoozed_until: new Date(soon).toISOString() });
    await act(k, "snooze", { email_lead_map_id: ids["eve@count.example"], snoozed_until: new Date(Date.now() + 86_400_000).toISOString() });
    await act(k, "snooze", { email_lead_map_id: ids["fay@count.example"], snoozed_until: new Date(Date.now() + 86_400_000).toISOString() });
    await act(k, "unsnooze", { email_lead_map_id: ids["fay@count.example"] });
    await expectExact(w, "snooze and unsnooze");

    // A snooze whose time has come before the cron ran: the listings count it back in by themselves.
    await setRecord(ids["cat@count.example"]!, { snoozedUntil: new Date(Date.now() - 1000) });
    await expectExact(w, "a snooze over but not yet released");
    await runCron(Date.now());
    expect((await recordRow(ids["cat@count.example"]!)).snoozedUntil).toBeNull();
    await expectExact(w, "the minute cron releasing it");

    await act(k, "update-category", { email_lead_map_id: ids["bob@count.example"], category_id: 2 }, "PATCH");
    await act(k, "update-category", { email_lead_map_id: ids["ann@count.example"], category_id: null }, "PATCH");
    await ingestOk(k, b, [{ type: "REPLY", lead_email: "fay@count.example", occurred_at: at(8), category_id: 5 }]);
    await expectExact(w, "category changes (by hand and by a categorised reply)");

    await act(k, "update-team-member", { email_lead_map_id: ids["ann@count.example"], team_member_id: 7 });
    await act(k, "update-team-member", { email_lead_map_id: ids["eve@count.example"], team_member_id: 9 });
    await callJson(`/api/v1/campaigns/${b}/team-member`, { method: "POST", apiKey: k, body: { teamMemberId: 7 } });
    await expectExact(w, "team members, a record's and a campaign's");

    await act(k, "mark-important", { email_lead_map_id: ids["dan@count.example"] }, "PATCH");
    await act(k, "mark-important", { email_lead_map_id: ids["gus@count.example"] }, "PATCH");
    await act(k, "mark-important", { email_lead_map_id: ids["gus@count.example"], is_important: false }, "PATCH");
    await expectExact(w, "important marks");

    const later = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
    await act(k, "set-reminder", { email_lead_map_id: ids["ann@count.example"], reminder_time: later(2), message: "call" });
    await act(k, "set-reminder", { email_lead_map_id: ids["ann@count.example"], reminder_time: later(1), message: "call sooner" });
    await act(k, "set-reminder", { email_lead_map_id: ids["gus@count.example"], reminder_time: later(3), message: "never replied" });
    await expectExact(w, "reminders set and replaced");

    // A reply scheduled from the inbox, then taken by its mailbox's pass (SCHEDULED -> QUEUED).
    const mailbox = await createMailbox(k);
    await mailboxConnected(mailbox.id, { imap: true });
    await setRecord(ids["bob@count.example"]!, { emailAccountId: mailbox.id });
    const bobReply = { id: await recordEventId(ids["bob@count.example"]!, "REPLY") };
    for (const days of [4, 2]) {
      const sent = await callJson(`/api/v1/campaigns/${a}/reply-email-thread`, {
        method: "POST",
        apiKey: k,
        body: { email_stats_id: bobReply.id, email_body: "<p>Later</p>", scheduled_time: later(days) },
      });
      expect(sent.status).toBe(200);
    }
    await expectExact(w, "replies scheduled");
    const [soonest] = (await outboundRepliesOf(ids["bob@count.example"]!)).sort((x, y) => x.scheduledAt!.getTime() - y.scheduledAt!.getTime());
    await setOutboundReply(soonest!.id, { status: "QUEUED" });
    await expectExact(w, "one scheduled reply taken to send");

    await callJson("/api/v1/master-inbox/push-to-subsequence", { method: "POST", apiKey: k, body: { email_lead_map_id: ids["dan@count.example"], sub_sequence_id: await subsequenceOf(k, a) } });
    await expectExact(w, "a push to a subsequence");

    expect((await callJson(`/api/v1/campaigns/${a}/leads/${await personOf(ids["cat@count.example"]!)}`, { method: "DELETE", apiKey: k })).status).toBe(200);
    await expectExact(w, "a record deleted from its campaign");
    expect((await callJson(`/api/v1/leads/${await personOf(ids["fay@count.example"]!)}`, { method: "DELETE", apiKey: k })).status).toBe(200);
    await expectExact(w, "a lead deleted from every campaign");

    // Client reassignment: Alpha joins the client, Beta leaves it.
    expect((await callJson(`/api/v1/campaigns/${a}/settings`, { method: "POST", apiKey: k, body: { client_id: w.clientId } })).status).toBe(200);
    await expectExact(w, "a campaign moved to the client");
    expect((await callJson(`/api/v1/campaigns/${b}/settings`, { method: "POST", apiKey: k, body: { client_id: null } })).status).toBe(200);
    await expectExact(w, "a campaign moved out of the client");

    expect((await callJson(`/api/v1/campaigns/${a}`, { method: "DELETE", apiKey: k })).status).toBe(200);
    await expectExact(w, "a campaign (of the client) deleted");
    expect((await callJson(`/api/v1/campaigns/${b}`, { method: "DELETE", apiKey: k })).status).toBe(200);
    await expectExact(w, "the last campaign deleted");
    expect(await inboxCounterTotal(w.accountId, w.clientId)).toBe(0);
  });
});


async function subsequenceOf(k: string, parent: number) {
  const created = await callJson<{ id: number }>("/api/v1/campaigns/create-subsequence", { method: "POST", apiKey: k, body: { parent_campaign_id: parent, name: "Follow-up" } });
  expect(created.status).toBe(200);
  return created.body.id;
}
