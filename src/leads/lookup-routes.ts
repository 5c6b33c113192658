import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import { withBodies } from "../platform/bodies";
import type { Context } from "hono";
import { database } from "../platform/db";
import { RECORD_STATES, VERIFICATION_STATUSES } from "../db/schema";
import type { AppEnv } from "../platform/env";
import { findLead, findLeadRecord, findRecordOrLeadRecord } from "../platform/access";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, pathId, queryCount, queryId, operationWords, type OperationWords } from "../platform/openapi";
import { iso } from "../platform/time";
import { Campaign } from "../campaigns/schemas";
import { presentCampaign } from "../campaigns/routes";
import { tagsOf } from "../campaigns/store";
import { EMAIL_STATUSES } from "../inbox/query";
import {
  activityEvents,
  activityOf,
  activityRecords,
  campaignDataOf,
  campaignsOfLead,
  leadByEmail,
  leadPage,
  sentStepsOf,
  sequenceOf,
  type ActivityEventRow,
} from "./lookup-store";
import { LeadWithCampaigns, presentLeadWithCampaigns } from "./present";
import { normaliseEmail } from "../mail/address";
import { FINAL_STATES } from "./change-store";
import { CampaignRecordOut, presentRecord } from "./routes";

const DAY_MS = 86_400_000;
const dateOrInstant = z.union([z.iso.date(), instant()]);

/** A date-only upper bound covers its whole (UTC) day. */
function endOf(value: string): number {
  return value.length === 10 ? Date.parse(`${value}T00:00:00Z`) + DAY_MS : Date.parse(value) + 1;
}

const AllLeadsQuery = z.object({
  limit: queryCount(1, 1000).default(100),
  lastSeenLeadId: queryCount(0).optional(),
  campaign_id: queryId().optional(),
  status: z.enum(RECORD_STATES).optional(),
  emailStatus: z.enum(EMAIL_STATUSES).optional(),
  client_id: queryId().optional(),
  list_id: queryId().optional(),
  lead_email: z.string().max(320).optional(),
  search: z.string().max(320).optional(),
  start_date: dateOrInstant.optional(),
  end_date: dateOrInstant.optional(),
  lead_type: z.string().optional(),
  verification_status: z.enum(VERIFICATION_STATUSES).optional().openapi({ description: "Extension (CONTRACT 22): only leads with this email verification status" }),
});

const LeadByEmailQuery = AllLeadsQuery.extend({ email: z.string().max(320).optional() });

const AllLeads = z
  .object({
    ok: z.boolean(),
    data: z.object({ leads: z.array(LeadWithCampaigns), lastSeenLeadId: z.number().int().nullable(), hasMore: z.boolean() }),
  })
  .openapi("AllLeads");

const Empty = z.object({}).openapi("NoLead");

const LeadParams = z.object({ lead_id: pathId("lead_id") });
const CampaignLeadParams = z.object({ campaign_id: pathId("campaign_id"), lead_id: pathId("lead_id") });

const LeadDetail = LeadWithCampaigns.extend({
  status: z.enum(RECORD_STATES).nullable(),
  category_id: z.number().int().nullable(),
  category_name: z.string().nullable(),
}).openapi("LeadWithStatus");

const CampaignLeadDetail = CampaignRecordOut.extend({
  current_sequence_number: z.number().int().nullable(),
  last_sent_time: z.string().nullable(),
  last_reply_time: z.string().nullable(),
  email_account_id: z.number().int().nullable(),
}).openapi("CampaignLeadDetail");

const LeadCampaign = Campaign.extend({
  campaign_lead_map_id: z.number().int(),
  lead_status: z.enum(RECORD_STATES),
  lead_category_id: z.number().int().nullable(),
}).openapi("LeadCampaign");

const Overview = z
  .object({
    ok: z.boolean(),
    data: z.array(
      z.object({
        campaign_id: z.number().int(),
        campaign_name: z.string(),
        campaign_status: z.string(),
        campaign_lead_map_id: z.number().int(),
        lead_status: z.enum(RECORD_STATES),
        lead_category_id: z.number().int().nullable(),
        current_sequence_number: z.number().int().nullable(),
        sent_count: z.number().int(),
        open_count: z.number().int(),
        click_count: z.number().int(),
        reply_count: z.number().int(),
        last_sent_time: z.string().nullable(),
        last_reply_time: z.string().nullable(),
      }),
    ),
  })
  .openapi("LeadCampaignOverview");

const SEQUENCE_STATUSES = ["SENT", "SCHEDULED", "PENDING", "SKIPPED"] as const;

const SequenceDetails = z
  .object({
    ok: z.boolean(),
    data: z.array(
      z.object({
        seq_number: z.number().int(),
        seq_variant_id: z.number().int().nullable(),
        variant_label: z.string().nullable(),
        subject: z.string().nullable(),
        status: z.enum(SEQUENCE_STATUSES),
        sent_time: z.string().nullable(),
        scheduled_time: z.string().nullable(),
      }),
    ),
  })
  .openapi("LeadSequenceDetails");

const ActivityQuery = z.object({
  offset: queryCount(0).default(0),
  limit: queryCount(1, 1000).default(100),
  event_time_from: z.string().optional(),
  event_time_to: z.string().optional(),
  client_id: queryId().optional(),
});

const ReplyDetail = z.object({ time: z.string(), reply_email_body: z.string().nullable(), message_id: z.string().nullable() });

const Activities = z
  .object({
    data: z.array(
      z.object({
        lead_id: z.number().int(),
        email_lead_map_id: z.number().int(),
        campaign_id: z.number().int(),
        campaign_name: z.string(),
        campaign_status: z.string(),
        status: z.enum(RECORD_STATES),
        current_seq_num: z.number().int().nullable(),
        created_at: z.string(),
        activities: z.array(
          z.object({
            stats_id: z.string(),
            message_id: z.string().nullable(),
            subject: z.string().nullable(),
            email_body: z.string().nullable(),
            sent_time: z.string(),
            from_email: z.string().nullable(),
            to_email: z.string().nullable(),
            email_seq_number: z.string(),
            open_count: z.number().int(),
            click_count: z.number().int(),
            click_details: z.record(z.string(), z.boolean()),
            reply_details: ReplyDetail.nullable(),
            thread_replies: z.array(ReplyDetail),
          }),
        ),
      }),
    ),
    hasMore: z.boolean(),
  })
  .openapi("LeadActivities");

function get<const P extends string, const R extends RouteConfig["request"], S extends z.ZodType>(
  path: P,
  words: OperationWords,
  request: R,
  schema: S,
  errors: (400 | 404)[] = [],
) {
  return createRoute({
    method: "get",
    path,
    ...operationWords(words),
    tags: ["Leads"],
    security: API_KEY_SECURITY,
    request,
    responses: { 200: json(schema, "OK"), ...errorResponses(401, 422, 429, ...errors) },
  });
}

const routes = {
  byEmail: get(
    "/api/v1/leads",
    {
      operationId: "getLeadByEmail",
      summary: "A lead by email with its campaigns ({} when there is none); without email, the /leads/all page",
      description: "The lead with `email` and its `lead_campaign_data`; no such lead (or a foreign one) → 200 `{}`. Without `email` it answers as `/leads/all`.",
    },
    { query: LeadByEmailQuery },
    z.union([LeadWithCampaigns, AllLeads, Empty]),
  ),
  all: get("/api/v1/leads/all", {
    operationId: "listAllLeads",
    summary: "Every lead, by id after the lastSeenLeadId cursor",
    description: "Every lead by id, keyset-paged: `limit` (1–1000), `lastSeenLeadId`; narrowed by campaign, record state, `emailStatus`, list, client, " +
      "`lead_email` substring and creation dates. Answers `{ok, data: {leads, lastSeenLeadId, hasMore}}`.",
  }, { query: AllLeadsQuery }, AllLeads),
  activities: get(
    "/api/v1/campaigns/all-leads-activities",
    {
      operationId: "listAllLeadsActivities",
      summary: "Each record's sends with their opens, clicks and replies",
      description: "Per record of the caller's campaigns, its sends with their opens, clicks and reply. `event_time_from`/`event_time_to` (ISO or " +
        "`YYYY-MM-DD`; `to` needs `from`; a bad date → 400), `client_id`, `offset`, `limit` (1–1000). Answers `{data, hasMore}`.",
    },
    { query: ActivityQuery },
    Activities,
    [400],
  ),
  lead: get("/api/v1/leads/{lead_id}", {
    operationId: "getLead",
    summary: "A lead with its campaigns, newest state and category ({} when there is none)",
    description: "A lead with its campaigns, the newest record's `status` and the newest category. Missing → 200 `{}`, as by email.",
  }, { params: LeadParams }, z.union([LeadDetail, Empty])),
  campaignLead: get("/api/v1/campaigns/{campaign_id}/leads/{lead_id}", {
    operationId: "getCampaignLead",
    summary: "A lead's record in a campaign",
    description: "The lead's record in the campaign with its step, last sent and reply times and mailbox. Lead not in the campaign → 404 `Lead not found in campaign`.",
  }, { params: CampaignLeadParams }, CampaignLeadDetail, [404]),
  campaigns: get("/api/v1/leads/{lead_id}/campaigns", {
    operationId: "listLeadCampaigns",
    summary: "The campaigns a lead is in",
    description: "The campaigns the lead is in (bare array, campaign read shape) with its `campaign_lead_map_id`, `lead_status` and category there.",
  }, { params: LeadParams }, z.array(LeadCampaign), [404]),
  overview: get("/api/v1/leads/{lead_id}/campaign-overview", {
    operationId: "getLeadCampaignOverview",
    summary: "A lead's progress in each of its campaigns",
    description: "Per campaign of the lead: its record's state, step, and sent, open, click and reply counts with the last times.",
  }, { params: LeadParams }, Overview, [404]),
  sequence: get(
    "/api/v1/leads/{email_lead_map_id}/sequence-details",
    {
      operationId: "getLeadSequenceDetails",
      summary: "Each step of a record's sequence: sent, scheduled, pending or skipped",
      description: "Each step of a record's sequence with its variant and whether it was SENT, is SCHEDULED, PENDING or SKIPPED. With `campaignId`, an " +
        "id that is no record of that campaign is tried as a lead id.",
    },
    {
      params: z.object({ email_lead_map_id: pathId("email_lead_map_id") }),
      query: z.object({ campaignId: queryId() }),
    },
    SequenceDetails,
    [404],
  ),
};

async function allLeads(c: Context<AppEnv>, query: z.infer<typeof AllLeadsQuery>) {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const search = query.lead_email ?? query.search;
  const { rows, hasMore } = await leadPage(
    db,
    principal,
    {
      campaignId: query.campaign_id,
      status: query.status,
      emailStatus: query.emailStatus,
      clientId: query.client_id,
      listId: query.list_id,
      search: search === undefined || search === "" ? undefined : search,
      createdFrom: query.start_date === undefined ? undefined : Date.parse(query.start_date),
      createdBefore: query.end_date === undefined ? undefined : endOf(query.end_date),
      verificationStatus: query.verification_status,
    },
    query.lastSeenLeadId ?? 0,
    query.limit,
  );
  const data = await campaignDataOf(db, principal, rows.map((row) => row.id));
  return {
    ok: true,
    data: {
      leads: rows.map((lead) => presentLeadWithCampaigns(lead, data)),
      lastSeenLeadId: rows.length > 0 ? rows[rows.length - 1]!.id : null,
      hasMore,
    },
  };
}

export const leadLookupRoutes = createRouter();

leadLookupRoutes.openapi(routes.byEmail, async (c) => {
  const query = c.req.valid("query");
  if (query.email === undefined || query.email.trim() === "") return c.json(await allLeads(c, query), 200);
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const lead = await leadByEmail(db, principal, normaliseEmail(query.email));
  if (!lead) return c.json({}, 200);
  return c.json(presentLeadWithCampaigns(lead, await campaignDataOf(db, principal, [lead.id])), 200);
});

leadLookupRoutes.openapi(routes.all, async (c) => c.json(await allLeads(c, c.req.valid("query")), 200));

leadLookupRoutes.openapi(routes.lead, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const lead = await findLead(db, principal, c.req.valid("param").lead_id);
  if (!lead) return c.json({}, 200);
  const data = await campaignDataOf(db, principal, [lead.id]);
  const newest = data[data.length - 1];
  const categorised = data
    .filter((row) => row.categoryId !== null)
    .sort((a, b) => (a.categorySetAt?.getTime() ?? 0) - (b.categorySetAt?.getTime() ?? 0) || a.recordId - b.recordId)
    .pop();
  return c.json(
    {
      ...presentLeadWithCampaigns(lead, data),
      status: newest?.state ?? null,
      category_id: categorised?.categoryId ?? null,
      category_name: categorised?.categoryName ?? null,
    },
    200,
  );
});

leadLookupRoutes.openapi(routes.campaignLead, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const { campaign_id, lead_id } = c.req.valid("param");
  const { record } = await findLeadRecord(db, principal, campaign_id, lead_id);
  const lead = (await findLead(db, principal, lead_id))!;
  const activity = (await activityOf(c.env.DB, [record.id])).get(record.id);
  return c.json(
    {
      ...presentRecord(record, lead),
      current_sequence_number: activity?.current_sequence_number ?? null,
      last_sent_time: record.lastSentAt ? iso(record.lastSentAt) : null,
      last_reply_time: record.lastReplyAt ? iso(record.lastReplyAt) : null,
      email_account_id: record.emailAccountId,
    },
    200,
  );
});

/** A lead the caller may see, or 404 (the lead-scoped listings below need one). */
async function leadOr404(c: Context<AppEnv>, leadId: number) {
  const lead = await findLead(database(c.env.DB), c.get("principal"), leadId);
  if (!lead) throw ApiError.notFound("Lead not found");
  return lead;
}

leadLookupRoutes.openapi(routes.campaigns, async (c) => {
  const lead = await leadOr404(c, c.req.valid("param").lead_id);
  const db = database(c.env.DB);
  const rows = await campaignsOfLead(db, c.get("principal"), lead.id);
  const tagMap = await tagsOf(
    db,
    rows.map((row) => row.campaign.id),
  );
  return c.json(
    rows.map(({ campaign, record }) => ({
      ...presentCampaign(campaign, tagMap.get(campaign.id) ?? []),
      campaign_lead_map_id: record.id,
      lead_status: record.state,
      lead_category_id: record.categoryId,
    })),
    200,
  );
});

leadLookupRoutes.openapi(routes.overview, async (c) => {
  const lead = await leadOr404(c, c.req.valid("param").lead_id);
  const rows = await campaignsOfLead(database(c.env.DB), c.get("principal"), lead.id);
  const activity = await activityOf(
    c.env.DB,
    rows.map((row) => row.record.id),
  );
  return c.json(
    {
      ok: true,
      data: rows.map(({ campaign, record }) => {
        const counts = activity.get(record.id);
        return {
          campaign_id: campaign.id,
          campaign_name: campaign.name,
          campaign_status: campaign.status,
          campaign_lead_map_id: record.id,
          lead_status: record.state,
          lead_category_id: record.categoryId,
          current_sequence_number: counts?.current_sequence_number ?? null,
          sent_count: counts?.sent_count ?? 0,
          open_count: counts?.open_count ?? 0,
          click_count: counts?.click_count ?? 0,
          reply_count: counts?.reply_count ?? 0,
          last_sent_time: record.lastSentAt ? iso(record.lastSentAt) : null,
          last_reply_time: record.lastReplyAt ? iso(record.lastReplyAt) : null,
        };
      }),
    },
    200,
  );
});

leadLookupRoutes.openapi(routes.sequence, async (c) => {
  const db = database(c.env.DB);
  const { campaignId } = c.req.valid("query");
  const { record } = await findRecordOrLeadRecord(db, c.get("principal"), campaignId, c.req.valid("param").email_lead_map_id);
  const [{ steps, variants, sent }, eventSends] = await Promise.all([sequenceOf(db, campaignId, record.id), sentStepsOf(c.env.DB, record.id)]);
  const labels = new Map(variants.map((variant) => [variant.id, variant.label]));
  const sentByStep = new Map(sent.filter((row) => row.status === "sent").map((row) => [row.step, row]));
  const eventByStep = new Map(eventSends.map((row) => [row.sequence_number, row]));
  // The step the engine sends next: the record's next_step, or the first live one after it.
  const upcoming = record.nextStep === null ? undefined : steps.find((step) => step.seqNumber >= record.nextStep!)?.seqNumber;
  const live = !FINAL_STATES.includes(record.state);
  return c.json(
    {
      ok: true,
      data: steps.map((step) => {
        const message = sentByStep.get(step.seqNumber);
        const event = eventByStep.get(step.seqNumber);
        const sentAt = message?.sentAt?.getTime() ?? event?.sent_at ?? null;
        const variantId = message?.variantId ?? null;
        const status: (typeof SEQUENCE_STATUSES)[number] =
          sentAt !== null
            ? "SENT"
            : !live || upcoming === undefined || step.seqNumber < upcoming
              ? "SKIPPED"
              : step.seqNumber === upcoming && record.state !== "PAUSED" && record.dueAt !== null
                ? "SCHEDULED"
                : "PENDING";
        return {
          seq_number: step.seqNumber,
          seq_variant_id: variantId,
          variant_label: variantId === null ? null : (labels.get(variantId) ?? null),
          subject: message?.subject ?? event?.subject ?? step.subject,
          status,
          sent_time: sentAt === null ? null : iso(sentAt),
          scheduled_time: status === "SCHEDULED" ? iso(record.dueAt!) : null,
        };
      }),
    },
    200,
  );
});

/** `YYYY-MM-DD`, or any ISO 8601 date-time as its UTC timestamp; else the contract's 400. */
function activityTime(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const valid = dateOrInstant.safeParse(value);
  if (!valid.success) throw ApiError.badRequest(`Invalid ${name} format. Use YYYY-MM-DD or ISO 8601 format.`);
  return valid.data;
}

function presentActivities(events: ActivityEventRow[]) {
  const replies = events.filter((event) => event.type === "REPLY");
  return events
    .filter((event) => event.type === "SENT")
    .map((send) => {
      const sameStep = (event: ActivityEventRow) => event.sequence_number === send.sequence_number;
      const clicks = events.filter((event) => event.type === "CLICK" && sameStep(event));
      const answers = replies
        .filter((reply) => sameStep(reply) && reply.occurred_at >= send.occurred_at)
        .map((reply) => ({ time: iso(reply.occurred_at), reply_email_body: reply.body, message_id: reply.message_id }));
      return {
        stats_id: String(send.id),
        message_id: send.message_id,
        subject: send.subject,
        email_body: send.body,
        sent_time: iso(send.occurred_at),
        from_email: send.from_email,
        to_email: send.to_email,
        email_seq_number: String(send.sequence_number),
        open_count: events.filter((event) => event.type === "OPEN" && sameStep(event)).length,
        click_count: clicks.length,
        click_details: Object.fromEntries(clicks.filter((click) => click.link_url).map((click) => [click.link_url!, true])),
        reply_details: answers[0] ?? null,
        thread_replies: answers.slice(1),
      };
    });
}

export const leadActivityRoutes = createRouter();

leadActivityRoutes.openapi(routes.activities, async (c) => {
  const query = c.req.valid("query");
  const from = activityTime(query.event_time_from, "event_time_from");
  const to = activityTime(query.event_time_to, "event_time_to");
  if (to !== undefined && from === undefined) throw ApiError.badRequest("event_time_to needs event_time_from");
  const filters = { clientId: query.client_id, from: from === undefined ? undefined : Date.parse(from), to: to === undefined ? undefined : endOf(to) };
  const { rows, hasMore } = await activityRecords(c.env.DB, c.get("principal"), filters, query.offset, query.limit);
  const events = await withBodies(
    c.env.BODIES,
    c.get("principal").accountId,
    await activityEvents(
      c.env.DB,
      rows.map((row) => row.id),
      filters,
    ),
    ["body"],
  );
  return c.json(
    {
      data: rows.map((row) => {
        const own = events.filter((event) => event.campaign_lead_id === row.id);
        const sends = own.filter((event) => event.type === "SENT").map((event) => event.sequence_number);
        return {
          lead_id: row.lead_id,
          email_lead_map_id: row.id,
          campaign_id: row.campaign_id,
          campaign_name: row.campaign_name,
          campaign_status: row.campaign_status,
          status: row.state,
          current_seq_num: sends.length > 0 ? Math.max(...sends) : null,
          created_at: iso(row.created_at),
          activities: presentActivities(own),
        };
      }),
      hasMore,
    },
    200,
  );
});

