import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { schema, testDb } from "../db";
import { createList, importInto, leadIdsOf } from "./fixtures";

async function tag(apiKey: string, name: string, color?: string): Promise<number> {
  return (await callJson<{ data: { id: number } }>("/api/v1/tags", { method: "POST", apiKey, body: { name, color } })).body.data.id;
}

async function leadOf(apiKey: string, email: string): Promise<number> {
  const list = await createList(apiKey);
  await importInto(apiKey, list, [{ email }]);
  return (await leadIdsOf(list))[email]!;
}

describe("CRM lead tags", () => {
  it("puts tags on a lead once, lists them with mapping ids, removes one by its mapping id", async () => {
    const account = await provisionAccount();
    const vip = await tag(account.apiKey, "VIP", "#FF5733");
    const enterprise = await tag(account.apiKey, "Enterprise");
    const lead = await leadOf(account.apiKey, "ann@example.com");

    const added = await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: account.apiKey, body: { leadId: lead, tagIds: [vip, enterprise] } });
    expect(added.body).toEqual({ ok: true, success: true, message: "Tags added to lead successfully" });
    // BC's names, and a repeat: still one mapping per tag.
    await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: account.apiKey, body: { lead_id: String(lead), tag_ids: [vip] } });

    const listed = await callJson<{ ok: boolean; data: { id: number; tag_mapping_id: number; name: string; color: string }[] }>(`/api/v1/crm/leads/tags?leadId=${lead}`, { apiKey: account.apiKey });
    expect(listed.body).toEqual({
      ok: true,
      data: [
        { id: enterprise, tag_mapping_id: expect.any(Number), name: "Enterprise", color: "#9E9E9E" },
        { id: vip, tag_mapping_id: expect.any(Number), name: "VIP", color: "#FF5733" },
      ],
    });
    const all = await callJson<{ data: { id: number }[] }>("/api/v1/crm/leads/tags", { apiKey: account.apiKey });
    expect(all.body.data.map((t) => t.id).sort()).toEqual([vip, enterprise].sort());

    const mapping = listed.body.data.find((t) => t.id === vip)!.tag_mapping_id;
    const removed = await callJson(`/api/v1/crm/leads/tags/${mapping}`, { method: "DELETE", apiKey: account.apiKey });
    expect(removed.body).toEqual({ ok: true, success: true, message: "Tag removed from lead successfully" });
    const after = await callJson<{ data: { id: number }[] }>(`/api/v1/crm/leads/tags?lead_id=${lead}`, { apiKey: account.apiKey });
    expect(after.body.data.map((t) => t.id)).toEqual([enterprise]);
    expect((await callJson(`/api/v1/crm/leads/tags/${mapping}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(404);
  });

  it("refuses unknown tags (400, nothing applied), another tenant's lead or mapping (404), and a body without tags (422)", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const client = await createClient(owner.apiKey);
    const clientKey = (await createClientKey(owner.apiKey, client)).api_key;
    const mine = await tag(owner.apiKey, "Mine");
    const theirs = await tag(stranger.apiKey, "Theirs");
    const lead = await leadOf(owner.apiKey, "ann@example.com");

    const mixed = await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: owner.apiKey, body: { leadId: lead, tagIds: [mine, theirs] } });
    expect(mixed).toMatchObject({ status: 400, body: { error: `Tag not found: ${theirs}` } });
    const none = await callJson<{ data: unknown[] }>(`/api/v1/crm/leads/tags?leadId=${lead}`, { apiKey: owner.apiKey });
    expect(none.body.data).toEqual([]);

    for (const apiKey of [stranger.apiKey, clientKey]) {
      expect((await callJson(`/api/v1/crm/leads/tags?leadId=${lead}`, { apiKey })).body).toEqual({ error: "Lead not found" });
    }
    expect((await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: stranger.apiKey, body: { leadId: lead, tagIds: [theirs] } })).status).toBe(404);

    await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: owner.apiKey, body: { leadId: lead, tagIds: [mine] } });
    const listed = await callJson<{ data: { tag_mapping_id: number }[] }>(`/api/v1/crm/leads/tags?leadId=${lead}`, { apiKey: owner.apiKey });
    const mapping = listed.body.data[0]!.tag_mapping_id;
    expect((await callJson(`/api/v1/crm/leads/tags/${mapping}`, { method: "DELETE", apiKey: stranger.apiKey })).status).toBe(404);
    expect((await callJson(`/api/v1/crm/leads/tags?leadId=${lead}`, { apiKey: owner.apiKey })).body).toMatchObject({ data: [{ tag_mapping_id: mapping }] });

    expect((await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: owner.apiKey, body: { leadId: lead } })).status).toBe(422);
    expect((await callJson("/api/v1/crm/leads/tags?leadId=abc", { apiKey: owner.apiKey })).status).toBe(422);
  });

  it("puts on a lead only its own scope's tags (400 otherwise, nothing changed) and shows a client key only its own scope's tags on it", async () => {
    const account = await provisionAccount();
    const [x, y] = [await createClient(account.apiKey, "X", "x@x.example"), await createClient(account.apiKey, "Y", "y@y.example")];
    const [xKey, yKey] = [(await createClientKey(account.apiKey, x)).api_key, (await createClientKey(account.apiKey, y)).api_key];
    const [xTag, yTag, accountTag] = [await tag(xKey, "x-only"), await tag(yKey, "y-only"), await tag(account.apiKey, "account")];
    const yLead = await leadOf(yKey, "ann@y.example");
    const accountLead = await leadOf(account.apiKey, "bob@account.example");
    const tagsOf = async (apiKey: string, lead: number) => (await callJson<{ data: { id: number }[] }>(`/api/v1/crm/leads/tags?leadId=${lead}`, { apiKey })).body.data.map((t) => t.id);

    for (const [lead, tagIds, foreign] of [
      [yLead, [xTag], xTag],
      [yLead, [yTag, accountTag], accountTag],
      [accountLead, [yTag], yTag],
    ] as const) {
      const refused = await callJson<{ error: string }>("/api/v1/crm/leads/tags", { method: "POST", apiKey: account.apiKey, body: { leadId: lead, tagIds: [...tagIds] } });
      expect(refused.status, `tags ${tagIds} on lead ${lead}`).toBe(400);
      expect(refused.body.error).toContain(`Tag ${foreign} is not one of lead ${lead}'s tags`);
    }
    expect([await tagsOf(account.apiKey, yLead), await tagsOf(account.apiKey, accountLead)], "nothing changed").toEqual([[], []]);
    expect((await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: account.apiKey, body: { leadId: yLead, tagIds: [yTag] } })).status).toBe(200);
    expect((await callJson("/api/v1/crm/leads/tags", { method: "POST", apiKey: account.apiKey, body: { leadId: accountLead, tagIds: [accountTag] } })).status).toBe(200);

    // A pair stored before leads kept to their own scope's tags: the owner reads it (and may remove it), Y's key does not read it.
    await testDb().insert(schema.leadTagMappings).values({ leadId: yLead, tagId: xTag });
    expect(await tagsOf(account.apiKey, yLead)).toEqual([xTag, yTag]);
    expect(await tagsOf(yKey, yLead)).toEqual([yTag]);
  });
});
