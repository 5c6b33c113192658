import { describe, expect, it } from "vitest";
import { campaignPeople, leadRow, recordsOf } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk, sleepingActiveCampaign } from "../campaigns/fixtures";
import { blockListEntry, campaignEmails, createList, importInto, leadIdsOf, listEmails } from "./fixtures";

interface PushData {
  campaign_id: number;
  total_leads: number;
  pushed: number;
  duplicates: number;
  blocked: number;
  unsubscribed: number;
}

const push = (apiKey: string, body: Record<string, unknown>) =>
  callJson<{ ok: boolean; data: PushData }>("/api/v1/leads/push-to-campaign", { method: "POST", apiKey, body });

describe("pushing list leads to campaigns", () => {
  it("adds a list's leads as add-leads would: records in DRAFTED, duplicates, block list and unsubscribes skipped", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    await importInto(account.apiKey, list, [
      { email: "ann@example.com", first_name: "Ann" },
      { email: "bob@example.com" },
      { email: "eve@blocked.example" },
      { email: "uma@example.com" },
    ]);
    // Blocked after import; uma unsubscribed from another campaign.
    await blockListEntry(account.id, "blocked.example");
    const other = await createCampaign(account.apiKey);
    const records = await addLeads(account.apiKey, other, ["uma@example.com"]);
    await ingestOk(account.apiKey, other, [{ event_id: "u1", type: "UNSUBSCRIBE", email_lead_map_id: records["uma@example.com"], occurred_at: "2026-11-01T09:00:00Z" }]);

    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["bob@example.com"]);
    const pushed = await push(account.apiKey, { campaignId: campaign, action: "copy", leadList: { listId: list } });
    expect(pushed.status).toBe(200);
    expect(pushed.body).toEqual({ ok: true, data: { campaign_id: campaign, total_leads: 4, pushed: 1, duplicates: 1, blocked: 1, unsubscribed: 1 } });
    expect(await campaignEmails(account.apiKey, campaign)).toEqual(["ann@example.com", "bob@example.com"]);
    const states = new Set((await recordsOf(campaign)).map((row) => row.state));
    expect([...states]).toEqual(["DRAFTED"]);
    expect(await listEmails(account.apiKey, list)).toHaveLength(4);

    const ignoring = await push(account.apiKey, {
      campaign_id: String(campaign),
      id: list,
      csvSettings: { ignoreGlobalBlockList: true, ignoreUnsubscribeList: true },
    });
    expect(ignoring.body.data).toEqual({ campaign_id: campaign, total_leads: 4, pushed: 2, duplicates: 2, blocked: 0, unsubscribed: 0 });
  });

  it("moves: the pushed leads leave the source list; a campaignName with no campaign creates a DRAFTED one", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    await importInto(account.apiKey, list, [{ email: "a@example.com" }, { email: "b@example.com" }, { email: "c@example.com" }]);
    await blockListEntry(account.id, "c@example.com");
    const ids = await leadIdsOf(list);

    const moved = await push(account.apiKey, { campaignName: "From the list", action: "move", leadList: { listId: list, leadIds: [ids["a@example.com"], ids["c@example.com"]] } });
    expect(moved.body.data).toMatchObject({ total_leads: 2, pushed: 1, blocked: 1 });
    const campaign = await callJson<{ name: string; status: string }>(`/api/v1/campaigns/${moved.body.data.campaign_id}`, { apiKey: account.apiKey });
    expect(campaign.body).toMatchObject({ name: "From the list", status: "DRAFTED" });
    // The blocked lead was not pushed, so it stays.
    expect(await listEmails(account.apiKey, list)).toEqual(["b@example.com", "c@example.com"]);

    const again = await push(account.apiKey, { campaignName: "From the list", leadList: { listId: list, allLeads: true } });
    expect(again.body.data.campaign_id).toBe(moved.body.data.campaign_id);
    expect(await campaignEmails(account.apiKey, moved.body.data.campaign_id)).toEqual(["a@example.com", "b@example.com"]);
  });

  it("has no 400-lead cap, takes leads by id without a list, and puts leads in the campaign's client scope", async () => {
    const account = await provisionAccount();
    const client = await createClient(account.apiKey);
    const list = await createList(account.apiKey);
    await importInto(account.apiKey, list, Array.from({ length: 1000 }, (_, i) => ({ email: `p${i}@bulk.example`, first_name: `P${i}` })));
    await importInto(account.apiKey, list, Array.from({ length: 200 }, (_, i) => ({ email: `q${i}@bulk.example` })));
    const campaign = await createCampaign(account.apiKey, { client_id: client });

    const pushed = await push(account.apiKey, { campaignId: campaign, leadList: { listId: list, allLeads: true } });
    expect(pushed.body.data).toMatchObject({ total_leads: 1200, pushed: 1200, duplicates: 0 });
    const people = await campaignPeople(campaign);
    const clients = people.map((lead) => lead.clientId ?? Number.NaN);
    expect({ n: people.length, client: Math.min(...clients), named: people.some((lead) => lead.firstName !== null) }).toEqual({ n: 1200, client, named: true });

    const ids = await leadIdsOf(list);
    const byIds = await createCampaign(account.apiKey);
    const direct = await push(account.apiKey, { campaignId: byIds, leadList: { leadIds: [ids["p1@bulk.example"], String(ids["p2@bulk.example"])] } });
    expect(direct.body.data).toMatchObject({ total_leads: 2, pushed: 2 });

    const nothing = await push(account.apiKey, { campaignId: byIds, leadList: {} });
    expect(nothing.status).toBe(422);
  });

  it("counts every lead once when allLeads copies the account's leads into a client's campaign", async () => {
    const account = await provisionAccount();
    const client = await createClient(account.apiKey);
    const list = await createList(account.apiKey);
    await importInto(account.apiKey, list, [{ email: "a@example.com" }, { email: "b@example.com" }]);
    const campaign = await createCampaign(account.apiKey, { client_id: client });

    const pushed = await push(account.apiKey, { campaignId: campaign, leadList: { allLeads: true } });
    // The copies made in the client's scope are new leads the owner sees, but not what it pushed.
    expect(pushed.body.data).toEqual({ campaign_id: campaign, total_leads: 2, pushed: 2, duplicates: 0, blocked: 0, unsubscribed: 0 });
    expect(await campaignEmails(account.apiKey, campaign)).toEqual(["a@example.com", "b@example.com"]);
  });

  it("wakes an ACTIVE campaign's senders when the push adds records", async () => {
    const { apiKey, campaign, woken } = await sleepingActiveCampaign("first@example.com");

    const list = await createList(apiKey);
    await importInto(apiKey, list, [{ email: "second@example.com" }]);
    expect((await push(apiKey, { campaignId: campaign, leadList: { listId: list } })).body.data.pushed).toBe(1);
    await woken();
  });

  it("answers 404 for another tenant's list or campaign and pushes nothing", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const list = await createList(owner.apiKey);
    await importInto(owner.apiKey, list, [{ email: "a@example.com" }]);
    const theirs = await createCampaign(stranger.apiKey);
    const mine = await createCampaign(owner.apiKey);
    expect((await push(stranger.apiKey, { campaignId: theirs, leadList: { listId: list } })).body).toEqual({ error: "Lead list not found" });
    expect((await push(owner.apiKey, { campaignId: theirs, leadList: { listId: list } })).body).toEqual({ error: "Campaign not found" });
    const ids = await leadIdsOf(list);
    const foreignLeads = await push(stranger.apiKey, { campaignId: theirs, leadList: { leadIds: [ids["a@example.com"]] } });
    expect(foreignLeads.body.data).toMatchObject({ total_leads: 0, pushed: 0 });
    expect(await campaignEmails(stranger.apiKey, theirs)).toEqual([]);
    expect(await campaignEmails(owner.apiKey, mine)).toEqual([]);
  });
});

describe("moving leads between lists and campaigns", () => {
  it("copies and moves between lists (VQ/OC names, BC names, DL's move-leads)", async () => {
    const account = await provisionAccount();
    const from = await createList(account.apiKey, { listName: "From" });
    const to = await createList(account.apiKey, { listName: "To" });
    await importInto(account.apiKey, from, [{ email: "a@example.com" }, { email: "b@example.com" }, { email: "c@example.com" }]);
    const ids = await leadIdsOf(from);

    const copied = await callJson("/api/v1/leads/leads/push-between-lists", { method: "POST", apiKey: account.apiKey, body: { action: "copy", fromListId: from, toListId: to, leadIds: [ids["a@example.com"]] } });
    expect(copied.body).toEqual({ ok: true, data: { total_leads_moved: 1 } });
    expect(await listEmails(account.apiKey, from)).toHaveLength(3);

    const movedBc = await callJson("/api/v1/leads/leads/push-between-lists", { method: "POST", apiKey: account.apiKey, body: { move: true, from_list_id: from, to_list_id: to, lead_ids: [ids["b@example.com"]] } });
    expect(movedBc.body).toEqual({ ok: true, data: { total_leads_moved: 1 } });
    expect(await listEmails(account.apiKey, from)).toEqual(["a@example.com", "c@example.com"]);

    const dl = await callJson("/api/v1/lead-list/move-leads", { method: "POST", apiKey: account.apiKey, body: { sourceListId: from, targetListId: to, allLeads: true } });
    expect(dl.body).toEqual({ ok: true, data: { total_leads_moved: 2 } });
    expect(await listEmails(account.apiKey, from)).toEqual([]);
    expect(await listEmails(account.apiKey, to)).toEqual(["a@example.com", "b@example.com", "c@example.com"]);

    const neither = await callJson("/api/v1/leads/leads/push-between-lists", { method: "POST", apiKey: account.apiKey, body: { toListId: to } });
    expect(neither.status).toBe(422);
  });

  it("push-to-list adds leads to a list (move: out of the caller's other lists)", async () => {
    const account = await provisionAccount();
    const one = await createList(account.apiKey, { listName: "One" });
    const two = await createList(account.apiKey, { listName: "Two" });
    await importInto(account.apiKey, one, [{ email: "a@example.com" }, { email: "b@example.com" }]);
    const ids = await leadIdsOf(one);

    const copied = await callJson("/api/v1/leads/push-to-list", { method: "POST", apiKey: account.apiKey, body: { listId: two, leadIds: [ids["a@example.com"]] } });
    expect(copied.body).toEqual({ ok: true, data: { total_leads: 1 } });
    expect(await listEmails(account.apiKey, one)).toHaveLength(2);
    const moved = await callJson("/api/v1/leads/push-to-list", { method: "POST", apiKey: account.apiKey, body: { listId: two, leadIds: [ids["b@example.com"]], action: "move" } });
    expect(moved.body).toEqual({ ok: true, data: { total_leads: 1 } });
    expect(await listEmails(account.apiKey, one)).toEqual(["a@example.com"]);
    expect(await listEmails(account.apiKey, two)).toEqual(["a@example.com", "b@example.com"]);
  });

  it("keeps a list to its own client scope: the owner's pushes of client A's leads into B's list put B's leads there, and B's key neither reads nor changes A's rows", async () => {
    const account = await provisionAccount();
    const [a, b] = [await createClient(account.apiKey, "A", "a@a.example"), await createClient(account.apiKey, "B", "b@b.example")];
    const [keyA, keyB] = [(await createClientKey(account.apiKey, a)).api_key, (await createClientKey(account.apiKey, b)).api_key];
    const aList = await createList(keyA, { listName: "A's" });
    await importInto(keyA, aList, [{ email: "ann@example.com", first_name: "Ann" }, { email: "bob@example.com" }, { email: "dan@example.com", first_name: "A's Dan" }]);
    const aCampaign = await createCampaign(keyA);
    await addLeads(keyA, aCampaign, ["cy@example.com"]);
    const bList = await createList(keyB, { listName: "B's" });
    await importInto(keyB, await createList(keyB, { listName: "B's other" }), [{ email: "dan@example.com", first_name: "B's Dan" }]);
    const ids = await leadIdsOf(aList);
    const aLeads = [...Object.values(ids), ...(await recordsOf(aCampaign)).map((row) => row.leadId)];
    const aRows = await Promise.all(aLeads.map(leadRow));

    const post = (path: string, body: Record<string, unknown>) => callJson(path, { method: "POST", apiKey: account.apiKey, body });
    expect((await post("/api/v1/leads/push-to-list", { listId: bList, leadIds: [ids["ann@example.com"], ids["dan@example.com"]] })).body).toEqual({ ok: true, data: { total_leads: 2 } });
    expect((await post("/api/v1/leads/leads/push-between-lists", { fromListId: aList, toListId: bList, leadIds: [ids["bob@example.com"]] })).body).toEqual({ ok: true, data: { total_leads_moved: 1 } });
    expect((await post("/api/v1/leads/campaign/push-to-list", { campaignId: aCampaign, listId: bList, allLeads: true })).body).toEqual({ ok: true, data: { total_leads: 1 } });

    const members = await callJson<{ data: { id: number; email: string; first_name: string | null }[] }>(`/api/v1/lead-list/${bList}/leads`, { apiKey: keyB });
    expect(members.body.data.map((lead) => lead.email).sort()).toEqual(["ann@example.com", "bob@example.com", "cy@example.com", "dan@example.com"]);
    expect(members.body.data.filter((lead) => aLeads.includes(lead.id)), "none of A's rows in B's list").toEqual([]);
    expect(await Promise.all(members.body.data.map(async (lead) => (await leadRow(lead.id)).clientId))).toEqual([b, b, b, b]);
    // A new address comes in with the fields A's lead had; one B already has keeps B's.
    const byEmail = Object.fromEntries(members.body.data.map((lead) => [lead.email, lead]));
    expect([byEmail["ann@example.com"]!.first_name, byEmail["dan@example.com"]!.first_name]).toEqual(["Ann", "B's Dan"]);

    const change = (id: number) => callJson(`/api/v1/leads/${id}`, { method: "PUT", apiKey: keyB, body: { first_name: "Changed by B" } });
    expect((await change(byEmail["ann@example.com"]!.id)).status).toBe(200);
    expect((await change(ids["ann@example.com"]!)).status).toBe(404);
    expect(await Promise.all(aLeads.map(leadRow)), "A's rows as they were").toEqual(aRows);
    expect(await listEmails(keyA, aList)).toEqual(["ann@example.com", "bob@example.com", "dan@example.com"]);
  });

  it("campaign/push-to-list puts records' leads in the list and takes the records out of the campaign", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    const campaign = await createCampaign(account.apiKey);
    const records = await addLeads(account.apiKey, campaign, ["a@example.com", "b@example.com", "c@example.com"]);

    const some = await callJson("/api/v1/leads/campaign/push-to-list", { method: "POST", apiKey: account.apiKey, body: { campaignId: campaign, listId: list, leadMapIds: [records["a@example.com"]] } });
    expect(some.body).toEqual({ ok: true, data: { total_leads: 1 } });
    expect(await campaignEmails(account.apiKey, campaign)).toEqual(["b@example.com", "c@example.com"]);
    const all = await callJson("/api/v1/leads/campaign/push-to-list", { method: "POST", apiKey: account.apiKey, body: { campaignId: campaign, listId: list, allLeads: true } });
    expect(all.body).toEqual({ ok: true, data: { total_leads: 2 } });
    expect(await campaignEmails(account.apiKey, campaign)).toEqual([]);
    expect(await listEmails(account.apiKey, list)).toEqual(["a@example.com", "b@example.com", "c@example.com"]);
  });
});
