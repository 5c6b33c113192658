import { describe, expect, it } from "vitest";
import { schema, testDb } from "../db";
import { accountWithTwoClients, callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createMailbox, readMailbox, storedMailbox, type EmailAccount } from "./fixtures";

interface Tag {
  id: number;
  name: string;
  color: string;
}

const post = <T = Record<string, unknown>>(apiKey: string, path: string, body?: unknown, method = "POST") => callJson<T>(path, { method, apiKey, body });

describe("mailbox tags", () => {
  it("creates, renames and lists tags from the catalogue campaign tags use", async () => {
    const account = await provisionAccount();
    const created = await post<{ ok: boolean; data: Tag }>(account.apiKey, "/api/v1/tags", { name: "Warm" });
    expect(created).toMatchObject({ status: 200, body: { ok: true, data: { name: "Warm", color: "#9E9E9E" } } });
    const again = await post<{ data: Tag }>(account.apiKey, "/api/v1/tags", { name: "Warm", color: "#112233" });
    expect(again.body.data).toEqual(created.body.data);

    const viaManager = await post<{ data: Tag }>(account.apiKey, "/api/v1/email-accounts/tag-manager", { name: "Cold", color: "#00ff00" });
    expect(viaManager.body.data).toMatchObject({ name: "Cold", color: "#00FF00" });
    const renamed = await post<{ data: Tag }>(account.apiKey, "/api/v1/email-accounts/tag-manager", { id: String(viaManager.body.data.id), name: "Frozen", color: "#0000FF" });
    expect(renamed.body.data).toEqual({ id: viaManager.body.data.id, name: "Frozen", color: "#0000FF" });
    expect(await post(account.apiKey, "/api/v1/email-accounts/tag-manager", { id: viaManager.body.data.id, name: "Warm" })).toMatchObject({ status: 400, body: { error: "Tag already exists" } });
    expect(await post(account.apiKey, "/api/v1/email-accounts/tag-manager", { id: 999999999, name: "X" })).toMatchObject({ status: 404, body: { error: "Tag not found" } });
    expect((await post(account.apiKey, "/api/v1/tags", { name: "Bad", color: "red" })).status).toBe(422);

    const campaign = await createCampaign(account.apiKey);
    await post(account.apiKey, `/api/v1/campaigns/${campaign}/tags`, { tags: ["Warm", "Campaign only"] });
    const list = await callJson<{ ok: boolean; data: Tag[] }>("/api/v1/email-accounts/tags/", { apiKey: account.apiKey });
    expect(list.body.ok).toBe(true);
    expect(list.body.data.map((t) => t.name)).toEqual(["Campaign only", "Frozen", "Warm"]);
    expect(list.body.data.find((t) => t.name === "Warm")!.id).toBe(created.body.data.id);
  });

  it("maps tags to mailboxes by id or address, idempotently, and reads them back", async () => {
    const account = await provisionAccount();
    const a = await createMailbox(account.apiKey, { from_email: "a@tags.example.com" });
    const b = await createMailbox(account.apiKey, { from_email: "b@tags.example.com" });
    const warm = (await post<{ data: Tag }>(account.apiKey, "/api/v1/tags", { name: "Warm" })).body.data;
    const cold = (await post<{ data: Tag }>(account.apiKey, "/api/v1/tags", { name: "Cold" })).body.data;

    for (let i = 0; i < 2; i += 1) {
      const assigned = await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [a.id, String(b.id)], tag_ids: [warm.id] });
      expect(assigned).toMatchObject({ status: 200, body: { ok: true, success: true, message: "Tags assigned successfully" } });
    }
    expect((await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { emails: ["A@tags.example.com"], tag_ids: [cold.id] })).status).toBe(200);

    const list = await post<{ ok: boolean; data: { email_account_id: number; from_email: string; tags: Tag[] }[] }>(account.apiKey, "/api/v1/email-accounts/tag-list", {
      email_ids: ["a@tags.example.com", "b@tags.example.com", "nobody@tags.example.com"],
    });
    expect(list.body).toEqual({
      ok: true,
      data: [
        { email_account_id: a.id, from_email: "a@tags.example.com", tags: [cold, warm] },
        { email_account_id: b.id, from_email: "b@tags.example.com", tags: [warm] },
      ],
    });
    expect((await readMailbox(account.apiKey, a.id, "?fetch_tags=true")).body.tags).toEqual([cold, warm]);
    expect((await readMailbox(account.apiKey, a.id)).body).not.toHaveProperty("tags");

    const removed = await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [a.id], tag_ids: [warm.id] }, "DELETE");
    expect(removed).toMatchObject({ status: 200, body: { ok: true, message: "Tags removed successfully" } });
    expect((await readMailbox(account.apiKey, a.id, "?fetch_tags=1")).body.tags).toEqual([cold]);

    expect(await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [a.id, 999999999], tag_ids: [warm.id] })).toMatchObject({
      status: 400,
      body: { error: "Email account not found: 999999999" },
    });
    expect(await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [a.id], tag_ids: [999999998] })).toMatchObject({
      status: 400,
      body: { error: "Tag not found: 999999998" },
    });
    expect((await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [a.id], emails: ["a@tags.example.com"], tag_ids: [warm.id] })).status).toBe(422);
  });

  it("keeps client scopes apart: another client's tags and mailboxes are unknown", async () => {
    const account = await provisionAccount();
    const clientA = await createClient(account.apiKey, "A", "a@a.example");
    const clientB = await createClient(account.apiKey, "B", "b@b.example");
    const keyA = await createClientKey(account.apiKey, clientA);
    const keyB = await createClientKey(account.apiKey, clientB);
    const tagA = (await post<{ data: Tag }>(keyA.api_key, "/api/v1/tags", { name: "Mine" })).body.data;
    const mailboxA = await createMailbox(keyA.api_key, { from_email: "scoped@a.example.com" });
    const mailboxB = await createMailbox(keyB.api_key);
    const tagB = (await post<{ data: Tag }>(keyB.api_key, "/api/v1/tags", { name: "Mine" })).body.data;
    expect(tagB.id).not.toBe(tagA.id);

    expect((await callJson<{ data: Tag[] }>("/api/v1/email-accounts/tags", { apiKey: keyB.api_key })).body.data).toEqual([tagB]);
    expect(await post(keyB.api_key, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [mailboxB.id], tag_ids: [tagA.id] })).toMatchObject({ status: 400, body: { error: `Tag not found: ${tagA.id}` } });
    expect(await post(keyB.api_key, "/api/v1/email-accounts/tag-mapping", { emails: ["scoped@a.example.com"], tag_ids: [tagB.id] })).toMatchObject({
      status: 400,
      body: { error: "Email account not found: scoped@a.example.com" },
    });
    expect(await post(keyB.api_key, "/api/v1/email-accounts/tag-manager", { id: tagA.id, name: "Stolen" })).toMatchObject({ status: 404, body: { error: "Tag not found" } });
    expect((await post<{ data: unknown[] }>(keyB.api_key, "/api/v1/email-accounts/tag-list", { email_ids: ["scoped@a.example.com"] })).body.data).toEqual([]);
    expect((await post(keyA.api_key, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [mailboxA.id], tag_ids: [tagA.id] })).status).toBe(200);
  });

  it("never shows a client key another client's tag, even one its owner put on the client's mailbox", async () => {
    const account = await provisionAccount();
    const clientA = await createClient(account.apiKey, "A", "a@a.example");
    const clientB = await createClient(account.apiKey, "B", "b@b.example");
    const keyA = await createClientKey(account.apiKey, clientA);
    const keyB = await createClientKey(account.apiKey, clientB);
    const tagA = (await post<{ data: Tag }>(keyA.api_key, "/api/v1/tags", { name: "Ours" })).body.data;
    const tagB = (await post<{ data: Tag }>(keyB.api_key, "/api/v1/tags", { name: "B only" })).body.data;
    const mailboxA = await createMailbox(keyA.api_key, { from_email: "mixed@a.example.com" });
    const campaign = await createCampaign(keyA.api_key);
    expect((await post(keyA.api_key, `/api/v1/campaigns/${campaign}/email-accounts`, { email_account_ids: [mailboxA.id] })).status).toBe(200);
    // A pair stored before tag mapping kept a mailbox to its own scope's tags: the owner still reads it.
    await testDb().insert(schema.emailAccountTags).values([tagA.id, tagB.id].map((tagId) => ({ emailAccountId: mailboxA.id, tagId })));
    expect((await readMailbox(account.apiKey, mailboxA.id, "?fetch_tags=true")).body.tags).toEqual([tagB, tagA]);

    expect((await readMailbox(keyA.api_key, mailboxA.id, "?fetch_tags=true")).body.tags).toEqual([tagA]);
    const listed = await post<{ data: { tags: Tag[] }[] }>(keyA.api_key, "/api/v1/email-accounts/tag-list", { email_ids: ["mixed@a.example.com"] });
    expect(listed.body.data.map((row) => row.tags)).toEqual([[tagA]]);
    const ofCampaign = await callJson<EmailAccount[]>(`/api/v1/campaigns/${campaign}/email-accounts?include_tags=true`, { apiKey: keyA.api_key });
    expect(ofCampaign.body.map((row) => row.tags)).toEqual([[tagA]]);
  });

  it("puts on a mailbox only its own scope's tags: another client's, or the account's on a client's mailbox, answer 400 and change nothing", async () => {
    const { account, xKey, yKey } = await accountWithTwoClients();
    const yMailbox = (await createMailbox(yKey, { from_email: "box@y.example.com" })).id;
    const accountMailbox = (await createMailbox(account.apiKey, { from_email: "box@account.example.com" })).id;
    const tag = async (apiKey: string, name: string) => (await post<{ data: Tag }>(apiKey, "/api/v1/tags", { name })).body.data;
    const [xTag, yTag, accountTag] = [await tag(xKey, "x-only"), await tag(yKey, "y-only"), await tag(account.apiKey, "account")];
    const tagsOn = async (mailbox: number) => (await readMailbox(account.apiKey, mailbox, "?fetch_tags=true")).body.tags;

    for (const [mailbox, own, foreign] of [[yMailbox, yTag, xTag], [yMailbox, yTag, accountTag], [accountMailbox, accountTag, yTag]] as const) {
      const refused = await post<{ error: string }>(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [mailbox], tag_ids: [own.id, foreign.id] });
      expect(refused.status, `tag ${foreign.id} on mailbox ${mailbox}`).toBe(400);
      expect(refused.body.error).toContain(`Tag ${foreign.id} is not one of email account ${mailbox}'s tags`);
      expect(await tagsOn(mailbox), "all or nothing").toEqual([]);
    }
    expect((await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [yMailbox], tag_ids: [yTag.id] })).status).toBe(200);
    expect((await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [accountMailbox], tag_ids: [accountTag.id] })).status).toBe(200);
    expect([await tagsOn(yMailbox), await tagsOn(accountMailbox)]).toEqual([[yTag], [accountTag]]);
    expect((await readMailbox(yKey, yMailbox, "?fetch_tags=true")).body.tags).toEqual([yTag]);
  });
  it("bulk update puts on mailboxes only their own scope's tags, or those of the client it moves them to (400 otherwise, nothing changed)", async () => {
    const { account, x, xKey, yKey } = await accountWithTwoClients();
    const yMailbox = (await createMailbox(yKey, { from_email: "box@y.example.com" })).id;
    const accountMailbox = (await createMailbox(account.apiKey, { from_email: "box@account.example.com" })).id;
    const tag = async (apiKey: string, name: string) => (await post<{ data: Tag }>(apiKey, "/api/v1/tags", { name })).body.data;
    const [xTag, yTag, accountTag] = [await tag(xKey, "x-only"), await tag(yKey, "y-only"), await tag(account.apiKey, "account")];
    const bulk = (emailAccountIds: number[], updateData: Record<string, unknown>) =>
      post<{ error: string }>(account.apiKey, "/api/v1/email-accounts/bulk-update-email-account-config", { emailAccountIds, updateData });
    const tagsOn = async (mailbox: number) => (await readMailbox(account.apiKey, mailbox, "?fetch_tags=true")).body.tags;
    expect((await bulk([yMailbox], { tags: [yTag.id] })).status).toBe(200);
    expect((await bulk([accountMailbox], { tags: [accountTag.id] })).status).toBe(200);

    for (const [mailboxes, tagIds, mailbox, foreign] of [
      [[yMailbox], [xTag.id], yMailbox, xTag.id],
      [[yMailbox], [yTag.id, accountTag.id], yMailbox, accountTag.id],
      [[yMailbox, accountMailbox], [yTag.id], accountMailbox, yTag.id],
    ] as const) {
      const refused = await bulk([...mailboxes], { tags: [...tagIds], messagePerDay: 7 });
      expect(refused.status, `tags ${tagIds} on mailboxes ${mailboxes}`).toBe(400);
      expect(refused.body.error).toContain(`Tag ${foreign} is not one of email account ${mailbox}'s tags`);
    }
    // Moved in the same request, the mailbox takes the tags of the client it moves to, and only those.
    const intoX = await bulk([accountMailbox], { clientId: x, tags: [accountTag.id] });
    expect(intoX.status).toBe(400);
    expect(intoX.body.error).toContain(`Tag ${accountTag.id} is not one of email account ${accountMailbox}'s tags`);
    expect([await tagsOn(yMailbox), await tagsOn(accountMailbox)], "nothing changed").toEqual([[yTag], [accountTag]]);
    expect(await storedMailbox(accountMailbox)).toMatchObject({ clientId: null, maxEmailPerDay: 100 });

    expect((await bulk([accountMailbox], { clientId: x, tags: [xTag.id] })).status).toBe(200);
    expect((await readMailbox(xKey, accountMailbox, "?fetch_tags=true")).body.tags).toEqual([xTag]);
  });
  it("a mailbox given to another client (bulk clientId, or its own save's client_id) leaves its old scope's tags", async () => {
    const account = await provisionAccount();
    const [x, y] = [await createClient(account.apiKey, "X", "x@x.example"), await createClient(account.apiKey, "Y", "y@y.example")];
    const xKey = (await createClientKey(account.apiKey, x)).api_key;
    const viaBulk = (await createMailbox(xKey, { from_email: "bulk@x.example.com" })).id;
    const viaSave = (await createMailbox(account.apiKey, { from_email: "save@account.example.com" })).id;
    const tag = async (apiKey: string, name: string) => (await post<{ data: Tag }>(apiKey, "/api/v1/tags", { name })).body.data;
    const [xTag, accountTag] = [await tag(xKey, "x-only"), await tag(account.apiKey, "account")];
    expect((await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [viaBulk], tag_ids: [xTag.id] })).status).toBe(200);
    expect((await post(account.apiKey, "/api/v1/email-accounts/tag-mapping", { email_account_ids: [viaSave], tag_ids: [accountTag.id] })).status).toBe(200);
    const tagsOn = async (mailbox: number) => (await readMailbox(account.apiKey, mailbox, "?fetch_tags=true")).body.tags;

    const bulk = await post(account.apiKey, "/api/v1/email-accounts/bulk-update-email-account-config", { emailAccountIds: [viaBulk], updateData: { clientId: y } });
    expect(bulk.status).toBe(200);
    expect(await post(account.apiKey, `/api/v1/email-accounts/${viaSave}`, { client_id: y })).toMatchObject({ status: 200 });
    expect(await storedMailbox(viaBulk)).toMatchObject({ clientId: y });
    expect(await storedMailbox(viaSave)).toMatchObject({ clientId: y });
    expect([await tagsOn(viaBulk), await tagsOn(viaSave)], "the owner reads no old scope's tag on them").toEqual([[], []]);
  });
});

describe("campaign mailboxes", () => {
  it("attaches (ids or one id, already attached a no-op), lists, and detaches by body or path", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const a = await createMailbox(account.apiKey);
    const b = await createMailbox(account.apiKey);
    const c = await createMailbox(account.apiKey);
    const path = `/api/v1/campaigns/${campaign}/email-accounts`;

    const attached = await post(account.apiKey, path, { email_account_ids: [b.id, String(a.id)] });
    expect(attached).toMatchObject({ status: 200, body: { ok: true, success: true, data: { email_account_ids: [a.id, b.id] } } });
    const one = await post(account.apiKey, `${path}/`, { email_account_id: c.id, auto_adjust_warmup: true });
    expect(one.body).toMatchObject({ data: { email_account_ids: [a.id, b.id, c.id] } });
    expect((await post(account.apiKey, path, { email_account_ids: [a.id] })).body).toMatchObject({ data: { email_account_ids: [a.id, b.id, c.id] } });

    const listed = await callJson<EmailAccount[]>(path, { apiKey: account.apiKey });
    expect(listed.body.map((m) => m.id)).toEqual([a.id, b.id, c.id]);
    expect(listed.body[0]).toMatchObject({ campaign_count: 1, password: "********" });
    expect(listed.body[0]).not.toHaveProperty("tags");
    expect((await callJson<EmailAccount[]>(`${path}?include_tags=true`, { apiKey: account.apiKey })).body[0]!.tags).toEqual([]);
    expect((await readMailbox(account.apiKey, a.id, "?fetch_campaigns=true")).body.campaign_ids).toEqual([campaign]);

    expect(await post(account.apiKey, path, { email_account_ids: [b.id] }, "DELETE")).toMatchObject({ status: 200, body: { ok: true, success: true } });
    expect(await post(account.apiKey, `${path}/${c.id}`, undefined, "DELETE")).toMatchObject({ status: 200, body: { ok: true } });
    expect((await post(account.apiKey, `${path}/${c.id}`, undefined, "DELETE")).status).toBe(200);
    expect((await callJson<EmailAccount[]>(path, { apiKey: account.apiKey })).body.map((m) => m.id)).toEqual([a.id]);
    expect((await post(account.apiKey, path, {})).status).toBe(422);
  });

  it("counts for a client key only the campaigns it may see its mailbox attached to", async () => {
    const account = await provisionAccount();
    const client = await createClient(account.apiKey, "A", "a@a.example");
    const key = await createClientKey(account.apiKey, client);
    const mailbox = await createMailbox(key.api_key);
    // The owner sends an account-wide campaign through the client's mailbox.
    const owners = await createCampaign(account.apiKey);
    expect((await post(account.apiKey, `/api/v1/campaigns/${owners}/email-accounts`, { email_account_ids: [mailbox.id] })).status).toBe(200);
    expect((await readMailbox(account.apiKey, mailbox.id)).body.campaign_count).toBe(1);

    const read = await readMailbox(key.api_key, mailbox.id, "?fetch_campaigns=true");
    expect(read.body).toMatchObject({ campaign_ids: [], campaign_count: 0 });
    const ids = async (query: string) => (await callJson<EmailAccount[]>(`/api/v1/email-accounts${query}`, { apiKey: key.api_key })).body.map((m) => m.id);
    expect(await ids("?isInUse=true")).toEqual([]);
    expect(await ids("?isInUse=false")).toEqual([mailbox.id]);

    const own = await createCampaign(key.api_key);
    expect((await post(key.api_key, `/api/v1/campaigns/${own}/email-accounts`, { email_account_ids: [mailbox.id] })).status).toBe(200);
    expect((await readMailbox(key.api_key, mailbox.id, "?fetch_campaigns=true")).body).toMatchObject({ campaign_ids: [own], campaign_count: 1 });
    expect(await ids("?isInUse=true")).toEqual([mailbox.id]);
  });

  it("refuses a mailbox the caller cannot see (400 naming it) and another tenant's campaign (404)", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const foreign = await createMailbox(stranger.apiKey);
    const mine = await createMailbox(account.apiKey);
    expect(await post(account.apiKey, `/api/v1/campaigns/${campaign}/email-accounts`, { email_account_ids: [mine.id, foreign.id] })).toMatchObject({
      status: 400,
      body: { error: `Email account not found: ${foreign.id}` },
    });
    expect((await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { apiKey: account.apiKey })).body).toEqual([]);
    expect(await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { apiKey: stranger.apiKey })).toMatchObject({ status: 404, body: { error: "Campaign not found" } });
    expect(await post(stranger.apiKey, `/api/v1/campaigns/${campaign}/email-accounts`, { email_account_ids: [foreign.id] })).toMatchObject({ status: 404 });
  });
});
