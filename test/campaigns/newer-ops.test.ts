import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { callJson, createClient, createClientKey, env, fileEnv, fileShard, provisionAccount } from "../helpers";
import { addLeads, type Body, createCampaign, del, get, ingestOk, post } from "./fixtures";
import { createMailbox } from "../mailboxes/fixtures";

/** CONTRACT 21.1: the hosted service's newer campaign operations. */

async function tagId(apiKey: string, name: string): Promise<number> {
  const { status, body } = await post(apiKey, "/api/v1/tags", { name });
  expect(status).toBe(200);
  return (body.data as { id: number }).id;
}

async function campaignTags(apiKey: string, campaign: number): Promise<number[]> {
  const { body } = await get(apiKey, `/api/v1/campaigns/${campaign}`);
  return (body.tags as { id: number }[]).map((tag) => tag.id).sort((a, b) => a - b);
}

async function connect(mailboxId: number, smtp: boolean | null, imap: boolean | null) {
  await fileEnv().DB.prepare("UPDATE email_accounts SET is_smtp_success = ?, is_imap_success = ? WHERE id = ?").bind(smtp, imap, mailboxId).run();
}

describe("bulk campaign tags", () => {
  it("adds and removes every pair, idempotently, and counts what was there", async () => {
    const { apiKey } = await provisionAccount();
    const [a, b] = [await createCampaign(apiKey), await createCampaign(apiKey)];
    const [t1, t2] = [await tagId(apiKey, "alpha"), await tagId(apiKey, "beta")];
    const first = await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [a, b], tagIds: [t1] });
    expect(first).toEqual({
      status: 200,
      body: { ok: true, message: "Tags added to campaigns successfully!", campaign_ids: [a, b], tag_ids: [t1], requested: 2, added: 2, already_present: 0 },
    });
    const again = await post(apiKey, "/api/v1/campaigns/tags", { campaign_ids: [String(a), b], tag_ids: [t1, t2] });
    expect(again.body).toMatchObject({ requested: 4, added: 2, already_present: 2 });
    expect(await campaignTags(apiKey, a)).toEqual([t1, t2].sort((x, y) => x - y));
    const removed = await del(apiKey, "/api/v1/campaigns/tags", { campaignIds: [a], tagIds: [t1, t2] });
    expect(removed.body).toMatchObject({ ok: true, message: "Tags removed from campaigns successfully!", requested: 2, removed: 2, not_present: 0 });
    expect((await del(apiKey, "/api/v1/campaigns/tags", { campaignIds: [a], tagIds: [t1] })).body).toMatchObject({ removed: 0, not_present: 1 });
    expect(await campaignTags(apiKey, a)).toEqual([]);
    expect(await campaignTags(apiKey, b)).toEqual([t1, t2].sort((x, y) => x - y));
  });

  it("changes nothing when one campaign or tag is not the caller's, and names them", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const mine = await createCampaign(apiKey);
    const theirs = await createCampaign(other.apiKey);
    const tag = await tagId(apiKey, "gamma");
    const theirTag = await tagId(other.apiKey, "gamma");
    expect(await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [mine, theirs], tagIds: [tag] })).toEqual({
      status: 404,
      body: { ok: false, error: "Campaigns not found - one or more campaignIds are invalid.", not_found_campaign_ids: [theirs] },
    });
    const tags = await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [mine], tagIds: [tag, theirTag] });
    expect(tags.status).toBe(404);
    expect(tags.body.not_found_tag_ids).toEqual([theirTag]);
    expect(await campaignTags(apiKey, mine)).toEqual([]);
  });

  it("puts on a campaign only its own scope's tags: another client's, or the account's on a client's campaign, answer 400 and change nothing", async () => {
    const { apiKey } = await provisionAccount();
    const [x, y] = [await createClient(apiKey, "X", "x@x.example"), await createClient(apiKey, "Y", "y@y.example")];
    const [xKey, yKey] = [(await createClientKey(apiKey, x)).api_key, (await createClientKey(apiKey, y)).api_key];
    const yCampaign = await createCampaign(yKey);
    const accountCampaign = await createCampaign(apiKey);
    const [xTag, yTag, accountTag] = [await tagId(xKey, "x-only"), await tagId(yKey, "y-only"), await tagId(apiKey, "account")];
    for (const [campaign, tag] of [[yCampaign, xTag], [yCampaign, accountTag], [accountCampaign, yTag]] as const) {
      const refused = await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [yCampaign, accountCampaign].filter((id) => id === campaign), tagIds: [tag] });
      expect(refused.status, `tag ${tag} on campaign ${campaign}`).toBe(400);
      expect(refused.body.error).toContain(`Tag ${tag} is not one of campaign ${campaign}'s tags`);
    }
    expect(await campaignTags(yKey, yCampaign), "the client's campaign shows no other scope's tag").toEqual([]);
    expect((await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [yCampaign], tagIds: [yTag] })).body).toMatchObject({ ok: true, added: 1 });
    expect((await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [accountCampaign], tagIds: [accountTag] })).body).toMatchObject({ ok: true, added: 1 });
    expect(await campaignTags(yKey, yCampaign)).toEqual([yTag]);
  });

  it("a campaign given to another client (assign-client) leaves its old scope's tags", async () => {
    const { apiKey } = await provisionAccount();
    const [x, y] = [await createClient(apiKey, "X", "x@x.example"), await createClient(apiKey, "Y", "y@y.example")];
    const [xKey, yKey] = [(await createClientKey(apiKey, x)).api_key, (await createClientKey(apiKey, y)).api_key];
    const xCampaign = await createCampaign(xKey);
    const xTag = await tagId(xKey, "x-only");
    expect((await post(apiKey, "/api/v1/campaigns/tags", { campaignIds: [xCampaign], tagIds: [xTag] })).body).toMatchObject({ ok: true, added: 1 });
    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: xCampaign, clientId: y })).status).toBe(200);
    expect(await campaignTags(yKey, xCampaign), "the new client reads no old scope's tag name").toEqual([]);
    expect(await campaignTags(apiKey, xCampaign)).toEqual([]);
  });

  it("refuses bad input with 422", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    for (const body of [{}, { campaignIds: [campaign] }, { campaignIds: [], tagIds: [1] }, { campaignIds: Array.from({ length: 101 }, (_, i) => i + 1), tagIds: [1] }, { campaignIds: ["x"], tagIds: [1] }]) {
      const answer = await post(apiKey, "/api/v1/campaigns/tags", body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.error).toBe("Validation failed");
    }
  });
});

describe("campaign folders", () => {
  it("files campaigns, counts them, filters the list and unfiles them when the folder goes", async () => {
    const { apiKey } = await provisionAccount();
    const [a, b, c] = [await createCampaign(apiKey), await createCampaign(apiKey), await createCampaign(apiKey)];
    const created = await post(apiKey, "/api/v1/campaigns/folders", { name: "Q1" });
    expect(created.status).toBe(200);
    const folder = (created.body.data as { id: number; name: string }).id;
    expect(created.body.data).toMatchObject({ id: folder, name: "Q1" });
    const moved = await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [a, b, 999_999_999], folder_id: folder });
    expect(moved).toEqual({ status: 200, body: { ok: true, requested: 3, updated: 2, updated_campaign_ids: [a, b], not_found_campaign_ids: [999_999_999] } });
    expect((await get(apiKey, `/api/v1/campaigns/${a}`)).body.folder_id).toBe(folder);
    expect((await get(apiKey, `/api/v1/campaigns/${c}`)).body.folder_id).toBeNull();
    const listed = await callJson<{ id: number }[]>(`/api/v1/campaigns?folder_id=${folder}`, { apiKey });
    expect(listed.body.map((row) => row.id)).toEqual([a, b]);
    expect((await get(apiKey, "/api/v1/campaigns/folders")).body.data).toEqual([{ id: folder, name: "Q1", campaign_count: 2, created_at: expect.any(String) }]);
    expect((await post(apiKey, "/api/v1/campaigns/update-folder", { campaign_ids: [b], folder_id: null })).body).toMatchObject({ updated: 1 });
    expect((await get(apiKey, `/api/v1/campaigns/${b}`)).body.folder_id).toBeNull();
    expect((await del(apiKey, `/api/v1/campaigns/folders/${folder}`)).body).toMatchObject({ ok: true });
    expect((await get(apiKey, `/api/v1/campaigns/${a}`)).body.folder_id).toBeNull();
    expect((await get(apiKey, "/api/v1/campaigns/folders")).body.data).toEqual([]);
  });

  it("answers 404 for a folder or campaigns not the caller's, and keeps clients apart", async () => {
    const { apiKey } = await provisionAccount();
    const client = await createClient(apiKey, "C1", "c1@example.com");
    const clientKey = (await createClientKey(apiKey, client)).api_key;
    const accountFolder = ((await post(apiKey, "/api/v1/campaigns/folders", { name: "Account's" })).body.data as { id: number }).id;
    const clientCampaign = await createCampaign(clientKey);
    expect(await post(clientKey, "/api/v1/campaigns/update-folder", { campaign_ids: [clientCampaign], folder_id: accountFolder })).toEqual({
      status: 404,
      body: { ok: false, error: "Folder not found - Invalid folder_id." },
    });
    expect((await del(clientKey, `/api/v1/campaigns/folders/${accountFolder}`)).status).toBe(404);
    expect((await get(clientKey, "/api/v1/campaigns/folders")).body.data).toEqual([]);
    const accountCampaign = await createCampaign(apiKey);
    const noCampaign = await post(clientKey, "/api/v1/campaigns/update-folder", { campaign_ids: [accountCampaign], folder_id: null });
    expect(noCampaign.status).toBe(404);
    expect(noCampaign.body.not_found_campaign_ids).toEqual([accountCampaign]);
    expect((await post(apiKey, "/api/v1/campaigns/folders", { name: "" })).status).toBe(422);
  });

  it("answers 404 and files nothing when the folder is deleted between the filing's check and its write", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const folder = ((await post(apiKey, "/api/v1/campaigns/folders", { name: "Going" })).body.data as { id: number }).id;
    // The filing's database, real, but the folder's delete request runs (to its end) right after the filing has read the folder.
    let deleted: Body | undefined;
    const shardDb = fileEnv().DB;
    const binding = fileShard() === 0 ? "DB" : `DB_${fileShard()}`;
    const afterFolderRead = (statement: D1PreparedStatement): D1PreparedStatement =>
      new Proxy(statement, {
        get(target, property) {
          if (property === "bind") return (...values: unknown[]) => afterFolderRead(target.bind(...values));
          const value = Reflect.get(target, property) as unknown;
          if (typeof value !== "function") return value;
          if (!["all", "raw", "first", "run"].includes(String(property)) || deleted) return value.bind(target);
          return async (...args: unknown[]) => {
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            deleted = (await del(apiKey, `/api/v1/campaigns/folders/${folder}`)).body;
            return result;
          };
        },
      });
    const racing = new Proxy(shardDb, {
      get(target, property) {
        if (property === "prepare") return (query: string) => (/from "campaign_folders"/i.test(query) && !deleted ? afterFolderRead(target.prepare(query)) : target.prepare(query));
        const value = Reflect.get(target, property) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const request = new Request("http://salvo.test/api/v1/campaigns/update-folder", {
      method: "POST",
      headers: { "X-API-Key": apiKey, "Content-Type": "application/json", "CF-Connecting-IP": "10.9.8.7" },
      body: JSON.stringify({ campaign_ids: [campaign], folder_id: folder }),
    });
    const filed = await worker.fetch(request, { ...env, [binding]: racing }, createExecutionContext());
    expect(deleted, "the delete ran in between").toMatchObject({ ok: true });
    expect({ status: filed.status, body: await filed.json() }).toEqual({ status: 404, body: { ok: false, error: "Folder not found - Invalid folder_id." } });
    expect((await get(apiKey, `/api/v1/campaigns/${campaign}`)).body.folder_id).toBeNull();
  });
});

describe("assign-client", () => {
  it("gives the campaign and its subsequences to the client, and blocks the client's listed leads when asked", async () => {
    const { apiKey } = await provisionAccount();
    const client = await createClient(apiKey, "C1", "c1@example.com");
    const campaign = await createCampaign(apiKey);
    const sub = await post(apiKey, "/api/v1/campaigns/create-subsequence", { parent_campaign_id: campaign, subsequence_name: "Follow" });
    const subId = sub.body.id as number;
    const records = await addLeads(apiKey, campaign, ["keep@ok.example", "drop@blocked.example"]);
    expect((await post(apiKey, "/api/v1/leads/add-domain-block-list", { domain_block_list: ["blocked.example"], client_id: client })).status).toBe(200);
    const assigned = await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: client, applyClientDNC: true });
    expect(assigned).toEqual({ status: 200, body: { ok: true, message: "success", client: { id: client, email: "c1@example.com" } } });
    expect((await get(apiKey, `/api/v1/campaigns/${campaign}`)).body.client_id).toBe(client);
    expect((await get(apiKey, `/api/v1/campaigns/${subId}`)).body.client_id).toBe(client);
    const states = await fileEnv().DB.prepare("SELECT id, state FROM campaign_leads WHERE campaign_id = ? ORDER BY id").bind(campaign).all<{ id: number; state: string }>();
    expect(Object.fromEntries(states.results.map((row) => [row.id, row.state]))).toEqual({
      [records["keep@ok.example"]!]: "DRAFTED",
      [records["drop@blocked.example"]!]: "BLOCKED",
    });
    expect(await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: client })).toEqual({
      status: 400,
      body: { error: "Cannot assign the same client to the campaign" },
    });
    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: subId, clientId: null })).body).toEqual({ error: "Cannot assign client to a sub sequence!" });
    const back = await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: null });
    expect(back.body).toEqual({ ok: true, message: "success", client: null });
    expect((await get(apiKey, `/api/v1/campaigns/${subId}`)).body.client_id).toBeNull();
  });

  it("refuses another account's client and campaign, a client key, and bad input", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const theirClient = await createClient(other.apiKey, "Theirs", "t@example.com");
    const campaign = await createCampaign(apiKey);
    expect(await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: theirClient })).toEqual({ status: 400, body: { error: "Client not found" } });
    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: await createCampaign(other.apiKey), clientId: null })).status).toBe(404);
    const client = await createClient(apiKey, "Mine", "m@example.com");
    const clientKey = (await createClientKey(apiKey, client)).api_key;
    expect((await post(clientKey, "/api/v1/campaigns/assign-client", { campaignId: campaign, clientId: client })).status).toBe(401);
    expect((await post(apiKey, "/api/v1/campaigns/assign-client", { campaignId: campaign })).status).toBe(422);
  });
});

describe("spintax distribution mode", () => {
  it("is set on a drafted campaign only and numbers records 0, 1, 2 ... per campaign", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    expect((await get(apiKey, `/api/v1/campaigns/${campaign}`)).body.spintax_distribution_mode).toBe(2);
    expect(await post(apiKey, "/api/v1/campaigns/spintax-distribution-mode", { campaignId: campaign, spintaxDistributionMode: 1 })).toEqual({ status: 200, body: { ok: true } });
    expect((await get(apiKey, `/api/v1/campaigns/${campaign}`)).body.spintax_distribution_mode).toBe(1);
    expect((await post(apiKey, "/api/v1/campaigns/spintax-distribution-mode", { campaignId: campaign, spintaxDistributionMode: 3 })).status).toBe(422);
    await addLeads(apiKey, campaign, ["a@x.example", "b@x.example"]);
    await addLeads(apiKey, campaign, ["c@x.example"]);
    const other = await createCampaign(apiKey);
    await addLeads(apiKey, other, ["c@x.example"]);
    const page = await post(apiKey, `/api/v1/campaigns/${campaign}/leads/filter`, {});
    expect((page.body.leads as { spintax_modulo_index: number }[]).map((lead) => lead.spintax_modulo_index)).toEqual([0, 1, 2]);
    const theirs = await post(apiKey, `/api/v1/campaigns/${other}/leads/filter`, {});
    expect((theirs.body.leads as { spintax_modulo_index: number }[]).map((lead) => lead.spintax_modulo_index)).toEqual([0]);
    await fileEnv().DB.prepare("UPDATE campaigns SET status = 'ACTIVE' WHERE id = ?").bind(campaign).run();
    expect(await post(apiKey, "/api/v1/campaigns/spintax-distribution-mode", { campaignId: campaign, spintaxDistributionMode: 2 })).toEqual({
      status: 400,
      body: { error: "Campaign is not in draft mode." },
    });
  });
});

describe("mailboxes by tag", () => {
  it("attaches the tagged mailboxes, skips disconnected ones when asked, and counts what was attached", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const tag = await tagId(apiKey, "pool");
    const [up, down, untagged] = [await createMailbox(apiKey), await createMailbox(apiKey), await createMailbox(apiKey)];
    await connect(up.id, true, true);
    await connect(down.id, false, true);
    await connect(untagged.id, true, true);
    expect((await post(apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [up.id, down.id], tag_ids: [tag] })).status).toBe(200);
    const connected = await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag`, { tag_ids: [tag], only_connected: true });
    expect(connected.status).toBe(200);
    expect(connected.body).toMatchObject({
      ok: true,
      added_count: 1,
      already_associated_count: 0,
      tag_resolution: { matched_tags: [{ id: tag, name: "pool" }], resolved_account_count: 2, disconnected_account_count: 1, skipped_disconnected_count: 1 },
    });
    expect(connected.body.result).toEqual([{ id: expect.any(Number), email_campaign_id: campaign, email_account_id: up.id }]);
    const all = await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag`, { tag_ids: [tag] });
    expect(all.body).toMatchObject({ added_count: 1, already_associated_count: 1, tag_resolution: { skipped_disconnected_count: 0 } });
    const attached = await callJson<{ id: number }[]>(`/api/v1/campaigns/${campaign}/email-accounts`, { apiKey });
    expect(attached.body.map((row) => row.id).sort((a, b) => a - b)).toEqual([up.id, down.id].sort((a, b) => a - b));
    const none = await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag`, { tag_ids: [await tagId(apiKey, "empty")] });
    expect(none.body).toMatchObject({ ok: true, result: [], added_count: 0, message: "No mailboxes carry the requested tag(s)." });
  });

  it("refuses a tag not the caller's, a campaign over max_limit and bad input", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const theirTag = await tagId(other.apiKey, "theirs");
    expect(await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag`, { tag_ids: [theirTag] })).toEqual({
      status: 400,
      body: { error: `Tag id - ${theirTag} not allowed. Permission Error.` },
    });
    const tag = await tagId(apiKey, "two");
    const boxes = [await createMailbox(apiKey), await createMailbox(apiKey)];
    await post(apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: boxes.map((box) => box.id), tag_ids: [tag] });
    const over = await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag?max_limit=1`, { tag_ids: [tag] });
    expect(over.status).toBe(400);
    expect((await callJson<unknown[]>(`/api/v1/campaigns/${campaign}/email-accounts`, { apiKey })).body).toEqual([]);
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag?max_limit=5001`, { tag_ids: [tag] })).status).toBe(422);
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag`, { tag_ids: [] })).status).toBe(422);
    expect((await post(other.apiKey, `/api/v1/campaigns/${campaign}/email-accounts/by-tag`, { tag_ids: [theirTag] })).status).toBe(404);
  });
});

describe("reallocate-mailboxes", () => {
  it("moves records off a detached mailbox onto the usable attached ones, STARTED and finished ones left alone", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    expect(await post(apiKey, `/api/v1/campaigns/${campaign}/reallocate-mailboxes`)).toEqual({
      status: 400,
      body: { error: "No email accounts are attached to this campaign." },
    });
    const [gone, stays, broken] = [await createMailbox(apiKey), await createMailbox(apiKey), await createMailbox(apiKey)];
    await connect(stays.id, true, true);
    await connect(broken.id, false, null);
    await post(apiKey, `/api/v1/campaigns/${campaign}/email-accounts`, { email_account_ids: [stays.id, broken.id] });
    const records = await addLeads(apiKey, campaign, ["r1@x.example", "r2@x.example", "r3@x.example", "r4@x.example"]);
    const pin = (email: string, state: string) =>
      fileEnv().DB.prepare("UPDATE campaign_leads SET email_account_id = ?, state = ? WHERE id = ?").bind(gone.id, state, records[email]).run();
    await pin("r1@x.example", "INPROGRESS");
    await pin("r2@x.example", "STARTED");
    await pin("r3@x.example", "COMPLETED");
    expect(await post(apiKey, `/api/v1/campaigns/${campaign}/reallocate-mailboxes`, { from_email_account_ids: [stays.id] })).toEqual({
      status: 400,
      body: { error: `Email account ${stays.id} is still attached to this campaign.` },
    });
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/reallocate-mailboxes`, { from_email_account_ids: [gone.id, gone.id] })).status).toBe(422);
    const moved = await post(apiKey, `/api/v1/campaigns/${campaign}/reallocate-mailboxes`, { from_email_account_ids: [gone.id] });
    expect(moved).toEqual({ status: 200, body: { ok: true, leads_reallocated: 1, to_email_account_ids: [stays.id] } });
    const rows = await fileEnv().DB.prepare("SELECT id, email_account_id FROM campaign_leads WHERE campaign_id = ? ORDER BY id").bind(campaign).all<{ id: number; email_account_id: number | null }>();
    expect(rows.results).toEqual([
      { id: records["r1@x.example"], email_account_id: stays.id },
      { id: records["r2@x.example"], email_account_id: gone.id },
      { id: records["r3@x.example"], email_account_id: gone.id },
      { id: records["r4@x.example"], email_account_id: null },
    ]);
    // Without from_email_account_ids, records pinned to none are given one too.
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/reallocate-mailboxes`, {})).body).toEqual({ ok: true, leads_reallocated: 1, to_email_account_ids: [stays.id] });
  });
});

describe("lead filter and status summary", () => {
  async function world() {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const records = await addLeads(apiKey, campaign, ["ann.lee@acme.example", "bob@acme.example", "cy@other.example", "dee@other.example"]);
    await ingestOk(apiKey, campaign, [
      { event_id: "s1", type: "SENT", email_lead_map_id: records["ann.lee@acme.example"], occurred_at: "2026-11-01T09:00:00Z", sequence_number: 1 },
      { event_id: "r1", type: "REPLY", email_lead_map_id: records["ann.lee@acme.example"], occurred_at: "2026-11-01T10:00:00Z", body: "Yes", message_id: "<r1@x>" },
      { event_id: "s2", type: "SENT", email_lead_map_id: records["bob@acme.example"], occurred_at: "2026-11-01T09:00:00Z", sequence_number: 1 },
      { event_id: "s3", type: "SENT", email_lead_map_id: records["cy@other.example"], occurred_at: "2026-11-01T09:00:00Z", sequence_number: 1 },
      { event_id: "r3", type: "REPLY", email_lead_map_id: records["cy@other.example"], occurred_at: "2026-11-02T10:00:00Z", body: "Later", message_id: "<r3@x>" },
    ]);
    await fileEnv().DB.prepare("UPDATE campaign_leads SET state = 'PAUSED' WHERE id = ?").bind(records["dee@other.example"]).run();
    return { apiKey, campaign, records };
  }

  const ids = (body: Body) => (body.leads as { id: number }[]).map((lead) => lead.id);

  it("filters by words, statuses and email statuses, a page at a time", async () => {
    const { apiKey, campaign, records } = await world();
    const filter = (body: unknown) => post(apiKey, `/api/v1/campaigns/${campaign}/leads/filter`, body);
    expect(ids((await filter({ searchText: "ACME ann" })).body)).toEqual([records["ann.lee@acme.example"]]);
    expect(ids((await filter({ leadStatuses: ["PAUSED"] })).body)).toEqual([records["dee@other.example"]]);
    expect(ids((await filter({ emailStatuses: ["is_replied"] })).body)).toEqual([records["ann.lee@acme.example"], records["cy@other.example"]]);
    expect(ids((await filter({ emailStatuses: ["not_replied"], sequenceNumbers: [1] })).body)).toEqual([records["bob@acme.example"]]);
    const first = await filter({ limit: 3 });
    expect(first.body).toMatchObject({ count: 4, lastSeenEclmId: records["cy@other.example"] });
    const lead = (first.body.leads as Record<string, unknown>[])[0]!;
    expect(lead).toEqual({
      id: records["ann.lee@acme.example"],
      current_seq_num: 1,
      status: expect.any(String),
      email_account_id: null,
      spintax_modulo_index: 0,
      email_lead: expect.objectContaining({ email: "ann.lee@acme.example", esp_domain_type: 0 }),
      email_account: null,
    });
    const rest = await filter({ limit: 3, lastSeenLeadId: first.body.lastSeenEclmId });
    expect(rest.body).toMatchObject({ count: 4, lastSeenEclmId: null });
    expect(ids(rest.body)).toEqual([records["dee@other.example"]]);
    expect((await callJson(`/api/v1/campaigns/${campaign}/leads/filter`, { method: "POST", apiKey })).status).toBe(200);
  });

  it("answers the active table latest reply first, with its messages, and cursors on the reply time", async () => {
    const { apiKey, campaign, records } = await world();
    const filter = (body: unknown) => post(apiKey, `/api/v1/campaigns/${campaign}/leads/filter`, body);
    const first = await filter({ fieldSet: "active_table", statusFilter: "replied", limit: 1 });
    expect(ids(first.body)).toEqual([records["cy@other.example"]]);
    expect(first.body.lastSeenReplyTime).toBe("2026-11-02T10:00:00.000Z");
    const item = (first.body.leads as Record<string, Record<string, unknown>>[])[0]!;
    expect(item.latest_reply_stats).toMatchObject({ type: "REPLY", email_body: "Later" });
    expect(item.latest_email_stats).toMatchObject({ type: "SENT" });
    expect(item.matched_status_stats).toMatchObject({ type: "REPLY" });
    expect(item.email_lead).toMatchObject({ seg_type: null });
    const next = await filter({ fieldSet: "active_table", statusFilter: "replied", limit: 1, lastSeenLeadId: first.body.lastSeenEclmId, lastSeenReplyTime: first.body.lastSeenReplyTime });
    expect(ids(next.body)).toEqual([records["ann.lee@acme.example"]]);
    expect(next.body.lastSeenEclmId).toBeNull();
  });

  it("counts each status group, and keeps another tenant's campaign out", async () => {
    const { apiKey, campaign } = await world();
    expect(await get(apiKey, `/api/v1/campaigns/${campaign}/lead-status-summary`)).toEqual({
      status: 200,
      body: { ok: true, data: { all: 4, active: 1, replied: 2, failed: 0, scheduled: expect.any(Number), manual_followups: 0, completed: 2, paused: 1 } },
    });
    const other = await provisionAccount();
    expect((await get(other.apiKey, `/api/v1/campaigns/${campaign}/lead-status-summary`)).status).toBe(404);
    expect((await post(other.apiKey, `/api/v1/campaigns/${campaign}/leads/filter`, {})).status).toBe(404);
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads/filter`, { limit: 101 })).status).toBe(422);
    expect((await post(apiKey, `/api/v1/campaigns/${campaign}/leads/filter`, { leadStatuses: ["NOPE"] })).status).toBe(422);
  });
});
