import { describe, expect, it } from "vitest";
import { OUT_OF_OFFICE_CATEGORY_ID } from "../../src/db/schema";
import { planIngestion, type PlannedEvent } from "../../src/events/plan";
import { applyEvents, isIgnoredReply, isOutOfOffice, type IncomingEvent } from "../../src/events/rules";
import type { RecordRow } from "../../src/events/store";
import type { CampaignFacts, WebhookTarget } from "../../src/webhooks/fanout";

const T = Date.parse("2026-05-01T12:00:00.000Z");

function event(type: IncomingEvent["type"], occurredAt: number, more: Partial<IncomingEvent> = {}): IncomingEvent {
  return { type, occurredAt, sequenceNumber: 1, emailAccountId: null, fromEmail: null, isOoo: false, categoryId: null, ...more };
}

function record(more: Partial<RecordRow> = {}): RecordRow {
  return {
    id: 7,
    state: "STARTED",
    leadEmail: "Ann@Example.com",
    categoryId: null,
    emailAccountId: null,
    lastSentAt: null,
    lastReplyAt: null,
    hasSent: false,
    hasOpened: false,
    hasClicked: false,
    hasReplied: false,
    hasBounced: false,
    hasUnsubscribed: false,
    ...more,
  };
}

describe("isOutOfOffice", () => {
  it("is true for the OOO flag or the out-of-office category, and false otherwise", () => {
    expect(isOutOfOffice({ isOoo: true, categoryId: null })).toBe(true);
    expect(isOutOfOffice({ isOoo: false, categoryId: OUT_OF_OFFICE_CATEGORY_ID })).toBe(true);
    expect(isOutOfOffice({ isOoo: false, categoryId: 5 })).toBe(false);
    expect(isOutOfOffice({ isOoo: false, categoryId: null })).toBe(false);
  });
});

describe("isIgnoredReply", () => {
  it("ignores a reply from anyone but the lead, comparing addresses without case or surrounding space", () => {
    expect(isIgnoredReply(event("REPLY", T, { fromEmail: "boss@example.com" }), "ann@example.com", false)).toBe(true);
    expect(isIgnoredReply(event("REPLY", T, { fromEmail: "  ANN@example.COM " }), "Ann@Example.com", false)).toBe(false);
  });

  it("takes a reply with no sender (or a blank one) to come from the lead", () => {
    expect(isIgnoredReply(event("REPLY", T, { fromEmail: null }), "ann@example.com", false)).toBe(false);
    expect(isIgnoredReply(event("REPLY", T, { fromEmail: "   " }), "ann@example.com", false)).toBe(false);
  });

  it("ignores out-of-office replies only when the account ignores them", () => {
    const flagged = event("REPLY", T, { isOoo: true });
    const categorised = event("REPLY", T, { categoryId: OUT_OF_OFFICE_CATEGORY_ID });
    expect(isIgnoredReply(flagged, "ann@example.com", true)).toBe(true);
    expect(isIgnoredReply(categorised, "ann@example.com", true)).toBe(true);
    expect(isIgnoredReply(flagged, "ann@example.com", false)).toBe(false);
    expect(isIgnoredReply(event("REPLY", T, { categoryId: 1 }), "ann@example.com", true)).toBe(false);
  });

  it("never ignores an event that is not a reply", () => {
    expect(isIgnoredReply(event("OPEN", T, { fromEmail: "boss@example.com", isOoo: true }), "ann@example.com", true)).toBe(false);
    expect(isIgnoredReply(event("SENT", T, { fromEmail: "me@sender.com" }), "ann@example.com", true)).toBe(false);
  });
});

describe("applyEvents", () => {
  it("sets each event type's flag and nothing else", () => {
    const base = record();
    expect(applyEvents(base, [event("OPEN", T)])).toMatchObject({ hasOpened: true, hasSent: false, hasClicked: false, isUnread: false });
    expect(applyEvents(base, [event("CLICK", T)])).toMatchObject({ hasClicked: true, hasOpened: false });
    expect(applyEvents(base, [event("BOUNCE", T)])).toMatchObject({ hasBounced: true, state: "BLOCKED" });
    expect(applyEvents(base, [event("UNSUBSCRIBE", T)])).toMatchObject({ hasUnsubscribed: true, state: "STOPPED" });
    const blocked = applyEvents(base, [event("BLOCK", T)]);
    expect(blocked.state).toBe("BLOCKED");
    expect(blocked).toMatchObject({ hasSent: false, hasOpened: false, hasClicked: false, hasReplied: false, hasBounced: false, hasUnsubscribed: false });
  });

  it("moves DRAFTED and STARTED to INPROGRESS on a send, and no other state", () => {
    for (const state of ["DRAFTED", "STARTED"] as const) expect(applyEvents(record({ state }), [event("SENT", T)]).state).toBe("INPROGRESS");
    for (const state of ["COMPLETED", "PAUSED", "STOPPED", "BLOCKED", "INPROGRESS"] as const) {
      expect(applyEvents(record({ state }), [event("SENT", T)]).state).toBe(state);
    }
  });

  it("blocks on bounce or block unless the record is stopped; unsubscribe stops even a blocked record", () => {
    expect(applyEvents(record({ state: "STOPPED" }), [event("BOUNCE", T), event("BLOCK", T + 1)]).state).toBe("STOPPED");
    expect(applyEvents(record({ state: "PAUSED" }), [event("BLOCK", T)]).state).toBe("BLOCKED");
    expect(applyEvents(record({ state: "BLOCKED" }), [event("UNSUBSCRIBE", T)]).state).toBe("STOPPED");
  });

  it("marks a reply unread and keeps the latest send and reply times, never moving them back", () => {
    const after = applyEvents(record({ lastSentAt: T + 5_000, lastReplyAt: null }), [
      event("SENT", T),
      event("REPLY", T + 2_000),
      event("REPLY", T + 1_000),
    ]);
    expect(after).toMatchObject({ hasReplied: true, isUnread: true, hasSent: true, lastSentAt: T + 5_000, lastReplyAt: T + 2_000 });
    expect(applyEvents(record(), [event("SENT", T + 3), event("SENT", T + 9)]).lastSentAt).toBe(T + 9);
  });

  it("takes the sending account of the latest send by event time, whatever the input order, and keeps it when a send names none", () => {
    const later = event("SENT", T + 200, { emailAccountId: 2 });
    const earlier = event("SENT", T + 100, { emailAccountId: 1 });
    expect(applyEvents(record(), [later, earlier]).emailAccountId).toBe(2);
    expect(applyEvents(record({ emailAccountId: 4 }), [event("SENT", T)]).emailAccountId).toBe(4);
  });

  it("sets the category of the latest categorised reply; an uncategorised later reply does not clear it", () => {
    const after = applyEvents(record({ categoryId: 9 }), [
      event("REPLY", T + 300, { categoryId: 3 }),
      event("REPLY", T + 100, { categoryId: 1 }),
      event("REPLY", T + 400),
      event("OPEN", T + 500, { categoryId: 8 }),
    ]);
    expect(after.categoryId).toBe(3);
    expect(applyEvents(record({ categoryId: 9 }), [event("REPLY", T)]).categoryId).toBe(9);
  });

  it("leaves its inputs alone", () => {
    const base = record();
    const events = [event("SENT", T + 1), event("OPEN", T)];
    applyEvents(base, events);
    expect(base).toEqual(record());
    expect(events.map((e) => e.type)).toEqual(["SENT", "OPEN"]);
  });
});

const campaign: CampaignFacts = { id: 11, name: "Spring", status: "ACTIVE" };
const ALL_KINDS = ["EMAIL_SENT", "FIRST_EMAIL_SENT", "EMAIL_OPEN", "EMAIL_LINK_CLICK", "EMAIL_REPLY", "EMAIL_BOUNCE", "LEAD_UNSUBSCRIBED", "LEAD_CATEGORY_UPDATED"];

function webhook(more: Partial<WebhookTarget> = {}): WebhookTarget {
  return { id: 21, accountId: 1, associationType: "campaign", name: "hook", url: "https://hooks.example.com/h", eventTypes: ALL_KINDS, categoryIds: [], createdAt: new Date(T), ...more };
}

function planned(incoming: IncomingEvent, rec: RecordRow, more: Partial<PlannedEvent> = {}): PlannedEvent {
  return { eventId: null, incoming, record: rec, toEmail: null, subject: null, body: null, messageId: null, linkUrl: null, ...more };
}

const categories = new Map([
  [1, "Interested"],
  [2, "Meeting"],
  [3, "Not interested"],
]);

describe("planIngestion: rows", () => {
  it("maps every event to its row, folding reply bodies only and marking ignored and out-of-office replies", () => {
    const rec = record();
    const { rows, deliveries } = planIngestion({ ignoreOooReplies: true, categories, webhooks: [] }, campaign, [
      planned(event("REPLY", T, { fromEmail: "ann@example.com", isOoo: true, sequenceNumber: 2, emailAccountId: 5 }), rec, {
        eventId: "e1",
        toEmail: "me@sender.com",
        subject: "Re: Hi",
        body: "Ｈｅｌｌｏ THERE",
        messageId: "<m1>",
        cc: ["boss@example.com"],
      }),
      planned(event("SENT", T - 1, { emailAccountId: 5 }), rec, { body: "Hello", linkUrl: null }),
      planned(event("CLICK", T + 1), rec, { linkUrl: "https://example.com/x", isMachine: true }),
      planned(event("REPLY", T + 2, { fromEmail: "boss@example.com", categoryId: 2 }), rec, { body: "" }),
    ]);
    expect(deliveries).toEqual([]);
    expect(rows).toEqual([
      {
        event_id: "e1",
        campaign_lead_id: 7,
        type: "REPLY",
        occurred_at: T,
        sequence_number: 2,
        email_account_id: 5,
        from_email: "ann@example.com",
        to_email: "me@sender.com",
        subject: "Re: Hi",
        body: "Ｈｅｌｌｏ THERE",
        body_folded: "hello there",
        message_id: "<m1>",
        link_url: null,
        cc_emails: ["boss@example.com"],
        is_ooo: 1,
        category_id: null,
        ignored: 1,
        is_machine: 0,
        resume_at: null,
        opts_out_lead: 0,
      },
      // Only a reply keeps its Cc.
      expect.objectContaining({ type: "SENT", body: "Hello", body_folded: null, is_ooo: 0, ignored: 0, email_account_id: 5, cc_emails: null }),
      expect.objectContaining({ type: "CLICK", link_url: "https://example.com/x", body_folded: null, ignored: 0, is_machine: 1 }),
      expect.objectContaining({ type: "REPLY", body: "", body_folded: null, category_id: 2, ignored: 1 }),
    ]);
  });

  it("does not mark an out-of-office reply ignored when the account keeps them", () => {
    const { rows } = planIngestion({ ignoreOooReplies: false, categories, webhooks: [] }, campaign, [
      planned(event("REPLY", T, { categoryId: OUT_OF_OFFICE_CATEGORY_ID }), record()),
    ]);
    expect(rows[0]).toMatchObject({ ignored: 0, is_ooo: 0, category_id: OUT_OF_OFFICE_CATEGORY_ID });
  });
});

describe("planIngestion: deliveries", () => {
  const context = { ignoreOooReplies: false, categories, webhooks: [webhook()] };

  it("sends FIRST_EMAIL_SENT only for the earliest sequence-1 send of a record that has never sent", () => {
    const fresh = record({ id: 7 });
    const { deliveries } = planIngestion(context, campaign, [
      planned(event("SENT", T + 50), fresh, { eventId: "late" }),
      planned(event("SENT", T + 10), fresh, { eventId: "early" }),
      planned(event("SENT", T + 5, { sequenceNumber: 2 }), fresh, { eventId: "step2" }),
      planned(event("SENT", T), record({ id: 8, hasSent: true, leadEmail: "bob@example.com" }), { eventId: "sent-before" }),
    ]);
    expect(deliveries.map((d) => [d.guard?.event_id, d.eventType])).toEqual([
      ["late", "EMAIL_SENT"],
      ["early", "EMAIL_SENT"],
      ["early", "FIRST_EMAIL_SENT"],
      ["step2", "EMAIL_SENT"],
      ["sent-before", "EMAIL_SENT"],
    ]);
  });

  it("guards each event delivery by its event id, and builds the payload from the planned event", () => {
    const { deliveries } = planIngestion(context, campaign, [
      planned(event("REPLY", T, { fromEmail: "ann@example.com", sequenceNumber: 3 }), record(), {
        eventId: "r1",
        toEmail: "me@sender.com",
        subject: "Re: Hi",
        body: "Sounds good",
      }),
    ]);
    expect(deliveries).toEqual([
      {
        accountId: 1,
        webhookId: 21,
        campaignId: 11,
        eventType: "EMAIL_REPLY",
        guard: { event_id: "r1" },
        payload: {
          webhook_id: 21,
          webhook_name: "hook",
          webhook_url: "https://hooks.example.com/h",
          event_type: "EMAIL_REPLY",
          event_timestamp: "2026-05-01T12:00:00.000Z",
          campaign_id: 11,
          campaign_name: "Spring",
          campaign_status: "ACTIVE",
          client_id: null,
          sl_email_lead_id: null,
          sl_email_lead_map_id: 7,
          sl_lead_email: "Ann@Example.com",
          to_email: "me@sender.com",
          to_name: null,
          from_email: "ann@example.com",
          sequence_number: 3,
          stats_id: null,
          description: "Reply received",
          metadata: { webhook_created_at: "2026-05-01T12:00:00.000Z" },
          subject: "Re: Hi",
          time_replied: "2026-05-01T12:00:00.000Z",
          message_id: null,
          reply_message: { message_id: null, html: "Sounds good", text: "Sounds good", time: "2026-05-01T12:00:00.000Z" },
          sent_message: null,
          reply_body: "Sounds good",
          preview_text: "Sounds good",
          cc_emails: [],
          stats_thread_id: null,
          is_ooo: false,
          ignored: false,
          leadCorrespondence: { targetLeadEmail: "Ann@Example.com", replyReceivedFrom: "ann@example.com", repliedCompanyDomain: "SameCompany" },
        },
      },
    ]);
  });

  it("delivers a category change from the latest categorised reply, guarded by its event, record, category and time", () => {
    const rec = record({ categoryId: 3 });
    const { deliveries } = planIngestion(context, campaign, [
      planned(event("REPLY", T + 200, { categoryId: 2 }), rec, { eventId: "newest" }),
      planned(event("REPLY", T + 100, { categoryId: 1 }), rec, { eventId: "older" }),
      planned(event("REPLY", T + 300), rec, { eventId: "uncategorised" }),
    ]);
    const changes = deliveries.filter((d) => d.eventType === "LEAD_CATEGORY_UPDATED");
    expect(changes).toHaveLength(1);
    expect(changes[0]!.guard).toEqual({ event_id: "newest", record_id: 7, category_id: 2, category_at: T + 200 });
    expect(changes[0]!.payload).toMatchObject({
      event_timestamp: new Date(T + 200).toISOString(),
      sl_email_lead_map_id: 7,
      to_email: null,
      from_email: null,
      sequence_number: null,
      lead_category: { old_id: 3, new_id: 2, new_name: "Meeting" },
    });
  });

  it("delivers no category change when the latest categorised reply repeats the record's category", () => {
    const rec = record({ categoryId: 2 });
    const { deliveries } = planIngestion(context, campaign, [
      planned(event("REPLY", T + 100, { categoryId: 1 }), rec),
      planned(event("REPLY", T + 200, { categoryId: 2 }), rec),
    ]);
    expect(deliveries.map((d) => d.eventType)).toEqual(["EMAIL_REPLY", "EMAIL_REPLY"]);
  });

  it("names an unknown category null and plans one change per record", () => {
    const { deliveries } = planIngestion(context, campaign, [
      planned(event("REPLY", T, { categoryId: 99 }), record({ id: 7 })),
      planned(event("REPLY", T, { categoryId: 1 }), record({ id: 8, categoryId: null })),
    ]);
    const changes = deliveries.filter((d) => d.eventType === "LEAD_CATEGORY_UPDATED").map((d) => d.payload.lead_category);
    expect(changes).toEqual([
      { old_id: null, old_name: null, new_id: 99, new_name: null },
      { old_id: null, old_name: null, new_id: 1, new_name: "Interested" },
    ]);
  });

  it("filters replies by the lead's category after this request's events", () => {
    const filtered = { ...context, webhooks: [webhook({ categoryIds: [1] })] };
    const rec = record({ categoryId: 3 });
    const { deliveries } = planIngestion(filtered, campaign, [
      planned(event("REPLY", T, { categoryId: 1 }), rec, { eventId: "a" }),
      planned(event("OPEN", T - 1), rec, { eventId: "b" }),
    ]);
    expect(deliveries.map((d) => [d.guard?.event_id, d.eventType])).toEqual([
      ["a", "EMAIL_REPLY"],
      ["b", "EMAIL_OPEN"],
      ["a", "LEAD_CATEGORY_UPDATED"],
    ]);
    const elsewhere = planIngestion(filtered, campaign, [planned(event("REPLY", T, { categoryId: 2 }), rec)]);
    expect(elsewhere.deliveries).toEqual([]);
  });

  // Two categorised replies at the same instant: applyEvents (the reply filter's view), the category
  // change and the SQL update (max() keeps the first row among ties) must all keep the same one.
  it("agrees with itself on the category two replies at the same instant leave", () => {
    const filtered = { ...context, webhooks: [webhook({ categoryIds: [1] })] };
    const rec = record();
    const { deliveries } = planIngestion(filtered, campaign, [
      planned(event("REPLY", T, { categoryId: 1 }), rec, { eventId: "a" }),
      planned(event("REPLY", T, { categoryId: 2 }), rec, { eventId: "b" }),
    ]);
    const change = deliveries.find((d) => d.eventType === "LEAD_CATEGORY_UPDATED");
    const replies = deliveries.filter((d) => d.eventType === "EMAIL_REPLY");
    expect(change?.payload.lead_category).toMatchObject({ new_id: 1 });
    expect(replies).toHaveLength(2);
  });
});
