import { describe, expect, it } from "vitest";
import { recordRow } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { blockListValue } from "../../src/leads/block-list";

type Entry = { id: number; email_or_domain: string; created_at: string; source: string; client_id: number | null };

function add(apiKey: string, body: unknown) {
  return callJson<{ ok: boolean; message: string; data: { added: number; skipped: number } }>("/api/v1/leads/add-domain-block-list", {
    method: "POST",
    apiKey,
    body,
  });
}

async function list(apiKey: string, query = "") {
  const { status, body } = await callJson<Entry[]>(`/api/v1/leads/get-domain-block-list${query}`, { apiKey });
  expect(status).toBe(200);
  return body;
}

async function stateOf(recordId: number): Promise<string> {
  return (await recordRow(recordId)).state;
}

describe("block list values", () => {
  it("reads addresses and domains as the contract says", () => {
    expect(blockListValue(" Ann@Lead.Example ")).toBe("ann@lead.example");
    expect(blockListValue("https://www.Spam.Example/path?q=1")).toBe("spam.example");
    expect(blockListValue("www.spam.example:8080")).toBe("spam.example");
    expect(blockListValue("bücher.example")).toBe("xn--bcher-kva.example");
    for (const bad of ["", "not a domain", "localhost", "10.0.0.1", "@example.com", "ann@", "a..b.example"]) expect(blockListValue(bad), bad).toBeNull();
  });
});

describe("global block list", () => {
  it("adds entries (skipping duplicates), lists them by id, and filters", async () => {
    const account = await provisionAccount();
    const first = await add(account.apiKey, { domain_block_list: ["Spam.example", "https://www.junk.example/", "bob@mail.example", "spam.example"] });
    expect(first).toMatchObject({ status: 200, body: { ok: true, success: true, message: "3 entries added to block list", data: { added: 3, skipped: 1 } } });
    // bcharleson sends one `domain` string.
    expect((await add(account.apiKey, { domain: "junk.example" })).body).toMatchObject({ data: { added: 0, skipped: 1 } });

    const all = await list(account.apiKey);
    expect(all.map((e) => e.email_or_domain)).toEqual(["spam.example", "junk.example", "bob@mail.example"]);
    expect(all[0]).toEqual({ id: expect.any(Number), email_or_domain: "spam.example", created_at: expect.stringMatching(/Z$/), source: "manual", client_id: null });
    expect((await list(account.apiKey, "?filter_email_or_domain=JUNK")).map((e) => e.email_or_domain)).toEqual(["junk.example"]);
    expect((await list(account.apiKey, "?filter_email_with_domain=carol@spam.example")).map((e) => e.email_or_domain)).toEqual(["spam.example"]);
    expect((await list(account.apiKey, "?filter_email_with_domain=bob@mail.example")).map((e) => e.email_or_domain)).toEqual(["bob@mail.example"]);
    expect((await list(account.apiKey, "?offset=1&limit=1")).map((e) => e.email_or_domain)).toEqual(["junk.example"]);
    expect((await list(account.apiKey, "?filter_email_or_domain=%25")).length).toBe(0);
    expect((await callJson("/api/v1/leads/get-domain-block-list/?limit=1001", { apiKey: account.apiKey })).status).toBe(422);
  });

  it("answers 422 naming a bad item by its index, and Required without items", async () => {
    const account = await provisionAccount();
    expect(await add(account.apiKey, { domain_block_list: ["ok.example", "not a domain"] })).toMatchObject({
      status: 422,
      body: { error: "Validation failed", details: [{ path: "domain_block_list.1", message: "Not an email address or domain" }] },
    });
    expect(await add(account.apiKey, {})).toMatchObject({ status: 422, body: { details: [{ path: "domain_block_list", message: "Required" }] } });
    expect((await add(account.apiKey, { domain_block_list: [] })).status).toBe(422);
    expect(await list(account.apiKey)).toEqual([]);
  });

  it("BLOCKs live records of matching leads in the entry's scope when it is added, and removing it does not revive them", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const own = await createCampaign(account.apiKey);
    const clients = await createCampaign(account.apiKey, { client_id: clientId });
    const records = await addLeads(account.apiKey, own, ["ann@spam.example", "bob@fine.example", "carol@fine.example", "dan@spam.example"]);
    const clientRecords = await addLeads(account.apiKey, clients, ["eve@client-spam.example"]);
    await callJson(`/api/v1/campaigns/${own}/leads/${records["dan@spam.example"]}`, { method: "PATCH", apiKey: account.apiKey, body: { state: "COMPLETED" } });
    await callJson(`/api/v1/campaigns/${own}/leads/${records["bob@fine.example"]}`, { method: "PATCH", apiKey: account.apiKey, body: { state: "PAUSED" } });

    expect((await add(account.apiKey, { domain_block_list: ["spam.example", "bob@fine.example"] })).status).toBe(200);
    expect(await stateOf(records["ann@spam.example"]!)).toBe("BLOCKED");
    expect(await stateOf(records["bob@fine.example"]!)).toBe("BLOCKED");
    expect(await stateOf(records["carol@fine.example"]!)).toBe("DRAFTED");
    expect(await stateOf(records["dan@spam.example"]!)).toBe("COMPLETED");
    expect((await recordRow(records["ann@spam.example"]!)).dueAt).toBeNull();

    // A client's entry reaches only that client's campaigns.
    const other = await createClient(account.apiKey, "Other", "other@other.example");
    expect((await add(account.apiKey, { domain_block_list: ["client-spam.example"], client_id: other })).status).toBe(200);
    expect(await stateOf(clientRecords["eve@client-spam.example"]!)).toBe("DRAFTED");
    expect((await add(account.apiKey, { domain_block_list: ["client-spam.example"], client_id: String(clientId) })).status).toBe(200);
    expect(await stateOf(clientRecords["eve@client-spam.example"]!)).toBe("BLOCKED");

    const entry = (await list(account.apiKey, "?filter_email_or_domain=bob")).at(0)!;
    expect(await callJson(`/api/v1/leads/delete-domain-block-list?id=${entry.id}`, { method: "DELETE", apiKey: account.apiKey })).toMatchObject({
      status: 200,
      body: { ok: true, success: true, message: "Entry deleted successfully" },
    });
    expect(await stateOf(records["bob@fine.example"]!)).toBe("BLOCKED");
  });

  it("deletes by query id, path id and value; a missing or foreign entry answers 404", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    await add(account.apiKey, { domain_block_list: ["a.example", "b.example", "c.example"] });
    const [a, b] = await list(account.apiKey);
    const missing = { status: 404, body: { error: "Block list entry not found" } };
    expect(await callJson(`/api/v1/leads/delete-domain-block-list?id=${a!.id}`, { method: "DELETE", apiKey: stranger.apiKey })).toMatchObject(missing);
    expect(await callJson(`/api/v1/leads/delete-domain-block-list/${b!.id}`, { method: "DELETE", apiKey: stranger.apiKey })).toMatchObject(missing);
    expect(await callJson("/api/v1/leads/remove-domain-block-list", { method: "DELETE", apiKey: stranger.apiKey, body: { domain: "c.example" } })).toMatchObject(missing);

    expect((await callJson(`/api/v1/leads/delete-domain-block-list?id=${a!.id}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    expect((await callJson(`/api/v1/leads/delete-domain-block-list/${b!.id}/`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    expect((await callJson("/api/v1/leads/remove-domain-block-list", { method: "DELETE", apiKey: account.apiKey, body: { domain: "https://www.C.example" } })).status).toBe(200);
    expect(await list(account.apiKey)).toEqual([]);
    expect(await callJson(`/api/v1/leads/delete-domain-block-list?id=${a!.id}`, { method: "DELETE", apiKey: account.apiKey })).toMatchObject(missing);
  });

  it("gives a client key its client's entries, plus read access to the account-wide ones", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const key = await createClientKey(account.apiKey, clientId);
    await add(account.apiKey, { domain_block_list: ["account.example"] });
    expect((await add(key.api_key, { domain_block_list: ["client.example"] })).status).toBe(200);
    expect(await add(key.api_key, { domain_block_list: ["x.example"], client_id: clientId + 1000 })).toMatchObject({ status: 400, body: { error: "Client not found" } });
    expect(await add(account.apiKey, { domain_block_list: ["x.example"], client_id: 999999 })).toMatchObject({ status: 400, body: { error: "Client not found" } });

    const seen = await list(key.api_key);
    expect(seen.map((e) => [e.email_or_domain, e.client_id])).toEqual([
      ["account.example", null],
      ["client.example", clientId],
    ]);
    expect((await list(key.api_key, `?filter_client_id=${clientId}`)).map((e) => e.email_or_domain)).toEqual(["client.example"]);
    // It reads the account-wide entry but may not delete it.
    expect((await callJson(`/api/v1/leads/delete-domain-block-list/${seen[0]!.id}`, { method: "DELETE", apiKey: key.api_key })).status).toBe(404);
    expect((await callJson(`/api/v1/leads/delete-domain-block-list/${seen[1]!.id}`, { method: "DELETE", apiKey: key.api_key })).status).toBe(200);
    const other = await provisionAccount();
    expect(await list(other.apiKey)).toEqual([]);
  });
});

describe("POST /master-inbox/block-domains", () => {
  it("writes the same list with its source and blocks matching records", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const records = await addLeads(account.apiKey, campaign, ["ann@bounced.example"]);
    const { status, body } = await callJson<Record<string, unknown>>("/api/v1/master-inbox/block-domains", {
      method: "POST",
      apiKey: account.apiKey,
      body: { domains: ["Bounced.example", "www.other.example"], source: "bounce" },
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      ok: true,
      success: true,
      message: "Domains blocked successfully",
      data: { blocked_domains: ["bounced.example", "other.example"], source: "bounce", blocked_at: expect.stringMatching(/Z$/) },
    });
    expect((await list(account.apiKey)).map((e) => [e.email_or_domain, e.source])).toEqual([
      ["bounced.example", "bounce"],
      ["other.example", "bounce"],
    ]);
    expect(await stateOf(records["ann@bounced.example"]!)).toBe("BLOCKED");
    expect((await callJson("/api/v1/master-inbox/block-domains", { method: "POST", apiKey: account.apiKey, body: { domains: ["x.example"], source: "spam" } })).status).toBe(422);
  });
});
