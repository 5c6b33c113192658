import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { recordFlags } from "../events/record-flags";
import { ApiError } from "../platform/errors";
import { iso } from "../platform/time";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryBoolean, operationWords, type OperationWords } from "../platform/openapi";
import { LISTING_SORTS, emailStatusOf, type InboxFilters, type Listing, type Sort } from "./query";
import { InboxMessage, InboxPage, ListingBody, SentViewBody, SubsequenceViewBody, ViewBody, type ViewRequest } from "./schemas";
import { conversationOf, listConversations, type ConversationRow } from "./listing-store";
import { messagesOf, remindersOf, scheduledRepliesOf, type MessageRow, type ReminderRow, type ScheduledReplyRow } from "./store";
import { LEAD_MAPPING_NOT_FOUND } from "./target";
import { parseCategorisation } from "../triage/present";
import { database } from "../platform/db";
import { savedViewFilters } from "./saved-view-routes";

const ListingQuery = z.object({ fetch_message_history: queryBoolean.optional() });

/** What every listing says about its body and answer (the reference's words). */
const INBOX_LISTING =
  "Body `{offset?=0, limit?=20 (1–20), filters?, sortBy?}`; query `fetch_message_history=true` adds each thread as `email_history`. " +
  "Filters AND together: `search` (≤ 100 chars, lead email, name or reply text), `campaignId` (≤ 5), `emailAccountId` (≤ 10), " +
  "`emailStatus`, `leadCategories`, `campaignTeamMemberId`, `campaignTagId`, `campaignClientId`, `replyTimeBetween`; over a limit → 422. " +
  "Answers `{messages, total_count, offset, limit}`.";

type ListingRoute = OperationWords & { listing: Listing; path: string };

const LISTINGS: ListingRoute[] = [
  {
    listing: "inbox",
    path: "inbox-replies",
    operationId: "listInboxReplies",
    summary: "Active conversations (not archived, not snoozed)",
    description: "The active inbox: conversations (records with a reply) not archived and not snoozed. " + INBOX_LISTING,
    example: { offset: 0, limit: 20, filters: { emailStatus: "Replied" }, sortBy: "REPLY_TIME_DESC" },
  },
  {
    listing: "archived",
    path: "archived",
    operationId: "listArchivedConversations",
    summary: "Archived conversations",
    description: "Archived conversations. " + INBOX_LISTING,
  },
  {
    listing: "snoozed",
    path: "snoozed",
    operationId: "listSnoozedConversations",
    summary: "Conversations snoozed until a future time",
    description: "Conversations snoozed until a future time; a snooze whose time has come is back in the inbox at once. " + INBOX_LISTING,
  },
];

const VIEWS: ListingRoute[] = [
  {
    listing: "unread",
    path: "unread-replies",
    operationId: "listUnreadReplies",
    summary: "Active conversations not read yet",
    description: "Active conversations not read yet. " + INBOX_LISTING,
  },
  {
    listing: "important",
    path: "important",
    operationId: "listImportantConversations",
    summary: "Records marked important (not archived)",
    description: "Records marked important, not archived. " + INBOX_LISTING,
  },
  {
    listing: "scheduled",
    path: "scheduled",
    operationId: "listScheduledReplies",
    summary: "Records with a reply queued for later, soonest first",
    description:
      "Records with a reply queued for later, soonest first (`SCHEDULED_TIME_ASC`); rows add `scheduled_time` and `scheduled_message`. " + INBOX_LISTING,
  },
  {
    listing: "reminders",
    path: "reminders",
    operationId: "listReminders",
    summary: "Records with a reminder, soonest first (past ones flagged overdue)",
    description: "Records with a reminder, soonest first; rows add `reminder_time`, `reminder_message` and `is_overdue`. " + INBOX_LISTING,
  },
  {
    listing: "sent",
    path: "sent",
    operationId: "listSentConversations",
    summary: "Every record an email was sent to, replied or not",
    description: "Every record an email was sent to, replied or not (`campaignId` ≤ 15, `emailAccountId` ≤ 100 here). " + INBOX_LISTING,
  },
  {
    listing: "assigned",
    path: "assigned-me",
    operationId: "listAssignedConversations",
    summary: "Conversations assigned to a team member (filters.campaignTeamMemberId narrows)",
    description: "Conversations assigned to a team member; keys carry no user, so `filters.campaignTeamMemberId` names whose. " + INBOX_LISTING,
  },
  {
    listing: "views",
    path: "views",
    operationId: "listInboxView",
    summary: "Active conversations; filters.subSequenceId keeps the records of those subsequences",
    description: "Active conversations; `filters.subSequenceId` keeps the records of those subsequences. " + INBOX_LISTING,
  },
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
    category_source: row.category_source,
    needs_review: row.needs_review === 1,
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
        message_id: message.message_id,
        type: message.type,
        from: message.from_email,
        to: message.to_email,
        subject: message.subject,
        email_body: message.body,
        time: iso(message.occurred_at),
        sequence_number: message.sequence_number,
        ignored: message.ignored === 1,
        ...(message.type === "REPLY" && { categorisation: parseCategorisation(message.categorisation) }),
      })),
    }),
  };
}


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
  const saved = body.saved_view_id === undefined ? {} : await savedViewFilters(database(c.env.DB), principal, body.saved_view_id);
  const { rows, total } = await listConversations(c.env.DB, {
    scope: { accountId: principal.accountId, clientId: principal.clientId },
    listing,
    filters: { ...saved, ...filtersOf(body) },
    sort: sortOf(listing, body.sortBy),
    offset: body.offset,
    limit: body.limit,
    now,
  });
  const ids = rows.map((row) => row.id);
  const reader = { bucket: c.env.BODIES, accountId: principal.accountId };
  const [history, scheduled, reminders] = await Promise.all([
    withHistory ? messagesOf(c.env.DB, ids, reader) : null,
    listing === "scheduled" ? scheduledRepliesOf(c.env.DB, ids, reader) : null,
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

for (const { listing, path, ...words } of [...LISTINGS, ...VIEWS]) {
  const isView = VIEWS.some((view) => view.listing === listing);
  const body = !isView ? ListingBody : path === "sent" ? SentViewBody : path === "views" ? SubsequenceViewBody : ViewBody;
  const route = createRoute({
    method: "post",
    path: `/api/v1/master-inbox/${path}`,
    ...operationWords(words),
    tags: ["Master inbox"],
    security: API_KEY_SECURITY,
    request: { query: ListingQuery, body: jsonBody(body, words.example) },
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
  operationId: "getConversation",
  description: "One conversation with its whole thread (`email_history` always included). Missing → 404 `Lead mapping not found`.",
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
  const history = await messagesOf(c.env.DB, [row.id], { bucket: c.env.BODIES, accountId: principal.accountId });
  return c.json({ ok: true, data: present(row, Date.now(), { history }) }, 200);
});
