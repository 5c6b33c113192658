import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { recordFlags } from "../events/record-flags";
import { ApiError } from "../platform/errors";
import { iso } from "../platform/time";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryBoolean } from "../platform/openapi";
import { LISTING_SORTS, emailStatusOf, type InboxFilters, type Listing, type Sort } from "./query";
import { InboxMessage, InboxPage, ListingBody, ViewBody } from "./schemas";
import { conversationOf, listConversations, type ConversationRow } from "./listing-store";
import { messagesOf, remindersOf, scheduledRepliesOf, type MessageRow, type ReminderRow, type ScheduledReplyRow } from "./store";
import { LEAD_MAPPING_NOT_FOUND } from "./target";

const ListingQuery = z.object({ fetch_message_history: queryBoolean.optional() });

const LISTINGS: { listing: Listing; path: string; summary: string }[] = [
  { listing: "inbox", path: "inbox-replies", summary: "Active conversations (not archived, not snoozed)" },
  { listing: "archived", path: "archived", summary: "Archived conversations" },
  { listing: "snoozed", path: "snoozed", summary: "Conversations snoozed until a future time" },
];

const VIEWS: { listing: Listing; path: string; summary: string }[] = [
  { listing: "unread", path: "unread-replies", summary: "Active conversations not read yet" },
  { listing: "important", path: "important", summary: "Records marked important (not archived)" },
  { listing: "scheduled", path: "scheduled", summary: "Records with a reply queued for later, soonest first" },
  { listing: "reminders", path: "reminders", summary: "Records with a reminder, soonest first (past ones flagged overdue)" },
  { listing: "sent", path: "sent", summary: "Every record an email was sent to, replied or not" },
  { listing: "assigned", path: "assigned-me", summary: "Conversations assigned to a team member (filters.campaignTeamMemberId narrows)" },
  { listing: "views", path: "views", summary: "Active conversations; filters.subSequenceId keeps the records of those subsequences" },
];

const time = (value: number | null) => (value === null ? null : iso(value));

interface Extras {
  history?: MessageRow[];
  scheduled?: ScheduledReplyRow | null;
  reminder?: ReminderRow | null;
}

function present(row: ConversationRow, now: number, extras: Extras): z.infer<typeof InboxMessage> {
  const snoozed = row.snoozed_until !== null && row.snoozed_until > now;
  return {
    campaign_lead_map_id: String(row.id),
    email_lead_map_id: row.id,
    lead: { id: row.lead_id, email: row.email, first_name: row.first_name, last_name: row.last_name },
    campaign: { id: row.campaign_id, name: row.campaign_name },
    email_account_id: row.email_account_id,
    email_status: emailStatusOf(recordFlags(row)),
    lead_category_id: row.category_id,
    team_member_id: row.team_member_id,
    is_read: row.is_read === 1,
    is_important: row.is_important === 1,
    is_archived: row.is_archived === 1,
    is_snoozed: snoozed,
    snoozed_until: snoozed ? time(row.snoozed_until) : null,
    last_sent_time: time(row.last_sent_at),
    last_reply_time: time(row.last_reply_at),
    revenue: (row.revenue_cents / 100).toFixed(2),
    is_pushed_to_sub_sequence: row.sub_sequence_id !== null,
    sub_sequence_id: row.sub_sequence_id,
    current_sequence_number: row.current_sequence_number,
    ...(extras.scheduled !== undefined && {
      scheduled_time: time(extras.scheduled?.scheduled_at ?? null),
      scheduled_message: extras.scheduled
        ? { email_stats_id: String(extras.scheduled.answers_stats_id), subject: extras.scheduled.subject, email_body: extras.scheduled.html }
        : null,
    }),
    ...(extras.reminder !== undefined && {
      reminder_time: time(extras.reminder?.remind_at ?? null),
      reminder_message: extras.reminder?.message ?? null,
      is_overdue: extras.reminder ? extras.reminder.remind_at <= now : false,
    }),
    ...(extras.history && {
      email_history: extras.history.map((message) => ({
        stats_id: String(message.id),
        type: message.type,
        from: message.from_email,
        to: message.to_email,
        subject: message.subject,
        email_body: message.body,
        time: iso(message.occurred_at),
        sequence_number: message.sequence_number,
        ignored: message.ignored === 1,
      })),
    }),
  };
}

type ViewRequest = z.infer<typeof ViewBody>;

/** BC puts the campaign and client at the top of the body: read as the matching filters. */
function filtersOf(body: ViewRequest): InboxFilters {
  const filters: InboxFilters = { ...body.filters };
  if (body.campaign_id !== undefined && !filters.campaignId) filters.campaignId = [body.campaign_id];
  if (body.client_id !== undefined && !filters.campaignClientId) filters.campaignClientId = [body.client_id];
  return filters;
}

function sortOf(listing: Listing, sort: Sort | undefined): Sort {
  const allowed = LISTING_SORTS[listing];
  if (sort === undefined) return allowed.default;
  if (!allowed.sorts.includes(sort)) throw ApiError.validation([{ path: "sortBy", message: `This view sorts by ${allowed.sorts.join(", ")}` }]);
  return sort;
}

async function page(c: Context<AppEnv>, listing: Listing, body: ViewRequest, withHistory: boolean) {
  const principal = c.get("principal");
  const now = Date.now();
  const { rows, total } = await listConversations(c.env.DB, {
    scope: { accountId: principal.accountId, clientId: principal.clientId },
    listing,
    filters: filtersOf(body),
    sort: sortOf(listing, body.sortBy),
    offset: body.offset,
    limit: body.limit,
    now,
  });
  const ids = rows.map((row) => row.id);
  const [history, scheduled, reminders] = await Promise.all([
    withHistory ? messagesOf(c.env.DB, ids) : null,
    listing === "scheduled" ? scheduledRepliesOf(c.env.DB, ids) : null,
    listing === "reminders" ? remindersOf(c.env.DB, ids) : null,
  ]);
  const messages = rows.map((row) =>
    present(row, now, {
      history: history?.filter((m) => m.campaign_lead_id === row.id),
      scheduled: scheduled ? (scheduled.get(row.id) ?? null) : undefined,
      reminder: reminders ? (reminders.get(row.id) ?? null) : undefined,
    }),
  );
  return { messages, total_count: total, offset: body.offset, limit: body.limit };
}

export const listingRoutes = createRouter();

for (const { listing, path, summary } of [...LISTINGS, ...VIEWS]) {
  const isView = VIEWS.some((view) => view.listing === listing);
  const route = createRoute({
    method: "post",
    path: `/api/v1/master-inbox/${path}`,
    tags: ["Master inbox"],
    summary,
    security: API_KEY_SECURITY,
    request: { query: ListingQuery, body: jsonBody(isView ? ViewBody : ListingBody) },
    responses: { 200: json(InboxPage, "One page of conversations"), ...errorResponses(400, 401, 422, 429) },
  });
  listingRoutes.openapi(route, async (c) => {
    const body = c.req.valid("json") as ViewRequest;
    return c.json(await page(c, listing, body, c.req.valid("query").fetch_message_history ?? false), 200);
  });
}

const oneConversation = createRoute({
  method: "get",
  path: "/api/v1/master-inbox/{email_lead_map_id}",
  tags: ["Master inbox"],
  summary: "One conversation with its whole thread",
  security: API_KEY_SECURITY,
  request: { params: z.object({ email_lead_map_id: pathId("email_lead_map_id") }) },
  responses: { 200: json(z.object({ ok: z.boolean(), data: InboxMessage }), "The conversation"), ...errorResponses(401, 404, 422, 429) },
});

/** Registered after every literal `/master-inbox/…` path, so none of them is read as an id. */
export const conversationRoutes = createRouter();

conversationRoutes.openapi(oneConversation, async (c) => {
  const principal = c.get("principal");
  const row = await conversationOf(c.env.DB, principal, c.req.valid("param").email_lead_map_id);
  if (!row) throw ApiError.notFound(LEAD_MAPPING_NOT_FOUND);
  const history = await messagesOf(c.env.DB, [row.id]);
  return c.json({ ok: true, data: present(row, Date.now(), { history }) }, 200);
});
