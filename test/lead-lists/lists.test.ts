import { describe, expect, it } from "vitest";
import { leadListRow, leadsOf, schema, testDb } from "../db";
import { call, callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { blockListEntry, createList, importInto, listEmails, type ListBody } from "./fixtures";

describe("lead lists", () => {
  it("creates (listName or BC's name), reads, renames and deletes a list; the leads stay", async () => {
    const account = await provisionAccount();
    const created = await callJson<{ ok: boolean; data: { id: number; name: string; created_at: string } }>("/api/v1/lead-list/", {
      method: "POST",
      apiKey: account.apiKey,
      body: { listName: "Q1 prospects" },
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ ok: true, data: { id: expect.any(Number), name: "Q1 prospects", created_at: expect.stringMatching(/Z$/) } });
    const id = created.body.data.id;
    const bc = await createList(account.apiKey, { name: "From BC" });
    expect((await callJson<ListBody>(`/api/v1/lead-list/${bc}`, { apiKey: account.apiKey })).body.data.name).toBe("From BC");

    await importInto(account.apiKey, id, [{ email: "ann@example.com" }]);
    const read = await callJson<ListBody>(`/api/v1/lead-list/${id}/`, { apiKey: account.apiKey });
    expect(read.body).toEqual({
      ok: true,
      data: { id, name: "Q1 prospects", lead_count: 1, client_id: null, tags: [], created_at: expect.any(String), updated_at: expect.any(String) },
    });

    const renamed = await callJson(`/api/v1/lead-list/${id}`, { method: "PUT", apiKey: account.apiKey, body: { name: "Q1 (renamed)" } });
    expect(renamed.body).toEqual({ ok: true, data: { id, name: "Q1 (renamed)" } });

    const missingName = await callJson(`/api/v1/lead-list/`, { method: "POST", apiKey: account.apiKey, body: {} });
    expect(missingName.status).toBe(422);

    const deleted = await callJson(`/api/v1/lead-list/${id}`, { method: "DELETE", apiKey: account.apiKey });
    expect(deleted.body).toEqual({ ok: true, success: true, message: "Lead list deleted successfully" });
    expect((await callJson(`/api/v1/lead-list/${id}`, { apiKey: account.apiKey })).body).toEqual({ error: "Lead list not found" });
    expect((await leadsOf(account.id)).filter((lead) => lead.email === "ann@example.com")).toHaveLength(1);
  });

  it("keeps lists to their tenant: another account and another client see a missing list", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const clientA = await createClient(owner.apiKey, "A", "a@example.com");
    const clientB = await createClient(owner.apiKey, "B", "b@example.com");
    const keyA = (await createClientKey(owner.apiKey, clientA)).api_key;
    const keyB = (await createClientKey(owner.apiKey, clientB)).api_key;

    const accountList = await createList(owner.apiKey, { listName: "Account-wide" });
    const aList = await createList(keyA, { listName: "A's" });
    expect((await callJson<ListBody>(`/api/v1/lead-list/${aList}`, { apiKey: owner.apiKey })).body.data.client_id).toBe(clientA);

    for (const [apiKey, id] of [
      [stranger.apiKey, accountList],
      [keyB, aList],
      [keyB, accountList],
    ] as const) {
      const read = await callJson(`/api/v1/lead-list/${id}`, { apiKey });
      expect(read.status).toBe(404);
      const imported = await importInto(apiKey, id, [{ email: "x@example.com" }]);
      expect(imported.status).toBe(404);
    }
    const listing = await callJson<{ data: { id: number }[] }>("/api/v1/lead-list/?limit=100", { apiKey: keyA });
    expect(listing.body.data.map((list) => list.id)).toEqual([aList]);
    const byClient = await callJson<{ data: { id: number }[] }>(`/api/v1/lead-list?client_id=${clientA}`, { apiKey: owner.apiKey });
    expect(byClient.body.data.map((list) => list.id)).toEqual([aList]);

    const foreignClient = await callJson("/api/v1/lead-list", { method: "POST", apiKey: keyA, body: { listName: "x", client_id: clientB } });
    expect(foreignClient).toMatchObject({ status: 400, body: { error: "Client not found" } });
  });

  it("pages by id with offset/limit, and a starting_after cursor that stays right while lists are added", async () => {
    const account = await provisionAccount();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createList(account.apiKey, { listName: `List ${i}` }));

    const page = (query: string) => callJson<{ data: { id: number }[]; has_more: boolean }>(`/api/v1/lead-list?${query}`, { apiKey: account.apiKey });
    expect((await page("")).body.data.map((l) => l.id)).toEqual(ids);
    const first = await page("limit=2");
    expect(first.body).toMatchObject({ has_more: true });
    expect(first.body.data.map((l) => l.id)).toEqual(ids.slice(0, 2));
    expect((await page("limit=2&offset=2")).body.data.map((l) => l.id)).toEqual(ids.slice(2, 4));

    // A list deleted before the cursor and lists added after it move offsets, never the cursor.
    await call(`/api/v1/lead-list/${ids[0]}`, { method: "DELETE", apiKey: account.apiKey });
    const added = await createList(account.apiKey, { listName: "Late" });
    const next = await page(`limit=2&starting_after=${ids[1]}`);
    expect(next.body.data.map((l) => l.id)).toEqual(ids.slice(2, 4));
    const last = await page(`limit=2&starting_after=${ids[3]}`);
    expect(last.body).toMatchObject({ has_more: false });
    expect(last.body.data.map((l) => l.id)).toEqual([ids[4], added]);

    expect((await page("listName=late")).body.data.map((l) => l.id)).toEqual([added]);
    expect((await page("limit=1001")).status).toBe(422);
  });

  it("tags lists (listIds form and BC's id form), removes tags, filters the listing by tag ids", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const tag = async (apiKey: string, name: string) =>
      (await callJson<{ data: { id: number } }>("/api/v1/tags", { method: "POST", apiKey, body: { name } })).body.data.id;
    const hot = await tag(account.apiKey, "Hot");
    const cold = await tag(account.apiKey, "Cold");
    const foreignTag = await tag(stranger.apiKey, "Theirs");
    const one = await createList(account.apiKey, { listName: "One" });
    const two = await createList(account.apiKey, { listName: "Two" });

    const assigned = await callJson("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: account.apiKey, body: { listIds: [one, String(two)], tagIds: [hot, cold] } });
    expect(assigned.body).toEqual({ ok: true, success: true, message: "Tags updated successfully" });
    await callJson("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: account.apiKey, body: { listIds: [two], tagIds: [], removeTagIds: [hot] } });
    await callJson("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: account.apiKey, body: { id: two, tag_ids: [hot] } });
    await callJson("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: account.apiKey, body: { listIds: [one], tagIds: [], removeTagIds: [cold] } });

    const names = async (id: number) => (await callJson<ListBody>(`/api/v1/lead-list/${id}`, { apiKey: account.apiKey })).body.data.tags.map((t) => t.name);
    expect(await names(one)).toEqual(["Hot"]);
    expect(await names(two)).toEqual(["Cold", "Hot"]);
    const filtered = await callJson<{ data: { id: number }[] }>(`/api/v1/lead-list?tagIds=${cold}`, { apiKey: account.apiKey });
    expect(filtered.body.data.map((l) => l.id)).toEqual([two]);

    const unknownTag = await callJson("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: account.apiKey, body: { listIds: [one], tagIds: [foreignTag] } });
    expect(unknownTag).toMatchObject({ status: 400, body: { error: `Tag not found: ${foreignTag}` } });
    const foreignList = await callJson("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: stranger.apiKey, body: { listIds: [one], tagIds: [foreignTag] } });
    expect(foreignList).toMatchObject({ status: 404, body: { error: "Lead list not found" } });
    expect(await names(one)).toEqual(["Hot"]);
  });

  it("puts on a list only its own scope's tags (400 otherwise, nothing changed) and shows a client key only its own scope's tags on it", async () => {
    const account = await provisionAccount();
    const [x, y] = [await createClient(account.apiKey, "X", "x@x.example"), await createClient(account.apiKey, "Y", "y@y.example")];
    const [xKey, yKey] = [(await createClientKey(account.apiKey, x)).api_key, (await createClientKey(account.apiKey, y)).api_key];
    const tag = async (apiKey: string, name: string) => (await callJson<{ data: { id: number } }>("/api/v1/tags", { method: "POST", apiKey, body: { name } })).body.data.id;
    const [xTag, yTag, accountTag] = [await tag(xKey, "x-only"), await tag(yKey, "y-only"), await tag(account.apiKey, "account")];
    const yList = await createList(yKey, { listName: "Y's" });
    const accountList = await createList(account.apiKey, { listName: "Account's" });
    const assign = (body: Record<string, unknown>) => callJson<{ error: string }>("/api/v1/lead-list/assign-tags", { method: "POST", apiKey: account.apiKey, body });
    const tagsOf = async (apiKey: string, list: number) => (await callJson<ListBody>(`/api/v1/lead-list/${list}`, { apiKey })).body.data.tags.map((t) => t.id);

    for (const [lists, tagIds, list, foreign] of [
      [[yList], [xTag], yList, xTag],
      [[yList], [yTag, accountTag], yList, accountTag],
      [[yList, accountList], [yTag], accountList, yTag],
    ] as const) {
      const refused = await assign({ listIds: [...lists], tagIds: [...tagIds] });
      expect(refused.status, `tags ${tagIds} on lists ${lists}`).toBe(400);
      expect(refused.body.error).toContain(`Tag ${foreign} is not one of lead list ${list}'s tags`);
    }
    expect([await tagsOf(account.apiKey, yList), await tagsOf(account.apiKey, accountList)], "nothing changed").toEqual([[], []]);
    expect((await assign({ listIds: [yList], tagIds: [yTag] })).status).toBe(200);
    expect((await assign({ id: accountList, tag_ids: [accountTag] })).status).toBe(200);

    // A pair stored before lists kept to their own scope's tags: the owner reads it, Y's key does not, and it can be removed.
    await testDb().insert(schema.leadListTags).values({ listId: yList, tagId: xTag });
    expect(await tagsOf(account.apiKey, yList)).toEqual([xTag, yTag]);
    expect(await tagsOf(yKey, yList)).toEqual([yTag]);
    const listed = await callJson<{ data: { id: number; tags: { id: number }[] }[] }>("/api/v1/lead-list/", { apiKey: yKey });
    expect(listed.body.data.map((l) => [l.id, l.tags.map((t) => t.id)])).toEqual([[yList, [yTag]]]);
    // Filtering by that tag matches only through pairs the caller may see: Y's key learns nothing of it.
    const filtered = async (apiKey: string, tagIds: string) => (await callJson<{ data: { id: number }[] }>(`/api/v1/lead-list?tagIds=${tagIds}`, { apiKey })).body.data.map((l) => l.id);
    expect(await filtered(yKey, `${xTag}`)).toEqual([]);
    expect(await filtered(yKey, `${xTag},${yTag}`)).toEqual([yList]);
    expect(await filtered(account.apiKey, `${xTag}`)).toEqual([yList]);
    expect((await assign({ listIds: [yList], tagIds: [], removeTagIds: [xTag] })).status).toBe(200);
    expect(await tagsOf(account.apiKey, yList)).toEqual([yTag]);
  });

  it("imports up to 1000 leads: counts duplicates, invalid and blocked, fills known leads' empty fields and merges custom fields", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    await blockListEntry(account.id, "blocked.example");

    const first = await importInto(account.apiKey, list, [
      { email: "Ann@Example.com", custom_fields: { plan: "pro" } },
      { email: "ann@example.com" },
      { email: "not-an-email" },
      { email: "eve@blocked.example" },
      { email: "bob@example.com", first_name: "Bob" },
    ]);
    expect(first.body).toEqual({ ok: true, data: { total_leads: 5, imported: 2, duplicates: 1, blocked: 1, invalid: 1, invalid_timezone_count: 0 } });

    const second = await callJson<{ data: unknown }>(`/api/v1/lead-list/${list}/import`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        leads: [
          { email: "ann@example.com", first_name: "Ann", custom_fields: { seat: 3 } },
          { email: "bob@example.com", first_name: "Robert" },
          { email: "eve@blocked.example" },
        ],
        ignore_global_block_list: true,
      },
    });
    expect(second.body.data).toEqual({ total_leads: 3, imported: 1, duplicates: 2, blocked: 0, invalid: 0, invalid_timezone_count: 0 });
    expect(await listEmails(account.apiKey, list)).toEqual(["ann@example.com", "bob@example.com", "eve@blocked.example"]);

    const members = await callJson<{ data: { email: string; first_name: string | null; custom_fields: unknown }[] }>(`/api/v1/lead-list/${list}/leads`, { apiKey: account.apiKey });
    const ann = members.body.data.find((lead) => lead.email === "ann@example.com")!;
    const bob = members.body.data.find((lead) => lead.email === "bob@example.com")!;
    expect(ann).toMatchObject({ first_name: "Ann", custom_fields: { plan: "pro", seat: 3 } });
    expect(bob.first_name).toBe("Bob");

    const tooMany = await importInto(account.apiKey, list, Array.from({ length: 1001 }, (_, i) => ({ email: `l${i}@example.com` })));
    expect(tooMany.status).toBe(422);
    const none = await callJson(`/api/v1/lead-list/${list}/import`, { method: "POST", apiKey: account.apiKey, body: { fileName: "x.csv" } });
    expect(none.status).toBe(422);
  });

  it("imports a full 1000-lead call in one request and keeps the customFields it declares", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    const result = await callJson<{ data: unknown }>(`/api/v1/lead-list/${list}/import`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        lead_list: Array.from({ length: 1000 }, (_, i) => ({ email: `lead${i}@bulk.example`, first_name: `N${i}` })),
        fileName: "bulk.csv",
        customFields: { Plan: "plan" },
      },
    });
    expect(result.body.data).toEqual({ total_leads: 1000, imported: 1000, duplicates: 0, blocked: 0, invalid: 0, invalid_timezone_count: 0 });
    expect((await leadListRow(list)).customFields).toEqual({ Plan: "plan" });
    expect((await callJson<ListBody>(`/api/v1/lead-list/${list}`, { apiKey: account.apiKey })).body.data.lead_count).toBe(1000);
  });
});
