import { describe, expect, it } from "vitest";
import { eventTypeMap, kindsOf, wants, WEBHOOK_EVENT_KINDS } from "../../src/webhooks/event-kinds";
import { categoryDeliveries, eventDeliveries, statusDeliveries, type EventFacts, type WebhookTarget } from "../../src/webhooks/fanout";

const T = Date.parse("2026-05-01T12:00:00.000Z");
const campaign = { id: 11, name: "Spring", status: "PAUSED" as const };

function hook(id: number, eventTypes: string[], categoryIds: number[] = []): WebhookTarget {
  return { id, accountId: 1, associationType: "campaign", name: `hook ${id}`, url: "https://hooks.example.com/h", eventTypes, categoryIds, createdAt: new Date(T) };
}

function facts(more: Partial<EventFacts> = {}): EventFacts {
  return {
    type: "SENT",
    occurredAt: T,
    sequenceNumber: 1,
    firstSend: false,
    toEmail: "ann@example.com",
    fromEmail: "me@sender.com",
    subject: null,
    body: "the body",
    linkUrl: "https://example.com/l",
    recordId: 7,
    leadEmail: "ann@example.com",
    leadCategoryId: null,
    ...more,
  };
}

describe("kindsOf", () => {
  it("maps each event type to its webhook kinds, a first send to two and a block to none", () => {
    expect(kindsOf("SENT", false)).toEqual(["EMAIL_SENT"]);
    expect(kindsOf("SENT", true)).toEqual(["EMAIL_SENT", "FIRST_EMAIL_SENT"]);
    expect(kindsOf("OPEN", true)).toEqual(["EMAIL_OPEN"]);
    expect(kindsOf("CLICK", false)).toEqual(["EMAIL_LINK_CLICK"]);
    expect(kindsOf("REPLY", false)).toEqual(["EMAIL_REPLY"]);
    expect(kindsOf("BOUNCE", false)).toEqual(["EMAIL_BOUNCE"]);
    expect(kindsOf("UNSUBSCRIBE", false)).toEqual(["LEAD_UNSUBSCRIBED"]);
    expect(kindsOf("BLOCK", true)).toEqual([]);
  });
});

describe("eventTypeMap", () => {
  it("lists all twelve kinds in order, true only for the subscribed ones (unknown names ignored)", () => {
    const map = eventTypeMap(["EMAIL_REPLY", "CAMPAIGN_STATUS_CHANGED", "NOT_A_KIND"]);
    expect(Object.keys(map)).toEqual([...WEBHOOK_EVENT_KINDS]);
    expect(Object.keys(map)).toHaveLength(12);
    expect(Object.entries(map).filter(([, on]) => on).map(([kind]) => kind)).toEqual(["EMAIL_REPLY", "CAMPAIGN_STATUS_CHANGED"]);
    expect(Object.values(eventTypeMap([])).every((on) => on === false)).toBe(true);
  });
});

describe("wants", () => {
  const filtered = { eventTypes: ["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED", "EMAIL_OPEN"], categoryIds: [1, 2] };

  it("needs the kind subscribed", () => {
    expect(wants(filtered, "EMAIL_SENT", 1)).toBe(false);
    expect(wants({ eventTypes: [], categoryIds: [] }, "EMAIL_REPLY", null)).toBe(false);
  });

  it("limits replies and category changes to leads in the listed categories, never an uncategorised lead", () => {
    expect(wants(filtered, "EMAIL_REPLY", 2)).toBe(true);
    expect(wants(filtered, "LEAD_CATEGORY_UPDATED", 1)).toBe(true);
    expect(wants(filtered, "EMAIL_REPLY", 3)).toBe(false);
    expect(wants(filtered, "LEAD_CATEGORY_UPDATED", null)).toBe(false);
  });

  it("does not filter other kinds by category, and an empty list admits every category", () => {
    expect(wants(filtered, "EMAIL_OPEN", 3)).toBe(true);
    expect(wants(filtered, "EMAIL_OPEN", null)).toBe(true);
    expect(wants({ eventTypes: ["EMAIL_REPLY"], categoryIds: [] }, "EMAIL_REPLY", null)).toBe(true);
  });
});

describe("eventDeliveries", () => {
  it("makes one delivery per event, kind and wanting webhook, in that order, with the guard of its event", () => {
    const hooks = [hook(1, ["EMAIL_SENT", "FIRST_EMAIL_SENT"]), hook(2, ["FIRST_EMAIL_SENT", "EMAIL_OPEN"])];
    const out = eventDeliveries(hooks, campaign, [
      { facts: facts({ firstSend: true }), guard: { event_id: "s1" } },
      { facts: facts({ type: "OPEN" }), guard: { event_id: "o1" } },
      { facts: facts({ type: "BLOCK" }), guard: { event_id: "b1" } },
    ]);
    expect(out.map((d) => [d.guard?.event_id, d.eventType, d.webhookId])).toEqual([
      ["s1", "EMAIL_SENT", 1],
      ["s1", "FIRST_EMAIL_SENT", 1],
      ["s1", "FIRST_EMAIL_SENT", 2],
      ["o1", "EMAIL_OPEN", 2],
    ]);
    expect(eventDeliveries([], campaign, [{ facts: facts() }])).toEqual([]);
  });

  it("carries the reply text only on replies, the link only on clicks, and the subject only when known", () => {
    const hooks = [hook(1, ["EMAIL_REPLY", "EMAIL_LINK_CLICK", "EMAIL_SENT"])];
    const [reply, click, sent] = eventDeliveries(hooks, campaign, [
      { facts: facts({ type: "REPLY", subject: "Re: Hi", sequenceNumber: 2 }) },
      { facts: facts({ type: "CLICK" }) },
      { facts: facts({ type: "SENT", subject: "Hi" }) },
    ]);
    expect(reply).toEqual({
      accountId: 1,
      webhookId: 1,
      campaignId: 11,
      eventType: "EMAIL_REPLY",
      guard: undefined,
      payload: {
        webhook_id: 1,
        webhook_name: "hook 1",
        webhook_url: "https://hooks.example.com/h",
        event_type: "EMAIL_REPLY",
        event_timestamp: "2026-05-01T12:00:00.000Z",
        campaign_id: 11,
        campaign_name: "Spring",
        campaign_status: "PAUSED",
        client_id: null,
        sl_email_lead_id: null,
        sl_email_lead_map_id: 7,
        sl_lead_email: "ann@example.com",
        to_email: "ann@example.com",
        to_name: null,
        from_email: "me@sender.com",
        sequence_number: 2,
        stats_id: null,
        description: "Reply received",
        metadata: { webhook_created_at: "2026-05-01T12:00:00.000Z" },
        subject: "Re: Hi",
        time_replied: "2026-05-01T12:00:00.000Z",
        message_id: null,
        reply_message: { message_id: null, html: "the body", text: "the body", time: "2026-05-01T12:00:00.000Z" },
        sent_message: null,
        reply_body: "the body",
        preview_text: "the body",
        cc_emails: [],
        stats_thread_id: null,
        is_ooo: false,
        ignored: false,
        leadCorrespondence: { targetLeadEmail: "ann@example.com", replyReceivedFrom: "me@sender.com", repliedCompanyDomain: "DifferentCompany" },
      },
    });
    expect(click!.payload.link_clicked).toEqual(["https://example.com/l"]);
    expect(click!.payload).toMatchObject({ time_clicked: "2026-05-01T12:00:00.000Z", is_bot: false });
    expect(click!.payload).not.toHaveProperty("subject");
    expect(click!.payload).not.toHaveProperty("reply_message");
    expect(sent!.payload).toMatchObject({ subject: "Hi", custom_subject: "Hi", custom_email_message: "the body", time_sent: "2026-05-01T12:00:00.000Z" });
    expect(sent!.payload).not.toHaveProperty("link_clicked");
    expect(sent!.payload).not.toHaveProperty("reply_message");
  });

  it("filters replies by the lead's category per webhook", () => {
    const hooks = [hook(1, ["EMAIL_REPLY"], [4]), hook(2, ["EMAIL_REPLY"], [5]), hook(3, ["EMAIL_REPLY"])];
    const out = eventDeliveries(hooks, campaign, [{ facts: facts({ type: "REPLY", leadCategoryId: 5 }) }]);
    expect(out.map((d) => d.webhookId)).toEqual([2, 3]);
  });
});

describe("categoryDeliveries", () => {
  it("tells the webhooks that want the new category, with the old and new category and the guard", () => {
    const hooks = [hook(1, ["LEAD_CATEGORY_UPDATED"], [2]), hook(2, ["LEAD_CATEGORY_UPDATED"], [1]), hook(3, ["EMAIL_REPLY"])];
    const change = { recordId: 7, leadEmail: "ann@example.com", oldCategoryId: 1, newCategoryId: 2, newCategoryName: "Meeting", occurredAt: T };
    const out = categoryDeliveries(hooks, campaign, change, { event_id: "r1" });
    expect(out).toEqual([
      {
        accountId: 1,
        webhookId: 1,
        campaignId: 11,
        eventType: "LEAD_CATEGORY_UPDATED",
        // The change's instant bounds the thread the outbox reads into `history`.
        guard: { event_id: "r1", category_at: T },
        payload: expect.objectContaining({
          webhook_id: 1,
          webhook_name: "hook 1",
          event_type: "LEAD_CATEGORY_UPDATED",
          event_timestamp: "2026-05-01T12:00:00.000Z",
          campaign_id: 11,
          campaign_name: "Spring",
          campaign_status: "PAUSED",
          sl_email_lead_map_id: 7,
          sl_lead_email: "ann@example.com",
          to_email: null,
          from_email: null,
          sequence_number: null,
          lead_email: "ann@example.com",
          category: "Meeting",
          lead_category_id: 2,
          lead_category: { old_id: 1, old_name: null, new_id: 2, new_name: "Meeting" },
          lead_data: { email: "ann@example.com", category: { name: "Meeting", sentiment_type: "positive" } },
        }),
      },
    ]);
  });
});

describe("statusDeliveries", () => {
  it("tells every webhook subscribed to status changes, whatever its category list, without a guard", () => {
    const hooks = [hook(1, ["CAMPAIGN_STATUS_CHANGED"], [3]), hook(2, ["EMAIL_SENT"]), hook(3, ["CAMPAIGN_STATUS_CHANGED"])];
    const out = statusDeliveries(hooks, { id: 11, name: "Spring", status: "STOPPED" }, "ACTIVE", T);
    expect(out.map((d) => d.webhookId)).toEqual([1, 3]);
    expect(out[0]).toEqual({
      accountId: 1,
      webhookId: 1,
      campaignId: 11,
      eventType: "CAMPAIGN_STATUS_CHANGED",
      guard: undefined,
      payload: expect.objectContaining({
        webhook_id: 1,
        webhook_name: "hook 1",
        event_type: "CAMPAIGN_STATUS_CHANGED",
        event_timestamp: "2026-05-01T12:00:00.000Z",
        campaign_id: 11,
        campaign_name: "Spring",
        campaign_status: "STOPPED",
        old_status: "ACTIVE",
        new_status: "STOPPED",
        old_campaign_status: "ACTIVE",
        sl_email_lead_map_id: null,
        sl_lead_email: null,
        to_email: null,
        from_email: null,
        sequence_number: null,
      }),
    });
  });
});
