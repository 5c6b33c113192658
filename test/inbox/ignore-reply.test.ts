import { describe, expect, it } from "vitest";
import { createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { addLeads, analytics, createCampaign, ingestOk } from "../campaigns/fixtures";
import { act } from "./fixtures";

const MARCH = { start_date: "2026-03-01", end_date: "2026-03-30" };

/** A campaign with one conversation of two replies. */
async function conversation() {
  const account = await provisionAccount();
  const k = account.apiKey;
  const campaign = await createCampaign(k);
  const ids = await addLeads(k, campaign, ["ann@ign.example"]);
  await ingestOk(k, campaign, [
    { type: "SENT", lead_email: "ann@ign.example", occurred_at: "2026-03-01T10:00:00Z" },
    { event_id: "r1", type: "REPLY", lead_email: "ann@ign.example", occurred_at: "2026-03-02T10:00:00Z" },
    { event_id: "r2", type: "REPLY", lead_email: "ann@ign.example", occurred_at: "2026-03-03T10:00:00Z" },
  ]);
  const stat = async (eventId: string) =>
    (await fileEnv().DB.prepare("SELECT id FROM events WHERE campaign_id = ? AND event_id = ?").bind(campaign, eventId).first<{ id: number }>())!.id;
  return { account, k, campaign, ann: ids["ann@ign.example"]!, r1: await stat("r1"), r2: await stat("r2") };
}

const flags = (id: number) => fileEnv().DB.prepare("SELECT ignored, ignored_by_hand FROM events WHERE id = ?").bind(id).first<{ ignored: number; ignored_by_hand: number }>();

describe("PATCH /master-inbox/ignore-reply (CONTRACT 21.3)", () => {
  it("ignores a reply and counts it again, with counts following at once", async () => {
    const { k, campaign, r1 } = await conversation();
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "2" });
    const ignored = await act(k, "ignore-reply", { id: r1, ignore_reply: true }, "PATCH");
    expect(ignored.status).toBe(200);
    expect(ignored.body).toEqual({ ok: true, message: "Reply ignored successfully", data: { success: true, updated: 1 } });
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "1" });
    expect(await flags(r1)).toEqual({ ignored: 1, ignored_by_hand: 1 });
    const counted = await act(k, "ignore-reply", { id: String(r1), ignore_reply: false }, "PATCH");
    expect(counted.body).toEqual({ ok: true, message: "Reply counted again", data: { success: true, updated: 1 } });
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "2" });
  });

  it("counts again a reply the automatic rules ignored", async () => {
    const { k, campaign, r2 } = await conversation();
    await fileEnv().DB.prepare("UPDATE events SET ignored = 1 WHERE id = ?").bind(r2).run();
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "1" });
    await act(k, "ignore-reply", { id: r2, ignore_reply: false }, "PATCH");
    expect(await flags(r2)).toEqual({ ignored: 0, ignored_by_hand: 0 });
    expect((await analytics(k, campaign, MARCH)).body).toMatchObject({ reply_count: "2" });
  });

  it("takes §4's body on PATCH (= ignore) and the hosted body on POST", async () => {
    const { k, ann, r1, r2 } = await conversation();
    const patched = await act(k, "ignore-reply", { email_lead_map_id: ann, stats_id: r1 }, "PATCH");
    expect(patched.body).toEqual({ ok: true, message: "Reply ignored successfully", data: { success: true, updated: 1 } });
    expect(await flags(r1)).toEqual({ ignored: 1, ignored_by_hand: 1 });
    const posted = await act(k, "ignore-reply", { id: r2, ignore_reply: true });
    expect(posted.body).toEqual({ ok: true, message: "Reply ignored successfully", data: { success: true, updated: 1 } });
    expect((await act(k, "ignore-reply", { email_lead_map_id: ann, stats_id: r2 })).body).toEqual({ ok: true });
  });

  it("answers an unknown, foreign or non-reply stat with 404, changing nothing", async () => {
    const { campaign, r1 } = await conversation();
    const stranger = await provisionAccount();
    const clientKey = await createClientKey(stranger.apiKey, await createClient(stranger.apiKey));
    const sent = (await fileEnv().DB.prepare("SELECT id FROM events WHERE campaign_id = ? AND type = 'SENT'").bind(campaign).first<{ id: number }>())!.id;
    const NOT_FOUND = { ok: false, error: "Email stat not found or access denied", message: "Email stat not found or access denied" };
    for (const apiKey of [stranger.apiKey, clientKey.api_key]) {
      const answer = await act(apiKey, "ignore-reply", { id: r1, ignore_reply: true }, "PATCH");
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(NOT_FOUND);
    }
    const owner = await conversation();
    expect((await act(owner.k, "ignore-reply", { id: sent, ignore_reply: true }, "PATCH")).status).toBe(404);
    expect((await act(owner.k, "ignore-reply", { id: 999_999_999, ignore_reply: true }, "PATCH")).body).toEqual(NOT_FOUND);
    expect(await flags(r1)).toEqual({ ignored: 0, ignored_by_hand: 0 });
  });

  it("answers bad input with 422", async () => {
    const { k, r1 } = await conversation();
    for (const body of [{}, { id: r1 }, { id: "abc", ignore_reply: true }, { id: r1, ignore_reply: "yes" }, { id: -1, ignore_reply: true }]) {
      expect((await act(k, "ignore-reply", body, "PATCH")).status, JSON.stringify(body)).toBe(422);
    }
  });
});
