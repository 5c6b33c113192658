import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventsOf, setWebhook, webhookRow } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createWebhook, deliveriesOf, interceptReceiver, RECEIVER } from "./fixtures";

const ALL_KINDS = [
  "EMAIL_SENT",
  "FIRST_EMAIL_SENT",
  "EMAIL_OPEN",
  "EMAIL_LINK_CLICK",
  "EMAIL_REPLY",
  "EMAIL_BOUNCE",
  "LEAD_UNSUBSCRIBED",
  "LEAD_CATEGORY_UPDATED",
  "CAMPAIGN_STATUS_CHANGED",
  "UNTRACKED_REPLIES",
  "MANUAL_STEP_REACHED",
  "EMAIL_ACCOUNT_DISCONNECTED",
];

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

describe("webhook management", () => {
  it("creates a webhook with its secret once, and reads, lists and updates it with exactly the interface's fields", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const created = await callJson<{ ok: boolean; data: Record<string, unknown>; secret: string }>(`/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { webhook_name: "CRM sync", webhook_url: RECEIVER, event_types: ["EMAIL_REPLY", "EMAIL_SENT"], categories: ["interested", 2] },
    });
    expect(created.status).toBe(200);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const expected = {
      id: expect.any(Number),
      email_campaign_id: campaign,
      name: "CRM sync",
      webhook_url: RECEIVER,
      event_type_map: Object.fromEntries(ALL_KINDS.map((kind) => [kind, kind === "EMAIL_REPLY" || kind === "EMAIL_SENT"])),
      category_id_map: { "1": "Interested", "2": "Meeting Request" },
      association_type: "campaign",
      client_id: null,
      webhook_type: null,
      event_types: ["EMAIL_SENT", "EMAIL_REPLY"],
      categories: ["Interested", "Meeting Request"],
      disabled_at: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    };
    expect(created.body).toEqual({ ok: true, data: expected, secret: created.body.secret });
    const id = created.body.data.id as number;

    const read = await callJson(`/api/v1/webhook/${id}`, { apiKey: account.apiKey });
    expect(read.body).toEqual({ ok: true, data: expected });
    const listed = await callJson(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: account.apiKey });
    expect(listed.body).toEqual([expected]);

    const updated = await callJson<{ data: Record<string, unknown>; secret?: string }>(`/api/v1/campaigns/${campaign}/webhooks`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { id, name: "Renamed", webhook_url: `${RECEIVER}/v2`, event_types: ["CAMPAIGN_STATUS_CHANGED"] },
    });
    expect(updated.body.secret).toBeUndefined();
    expect(updated.body.data).toMatchObject({
      id,
      name: "Renamed",
      webhook_url: `${RECEIVER}/v2`,
      category_id_map: {},
      event_type_map: expect.objectContaining({ CAMPAIGN_STATUS_CHANGED: true, EMAIL_REPLY: false }),
    });
    const stored = await webhookRow(id);
    expect(stored.secretCiphertext).toMatch(/^v1\.test\./);
    expect(JSON.stringify(stored)).not.toContain(created.body.secret.slice("whsec_".length));
  });

  it("deletes by body and by path", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const one = await createWebhook(account.apiKey, campaign);
    const two = await createWebhook(account.apiKey, campaign);
    const byBody = await callJson(`/api/v1/campaigns/${campaign}/webhooks`, { method: "DELETE", apiKey: account.apiKey, body: { id: one.id } });
    expect(byBody.body).toEqual({ ok: true });
    const byPath = await callJson(`/api/v1/campaigns/${campaign}/webhooks/${two.id}`, { method: "DELETE", apiKey: account.apiKey });
    expect(byPath.body).toEqual({ ok: true });
    expect((await callJson(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: account.apiKey })).body).toEqual([]);
    expect((await callJson(`/api/v1/webhook/${one.id}`, { apiKey: account.apiKey })).status).toBe(404);
  });

  it("refuses unsafe or malformed URLs, unknown kinds and unknown categories with 422", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const cases: [Record<string, unknown>, string][] = [
      [{ webhook_url: "http://hooks.example.com/x" }, "webhook_url"],
      [{ webhook_url: "https://203.0.113.9/x" }, "webhook_url"],
      [{ webhook_url: "https://[2001:db8::1]/x" }, "webhook_url"],
      [{ webhook_url: "https://0x7f000001/x" }, "webhook_url"],
      [{ webhook_url: "https://user:pass@hooks.example.com/x" }, "webhook_url"],
      [{ webhook_url: "https://localhost/x" }, "webhook_url"],
      [{ webhook_url: "https://printer.local/x" }, "webhook_url"],
      [{ webhook_url: "https://db.internal/x" }, "webhook_url"],
      [{ webhook_url: `https://hooks.example.com/${"a".repeat(2048)}` }, "webhook_url"],
      [{ webhook_url: "hooks.example.com" }, "webhook_url"],
      [{ event_types: ["EMAIL_DELIVERED"] }, "event_types.0"],
      [{ event_types: [] }, "event_types"],
      [{ categories: ["Nonexistent"] }, "categories.0"],
      [{ name: undefined }, "name"],
    ];
    for (const [override, path] of cases) {
      const { status, body } = await callJson(`/api/v1/campaigns/${campaign}/webhooks`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { name: "x", webhook_url: RECEIVER, event_types: ["EMAIL_SENT"], ...override },
      });
      expect(status, JSON.stringify(override)).toBe(422);
      expect(body).toMatchObject({ error: "Validation failed", details: expect.arrayContaining([expect.objectContaining({ path })]) });
    }
    expect((await callJson(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey: account.apiKey })).body).toEqual([]);
  });

  it("answers another tenant's webhook or campaign with 404 everywhere", async () => {
    const owner = await provisionAccount();
    const campaign = await createCampaign(owner.apiKey);
    const hook = await createWebhook(owner.apiKey, campaign);
    const stranger = await provisionAccount();
    const strangerCampaign = await createCampaign(stranger.apiKey);
    const clientId = await createClient(owner.apiKey);
    const clientKey = await createClientKey(owner.apiKey, clientId);
    for (const apiKey of [stranger.apiKey, clientKey.api_key]) {
      const attempts = [
        callJson(`/api/v1/webhook/${hook.id}`, { apiKey }),
        callJson(`/api/v1/campaigns/${campaign}/webhooks`, { apiKey }),
        callJson(`/api/v1/campaigns/${campaign}/webhooks/summary`, { apiKey }),
        callJson(`/api/v1/campaigns/${campaign}/webhooks/retrigger-failed-events`, { method: "POST", apiKey, body: {} }),
        callJson(`/api/v1/campaigns/${campaign}/webhooks/${hook.id}`, { method: "DELETE", apiKey }),
      ];
      for (const { status } of await Promise.all(attempts)) expect(status).toBe(404);
    }
    // Naming the foreign webhook under one's own campaign is no way in either.
    const sideways = await callJson(`/api/v1/campaigns/${strangerCampaign}/webhooks`, {
      method: "POST",
      apiKey: stranger.apiKey,
      body: { id: hook.id, name: "x", webhook_url: RECEIVER, event_types: ["EMAIL_SENT"] },
    });
    expect(sideways.status).toBe(404);
    expect(sideways.body).toEqual({ error: "Webhook not found" });
    expect((await callJson(`/api/v1/webhook/${hook.id}`, { apiKey: owner.apiKey })).status).toBe(200);
  });
});

describe("fan-out", () => {
  it("stores one delivery per (event, subscribed webhook) in the ingesting request, filtered by kind and category", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k, { name: "Fanout" });
    const ids = await addLeads(k, campaign, ["keen@fan.example", "meh@fan.example"]);
    const everything = await createWebhook(k, campaign, { event_types: ALL_KINDS.filter((kind) => kind !== "EMAIL_ACCOUNT_DISCONNECTED") });
    const interestedReplies = await createWebhook(k, campaign, { event_types: ["EMAIL_REPLY"], categories: [1] });
    await ingestOk(k, campaign, [
      { type: "SENT", lead_email: "keen@fan.example", occurred_at: "2026-03-01T10:00:00Z", sequence_number: 1, to_email: "keen@fan.example", subject: "Hi" },
      { type: "SENT", lead_email: "keen@fan.example", occurred_at: "2026-03-03T10:00:00Z", sequence_number: 2, body: "<p>Any news?</p>" },
      { type: "CLICK", lead_email: "keen@fan.example", occurred_at: "2026-03-03T11:00:00Z", link_url: "https://salvo.example/x" },
      { type: "BLOCK", lead_email: "meh@fan.example", occurred_at: "2026-03-03T11:00:00Z" },
      { type: "REPLY", event_id: "reply-keen", lead_email: "keen@fan.example", occurred_at: "2026-03-04T10:00:00Z", from_email: "keen@fan.example", body: "Yes!", category_id: 1, cc_emails: ["Boss@Fan.example"] },
      { type: "REPLY", lead_email: "meh@fan.example", occurred_at: "2026-03-04T10:00:00Z", from_email: "meh@fan.example", category_id: 3 },
    ]);
    const all = await deliveriesOf(everything.id);
    expect(all.map((d) => d.event_type).sort()).toEqual(
      [
        "EMAIL_SENT",
        "FIRST_EMAIL_SENT",
        "EMAIL_SENT",
        "EMAIL_LINK_CLICK",
        "EMAIL_REPLY",
        "EMAIL_REPLY",
        // both replies categorised their leads (BLOCK has no webhook kind)
        "LEAD_CATEGORY_UPDATED",
        "LEAD_CATEGORY_UPDATED",
      ].sort(),
    );
    expect(new Set(all.map((d) => d.message_id)).size).toBe(all.length);
    const reply = all.find((d) => d.event_type === "EMAIL_REPLY" && JSON.parse(d.payload).sl_lead_email === "keen@fan.example")!;
    const replyPayload = JSON.parse(reply.payload);
    expect(replyPayload).toEqual({
      webhook_id: everything.id,
      webhook_name: "CRM",
      webhook_url: RECEIVER,
      event_type: "EMAIL_REPLY",
      event_timestamp: "2026-03-04T10:00:00.000Z",
      campaign_id: campaign,
      campaign_name: "Fanout",
      campaign_status: "DRAFTED",
      client_id: null,
      sl_email_lead_id: expect.any(Number),
      sl_email_lead_map_id: ids["keen@fan.example"],
      sl_lead_email: "keen@fan.example",
      to_email: null,
      to_name: null,
      from_email: "keen@fan.example",
      sequence_number: 1,
      stats_id: expect.stringMatching(/^\d+$/),
      description: "Reply received",
      metadata: { webhook_created_at: expect.stringMatching(/Z$/) },
      subject: null,
      time_replied: "2026-03-04T10:00:00.000Z",
      message_id: null,
      reply_message: { message_id: null, html: "Yes!", text: "Yes!", time: "2026-03-04T10:00:00.000Z" },
      // The send the reply answers: step 2, the latest before it.
      sent_message: { message_id: null, html: "<p>Any news?</p>", text: "<p>Any news?</p>", time: "2026-03-03T10:00:00.000Z" },
      reply_body: "Yes!",
      preview_text: "Yes!",
      cc_emails: ["boss@fan.example"],
      stats_thread_id: null,
      is_ooo: false,
      ignored: false,
      leadCorrespondence: { targetLeadEmail: "keen@fan.example", replyReceivedFrom: "keen@fan.example", repliedCompanyDomain: "SameCompany" },
    });
    // stats_id is the reply's event row id, as the inbox's stats ids are.
    const event = (await eventsOf(campaign, "REPLY")).find((e) => e.fromEmail === "keen@fan.example");
    expect(replyPayload.stats_id).toBe(String(event!.id));
    // An event given without an event_id is named by its row all the same.
    const [click] = await eventsOf(campaign, "CLICK");
    expect(JSON.parse(all.find((d) => d.event_type === "EMAIL_LINK_CLICK")!.payload).stats_id).toBe(String(click!.id));
    // The category change names the reply that made it.
    const keenCategory = all.find((d) => d.event_type === "LEAD_CATEGORY_UPDATED" && JSON.parse(d.payload).sl_lead_email === "keen@fan.example")!;
    const keenChange = JSON.parse(keenCategory.payload);
    expect(keenChange).toMatchObject({
      last_reply: { message_id: null, html: "Yes!", text: "Yes!", time: "2026-03-04T10:00:00.000Z" },
      from: "keen@fan.example",
      lead_data: { email: "keen@fan.example", first_name: null, custom_fields: {}, category: { name: "Interested", sentiment_type: "positive" } },
    });
    // The thread up to the reply that set the category, the reply itself included (the click is no message).
    expect(keenChange.history.map((m: { type: string; time: string; email_seq_number: string }) => [m.type, m.time, m.email_seq_number])).toEqual([
      ["SENT", "2026-03-01T10:00:00.000Z", "1"],
      ["SENT", "2026-03-03T10:00:00.000Z", "2"],
      ["REPLY", "2026-03-04T10:00:00.000Z", "1"],
    ]);
    expect(keenChange.history[2]).toMatchObject({ stats_id: String(event!.id), from: "keen@fan.example", email_body: "Yes!", ignored: false });
    const clickDelivery = all.find((d) => d.event_type === "EMAIL_LINK_CLICK")!;
    expect(JSON.parse(clickDelivery.payload)).toMatchObject({ link_clicked: ["https://salvo.example/x"] });

    const filtered = await deliveriesOf(interestedReplies.id);
    expect(filtered.map((d) => JSON.parse(d.payload).sl_lead_email)).toEqual(["keen@fan.example"]);
  });

  it("names the lead and, for a bounce, the time of the send it answers", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: [{ email: "named@fan.example", first_name: "Nora", last_name: "Quill" }] },
    });
    const hook = await createWebhook(apiKey, campaign, { event_types: ["EMAIL_SENT", "EMAIL_BOUNCE", "LEAD_UNSUBSCRIBED"] });
    await ingestOk(apiKey, campaign, [
      { type: "SENT", lead_email: "named@fan.example", occurred_at: "2026-03-01T10:00:00Z" },
      { type: "SENT", lead_email: "named@fan.example", occurred_at: "2026-03-02T10:00:00Z", sequence_number: 2 },
      { type: "UNSUBSCRIBE", lead_email: "named@fan.example", occurred_at: "2026-03-02T10:30:00Z" },
    ]);
    await ingestOk(apiKey, campaign, [{ type: "BOUNCE", event_id: "b1", lead_email: "named@fan.example", occurred_at: "2026-03-02T11:00:00Z" }]);
    const payloads = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload) as Record<string, unknown>);
    const of = (kind: string) => payloads.filter((p) => p.event_type === kind);
    expect(of("EMAIL_SENT").map((p) => p.to_name)).toEqual(["Nora Quill", "Nora Quill"]);
    expect(of("LEAD_UNSUBSCRIBED")[0]).toMatchObject({ lead_name: "Nora Quill" });
    expect(of("EMAIL_BOUNCE")[0]).toMatchObject({ to_name: "Nora Quill", time_sent: "2026-03-02T10:00:00.000Z" });
  });

  it("delivers category changes and campaign status changes to webhooks that want them", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const campaign = await createCampaign(k);
    const ids = await addLeads(k, campaign, ["cat@fan.example"]);
    await ingestOk(k, campaign, [{ type: "REPLY", lead_email: "cat@fan.example", occurred_at: "2026-03-04T10:00:00Z" }]);
    const hook = await createWebhook(k, campaign, { event_types: ["LEAD_CATEGORY_UPDATED", "CAMPAIGN_STATUS_CHANGED"], categories: [2] });

    await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: k, body: { email_lead_map_id: ids["cat@fan.example"], category_id: 1 } });
    await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: k, body: { email_lead_map_id: ids["cat@fan.example"], category_id: 2 } });
    await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey: k, body: { status: "START" } });

    const deliveries = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload));
    expect(deliveries).toEqual([
      expect.objectContaining({
        event_type: "LEAD_CATEGORY_UPDATED",
        sl_email_lead_map_id: ids["cat@fan.example"],
        sl_lead_email: "cat@fan.example",
        lead_category: { old_id: 1, old_name: null, new_id: 2, new_name: "Meeting Request" },
      }),
      expect.objectContaining({ event_type: "CAMPAIGN_STATUS_CHANGED", campaign_status: "ACTIVE", old_status: "DRAFTED", new_status: "ACTIVE" }),
    ]);
  });

  it("a category changed by hand carries the lead's own fields and the thread up to the change", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    await callJson(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: [{ email: "crm@fan.example", first_name: "Cleo", last_name: "Marsh", company_name: "Marsh & Co", custom_fields: { role: "CTO" } }] },
    });
    const hook = await createWebhook(apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    await ingestOk(apiKey, campaign, [
      { type: "SENT", lead_email: "crm@fan.example", occurred_at: "2026-03-01T10:00:00Z", subject: "Hello Cleo" },
      { type: "REPLY", lead_email: "crm@fan.example", occurred_at: "2026-03-02T10:00:00Z", from_email: "crm@fan.example", body: "Let's talk", cc_emails: ["cfo@fan.example", "ops@fan.example"] },
      // Recorded now, dated after the change (4 minutes ahead: as far as ingestion takes): not part of the thread the change saw.
      { type: "SENT", lead_email: "crm@fan.example", occurred_at: new Date(Date.now() + 4 * 60_000).toISOString(), sequence_number: 2 },
    ]);
    const { body: lead } = await callJson<{ id: number }>(`/api/v1/leads?email=crm@fan.example`, { apiKey });
    const changed = await callJson(`/api/v1/campaigns/${campaign}/leads/${lead.id}/category`, { method: "POST", apiKey, body: { category_id: 2 } });
    expect(changed.status).toBe(200);
    const [payload] = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload));
    expect(payload.lead_data).toEqual({
      email: "crm@fan.example",
      first_name: "Cleo",
      last_name: "Marsh",
      phone_number: null,
      company_name: "Marsh & Co",
      website: null,
      location: null,
      company_url: null,
      linkedin_profile: null,
      custom_fields: { role: "CTO" },
      category: { name: "Meeting Request", sentiment_type: "positive" },
    });
    expect(payload.history).toEqual([
      expect.objectContaining({ type: "SENT", time: "2026-03-01T10:00:00.000Z", subject: "Hello Cleo", email_seq_number: "1", cc: null, bcc: null, ignored: false }),
      expect.objectContaining({ type: "REPLY", time: "2026-03-02T10:00:00.000Z", from: "crm@fan.example", email_body: "Let's talk", cc: "cfo@fan.example, ops@fan.example" }),
    ]);
  });

  it("sends nothing to a disabled webhook", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["off@fan.example"]);
    const hook = await createWebhook(account.apiKey, campaign);
    await setWebhook(hook.id, { disabledAt: new Date() });
    await ingestOk(account.apiKey, campaign, [{ type: "SENT", lead_email: "off@fan.example", occurred_at: "2026-03-01T10:00:00Z" }]);
    expect(await deliveriesOf(hook.id)).toEqual([]);
  });
});
