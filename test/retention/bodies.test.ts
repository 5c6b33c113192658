import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BODY_REF } from "../../src/platform/bodies";
import { utf8Length } from "../../src/platform/bytes";
import { schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { consumeDelivery, createWebhook, deliveriesOf, interceptReceiver } from "../webhooks/fixtures";
import { eventually, replyIds, sentWorld } from "../triage/fixtures";

// Over the 4096-byte default, in several scripts and with characters of 1 to 4 UTF-8 bytes, so a
// cut or a re-encoding anywhere would show.
const LONG_REPLY = Array.from({ length: 400 }, (_, i) => `Line ${i}: Ünïcödé ✓ 日本語 😀 <b>bold</b> & "quotes"\n`).join("");
const LONG_SEND = `<html><body>${Array.from({ length: 300 }, (_, i) => `<p>Paragraph ${i} — naïve café 🚀</p>`).join("")}</body></html>`;
const SHORT_REPLY = "Sounds good, call me Tuesday.";

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

async function scene() {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const hook = await createWebhook(account.apiKey, campaign);
  const lead = "ann@acme.example";
  const records = await addLeads(account.apiKey, campaign, [lead, "bob@acme.example"]);
  await ingestOk(account.apiKey, campaign, [
    { event_id: "s1", type: "SENT", lead_email: lead, occurred_at: "2026-03-01T10:00:00Z", subject: "Hello", body: LONG_SEND, message_id: "<s1@x>" },
    { event_id: "r1", type: "REPLY", lead_email: lead, occurred_at: "2026-03-01T11:00:00Z", from_email: lead, subject: "Re: Hello", body: LONG_REPLY, message_id: "<r1@x>" },
    { event_id: "s2", type: "SENT", lead_email: "bob@acme.example", occurred_at: "2026-03-01T10:00:00Z", subject: "Hi", body: "<p>short</p>" },
    { event_id: "r2", type: "REPLY", lead_email: "bob@acme.example", occurred_at: "2026-03-01T12:00:00Z", from_email: "bob@acme.example", body: SHORT_REPLY },
  ]);
  const leadId = (await testDb().select({ leadId: schema.campaignLeads.leadId }).from(schema.campaignLeads).where(eq(schema.campaignLeads.id, records[lead]!)).get())!.leadId;
  return { account, campaign, hook, recordId: records[lead]!, leadId };
}

async function storedEvent(campaign: number, eventId: string) {
  const rows = await testDb().select().from(schema.events).where(eq(schema.events.campaignId, campaign)).all();
  return rows.find((row) => row.eventId === eventId)!;
}

describe("message bodies above BODY_OFFLOAD_BYTES live in R2 (BODIES), D1 holds their key", () => {
  it("stores a long body in R2 byte for byte and only a reference in D1; a short one stays in D1", async () => {
    const { campaign } = await scene();
    const reply = await storedEvent(campaign, "r1");
    expect(utf8Length(LONG_REPLY)).toBeGreaterThan(4096);
    expect(reply.body!.startsWith(BODY_REF)).toBe(true);
    expect(reply.body!.length).toBeLessThan(100);
    const object = await fileEnv().BODIES.get(reply.body!.slice(BODY_REF.length));
    expect(await object!.text()).toBe(LONG_REPLY);
    // Search keeps the first BODY_OFFLOAD_BYTES, folded.
    expect(utf8Length(reply.bodyFolded!)).toBeLessThanOrEqual(4096);
    expect(reply.bodyFolded).toContain("line 0: ünïcödé");
    expect((await storedEvent(campaign, "s1")).body!.startsWith(BODY_REF)).toBe(true);
    expect((await storedEvent(campaign, "r2")).body).toBe(SHORT_REPLY);
  });

  it("reads back identical through message history (one lead, several), the inbox, statistics, lead statistics, the lead filter and lead activities", async () => {
    const { account, campaign, recordId, leadId } = await scene();
    const key = account.apiKey;

    const history = await callJson<{ history: { type: string; email_body: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${leadId}/message-history`, { apiKey: key });
    expect(history.status).toBe(200);
    expect(history.body.history.map((m) => m.email_body)).toEqual([LONG_SEND, LONG_REPLY]);

    const conversation = await callJson<{ data: { email_history: { email_body: string }[] } }>(`/api/v1/master-inbox/${recordId}`, { apiKey: key });
    expect(conversation.body.data.email_history.map((m) => m.email_body)).toEqual([LONG_SEND, LONG_REPLY]);

    const listing = await callJson<{ messages: { email_lead_map_id: number; email_history: { email_body: string }[] }[] }>(
      "/api/v1/master-inbox/inbox-replies?fetch_message_history=true",
      { method: "POST", apiKey: key, body: { filters: { campaignId: [campaign] } } },
    );
    const listed = listing.body.messages.find((m) => m.email_lead_map_id === recordId)!;
    expect(listed.email_history.map((m) => m.email_body)).toEqual([LONG_SEND, LONG_REPLY]);

    const statistics = await callJson<{ data: { lead_email: string; email_message: string }[] }>(`/api/v1/campaigns/${campaign}/statistics`, { apiKey: key });
    expect(statistics.body.data.find((row) => row.lead_email === "ann@acme.example")!.email_message).toBe(LONG_SEND);

    const leadStats = await callJson<{ data: { email_lead_map_id: number; history: { email_body: string }[] }[] }>(`/api/v1/campaigns/${campaign}/leads-statistics`, { apiKey: key });
    expect(leadStats.body.data.find((row) => row.email_lead_map_id === recordId)!.history.map((m) => m.email_body)).toEqual([LONG_SEND, LONG_REPLY]);

    const bulk = await callJson<Record<string, { history: { email_body: string }[] }>>(`/api/v1/campaigns/${campaign}/message-history-for-leads/x`, {
      method: "POST",
      apiKey: key,
      body: { lead_ids: [leadId] },
    });
    expect(bulk.body[String(leadId)]!.history.map((m) => m.email_body)).toEqual([LONG_SEND, LONG_REPLY]);

    const filtered = await callJson<{ leads: { id: number; latest_email_stats: { email_body: string }; latest_reply_stats: { email_body: string } }[] }>(
      `/api/v1/campaigns/${campaign}/leads/filter`,
      { method: "POST", apiKey: key, body: { fieldSet: "active_table" } },
    );
    const row = filtered.body.leads.find((lead) => lead.id === recordId)!;
    expect([row.latest_email_stats.email_body, row.latest_reply_stats.email_body]).toEqual([LONG_SEND, LONG_REPLY]);

    const activities = await callJson<{ data: { email_lead_map_id: number; activities: unknown }[] }>("/api/v1/campaigns/all-leads-activities", { apiKey: key });
    const mine = JSON.stringify(activities.body.data.find((row) => row.email_lead_map_id === recordId)!.activities);
    expect(mine).toContain(JSON.stringify(LONG_REPLY));
    expect(mine).toContain(JSON.stringify(LONG_SEND));
    expect(mine).not.toContain(BODY_REF);
  });

  it("a webhook delivery stores the reference and sends (and shows) the whole body", async () => {
    const { account, hook } = await scene();
    const stored = (await deliveriesOf(hook.id)).filter((d) => d.event_type === "EMAIL_REPLY");
    const ann = stored.find((d) => JSON.parse(d.payload).sl_lead_email === "ann@acme.example")!;
    expect(ann.payload).toContain(BODY_REF);
    expect(ann.payload).not.toContain("Line 399");

    await consumeDelivery(ann.id);
    const sent = receiver.received.filter((r) => r.request.headers.get("webhook-id") === ann.message_id).at(-1)!;
    const payload = JSON.parse(sent.body) as { reply_message: { html: string; text: string }; reply_body: string; preview_text: string };
    expect(payload.reply_message.html).toBe(LONG_REPLY);
    expect(payload.reply_message.text).toBe(LONG_REPLY);
    expect(payload.reply_body).toBe(LONG_REPLY);
    expect(payload.preview_text.startsWith("Line 0: Ünïcödé")).toBe(true);
    expect(sent.body).not.toContain(BODY_REF);

    const shown = await callJson<{ data: { payload: { reply_body: string } } }>(`/api/v1/webhook/${hook.id}/deliveries/${ann.id}`, { apiKey: account.apiKey });
    expect(shown.body.data.payload.reply_body).toBe(LONG_REPLY);
  });

  it("a long reply categorised off the request path: its LEAD_CATEGORY_UPDATED delivery keeps the reference and sends the body whole", async () => {
    const { account, campaign } = await sentWorld(["gone@long.example"]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    const text = `Not interested. Please remove me from your mailing list.\n\n${LONG_REPLY}`;
    await ingestOk(account.apiKey, campaign, [{ event_id: "dnc", type: "REPLY", lead_email: "gone@long.example", from_email: "gone@long.example", occurred_at: "2026-03-02T10:00:00Z", body: text }]);
    const [reply] = await replyIds(campaign);
    expect(await eventually(reply!.id)).toMatchObject({ category_name: "Do Not Contact" });
    const [change] = (await deliveriesOf(hook.id)).filter((d) => d.event_type === "LEAD_CATEGORY_UPDATED");
    expect(change!.payload).toContain(BODY_REF);
    expect(change!.payload).not.toContain("Line 399");
    await consumeDelivery(change!.id);
    const sent = JSON.parse(receiver.received.filter((r) => r.request.headers.get("webhook-id") === change!.message_id).at(-1)!.body) as {
      last_reply: { html: string; text: string };
      history: { type: string; email_body: string }[];
    };
    expect(sent.last_reply.text).toBe(text);
    expect(sent.history.find((m) => m.type === "REPLY")!.email_body).toBe(text);
  });

  it("a body whose object is gone reads as empty, and every reader still answers", async () => {
    const { account, campaign, leadId, recordId } = await scene();
    const reply = await storedEvent(campaign, "r1");
    await fileEnv().BODIES.delete(reply.body!.slice(BODY_REF.length));
    const history = await callJson<{ history: { type: string; email_body: string }[] }>(`/api/v1/campaigns/${campaign}/leads/${leadId}/message-history`, { apiKey: account.apiKey });
    expect(history.status).toBe(200);
    expect(history.body.history.map((m) => m.email_body)).toEqual([LONG_SEND, ""]);
    expect((await callJson(`/api/v1/master-inbox/${recordId}`, { apiKey: account.apiKey })).status).toBe(200);
  });

  it("deleting the campaign removes the rows and leaves every reader answering; the objects stay in R2, unreferenced", async () => {
    const { account, campaign, recordId } = await scene();
    const key = (await storedEvent(campaign, "r1")).body!.slice(BODY_REF.length);
    expect((await callJson(`/api/v1/campaigns/${campaign}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(200);
    expect(await testDb().select().from(schema.events).where(eq(schema.events.campaignId, campaign)).all()).toEqual([]);
    const listing = await callJson<{ messages: unknown[] }>("/api/v1/master-inbox/inbox-replies?fetch_message_history=true", { method: "POST", apiKey: account.apiKey, body: {} });
    expect(listing.status).toBe(200);
    expect((await callJson(`/api/v1/master-inbox/${recordId}`, { apiKey: account.apiKey })).status).toBe(404);
    expect((await callJson("/api/v1/campaigns/all-leads-activities", { apiKey: account.apiKey })).status).toBe(200);
    expect(await fileEnv().BODIES.head(key)).not.toBeNull();
  });

  it("another account's reference is not read back, even when written into a body", async () => {
    const { campaign } = await scene();
    const foreign = (await storedEvent(campaign, "r1")).body!;
    const other = await provisionAccount();
    const otherCampaign = await createCampaign(other.apiKey);
    const records = await addLeads(other.apiKey, otherCampaign, ["eve@evil.example"]);
    await ingestOk(other.apiKey, otherCampaign, [{ event_id: "x", type: "REPLY", lead_email: "eve@evil.example", occurred_at: "2026-03-01T11:00:00Z", body: foreign }]);
    // A body spelled like a reference is itself kept in R2, so it comes back as written.
    const row = await storedEvent(otherCampaign, "x");
    expect(row.body).not.toBe(foreign);
    expect(row.body!.startsWith(`${BODY_REF}bodies/${other.id}/`)).toBe(true);
    const conversation = await callJson<{ data: { email_history: { email_body: string }[] } }>(`/api/v1/master-inbox/${records["eve@evil.example"]}`, { apiKey: other.apiKey });
    expect(conversation.body.data.email_history.map((m) => m.email_body)).toEqual([foreign]);
  });
});
