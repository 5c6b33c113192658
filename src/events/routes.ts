import { createRoute, z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../db/schema";
import { normaliseEmail } from "../mail/address";
import { CAMPAIGN_NOT_FOUND, campaignMailboxes, visibleCampaigns } from "../platform/access";
import { database } from "../platform/db";
import { ApiError, type ValidationIssue } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody } from "../platform/openapi";
import { CampaignParams } from "../campaigns/schemas";
import { ingest } from "./ingest";
import type { PlannedEvent } from "./plan";
import { namedMailboxes, type RecordRow } from "./store";

const MAX_EVENTS_PER_CALL = 1000;

const text = (max: number) => z.string().max(max).nullish();

const EventInput = z
  .object({
    event_id: z.string().min(1).max(255).optional(),
    type: z.enum(EVENT_TYPES),
    email_lead_map_id: z.number().int().positive().optional(),
    lead_email: z.string().max(320).optional(),
    occurred_at: instant(),
    sequence_number: z.number().int().min(1).max(1000).default(1),
    email_account_id: z.number().int().positive().nullish(),
    from_email: text(320),
    to_email: text(320),
    subject: text(998),
    body: text(200_000),
    message_id: text(998),
    link_url: text(2048),
    cc_emails: z.array(z.string().max(320)).max(100).optional().openapi({ description: "A REPLY's Cc addresses (kept for replies only)" }),
    is_ooo: z.boolean().default(false),
    is_machine: z
      .boolean()
      .default(false)
      .openapi({ description: "An open or click a machine made (proxy prefetch, link scanner): left out of the human_ analytics counts; extension" }),
    category_id: z.number().int().positive().nullish(),
  })
  .refine((event) => event.email_lead_map_id !== undefined || event.lead_email !== undefined, {
    message: "email_lead_map_id or lead_email is required",
    path: ["email_lead_map_id"],
  });

type EventBody = z.infer<typeof EventInput>;

const IngestEvents = z
  .object({ events: z.array(EventInput).min(1).max(MAX_EVENTS_PER_CALL) })
  .openapi("IngestEvents");

const Ingested = z
  .object({ ok: z.boolean(), accepted: z.number().int(), duplicates: z.number().int() })
  .openapi("IngestedEvents");

const ingestEvents = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/events",
  operationId: "ingestCampaignEvents",
  description: "Reports what a sending engine did: 1–1000 events (`SENT, OPEN, CLICK, REPLY, BOUNCE, BLOCK, UNSUBSCRIBE`), each naming its record " +
    "by `email_lead_map_id` or `lead_email`. All or nothing: one bad event → 422 with its index. A repeated `event_id` is a no-op " +
    "(counted in `duplicates`); an event without one is stored each time it is sent. `email_account_id` must be one of the caller's mailboxes (or one attached to the campaign) " +
    "and `occurred_at` at most 5 minutes ahead of now (else 422). Records follow (SENT → INPROGRESS, BOUNCE/BLOCK → BLOCKED, UNSUBSCRIBE → STOPPED), replies join the " +
    "conversation, and each event fans out to webhooks in the same batch.",
  "x-salvo-extension": true,
  tags: ["Events"],
  summary: "Report what the sending engine did (1-1000 events, idempotent by event_id, all or nothing)",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: jsonBody(IngestEvents, {
        events: [
          { event_id: "esp-123", type: "SENT", lead_email: "ann@example.com", occurred_at: "2026-01-25T09:00:00Z", sequence_number: 1, subject: "Quick question" },
          { event_id: "esp-124", type: "REPLY", lead_email: "ann@example.com", occurred_at: "2026-01-25T11:30:00Z", from_email: "ann@example.com", body: "Interested!" },
        ],
      }) },
  responses: { 200: json(Ingested, "Stored events and skipped duplicates"), ...errorResponses(401, 404, 422, 429) },
});


/** How far ahead of the clock an event may be dated (clock drift between the engine and us), 5 minutes. */
const FUTURE_MARGIN_MS = 5 * 60_000;

/**
 * Every event must name a record of this campaign, a known category, a mailbox the caller may name
 * (another account's answers like a missing one) and a time not ahead of now: else the whole call
 * is refused. A mailbox's daily count and gap are read from SENT events, so an event dated years
 * ahead or naming a stranger's mailbox would hold that mailbox back.
 */
function resolveEvents(events: EventBody[], records: RecordRow[], categories: Map<number, string>, mailboxes: Set<number>, now: number): RecordRow[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const byEmail = new Map(records.map((r) => [r.leadEmail, r]));
  const issues: ValidationIssue[] = [];
  const resolved = events.map((event, index) => {
    const record =
      event.email_lead_map_id !== undefined
        ? byId.get(event.email_lead_map_id)
        : byEmail.get(normaliseEmail(event.lead_email ?? ""));
    if (!record) {
      const field = event.email_lead_map_id !== undefined ? "email_lead_map_id" : "lead_email";
      issues.push({ path: `events.${index}.${field}`, message: "No such lead in this campaign" });
    }
    if (event.category_id != null && !categories.has(event.category_id)) {
      issues.push({ path: `events.${index}.category_id`, message: "Unknown lead category" });
    }
    if (event.email_account_id != null && !mailboxes.has(event.email_account_id)) {
      issues.push({ path: `events.${index}.email_account_id`, message: "No such email account" });
    }
    if (Date.parse(event.occurred_at) > now + FUTURE_MARGIN_MS) {
      issues.push({ path: `events.${index}.occurred_at`, message: "occurred_at may be at most 5 minutes ahead of now" });
    }
    return record;
  });
  if (issues.length > 0) throw ApiError.validation(issues);
  return resolved as RecordRow[];
}

/** What the call names, for the one read batch. */
function wanted(events: EventBody[]) {
  const unique = <T>(values: (T | null | undefined)[]) => [...new Set(values.filter((v): v is T => v !== null && v !== undefined))];
  return {
    recordIds: unique(events.map((e) => e.email_lead_map_id)),
    emails: unique(events.map((e) => (e.lead_email === undefined ? undefined : normaliseEmail(e.lead_email)))),
    categoryIds: unique(events.map((e) => e.category_id)),
    mailboxIds: unique(events.map((e) => e.email_account_id)),
  };
}

/** The call's events in order, each event_id once (the store skips ids stored by earlier calls). */
function planned(events: EventBody[], owners: RecordRow[]): PlannedEvent[] {
  const seen = new Set<string>();
  const out: PlannedEvent[] = [];
  events.forEach((event, index) => {
    if (event.event_id !== undefined) {
      if (seen.has(event.event_id)) return;
      seen.add(event.event_id);
    }
    out.push({
      // An event sent without an id gets one of its own (never repeated, so nothing is deduplicated):
      // its webhook payloads can then name the stored row (`stats_id`) like every other event's.
      eventId: event.event_id ?? `salvo:api:${crypto.randomUUID()}`,
      record: owners[index]!,
      incoming: {
        type: event.type,
        occurredAt: Date.parse(event.occurred_at),
        sequenceNumber: event.sequence_number,
        emailAccountId: event.email_account_id ?? null,
        fromEmail: event.from_email ?? null,
        isOoo: event.is_ooo,
        categoryId: event.category_id ?? null,
      },
      toEmail: event.to_email ?? null,
      subject: event.subject ?? null,
      body: event.body ?? null,
      messageId: event.message_id ?? null,
      linkUrl: event.link_url ?? null,
      cc: event.cc_emails?.map((address) => address.toLowerCase()),
      isMachine: event.is_machine,
    });
  });
  return out;
}

export const eventRoutes = createRouter();

eventRoutes.openapi(ingestEvents, async (c) => {
  const principal = c.get("principal");
  const { events } = c.req.valid("json");
  const db = database(c.env.DB);
  const campaignId = c.req.valid("param").campaign_id;
  const want = wanted(events);
  const scope = { visible: visibleCampaigns(principal), accountId: principal.accountId, campaignId, want };
  // The mailboxes are looked up only once the campaign is known to be visible (a 404 comes first),
  // and only when an event names one (no round trip otherwise).
  const stored = await ingest(
    c.env,
    db,
    scope,
    async (context) => {
      const mailboxes = await namedMailboxes(db, campaignMailboxes(principal, [campaignId]), want.mailboxIds);
      return planned(events, resolveEvents(events, context.records, context.categories, mailboxes, Date.now()));
    },
    Date.now(),
  );
  if (!stored) throw ApiError.notFound(CAMPAIGN_NOT_FOUND);
  return c.json({ ok: true, accepted: stored.accepted, duplicates: events.length - stored.accepted }, 200);
});
