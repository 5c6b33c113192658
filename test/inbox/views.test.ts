import { describe, expect, it } from "vitest";
import { personOf, recordRow } from "../db";
import { callJson, createClientKey } from "../helpers";
import { act, at, emails, list, world } from "./fixtures";

const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe("master inbox views (section 15)", () => {
  it("unread-replies holds active conversations not read yet", async () => {
    const { k, ids } = await world();
    expect(await emails(k, "unread-replies")).toEqual(["dan@in.example", "ann@in.example", "bob@in.example", "cat@in.example", "eve@in.example"]);
    expect((await act(k, "change-read-status", { email_lead_map_id: ids["ann@in.example"], read_status: true }, "PATCH")).status).toBe(200);
    expect((await act(k, "archive", { email_lead_map_id: ids["bob@in.example"] })).status).toBe(200);
    expect(await emails(k, "unread-replies")).toEqual(["dan@in.example", "cat@in.example", "eve@in.example"]);
  });

  it("important holds what mark-important marked, replied or not, until it is archived", async () => {
    const { k, ids } = await world();
    expect(await emails(k, "important")).toEqual([]);
    for (const email of ["ann@in.example", "zed@in.example", "bob@in.example"]) {
      expect((await act(k, "mark-important", { email_lead_map_id: ids[email] }, "PATCH")).body).toEqual({ ok: true });
    }
    await act(k, "mark-important", { email_lead_map_id: ids["bob@in.example"], is_important: false }, "PATCH");
    expect(await emails(k, "important")).toEqual(["ann@in.example", "zed@in.example"]);
    await act(k, "archive", { email_lead_map_id: ids["ann@in.example"] });
    expect(await emails(k, "important")).toEqual(["zed@in.example"]);
  });

  it("sent holds every record sent to; with REPLY_TIME_DESC the unreplied come last, newest send first", async () => {
    const { k, a } = await world();
    expect(await emails(k, "sent")).toEqual(["dan@in.example", "bob@in.example", "ann@in.example", "zed@in.example", "cat@in.example"].sort((x, y) => sentOrder(x, y)));
    expect(await emails(k, "sent", { sortBy: "REPLY_TIME_DESC" })).toEqual(["dan@in.example", "ann@in.example", "bob@in.example", "cat@in.example", "zed@in.example"]);
    // BC's top-level campaign_id is read as filters.campaignId; the sent view takes up to 15 campaigns.
    expect(await emails(k, "sent", { campaign_id: a, sortBy: "REPLY_TIME_DESC" })).toEqual(["ann@in.example", "bob@in.example", "cat@in.example", "zed@in.example"]);
    const many = Array.from({ length: 15 }, (_, i) => a + i);
    expect((await list(k, "sent", { filters: { campaignId: many } })).status).toBe(200);
    expect((await list(k, "inbox-replies", { filters: { campaignId: many } })).status).toBe(422);
  });

  it("assigned-me holds conversations with a team member, narrowed by campaignTeamMemberId", async () => {
    const { k, ids } = await world();
    expect(await emails(k, "assigned-me")).toEqual(["dan@in.example", "ann@in.example"]);
    await act(k, "update-team-member", { email_lead_map_id: ids["bob@in.example"], team_member_id: 9 });
    expect(await emails(k, "assigned-me", { filters: { campaignTeamMemberId: 9 } })).toEqual(["bob@in.example"]);
  });

  it("reminders: one per record (a new one replaces it), soonest first, past ones overdue", async () => {
    const { k, ids } = await world();
    const set = (email: string, reminder_time: string, message: string) =>
      act(k, "set-reminder", { email_lead_map_id: ids[email], reminder_time, message });
    const first = await set("bob@in.example", future(3), "call back");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ok: true, success: true, message: "Reminder set successfully", data: { email_lead_map_id: ids["bob@in.example"], message: "call back" } });
    await set("ann@in.example", future(1), "send the deck");
    const replaced = await set("bob@in.example", "2020-01-01T00:00:00Z", "was due long ago");
    expect((replaced.body as { data: { reminder_id: number } }).data.reminder_id).toBe((first.body as { data: { reminder_id: number } }).data.reminder_id);
    const { body } = await list(k, "reminders");
    expect(body.messages.map((m) => [m.lead.email, m.reminder_message, m.is_overdue])).toEqual([
      ["bob@in.example", "was due long ago", true],
      ["ann@in.example", "send the deck", false],
    ]);
    expect(body.messages[0]!.reminder_time).toBe("2020-01-01T00:00:00.000Z");
    expect(await emails(k, "reminders", { sortBy: "REMINDER_TIME_DESC" })).toEqual(["ann@in.example", "bob@in.example"]);
    expect((await list(k, "reminders", { sortBy: "SCHEDULED_TIME_ASC" })).status).toBe(422);
    expect((await act(k, "set-reminder", { email_lead_map_id: ids["bob@in.example"], reminder_time: future(1) })).status).toBe(422);
  });

  it("views keeps the records of the subsequences named", async () => {
    const { k, b } = await world();
    expect(await emails(k, "views", { filters: { subSequenceId: [b] } })).toEqual(["dan@in.example", "eve@in.example"]);
  });

  it("a client key sees only its client's campaigns in every view", async () => {
    const { k, clientId, ids } = await world();
    const clientKey = (await createClientKey(k, clientId)).api_key;
    await act(k, "mark-important", { email_lead_map_id: ids["ann@in.example"] }, "PATCH");
    await act(k, "mark-important", { email_lead_map_id: ids["dan@in.example"] }, "PATCH");
    expect(await emails(clientKey, "important")).toEqual(["dan@in.example"]);
    expect(await emails(clientKey, "sent")).toEqual(["dan@in.example"]);
  });

  it("GET /master-inbox/{id} answers one conversation with its whole thread", async () => {
    const { k, ids } = await world();
    const { status, body } = await callJson<{ ok: boolean; data: Record<string, unknown> & { email_history: { type: string; time: string }[] } }>(
      `/api/v1/master-inbox/${ids["bob@in.example"]}`,
      { apiKey: k },
    );
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    expect(body.data).toMatchObject({ email_lead_map_id: ids["bob@in.example"], lead: { email: "bob@in.example" }, revenue: "0.00" });
    expect(body.data.email_history.map((m) => [m.type, m.time])).toEqual([["SENT", at(2)], ["REPLY", at(4)]]);
    const missing = await callJson(`/api/v1/master-inbox/999999999`, { apiKey: k });
    expect(missing).toMatchObject({ status: 404, body: { error: "Lead mapping not found" } });
    // Literal paths are not read as ids.
    expect((await callJson(`/api/v1/master-inbox/tasks?email_lead_map_id=${ids["bob@in.example"]}`, { apiKey: k })).status).toBe(200);
  });
});

describe("master inbox actions (section 15 and compat rule C6)", () => {
  it("notes: created on a record (also as BC's lead_id + campaign_id + note), read back per lead", async () => {
    const { k, a, ids } = await world();
    const ann = { lead_id: await personOf(ids["ann@in.example"]!) };
    const created = await act(k, "create-note", { email_lead_map_id: String(ids["ann@in.example"]), note_message: "Met at the fair" });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      ok: true,
      success: true,
      message: "Note created successfully",
      data: { email_lead_map_id: ids["ann@in.example"], lead_id: ann!.lead_id, note_message: "Met at the fair" },
    });
    expect((await act(k, "create-note", { lead_id: ann!.lead_id, campaign_id: a, note: "Second note" })).status).toBe(200);
    const { body } = await callJson<{ ok: boolean; data: { note_message: string; created_by: null; email_lead_map_id: number }[] }>(
      `/api/v1/crm/leads/notes/${ann!.lead_id}`,
      { apiKey: k },
    );
    expect(body.data.map((n) => [n.note_message, n.email_lead_map_id, n.created_by])).toEqual([
      ["Met at the fair", ids["ann@in.example"], null],
      ["Second note", ids["ann@in.example"], null],
    ]);
    expect((await act(k, "create-note", { lead_id: ann!.lead_id, note: "no campaign" })).body).toMatchObject({
      details: [{ path: "campaign_id", message: "campaign_id is required with lead_id" }],
    });
    expect((await act(k, "create-note", { email_lead_map_id: ids["ann@in.example"] })).body).toMatchObject({
      details: [{ path: "note_message", message: "Required" }],
    });
    expect((await act(k, "create-note", { email_lead_map_id: 999999999, note: "x" })).body).toEqual({ error: "Lead mapping not found" });
  });

  it("tasks are read back per lead; create-task takes BC's title", async () => {
    const { k, a, ids } = await world();
    const bob = { lead_id: await personOf(ids["bob@in.example"]!) };
    expect((await act(k, "create-task", { lead_id: bob!.lead_id, campaign_id: a, title: "Send pricing" })).status).toBe(200);
    const { body } = await callJson<{ data: { name: string; lead_id: number; priority: string }[] }>(`/api/v1/crm/leads/tasks/${bob!.lead_id}`, { apiKey: k });
    expect(body.data).toEqual([expect.objectContaining({ name: "Send pricing", lead_id: bob!.lead_id, priority: "MEDIUM", email_lead_map_id: ids["bob@in.example"] })]);
  });

  it("revenue keeps two decimals, shows in listings, and refuses negatives", async () => {
    const { k, ids } = await world();
    const updated = await act(k, "update-revenue", { email_lead_map_id: ids["bob@in.example"], revenue: "1234.567" }, "PATCH");
    expect(updated.body).toMatchObject({ ok: true, message: "Revenue updated successfully", data: { email_lead_map_id: ids["bob@in.example"], revenue: "1234.57" } });
    const { body } = await list(k, "inbox-replies", { filters: { search: "bob@" } });
    expect(body.messages[0]!.revenue).toBe("1234.57");
    expect((await act(k, "update-revenue", { email_lead_map_id: ids["bob@in.example"], revenue: -5 }, "PATCH")).status).toBe(422);
  });

  it("update-category takes a name (any case), an empty string to clear, and answers 400 for an unknown name", async () => {
    const { k, a, ids } = await world();
    const bob = { lead_id: await personOf(ids["bob@in.example"]!) };
    const category = async () => ({ category_id: (await recordRow(ids["bob@in.example"]!)).categoryId });
    expect((await act(k, "update-category", { lead_id: bob!.lead_id, campaign_id: a, category: "interested" }, "PATCH")).status).toBe(200);
    expect((await category())!.category_id).toBe(1);
    expect((await act(k, "update-category", { email_lead_map_id: ids["bob@in.example"], category_id: "" }, "PATCH")).status).toBe(200);
    expect((await category())!.category_id).toBeNull();
    expect(await act(k, "update-category", { email_lead_map_id: ids["bob@in.example"], category: "Hot lead" }, "PATCH")).toMatchObject({
      status: 400,
      body: { error: "Invalid category - Hot lead" },
    });
    expect((await act(k, "change-read-status", { lead_id: bob!.lead_id, campaign_id: a, is_read: true }, "PATCH")).status).toBe(200);
    expect(await emails(k, "unread-replies")).not.toContain("bob@in.example");
  });
});

/** Newest send first, ties by record id descending (the world's ids follow upload order). */
function sentOrder(x: string, y: string): number {
  const sent: Record<string, string> = { "dan@in.example": at(3), "bob@in.example": at(2), "ann@in.example": at(1), "zed@in.example": at(1), "cat@in.example": at(1) };
  const upload = ["ann@in.example", "bob@in.example", "cat@in.example", "zed@in.example", "dan@in.example"];
  return sent[y]!.localeCompare(sent[x]!) || upload.indexOf(y) - upload.indexOf(x);
}
