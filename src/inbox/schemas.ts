import { z } from "@hono/zod-openapi";
import { BodyId, instant } from "../platform/openapi";
import { EMAIL_STATUSES, SORTS } from "./query";
import { Categorisation } from "../triage/present";

/** A number or an array of at most `max` numbers; both arrive as an array, each value once (a value named twice filters as once). */
const oneOrMany = (max: number) =>
  z
    .union([z.number().int(), z.array(z.number().int()).max(max)])
    .transform((value) => [...new Set(Array.isArray(value) ? value : [value])]);

const isoInstant = z.union([z.iso.date(), instant()]);

/** A date-only bound covers its whole (UTC) day; an instant is taken as given. */
function upperBound(value: string): number {
  return value.length === 10 ? Date.parse(`${value}T00:00:00Z`) + 86_400_000 : Date.parse(value) + 1;
}

const filterFields = {
    search: z.string().max(100).optional(),
    campaignId: oneOrMany(5).optional(),
    emailAccountId: oneOrMany(10).optional(),
    emailStatus: z
      .union([z.enum(EMAIL_STATUSES), z.array(z.enum(EMAIL_STATUSES)).max(EMAIL_STATUSES.length)])
      .transform((value) => (Array.isArray(value) ? value : [value]))
      .optional(),
    leadCategories: z
      .object({
        categoryIdsIn: z.array(z.number().int()).max(10).optional(),
        categoryIdsNotIn: z.array(z.number().int()).max(10).optional(),
        unassigned: z.boolean().optional(),
        isAssigned: z.boolean().optional(),
      })
      .optional(),
    campaignTeamMemberId: oneOrMany(10).optional(),
    campaignTagId: oneOrMany(10).optional(),
    campaignClientId: oneOrMany(10).optional(),
    replyTimeBetween: z
      .tuple([isoInstant, isoInstant])
      .refine(([from, to]) => Date.parse(from) <= Date.parse(to), "The first date must not be after the second")
      .transform(([from, to]) => [Date.parse(from), upperBound(to)] as [number, number])
      .optional(),
    needsReview: z.boolean().optional().openapi({ description: "true: conversations whose latest reply waits in the needs-review lane; false: the others (CONTRACT section 20.5)" }),
};

const InboxFilters = z.object(filterFields).openapi("InboxFilters");

/** Section 15: the sent view takes more campaigns and mailboxes than section 4's filters. */
const sentFields = { campaignId: oneOrMany(15).optional(), emailAccountId: oneOrMany(100).optional() };
/** Section 15: the views view also takes a subsequence. */
const subSequenceField = { subSequenceId: oneOrMany(15).optional() };

/** What a saved view may hold: any view's filters (each view's request keeps its own caps). */
export const ViewFilters = z.object({ ...filterFields, ...sentFields, ...subSequenceField });
const SentViewFilters = z.object({ ...filterFields, ...sentFields }).openapi("InboxSentViewFilters");
const SubsequenceViewFilters = z.object({ ...filterFields, ...subSequenceField }).openapi("InboxSubsequenceViewFilters");

const page = {
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(20).default(20),
};

/** Section 4's listing body (inbox, archived, snoozed). */
export const ListingBody = z
  .object({
    ...page,
    filters: InboxFilters.optional(),
    sortBy: z.enum(["REPLY_TIME_DESC", "SENT_TIME_DESC"]).optional(),
  })
  .openapi("InboxListingRequest");

const viewFields = {
  ...page,
  sortBy: z.enum(SORTS).optional(),
  campaign_id: z.number().int().optional().describe("Read as filters.campaignId"),
  client_id: z.number().int().optional().describe("Read as filters.campaignClientId"),
  saved_view_id: BodyId.optional().describe("A saved view's filters (POST /master-inbox/saved-views), with this body's filters over them; another tenant's → 404"),
};

/** Section 15's views: section 4's body and caps, and BC's top-level scope keys. */
export const ViewBody = z.object({ ...viewFields, filters: InboxFilters.optional() }).openapi("InboxViewRequest");
/** The sent view: wider caps on campaigns and mailboxes. */
export const SentViewBody = z.object({ ...viewFields, filters: SentViewFilters.optional() }).openapi("InboxSentViewRequest");
/** The views view: a subsequence too. */
export const SubsequenceViewBody = z.object({ ...viewFields, filters: SubsequenceViewFilters.optional() }).openapi("InboxSubsequenceViewRequest");
/** Any view's request, as the listing reads it. */
export type ViewRequest = Omit<z.infer<typeof ViewBody>, "filters"> & { filters?: z.infer<typeof ViewFilters> };

const HistoryMessage = z
  .object({
    stats_id: z.string(),
    message_id: z.string().nullable().openapi({ description: "The message's Message-ID: what reply-email-thread's `reply_message_id` takes" }),
    type: z.enum(["SENT", "REPLY"]),
    from: z.string().nullable(),
    to: z.string().nullable(),
    subject: z.string().nullable(),
    email_body: z.string().nullable(),
    time: z.string(),
    sequence_number: z.number().int(),
    ignored: z.boolean(),
    categorisation: Categorisation.nullable().optional().openapi({ description: "On a REPLY: how it was categorised (CONTRACT section 20.5)" }),
  })
  .openapi("InboxHistoryMessage");

export const InboxMessage = z
  .object({
    campaign_lead_map_id: z.string(),
    email_lead_map_id: z.number().int(),
    lead: z.object({ id: z.number().int(), email: z.string(), first_name: z.string().nullable(), last_name: z.string().nullable() }),
    campaign: z.object({ id: z.number().int(), name: z.string() }),
    email_account_id: z.number().int().nullable(),
    email_status: z.enum(EMAIL_STATUSES).nullable(),
    lead_category_id: z.number().int().nullable(),
    team_member_id: z.number().int().nullable(),
    is_read: z.boolean(),
    is_important: z.boolean(),
    is_archived: z.boolean(),
    is_snoozed: z.boolean(),
    snoozed_until: z.string().nullable(),
    last_sent_time: z.string().nullable(),
    last_reply_time: z.string().nullable(),
    revenue: z.string(),
    is_pushed_to_sub_sequence: z.boolean(),
    sub_sequence_id: z.number().int().nullable(),
    current_sequence_number: z.number().int().nullable(),
    category_source: z.enum(["rule", "model", "human", "event"]).nullable().openapi({ description: "Who categorised the latest reply (CONTRACT section 20.5)" }),
    needs_review: z.boolean().openapi({ description: "The latest reply waits for a person: the categoriser could not decide" }),
    scheduled_time: z.string().nullable().optional(),
    scheduled_message: z.object({ email_stats_id: z.string(), subject: z.string(), email_body: z.string() }).nullable().optional(),
    reminder_time: z.string().nullable().optional(),
    reminder_message: z.string().nullable().optional(),
    is_overdue: z.boolean().optional(),
    email_history: z.array(HistoryMessage).optional(),
  })
  .openapi("InboxMessage");

export const InboxPage = z
  .object({
    messages: z.array(InboxMessage),
    total_count: z
      .number()
      .int()
      .describe(
        "Exact, except with search, emailAccountId or replyTimeBetween: then counted up to 10,000 (200 for a one- or two-character search that matches often); past that, the cap or offset + this page (+1 while pages are full)",
      ),
    offset: z.number().int(),
    limit: z.number().int(),
  })
  .openapi("InboxPage");

