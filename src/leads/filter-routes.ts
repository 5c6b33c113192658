import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, instant, json, optionalJsonBody } from "../platform/openapi";
import { iso } from "../platform/time";
import { espDomainType } from "../esp/rules";
import { CampaignParams } from "../campaigns/schemas";
import { HistoryMessage, presentHistory } from "../inbox/history-routes";
import { threadsOf, type Thread } from "../inbox/store";
import { FILTER_EMAIL_STATUSES, filterRecords, LEAD_STATUSES, statusSummary, SUMMARY_KEYS, type FilteredRecord, type LeadFilter } from "./filter-store";

/** The hosted lead filter with its cursor, and the campaign's lead-status summary (CONTRACT 21.1). */

const ids = z.array(BodyId).max(1000);
const replyTime = z.union([instant(), z.number().int().nonnegative()]);

const LeadFilterBody = z
  .object({
    searchText: z.string().max(200).optional().openapi({ description: "Words split on spaces; each must be in the email, first or last name" }),
    limit: z.number().int().min(1).max(100).optional().openapi({ description: "1-100, default 25" }),
    lastSeenLeadId: z.union([z.number().int().nonnegative(), z.string().regex(/^(0|[1-9][0-9]{0,15})$/).transform(Number)]).optional()
      .openapi({ description: "Cursor: the previous page's `lastSeenEclmId` (a record id; 0 = from the start)" }),
    lastSeenReplyTime: replyTime.optional().openapi({ description: "With `active_table` + `statusFilter: replied`: the previous page's `lastSeenReplyTime`" }),
    leadStatuses: z.array(z.enum(LEAD_STATUSES)).max(10).optional(),
    emailStatuses: z.array(z.enum(FILTER_EMAIL_STATUSES)).max(20).optional(),
    leadCategoryIds: z.array(z.number().int().min(-1)).max(1000).optional().openapi({ description: "-1 = no category" }),
    leadCategoryIsNull: z.boolean().optional(),
    emailAccountIds: ids.optional(),
    espDomainTypes: z
      .array(z.union([z.string().max(50), z.number().int()]))
      .max(20)
      .optional()
      .openapi({ description: "The recipients' providers (CONTRACT 23.3), any of: 1 (or google, gmail), 2 (microsoft, outlook), 0 (other or not known yet); other values are ignored" }),
    sequenceNumbers: z.array(z.number().int().min(0).max(1000)).max(100).optional(),
    sequenceIds: ids.optional(),
    seqVariantIds: ids.optional(),
    statusFilter: z.enum(SUMMARY_KEYS).optional(),
    fieldSet: z.enum(["drafted_table", "active_table"]).optional().openapi({ description: "Default drafted_table" }),
  })
  .openapi("CampaignLeadFilter");

const FilteredLead = z
  .object({
    id: z.number().int(),
    current_seq_num: z.number().int(),
    status: z.string(),
    email_account_id: z.number().int().nullable(),
    spintax_modulo_index: z.number().int().nullable(),
    email_lead: z.object({
      id: z.number().int(),
      email: z.string(),
      first_name: z.string().nullable(),
      last_name: z.string().nullable(),
      company_name: z.string().nullable(),
      phone_number: z.string().nullable(),
      company_url: z.string().nullable(),
      website: z.string().nullable(),
      linkedin_profile: z.string().nullable(),
      location: z.string().nullable(),
      custom_fields: z.record(z.string(), z.unknown()).nullable(),
      esp_domain_type: z.number().int().openapi({ description: "The recipient's provider: 1 google, 2 microsoft, 0 other or not known yet (CONTRACT 23.3)" }),
      seg_type: z.null().optional(),
    }),
    email_account: z.object({ username: z.string(), mappingExists: z.array(z.object({ id: z.number().int() })).optional() }).nullable(),
    next_timestamp_to_reach: z.string().nullable().optional(),
    last_sent_time: z.string().nullable().optional(),
    latest_reply_time: z.string().nullable().optional(),
    email_campaign_seq_id: z.number().int().nullable().optional(),
    lead_category_id: z.number().int().nullable().optional(),
    lead_category: z.object({ id: z.number().int(), name: z.string() }).nullable().optional(),
    latest_email_stats: HistoryMessage.nullable().optional(),
    latest_reply_stats: HistoryMessage.nullable().optional(),
    matched_status_stats: HistoryMessage.nullable().optional(),
  })
  .openapi("FilteredCampaignLead");

const FilteredLeads = z
  .object({ leads: z.array(FilteredLead), lastSeenEclmId: z.number().int().nullable(), count: z.number().int(), lastSeenReplyTime: z.string().nullable().optional() })
  .openapi("FilteredCampaignLeads");

const routes = {
  filter: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/leads/filter",
    operationId: "filterCampaignLeads",
    summary: "Search and filter a campaign's leads, a page at a time",
    description:
      "Every filter optional, all of them ANDed (`leadStatuses`, `emailStatuses`, `leadCategoryIds` each match any of their values). Records by " +
      "id, `lastSeenLeadId` the cursor (`lastSeenEclmId` of the answer: null when no more follow); with `fieldSet: active_table` and " +
      "`statusFilter: replied`, latest reply first, the cursor then the pair (`lastSeenReplyTime`, `lastSeenLeadId`). `count` = records " +
      "matching the filters in all. `active_table` adds sending times, the category and the latest sent, reply and matched messages. " +
      "STARTED matches records not sent yet (DRAFTED or STARTED); `espDomainTypes` matches the recipient's provider from its domain's MX " +
      "(`esp_domain_type`: 1 google, 2 microsoft, 0 other or not known yet; learned in the background after an upload).",
    tags: ["Leads"],
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: optionalJsonBody(LeadFilterBody, { searchText: "ann acme", limit: 25, leadStatuses: ["INPROGRESS"] }) },
    responses: { 200: json(FilteredLeads, "One page of records"), ...errorResponses(401, 404, 422, 429) },
  }),
  summary: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/lead-status-summary",
    operationId: "getCampaignLeadStatusSummary",
    summary: "How many of a campaign's records are in each status group",
    description:
      "`all`; `active` (not sent yet or in progress); `replied`; `failed` (BLOCKED, or its latest send refused); `scheduled` (a next send time " +
      "set); `manual_followups` (always 0); `completed`; `paused`. The keys are those the lead filter's `statusFilter` takes.",
    tags: ["Campaigns"],
    security: API_KEY_SECURITY,
    request: { params: CampaignParams },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: z.object(Object.fromEntries(SUMMARY_KEYS.map((key) => [key, z.number().int()]))) }).openapi("LeadStatusSummary"), "The counts"),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
};

const DEFAULT_LIMIT = 25;

const ESP_NAMES: Record<string, 0 | 1 | 2> = { "0": 0, "1": 1, "2": 2, other: 0, unknown: 0, smtp: 0, google: 1, gmail: 1, microsoft: 2, outlook: 2 };

/** The codes named (digits or provider names, any case); undefined when none is known, so no filter applies. */
function espDomainTypesOf(values: (string | number)[] | undefined): (0 | 1 | 2)[] | undefined {
  const codes = [...new Set((values ?? []).flatMap((value) => {
    const code = ESP_NAMES[String(value).trim().toLowerCase()];
    return code === undefined ? [] : [code];
  }))];
  return codes.length > 0 ? codes : undefined;
}

export const leadFilterRoutes = createRouter();

const time = (value: number | null) => (value === null ? null : iso(new Date(value)));

function presentRecord(row: FilteredRecord, active: boolean, thread: Thread | undefined, matchReplies: boolean) {
  const history = thread ? presentHistory(thread, false) : [];
  const latestSent = history.findLast((m) => m.type === "SENT") ?? null;
  const latestReply = history.findLast((m) => m.type === "REPLY") ?? null;
  const lead = {
    id: row.lead_id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    company_name: row.company_name,
    phone_number: row.phone_number,
    company_url: row.company_url,
    website: row.website,
    linkedin_profile: row.linkedin_profile,
    location: row.location,
    custom_fields: row.custom_fields === null ? null : (JSON.parse(row.custom_fields) as Record<string, unknown>),
    esp_domain_type: espDomainType(row.email_provider),
  };
  const base = {
    id: row.id,
    current_seq_num: Number(row.current_seq_num),
    status: row.state,
    email_account_id: row.email_account_id,
    spintax_modulo_index: row.spintax_modulo_index,
  };
  if (!active) return { ...base, email_lead: lead, email_account: row.username === null ? null : { username: row.username } };
  return {
    ...base,
    email_lead: { ...lead, seg_type: null },
    email_account: row.username === null ? null : { username: row.username, mappingExists: row.mapping_id === null ? [] : [{ id: Number(row.mapping_id) }] },
    next_timestamp_to_reach: time(row.due_at),
    last_sent_time: time(row.last_sent_at),
    latest_reply_time: time(row.last_reply_at),
    email_campaign_seq_id: row.email_campaign_seq_id,
    lead_category_id: row.category_id,
    lead_category: row.category_id === null ? null : { id: row.category_id, name: row.category_name ?? "" },
    latest_email_stats: latestSent,
    latest_reply_stats: latestReply,
    matched_status_stats: matchReplies ? latestReply : latestSent,
  };
}

leadFilterRoutes.openapi(routes.filter, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const body = c.req.valid("json") ?? {};
  const active = body.fieldSet === "active_table";
  const byReply = active && body.statusFilter === "replied";
  const limit = body.limit ?? DEFAULT_LIMIT;
  const filter: LeadFilter = { ...body, espDomainTypes: espDomainTypesOf(body.espDomainTypes) };
  const replyAt = body.lastSeenReplyTime === undefined ? undefined : typeof body.lastSeenReplyTime === "number" ? body.lastSeenReplyTime : Date.parse(body.lastSeenReplyTime);
  const { rows, total } = await filterRecords(c.env.DB, campaign.id, filter, { limit, lastSeenId: body.lastSeenLeadId, lastSeenReplyAt: replyAt, byReply });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  const threads = active && page.length > 0 ? await threadsOf(c.env.DB, page.map((row) => row.id), -1, { bucket: c.env.BODIES, accountId: campaign.accountId }) : new Map<number, Thread>();
  const matchReplies = byReply || body.statusFilter === "replied" || (body.emailStatuses ?? []).some((status) => status === "is_replied" || status === "got_reply");
  const last = page.at(-1);
  return c.json(
    {
      leads: page.map((row) => presentRecord(row, active, threads.get(row.id), matchReplies)),
      lastSeenEclmId: more && last ? last.id : null,
      count: total,
      ...(active && { lastSeenReplyTime: more && last ? time(last.last_reply_at) : null }),
    },
    200,
  );
});

leadFilterRoutes.openapi(routes.summary, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  return c.json({ ok: true, data: await statusSummary(c.env.DB, campaign.id) }, 200);
});
