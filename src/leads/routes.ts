import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { RECORD_STATES, VERIFICATION_STATUSES } from "../db/schema";
import { sortUpload } from "./rules";
import { scheduleOf } from "../schedule/settings";
import { enrolmentDue } from "../schedule/window";
import { iso } from "../platform/time";
import { findCampaign, RECORD_NOT_FOUND, type CampaignRecordRow, type LeadRow } from "../platform/access";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryCount } from "../platform/openapi";
import { CampaignParams, Ok } from "../campaigns/schemas";
import { wakeCampaign } from "../mailboxes/wake";
import { LeadInput, leadOutput, leadOutputFields } from "./lead-input";
import { CategoryListItem, presentCategoryListItem } from "../triage/present";
import { flagForVerification, screenAddresses, VERIFY_MODES } from "../verification/upload";
import { storeOnLeadsByEmail } from "../verification/store";
import { categoriesOf, countAlreadyInCampaign, recordPage, setRecordStateIn, skippedAddresses, storeUpload } from "./store";

const MAX_LEADS_PER_UPLOAD = 400;

const UploadSettings = z.object({
  return_lead_ids: z.boolean().optional(),
  ignore_global_block_list: z.boolean().optional(),
  ignore_unsubscribe_list: z.boolean().optional(),
  ignore_duplicate_leads_in_other_campaign: z.boolean().optional(),
  ignore_community_bounce_list: z.boolean().optional(),
  verify_emails: z.enum(VERIFY_MODES).optional().openapi({
    description: "Extension (CONTRACT 22): `off` (default); `flag`: added, then verified in the background (`verification_job_id`); `skip`: DNS checks now, invalid addresses are not added (`invalid_emails`)",
  }),
  skip_risky: z.boolean().optional().openapi({ description: "With `verify_emails: skip`, risky addresses (disposable, role, …) are not added either" }),
});

type Upload = { lead_list: z.infer<typeof LeadInput>[]; settings: z.infer<typeof UploadSettings> };

/**
 * Section 2's body, plus what other clients send: settings keys at the top level (their `settings`
 * object wins) and one flat lead in place of `lead_list` (compat rule C7).
 */
const AddLeads = LeadInput.partial()
  .extend(UploadSettings.shape)
  .extend({
    lead_list: z.array(LeadInput).min(1).max(MAX_LEADS_PER_UPLOAD).optional(),
    settings: UploadSettings.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.lead_list === undefined && body.email === undefined) {
      ctx.addIssue({ code: "custom", path: ["lead_list"], message: "lead_list is required (or one lead's email)" });
    }
  })
  .transform((body): Upload => {
    const { lead_list, settings, return_lead_ids, ignore_global_block_list, ignore_unsubscribe_list, ignore_duplicate_leads_in_other_campaign, ignore_community_bounce_list, verify_emails, skip_risky, ...flat } =
      body;
    const topLevel = { return_lead_ids, ignore_global_block_list, ignore_unsubscribe_list, ignore_duplicate_leads_in_other_campaign, ignore_community_bounce_list, verify_emails, skip_risky };
    const defined = Object.fromEntries(Object.entries(topLevel).filter(([, value]) => value !== undefined));
    return { lead_list: lead_list ?? [flat as z.infer<typeof LeadInput>], settings: { ...defined, ...settings } };
  })
  .openapi("AddLeads");

const BulkLeads = z
  .object({ leads: z.array(LeadInput).min(1).max(MAX_LEADS_PER_UPLOAD), settings: UploadSettings.optional() })
  .transform((body): Upload => ({ lead_list: body.leads, settings: body.settings ?? {} }))
  .openapi("AddLeadsBulk");

const AddedLeads = z
  .object({
    ok: z.boolean(),
    upload_count: z.number().int(),
    total_leads: z.number().int(),
    already_added_to_campaign: z.number().int(),
    duplicate_count: z.number().int(),
    invalid_email_count: z.number().int(),
    invalid_timezone_count: z.number().int().openapi({ description: "Leads stored whose time zone was not a known IANA name (stored as null, CONTRACT 23.1)" }),
    block_count: z.number().int(),
    unsubscribed_leads: z.number().int(),
    emailToLeadIdMap: z.record(z.string(), z.number().int()).optional(),
    invalid_emails: z.array(z.string()).optional().openapi({ description: "With `verify_emails: skip`: the addresses verification kept out (also counted in `invalid_email_count`)" }),
    verification_job_id: z.string().optional().openapi({ description: "With `verify_emails: flag`: the background job (`GET /verify-emails/status?job_id=`)" }),
  })
  .openapi("AddedLeads");

const Lead = z
  .object(leadOutputFields)
  .openapi("Lead");

export const CampaignRecordOut = z
  .object({
    campaign_lead_map_id: z.number().int(),
    status: z.enum(RECORD_STATES),
    lead_category_id: z.number().int().nullable(),
    created_at: z.string(),
    lead: Lead,
  })
  .openapi("CampaignLead");

const LeadPage = z
  .object({ total_leads: z.string(), offset: z.number().int(), limit: z.number().int(), data: z.array(CampaignRecordOut) })
  .openapi("CampaignLeadPage");

const ListQuery = z.object({
  offset: queryCount(0).default(0),
  limit: queryCount(1, 100).default(100),
  status: z.enum(RECORD_STATES).optional(),
  starting_after: queryCount(0).optional(),
  verification_status: z.enum(VERIFICATION_STATUSES).optional().openapi({ description: "Extension (CONTRACT 22): only leads with this email verification status" }),
});

const RecordParams = z.object({ campaign_id: pathId("campaign_id"), email_lead_map_id: pathId("email_lead_map_id") });


const addLeads = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/leads",
  operationId: "addCampaignLeads",
  description: "Adds 1–400 leads. A lead is one person per account (by email, case-insensitive); each becomes a DRAFTED record of the campaign. " +
    "Duplicates, leads already in the campaign, invalid emails, block-listed and unsubscribed addresses are counted, not added " +
    "(`settings.ignore_global_block_list`/`ignore_unsubscribe_list` override). `settings.return_lead_ids` adds `emailToLeadIdMap`. " +
    "One flat lead (`email` at the top) is read as a one-lead list.",
  tags: ["Leads"],
  summary: "Add up to 400 leads to a campaign (deduplicated by email per account)",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: jsonBody(AddLeads, {
        lead_list: [{ email: "ann@example.com", first_name: "Ann", last_name: "Lee", company_name: "Acme", custom_fields: { role: "CTO" } }],
        settings: { return_lead_ids: true },
      }) },
  responses: { 200: json(AddedLeads, "Upload counts"), ...errorResponses(401, 404, 422, 429) },
});

const addLeadsBulk = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/leads/bulk",
  operationId: "addCampaignLeadsBulk",
  description: "Add-leads with the list under `leads` (the form one client uses); same rules and answer.",
  tags: ["Leads"],
  summary: "Add up to 400 leads to a campaign (the `leads` form of add-leads)",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: jsonBody(BulkLeads, { leads: [{ email: "ann@example.com", first_name: "Ann" }] }) },
  responses: { 200: json(AddedLeads, "Upload counts"), ...errorResponses(401, 404, 422, 429) },
});

const listLeads = createRoute({
  method: "get",
  path: "/api/v1/campaigns/{campaign_id}/leads",
  operationId: "listCampaignLeads",
  description: "The campaign's records, paged by `offset` and `limit` (1–100), narrowed by `status`: `{total_leads, offset, limit, data: [{campaign_lead_map_id, status, lead_category_id, created_at, lead}]}`.",
  tags: ["Leads"],
  summary: "List a campaign's leads",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, query: ListQuery },
  responses: { 200: json(LeadPage, "One page of campaign records"), ...errorResponses(401, 404, 422, 429) },
});

const setRecordState = createRoute({
  method: "patch",
  path: "/api/v1/campaigns/{campaign_id}/leads/{email_lead_map_id}",
  operationId: "setCampaignLeadState",
  description: "Sets a record's `state` directly (an extension for engines that send elsewhere). Foreign record → 404.",
  "x-salvo-extension": true,
  tags: ["Leads"],
  summary: "Set a campaign record's state",
  security: API_KEY_SECURITY,
  request: { params: RecordParams, body: jsonBody(z.object({ state: z.enum(RECORD_STATES) }).openapi("SetLeadState"), { state: "PAUSED" }) },
  responses: { 200: json(Ok, "State set"), ...errorResponses(401, 404, 422, 429) },
});

const fetchCategories = createRoute({
  method: "get",
  path: "/api/v1/leads/fetch-categories",
  operationId: "listLeadCategories",
  description: "The lead categories as a bare array with `sentiment_type`. Ids 1–7 are built in (6 = Out Of Office).",
  tags: ["Leads"],
  summary: "Lead categories (ids 1-7 are built in; 6 is Out Of Office)",
  security: API_KEY_SECURITY,
  responses: { 200: json(z.array(CategoryListItem), "Every category the account can use"), ...errorResponses(401, 429) },
});

export const leadRoutes = createRouter();

/** Stores an upload: block-listed and unsubscribed addresses are skipped unless its settings say otherwise. */
async function upload(c: Context<AppEnv>, campaignId: number, body: Upload) {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, campaignId);
  const sorted = sortUpload(body.lead_list);
  const target = { accountId: principal.accountId, campaignId: campaign.id, clientId: campaign.clientId };
  const scope = { accountId: principal.accountId, clientId: campaign.clientId };
  const verify = body.settings.verify_emails ?? "off";
  const screened = verify === "skip" ? await screenAddresses(c.env, sorted.unique.map((lead) => lead.email), body.settings.skip_risky ?? false) : null;
  const unique = screened ? sorted.unique.filter((lead) => !screened.refused.has(lead.email)) : sorted.unique;
  const skipped = await skippedAddresses(c.env.DB, target, unique.map((lead) => lead.email), {
    blockList: !body.settings.ignore_global_block_list,
    unsubscribed: !body.settings.ignore_unsubscribe_list,
  });
  const kept = unique.filter((lead) => !skipped.blocked.has(lead.email) && !skipped.unsubscribed.has(lead.email));
  const alreadyAdded = await countAlreadyInCampaign(db, target, kept.map((lead) => lead.email));
  const now = Date.now();
  const due = enrolmentDue(scheduleOf(campaign.schedule), kept.flatMap((lead) => (lead.timezone ? [lead.timezone] : [])), now);
  const mapped = kept.length > 0 ? await storeUpload(c.env.DB, target, kept, now, due) : [];
  if (screened) await storeOnLeadsByEmail(c.env.DB, scope, screened.results.filter((r) => !screened.refused.has(r.email)), now);
  const jobId = verify === "flag" ? await flagForVerification(c.env, (work) => c.executionCtx.waitUntil(work), scope, kept.map((lead) => lead.email)) : null;
  if (campaign.status === "ACTIVE") await wakeCampaign(c.env, campaign.id);
  const invalidEmailCount = sorted.invalidEmailCount + (screened?.refused.size ?? 0);
  const { duplicateCount, invalidTimezoneCount } = sorted;

  return c.json(
    {
      ok: true,
      upload_count: kept.length - alreadyAdded,
      total_leads: body.lead_list.length,
      already_added_to_campaign: alreadyAdded,
      duplicate_count: duplicateCount,
      invalid_email_count: invalidEmailCount,
      invalid_timezone_count: invalidTimezoneCount,
      block_count: skipped.blocked.size,
      unsubscribed_leads: skipped.unsubscribed.size,
      ...(body.settings.return_lead_ids
        ? { emailToLeadIdMap: Object.fromEntries(mapped.map((row) => [row.email, row.id])) }
        : {}),
      ...(screened && { invalid_emails: [...screened.refused] }),
      ...(jobId !== null && { verification_job_id: jobId }),
    },
    200,
  );
}

leadRoutes.openapi(addLeads, async (c) => upload(c, c.req.valid("param").campaign_id, c.req.valid("json")));

leadRoutes.openapi(addLeadsBulk, async (c) => upload(c, c.req.valid("param").campaign_id, c.req.valid("json")));

leadRoutes.openapi(listLeads, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const { offset, limit, status, starting_after, verification_status } = c.req.valid("query");
  const { total, rows } = await recordPage(db, campaign.id, status, { offset, limit, after: starting_after ?? 0 }, verification_status);
  return c.json({ total_leads: String(total), offset, limit, data: rows.map(({ record, lead }) => presentRecord(record, lead)) }, 200);
});

/** One item of the campaign lead listing. */
export function presentRecord(record: CampaignRecordRow, lead: LeadRow) {
  return {
    campaign_lead_map_id: record.id,
    status: record.state,
    lead_category_id: record.categoryId,
    created_at: iso(record.createdAt),
    lead: leadOutput(lead),
  };
}

leadRoutes.openapi(setRecordState, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const { campaign_id, email_lead_map_id } = c.req.valid("param");
  const campaign = await findCampaign(db, principal, campaign_id);
  const updated = await setRecordStateIn(db, campaign.id, email_lead_map_id, c.req.valid("json").state);
  if (!updated) throw ApiError.notFound(RECORD_NOT_FOUND);
  return c.json({ ok: true }, 200);
});

leadRoutes.openapi(fetchCategories, async (c) => {
  const principal = c.get("principal");
  const rows = await categoriesOf(database(c.env.DB), principal.accountId);
  return c.json(rows.map(presentCategoryListItem), 200);
});
