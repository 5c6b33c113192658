import { createRoute, z } from "@hono/zod-openapi";
import { recordFlags } from "../events/record-flags";
import { listConversations, messagesOf, type ConversationRow, type MessageRow } from "./store";
import { emailStatusOf, type Listing } from "./query";
import { iso } from "../platform/time";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, queryBoolean } from "../platform/openapi";
import { InboxPage, ListingBody } from "./schemas";

const ListingQuery = z.object({ fetch_message_history: queryBoolean.optional() });

const LISTINGS: { listing: Listing; path: string; summary: string }[] = [
  { listing: "inbox", path: "/api/v1/master-inbox/inbox-replies", summary: "Active conversations (not archived, not snoozed)" },
  { listing: "archived", path: "/api/v1/master-inbox/archived", summary: "Archived conversations" },
  { listing: "snoozed", path: "/api/v1/master-inbox/snoozed", summary: "Conversations snoozed until a future time" },
];

const time = (value: number | null) => (value === null ? null : iso(value));

function present(row: ConversationRow, now: number, history: MessageRow[] | undefined) {
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
    ...(history && {
      email_history: history.map((message) => ({
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

export const listingRoutes = createRouter();

for (const { listing, path, summary } of LISTINGS) {
  const route = createRoute({
    method: "post",
    path,
    tags: ["Master inbox"],
    summary,
    security: API_KEY_SECURITY,
    request: { query: ListingQuery, body: jsonBody(ListingBody) },
    responses: { 200: json(InboxPage, "One page of conversations"), ...errorResponses(400, 401, 422, 429) },
  });
  listingRoutes.openapi(route, async (c) => {
    const principal = c.get("principal");
    const body = c.req.valid("json");
    const withHistory = c.req.valid("query").fetch_message_history ?? false;
    const now = Date.now();
    const { rows, total } = await listConversations(c.env.DB, {
      scope: { accountId: principal.accountId, clientId: principal.clientId },
      listing,
      filters: body.filters ?? {},
      sort: body.sortBy,
      offset: body.offset,
      limit: body.limit,
      now,
    });
    const history = withHistory ? await messagesOf(c.env.DB, rows.map((row) => row.id)) : [];
    return c.json(
      {
        messages: rows.map((row) =>
          present(row, now, withHistory ? history.filter((m) => m.campaign_lead_id === row.id) : undefined),
        ),
        total_count: total,
        offset: body.offset,
        limit: body.limit,
      },
      200,
    );
  });
}
