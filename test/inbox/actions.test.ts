import { createScheduledController } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { eventRowId, eventsOf, recordRow, setRecord, taskCount } from "../db";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { addLeads, analytics, createCampaign, ingestOk } from "../campaigns/fixtures";
import { act, emails, list } from "./fixtures";

const MARCH = { start_date: "2026-03-01", end_date: "2026-03-30" };

/** One campaign with two conversations (ann, bob) and a lead without a reply (cy). */
async function inbox() {
  const account = await provisionAccount();
  const k = account.apiKey;
  const campaign = await createCampaign(k);
  const ids = await addLeads(k, campaign, ["ann@act.example", "bob@act.example", "cy@act.example"]);
  await ingestOk(k, campaign, [
    { type: "SENT", lead_email: "ann@act.example", occurred_at: "2026-03-01T10:00:00Z" },
    { event_id: "ann-1", type: "REPLY", lead_email: "ann@act.example", occurred_at: "2026-03-02T10:00:00Z", is_ooo: true, category_id: 6 },
    { event_id: "ann-2", type: "REPLY", lead_email: "ann@act.example", occurred_at: "2026-03-03T10:00:00Z" },
    { type: "REPLY", lead_email: "bob@act.example", occurred_at: "2026-03-04T10:00:00Z" },
  ]);
  return { account, k, campaign, ids, ann: ids["ann@act.example"]!, bob: ids["bob@act.example"]! };
}

const record = recordRow;
const statsId = eventRowId;

function runCron(at: number) {
  const controller = createScheduledController({ scheduledTime: at, cron: "* * * * *" });
  return worker.scheduled(controller, fileEnv());
}

describe("master inbox actions", () => {
  it("marks read and unread, assigns and clears a team member", async () => {
    const { k, ann } = await inbox();
    expect((await act(k, "change-read-status", { email_lead_map_id: ann, read_status: true }, "PATCH")).body).toEqual({ ok: true });
    expect(await record(ann)).toMatchObject({ isRead: true });
    await act(k, "change-read-status", { email_lead_map_id: ann, read_status: false }, "PATCH");
    expect(await record(ann)).toMatchObject({ isRead: false });
    expect((await act(k, "update-team-member", { email_lead_map_id: ann, team_member_id: 42 })).body).toEqual({ ok: true });
    const { body } = await list(k, "inbox-replies", { filters: { campaignTeamMemberId: 42 } });
    expect(body.messages.map((m) => m.team_member_id)).toEqual([42]);
    await act(k, "update-team-member", { email_lead_map_id: ann, team_member_id: null });
    expect(await record(ann)).toMatchObject({ teamMemberId: null });
  });

  it("archives and unarchives, snoozes and unsnoozes, moving the conversation between listings", async () => {
    const { k, ann } = await inbox();
    const future = new Date(Date.now() + 3_600_000).toISOString();

    await act(k, "archive", { email_lead_map_id: ann });
    expect(await emails(k, "archived")).toEqual(["ann@act.example"]);
    expect(await emails(k, "inbox-replies")).toEqual(["bob@act.example"]);
    await act(k, "unarchive", { email_lead_map_id: ann });
    expect(await emails(k, "archived")).toEqual([]);

    await act(k, "snooze", { email_lead_map_id: ann, snoozed_until: future });
    const snoozed = await list(k, "snoozed");
    expect(snoozed.body.messages).toEqual([
      expect.objectContaining({ campaign_lead_map_id: String(ann), is_snoozed: true, snoozed_until: new Date(future).toISOString(), email_status: "Replied" }),
    ]);
    expect(snoozed.body.total_count).toBe(1);
    expect(await emails(k, "inbox-replies")).toEqual(["bob@act.example"]);
    // Archiving a snoozed conversation ends the snooze: the states exclude each other.
    await act(k, "archive", { email_lead_map_id: ann });
    expect(await emails(k, "snoozed")).toEqual([]);
    await act(k, "snooze", { email_lead_map_id: ann, snoozed_until: future });
    expect(await emails(k, "archived")).toEqual([]);
    await act(k, "unsnooze", { email_lead_map_id: ann });
    expect(await emails(k, "snoozed")).toEqual([]);
    expect(await emails(k, "inbox-replies")).toEqual(["bob@act.example", "ann@act.example"]);
  });

  it("refuses a snooze that is not in the future, or not a date, with 422", async () => {
    const { k, ann } = await inbox();
    for (const snoozed_until of [new Date(Date.now() - 1000).toISOString(), "tomorrow", 5]) {
      const { status, body } = await act(k, "snooze", { email_lead_map_id: ann, snoozed_until });
      expect(status).toBe(422);
      expect(body).toMatchObject({ details: expect.arrayContaining([expect.objectContaining({ path: "snoozed_until" })]) });
    }
    expect(await record(ann)).toMatchObject({ snoozedUntil: null });
  });

  it("recategorises a lead, which analytics follows (rules 5 and 6)", async () => {
    const { k, campaign, ann, bob } = await inbox();
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ total_reply_count: "3", non_ooo_reply_count: "1" });
    expect((await act(k, "update-category", { email_lead_map_id: ann, category_id: 2 }, "PATCH")).body).toEqual({ ok: true });
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ total_reply_count: "3", non_ooo_reply_count: "3" });
    await act(k, "update-category", { email_lead_map_id: bob, category_id: 6 }, "PATCH");
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ non_ooo_reply_count: "2" });
    await act(k, "update-category", { email_lead_map_id: bob, category_id: null }, "PATCH");
    expect(await record(bob)).toMatchObject({ categoryId: null });
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ non_ooo_reply_count: "3" });
    const unknown = await act(k, "update-category", { email_lead_map_id: bob, category_id: 999 }, "PATCH");
    expect(unknown.status).toBe(422);
  });

  it("ignores one reply by hand, which leaves reply_count (rule 3) and shows in the history", async () => {
    const { k, campaign, ann } = await inbox();
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "3", total_reply_count: "3" });
    const stats_id = String(await statsId(campaign, "ann-2"));
    expect((await act(k, "ignore-reply", { email_lead_map_id: ann, stats_id })).body).toEqual({ ok: true });
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "2", total_reply_count: "3" });
    const { body } = await list(k, "inbox-replies", { filters: { search: "ann@" } }, true);
    expect(body.messages[0]!.email_history!.find((m) => m.stats_id === stats_id)).toMatchObject({ ignored: true });

    const [sent] = await eventsOf(campaign, "SENT");
    const notAReply = await act(k, "ignore-reply", { email_lead_map_id: ann, stats_id: sent!.id });
    expect(notAReply.status).toBe(404);
    expect(notAReply.body).toEqual({ error: "Reply not found" });
  });

  it("answers another tenant's email_lead_map_id with 404 in every action and task route, changing nothing", async () => {
    const { ann } = await inbox();
    const stranger = await provisionAccount();
    const clientId = await createClient(stranger.apiKey);
    const clientKey = await createClientKey(stranger.apiKey, clientId);
    const attempts: [string, string, Record<string, unknown>][] = [
      ["PATCH", "change-read-status", { read_status: true }],
      ["PATCH", "update-category", { category_id: 1 }],
      ["POST", "update-team-member", { team_member_id: 1 }],
      ["POST", "snooze", { snoozed_until: new Date(Date.now() + 60_000).toISOString() }],
      ["POST", "unsnooze", {}],
      ["POST", "archive", {}],
      ["POST", "unarchive", {}],
      ["POST", "ignore-reply", { stats_id: 1 }],
      ["POST", "create-task", { name: "Call back" }],
    ];
    const before = await record(ann);
    for (const apiKey of [stranger.apiKey, clientKey.api_key]) {
      for (const [method, path, body] of attempts) {
        const answer = await act(apiKey, path, { email_lead_map_id: ann, ...body }, method);
        expect(answer.status, path).toBe(404);
        expect(answer.body, path).toEqual({ error: "Lead not found" });
      }
      const tasks = await callJson(`/api/v1/master-inbox/tasks?email_lead_map_id=${ann}`, { apiKey });
      expect(tasks.status).toBe(404);
    }
    expect(await record(ann)).toEqual(before);
    expect(await taskCount(ann)).toBe(0);
  });
});

describe("tasks", () => {
  it("creates a task exactly as the interface shows, MEDIUM by default, and lists the lead's tasks", async () => {
    const { k, ann } = await inbox();
    const plain = await act(k, "create-task", { email_lead_map_id: ann, name: "Send pricing" });
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({
      success: true,
      message: "Task created successfully",
      data: { task_id: expect.any(Number), email_lead_map_id: ann, name: "Send pricing", priority: "MEDIUM", due_date: null },
    });
    const dated = await act(k, "create-task", {
      email_lead_map_id: ann,
      name: "Follow up",
      description: "After the demo",
      priority: "HIGH",
      due_date: "2026-12-01T09:30:00+01:00",
    });
    expect(dated.body.data).toMatchObject({ priority: "HIGH", due_date: "2026-12-01T08:30:00.000Z" });
    const dayOnly = await act(k, "create-task", { email_lead_map_id: ann, name: "Check in", due_date: "2026-12-24" });
    expect(dayOnly.body.data).toMatchObject({ due_date: "2026-12-24T00:00:00.000Z" });

    const { status, body } = await callJson<{ ok: boolean; data: Record<string, unknown>[] }>(
      `/api/v1/master-inbox/tasks?email_lead_map_id=${ann}`,
      { apiKey: k },
    );
    expect(status).toBe(200);
    expect(body.data.map((t) => t.name)).toEqual(["Send pricing", "Follow up", "Check in"]);
    expect(body.data[1]).toEqual({
      task_id: (dated.body.data as { task_id: number }).task_id,
      email_lead_map_id: ann,
      name: "Follow up",
      description: "After the demo",
      priority: "HIGH",
      due_date: "2026-12-01T08:30:00.000Z",
      created_at: expect.any(String),
    });
  });

  it("refuses a bad priority, due date, missing name or unknown record", async () => {
    const { k, ann } = await inbox();
    const cases: [Record<string, unknown>, number, string?][] = [
      [{ email_lead_map_id: ann, name: "x", priority: "URGENT" }, 422, "priority"],
      [{ email_lead_map_id: ann, name: "x", due_date: "next week" }, 422, "due_date"],
      [{ email_lead_map_id: ann, name: "x", due_date: "2026-02-30" }, 422, "due_date"],
      [{ email_lead_map_id: ann }, 422, "name"],
      [{ name: "x" }, 422, "email_lead_map_id"],
      [{ email_lead_map_id: 987_654_321, name: "x" }, 404],
    ];
    for (const [body, status, path] of cases) {
      const answer = await act(k, "create-task", body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      if (path) expect(answer.body).toMatchObject({ details: [expect.objectContaining({ path })] });
    }
    expect(await taskCount(ann)).toBe(0);
  });
});

describe("snooze release", () => {
  it("keeps a conversation snoozed until T, and the cron at T returns it to the inbox", async () => {
    const { k, ann } = await inbox();
    const until = Date.now() + 3_600_000;
    await act(k, "snooze", { email_lead_map_id: ann, snoozed_until: new Date(until).toISOString() });

    await runCron(until - 60_000);
    expect(await emails(k, "snoozed")).toEqual(["ann@act.example"]);
    expect(await record(ann)).toMatchObject({ snoozedUntil: new Date(until) });

    await runCron(until);
    expect(await record(ann)).toMatchObject({ snoozedUntil: null });
    expect(await emails(k, "snoozed")).toEqual([]);
    const { body } = await list(k, "inbox-replies", { filters: { search: "ann@" } });
    expect(body.messages).toEqual([expect.objectContaining({ is_snoozed: false, snoozed_until: null })]);
  });

  it("answers the same from the listings when the cron has not run yet", async () => {
    const { k, ann } = await inbox();
    await setRecord(ann, { snoozedUntil: new Date(Date.now() - 1000) });
    expect(await emails(k, "snoozed")).toEqual([]);
    const { body } = await list(k, "inbox-replies", { filters: { search: "ann@" } });
    expect(body.messages).toEqual([expect.objectContaining({ is_snoozed: false, snoozed_until: null })]);
  });
});
