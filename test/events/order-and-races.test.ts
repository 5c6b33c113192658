import { afterEach, describe, expect, it, vi } from "vitest";
import { addLeads, analytics, createCampaign, ingest, ingestOk } from "../campaigns/fixtures";
import { act } from "../inbox/fixtures";
import { recordRow } from "../db";
import { provisionAccount, fileEnv } from "../helpers";
import { createWebhook, deliveriesOf } from "../webhooks/fixtures";

const T = (day: number, hour = 10) => `2026-03-${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:00:00Z`;
const MARCH = { start_date: "2026-03-01", end_date: "2026-03-30" };

async function setup(emails: string[]) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const ids = await addLeads(account.apiKey, campaign, emails);
  return { k: account.apiKey, campaign, ids };
}

const reply = (email: string, occurred_at: string, category_id: number, event_id?: string) => ({
  ...(event_id && { event_id }),
  type: "REPLY",
  lead_email: email,
  occurred_at,
  category_id,
});

afterEach(() => vi.restoreAllMocks());

describe("the latest categorised reply wins", () => {
  it("keeps the newer category when an older categorised reply arrives later (sequential)", async () => {
    const { k, campaign, ids } = await setup(["late@order.example"]);
    await ingestOk(k, campaign, [reply("late@order.example", T(5), 2)]);
    await ingestOk(k, campaign, [reply("late@order.example", T(3), 6)]);
    expect(await recordRow(ids["late@order.example"]!)).toMatchObject({ categoryId: 2 });
    // Out-of-office (6) did not take over, so the non-OOO reply count keeps both replies.
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ total_reply_count: "2", non_ooo_reply_count: "2" });
  });

  it("ends on the latest category whatever order parallel calls commit in", async () => {
    const emails = Array.from({ length: 10 }, (_, i) => `p${i}@order.example`);
    const { k, campaign, ids } = await setup(emails);
    await Promise.all(
      emails.flatMap((email) => [
        ingest(k, campaign, [reply(email, T(2), 6)]),
        ingest(k, campaign, [reply(email, T(9), 3)]),
        ingest(k, campaign, [reply(email, T(4), 5)]),
      ]),
    );
    for (const email of emails) expect(await recordRow(ids[email]!)).toMatchObject({ categoryId: 3, categorySetAt: new Date(T(9)) });
  });

  it("lets a category set by hand stand against an older categorised reply arriving later", async () => {
    const { k, campaign, ids } = await setup(["hand@order.example"]);
    const id = ids["hand@order.example"]!;
    await ingestOk(k, campaign, [reply("hand@order.example", T(5), 2)]);
    await act(k, "update-category", { email_lead_map_id: id, category_id: 4 }, "PATCH");
    await ingestOk(k, campaign, [reply("hand@order.example", T(6), 6)]);
    expect(await recordRow(id)).toMatchObject({ categoryId: 4 });
  });
});

describe("final states", () => {
  it("never lets a concurrent SENT undo an UNSUBSCRIBE or a BOUNCE", async () => {
    const emails = Array.from({ length: 30 }, (_, i) => `r${i}@race.example`);
    const { k, campaign, ids } = await setup(emails);
    await Promise.all(
      emails.flatMap((email, i) => [
        ingest(k, campaign, [{ type: i % 2 ? "UNSUBSCRIBE" : "BOUNCE", lead_email: email, occurred_at: T(2) }]),
        ingest(k, campaign, [{ type: "SENT", lead_email: email, occurred_at: T(3) }]),
      ]),
    );
    for (const [i, email] of emails.entries()) {
      expect(await recordRow(ids[email]!)).toMatchObject({ state: i % 2 ? "STOPPED" : "BLOCKED", hasSent: true });
    }
  });

  it("keeps STOPPED over BLOCKED in either order", async () => {
    const { k, campaign, ids } = await setup(["a@final.example", "b@final.example"]);
    await ingestOk(k, campaign, [{ type: "UNSUBSCRIBE", lead_email: "a@final.example", occurred_at: T(2) }]);
    await ingestOk(k, campaign, [{ type: "BOUNCE", lead_email: "a@final.example", occurred_at: T(3) }]);
    await ingestOk(k, campaign, [{ type: "BOUNCE", lead_email: "b@final.example", occurred_at: T(2) }]);
    await ingestOk(k, campaign, [{ type: "UNSUBSCRIBE", lead_email: "b@final.example", occurred_at: T(3) }]);
    expect(await recordRow(ids["a@final.example"]!)).toMatchObject({ state: "STOPPED" });
    expect(await recordRow(ids["b@final.example"]!)).toMatchObject({ state: "STOPPED" });
  });
});

describe("deliveries follow what was stored", () => {
  it("delivers once for parallel copies of one event, category change included", async () => {
    const emails = Array.from({ length: 20 }, (_, i) => `c${i}@copies.example`);
    const { k, campaign } = await setup(emails);
    const hook = await createWebhook(k, campaign, { event_types: ["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED"] });
    const results = await Promise.all(
      emails.flatMap((email) => [1, 2, 3].map(() => ingest(k, campaign, [reply(email, T(4), 2, `reply-${email}`)]))),
    );
    expect(results.reduce((sum, r) => sum + r.body.accepted, 0)).toBe(emails.length);
    const deliveries = await deliveriesOf(hook.id);
    expect(deliveries.filter((d) => d.event_type === "EMAIL_REPLY")).toHaveLength(emails.length);
    expect(deliveries.filter((d) => d.event_type === "LEAD_CATEGORY_UPDATED")).toHaveLength(emails.length);
  });

  it("delivers nothing for a categorised reply that lost to a newer one", async () => {
    const { k, campaign } = await setup(["lost@order.example"]);
    const hook = await createWebhook(k, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    await ingestOk(k, campaign, [reply("lost@order.example", T(5), 2)]);
    await ingestOk(k, campaign, [reply("lost@order.example", T(3), 6)]);
    const payloads = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload));
    expect(payloads.map((p) => p.lead_category)).toEqual([{ old_id: null, old_name: null, new_id: 2, new_name: "Meeting Request" }]);
  });

  it("names the old category in an ingested category change", async () => {
    const { k, campaign } = await setup(["old@order.example"]);
    const hook = await createWebhook(k, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    await ingestOk(k, campaign, [reply("old@order.example", T(3), 2)]);
    await ingestOk(k, campaign, [reply("old@order.example", T(5), 1)]);
    const payloads = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload));
    expect(payloads.map((p) => p.lead_category)).toEqual([
      { old_id: null, old_name: null, new_id: 2, new_name: "Meeting Request" },
      { old_id: 2, old_name: "Meeting Request", new_id: 1, new_name: "Interested" },
    ]);
  });

  it("stores every delivery with its event even when the queue refuses them, and the cron sends them later", async () => {
    const { k, campaign } = await setup(["q@outbox.example"]);
    const hook = await createWebhook(k, campaign, { event_types: ["EMAIL_SENT"] });
    vi.spyOn(fileEnv().WEBHOOK_QUEUE, "sendBatch").mockRejectedValue(new Error("queue unavailable"));
    const { status } = await ingest(k, campaign, [{ type: "SENT", lead_email: "q@outbox.example", occurred_at: T(2) }]);
    expect(status).toBe(200);
    const [stored] = await deliveriesOf(hook.id);
    expect(stored).toMatchObject({ status: "pending", event_type: "EMAIL_SENT" });
  });
});

describe("the inbox", () => {
  it("marks a read conversation unread when a new reply arrives", async () => {
    const { k, campaign, ids } = await setup(["unread@inbox.example"]);
    const id = ids["unread@inbox.example"]!;
    await ingestOk(k, campaign, [{ type: "REPLY", lead_email: "unread@inbox.example", occurred_at: T(2) }]);
    await act(k, "change-read-status", { email_lead_map_id: id, read_status: true }, "PATCH");
    expect(await recordRow(id)).toMatchObject({ isRead: true });
    await ingestOk(k, campaign, [{ type: "OPEN", lead_email: "unread@inbox.example", occurred_at: T(3) }]);
    expect(await recordRow(id)).toMatchObject({ isRead: true });
    await ingestOk(k, campaign, [{ type: "REPLY", lead_email: "unread@inbox.example", occurred_at: T(4) }]);
    expect(await recordRow(id)).toMatchObject({ isRead: false });
  });
});
