import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "./helpers";

const BASE = "/api/v1/search-email-leads/search-filters";

describe("prospect saved searches", () => {
  it("saves flat filter fields or a filters object as filter_details", async () => {
    const account = await provisionAccount();
    const flat = await callJson(`${BASE}/save-search`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { search_string: "CTOs in Berlin", title: ["CTO"], country: ["Germany"], companyDomain: ["acme.de"] },
    });
    expect(flat.status).toBe(200);
    expect(flat.body).toEqual({
      success: true,
      message: "Search saved successfully",
      data: {
        id: expect.any(Number),
        search_string: "CTOs in Berlin",
        filter_details: { title: ["CTO"], country: ["Germany"], companyDomain: ["acme.de"] },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    const nested = await callJson<{ data: { filter_details: unknown } }>(`${BASE}/save-search`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { search_string: "Fintech", filters: { industry: ["Fintech"], employees: { min: 50 } } },
    });
    expect(nested.body.data.filter_details).toEqual({ industry: ["Fintech"], employees: { min: 50 } });
    for (const body of [{}, { search_string: "" }, { search_string: "x".repeat(256) }, { search_string: "ok", filters: "nope" }]) {
      expect((await callJson(`${BASE}/save-search`, { method: "POST", apiKey: account.apiKey, body })).status, JSON.stringify(body)).toBe(422);
    }
  });

  it("lists with paging, renames and deletes, scoped to the account or the client", async () => {
    const account = await provisionAccount();
    const save = (apiKey: string, search_string: string) =>
      callJson<{ data: { id: number } }>(`${BASE}/save-search`, { method: "POST", apiKey, body: { search_string } });
    const clientKey = await createClientKey(account.apiKey, await createClient(account.apiKey));
    const one = await save(account.apiKey, "one");
    await save(account.apiKey, "two");
    const theirs = await save(clientKey.api_key, "client's");

    const page = await callJson<{ data: { savedSearches: { search_string: string }[]; totalCount: number } }>(`${BASE}/saved-searches?limit=2&offset=0`, {
      apiKey: account.apiKey,
    });
    expect(page.body.data.totalCount).toBe(3);
    expect(page.body.data.savedSearches.map((s) => s.search_string)).toEqual(["client's", "two"]);
    const clientView = await callJson<{ data: { savedSearches: { search_string: string }[]; totalCount: number } }>(`${BASE}/saved-searches`, {
      apiKey: clientKey.api_key,
    });
    expect(clientView.body.data).toMatchObject({ totalCount: 1, savedSearches: [{ search_string: "client's" }] });
    expect((await callJson(`${BASE}/saved-searches?limit=101`, { apiKey: account.apiKey })).status).toBe(422);

    const renamed = await callJson(`${BASE}/save-search/${one.body.data.id}`, { method: "PUT", apiKey: account.apiKey, body: { search_string: "uno" } });
    expect(renamed.body).toEqual({ success: true, message: "Search renamed successfully" });
    expect((await callJson(`${BASE}/save-search/${one.body.data.id}`, { method: "PUT", apiKey: clientKey.api_key, body: { search_string: "x" } })).status).toBe(404);

    const stranger = await provisionAccount();
    const foreign = await callJson(`${BASE}/save-search/${theirs.body.data.id}`, { method: "DELETE", apiKey: stranger.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: "Saved search not found" });
    const deleted = await callJson(`${BASE}/save-search/${theirs.body.data.id}`, { method: "DELETE", apiKey: clientKey.api_key });
    expect(deleted.body).toEqual({ success: true, message: "Search deleted successfully" });
    const after = await callJson<{ data: { savedSearches: { search_string: string }[] } }>(`${BASE}/saved-searches`, { apiKey: account.apiKey });
    expect(after.body.data.savedSearches.map((s) => s.search_string)).toEqual(["two", "uno"]);
  });
});
