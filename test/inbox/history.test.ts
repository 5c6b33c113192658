import { describe, expect, it } from "vitest";
import { callJson, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { personOf as leadIdOf } from "../db";

describe("a lead's message history", () => {
  it("lists the thread oldest first with each email's opens and clicks, in the contract's shape", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["ann@hist.example", "other@hist.example"]);
    await ingestOk(account.apiKey, campaign, [
      { type: "SENT", lead_email: "ann@hist.example", occurred_at: "2026-03-01T10:00:00Z", sequence_number: 1, subject: "Hi", body: "<p>Hello <b>Ann</b></p>", from_email: "me@acme.example", to_email: "ann@hist.example", message_id: "<1@acme>" },
      { type: "OPEN", lead_email: "ann@hist.example", occurred_at: "2026-03-01T11:00:00Z", sequence_number: 1 },
      { type: "OPEN", lead_email: "ann@hist.example", occurred_at: "2026-03-01T12:00:00Z", sequence_number: 1 },
      { type: "CLICK", lead_email: "ann@hist.example", occurred_at: "2026-03-01T12:05:00Z", sequence_number: 1, link_url: "https://acme.example/offer" },
      { type: "REPLY", lead_email: "ann@hist.example", occurred_at: "2026-03-02T09:00:00Z", sequence_number: 1, body: "Sounds good", from_email: "ann@hist.example", message_id: "<r@ann>", cc_emails: ["cfo@hist.example", "Ops@Hist.example"] },
      { type: "SENT", lead_email: "other@hist.example", occurred_at: "2026-03-01T10:00:00Z" },
    ]);
    const lead = await leadIdOf(map["ann@hist.example"]!);
    const { status, body } = await callJson<{ history: Record<string, unknown>[]; from: string | null; to: string }>(
      `/api/v1/campaigns/${campaign}/leads/${lead}/message-history?show_plain_text_response=true`,
      { apiKey: account.apiKey },
    );
    expect(status).toBe(200);
    expect(body.to).toBe("ann@hist.example");
    expect(body.from).toBe("me@acme.example");
    expect(body.history).toEqual([
      expect.objectContaining({ type: "SENT", message_id: "<1@acme>", email_body: "Hello Ann", email_seq_number: "1", open_count: 2, click_count: 1, click_details: { "https://acme.example/offer": true }, ignored: false, cc: null, bcc: null }),
      expect.objectContaining({ type: "REPLY", message_id: "<r@ann>", email_body: "Sounds good", time: "2026-03-02T09:00:00.000Z", cc: "cfo@hist.example, ops@hist.example" }),
    ]);
    expect(body.history[1]).not.toHaveProperty("open_count");

    const later = await callJson<{ history: unknown[] }>(`/api/v1/campaigns/${campaign}/leads/${lead}/message-history?event_time_gt=2026-03-01T13:00:00Z`, { apiKey: account.apiKey });
    expect(later.body.history).toHaveLength(1);

    // CONTRACT 0, in: any ISO 8601. A time without a zone is UTC: the send at 10:00Z is not after 10:00, but is after 09:59:59.999.
    const after = async (time: string) =>
      callJson<{ history: { type: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${lead}/message-history?event_time_gt=${encodeURIComponent(time)}`, { apiKey: account.apiKey });
    for (const [time, types] of [
      ["2026-03-01T10:00:00", ["REPLY"]],
      ["2026-03-01T09:59:59.999", ["SENT", "REPLY"]],
      ["2026-03-01T10:00", ["REPLY"]],
      ["2026-03-01 09:59", ["SENT", "REPLY"]],
      ["2026-03-01T11:00:00+0100", ["REPLY"]],
      ["2026-03-01T10:59:59,9999+01", ["SENT", "REPLY"]],
    ] as const) {
      const { status, body } = await after(time);
      expect(status, time).toBe(200);
      expect(body.history.map((message) => message.type), time).toEqual(types);
    }
    // An unencoded + (curl with the time pasted in) arrives as a space: read as the + it was.
    const unencoded = await callJson<{ history: { type: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${lead}/message-history?event_time_gt=2026-03-01T11:00:00+01:00`, { apiKey: account.apiKey });
    expect(unencoded.status).toBe(200);
    expect(unencoded.body.history.map((message) => message.type)).toEqual(["REPLY"]);
    const wrong = await after("2026-03-01T10:00:00 UTC");
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({ error: "Validation failed", details: [{ path: "event_time_gt", message: "Must be an ISO 8601 date-time" }] });
  });

  it("answers 404 for a lead not in the campaign and for another account's campaign", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const other = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, other, ["x@hist.example"]);
    const lead = await leadIdOf(map["x@hist.example"]!);
    expect((await callJson(`/api/v1/campaigns/${campaign}/leads/${lead}/message-history`, { apiKey: account.apiKey })).body).toEqual({ error: "Lead not found in campaign" });
    expect((await callJson(`/api/v1/campaigns/${other}/leads/${lead}/message-history`, { apiKey: stranger.apiKey })).status).toBe(404);
  });
});
