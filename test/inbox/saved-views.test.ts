import { describe, expect, it } from "vitest";
import { callJson, createClientKey, provisionAccount } from "../helpers";
import { emails, world } from "./fixtures";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function saveView(apiKey: string, body: Record<string, unknown>) {
  return callJson<{ success: boolean; ok: boolean; data: { id: number } & Record<string, unknown>; error?: string }>("/api/v1/master-inbox/saved-views", { method: "POST", apiKey, body });
}

describe("saved views of the master inbox (CONTRACT 21.3)", () => {
  it("saves a view in the hosted shape, lists it, and lists the views with its filters under the body's", async () => {
    const { k, a, m1 } = await world();
    const filters = { campaignId: a, leadCategories: { categoryIdsIn: [1, 6] } };
    const saved = await saveView(k, { name: "Alpha, interested or away", filters });
    expect(saved.status).toBe(201);
    expect(saved.body).toEqual({
      success: true,
      ok: true,
      data: { id: expect.any(Number), name: "Alpha, interested or away", filters, limitedAccess: true, teamMemberId: null, clientId: null, createdAt: expect.stringMatching(ISO), updatedAt: expect.stringMatching(ISO) },
    });
    const listed = await callJson<{ ok: boolean; data: unknown[] }>("/api/v1/master-inbox/saved-views", { apiKey: k });
    expect(listed.body).toEqual({ ok: true, data: [saved.body.data] });

    const id = saved.body.data.id;
    expect(await emails(k, "views", { saved_view_id: id })).toEqual(["ann@in.example", "cat@in.example"]);
    // The body's filters go over the saved ones: the mailbox narrows, the category set is replaced.
    expect(await emails(k, "views", { saved_view_id: String(id), filters: { emailAccountId: m1 } })).toEqual(["ann@in.example"]);
    expect(await emails(k, "views", { saved_view_id: id, filters: { leadCategories: { unassigned: true } } })).toEqual(["bob@in.example"]);

    const removed = await callJson(`/api/v1/master-inbox/saved-views/${id}`, { method: "DELETE", apiKey: k });
    expect(removed.body).toEqual({ ok: true, success: true, message: "Saved view deleted successfully" });
    expect((await callJson("/api/v1/master-inbox/views", { method: "POST", apiKey: k, body: { saved_view_id: id } })).status).toBe(404);
  });

  it("keeps a client key's views to its client, and another tenant's view looks missing", async () => {
    const { k, clientId } = await world();
    const key = await createClientKey(k, clientId);
    const clientView = await saveView(key.api_key, { name: "Client's", filters: {}, limitedAccess: false });
    expect(clientView.body.data).toMatchObject({ clientId, limitedAccess: false });
    const accountView = await saveView(k, { name: "Account's", filters: {} });
    const clientList = await callJson<{ data: { id: number }[] }>("/api/v1/master-inbox/saved-views", { apiKey: key.api_key });
    expect(clientList.body.data.map((view) => view.id)).toEqual([clientView.body.data.id]);
    const missing = await callJson("/api/v1/master-inbox/views", { method: "POST", apiKey: key.api_key, body: { saved_view_id: accountView.body.data.id } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "Saved view not found" });
    const stranger = await provisionAccount();
    expect((await callJson(`/api/v1/master-inbox/saved-views/${accountView.body.data.id}`, { method: "DELETE", apiKey: stranger.apiKey })).status).toBe(404);
    expect((await callJson("/api/v1/master-inbox/views", { method: "POST", apiKey: stranger.apiKey, body: { saved_view_id: accountView.body.data.id } })).status).toBe(404);
    expect((await callJson<{ data: unknown[] }>("/api/v1/master-inbox/saved-views", { apiKey: stranger.apiKey })).body.data).toEqual([]);
  });

  it("refuses another filter key with 400 and bad values with 422", async () => {
    const account = await provisionAccount();
    const unknown = await saveView(account.apiKey, { name: "x", filters: { campaignId: 1, colour: "red" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: "Unknown filter: colour" });
    const badValue = await saveView(account.apiKey, { name: "x", filters: { campaignId: Array.from({ length: 16 }, (_, i) => i + 1) } });
    expect(badValue.status).toBe(422);
    expect((badValue.body as unknown as { details: { path: string }[] }).details[0]!.path).toMatch(/^filters\.campaignId/);
    for (const body of [{ filters: {} }, { name: "", filters: {} }, { name: "x".repeat(256), filters: {} }, { name: "x" }, { name: "x", filters: [] }, { name: "x", filters: {}, limitedAccess: "yes" }]) {
      expect((await saveView(account.apiKey, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await callJson("/api/v1/master-inbox/views", { method: "POST", apiKey: account.apiKey, body: { saved_view_id: "x1" } })).status).toBe(422);
  });
});
