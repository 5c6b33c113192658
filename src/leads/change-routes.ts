import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { database, type Database } from "../platform/db";
import type { AppEnv } from "../platform/env";
import {
  findCampaign,
  findCampaignRecord,
  findLeadRecord,
  findRecordOrLeadRecord,
  requireLead,
  type CampaignRecordRow,
  type CampaignRow,
  type LeadRow,
} from "../platform/access";
import type { Principal } from "../platform/principal";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, operationWords, type OperationWords, optionalJsonBody } from "../platform/openapi";
import { iso } from "../platform/time";
import { wakeCampaign, wakeCampaigns } from "../mailboxes/wake";
import { leadRedating } from "../schedule/redating-store";
import { stepDueAt } from "../schedule/window";
import { scheduleOf } from "../schedule/settings";
import { enqueue } from "../webhooks/outbox";
import { changeCategory } from "../inbox/category-change";
import {
  FINAL_STATES,
  PAUSABLE_STATES,
  completeRecord,
  deleteLead,
  deleteRecord,
  findCategory,
  leadWithEmail,
  mailboxAttached,
  pauseRecords,
  pauseStatement,
  pausedRecordsOfLead,
  pinRecord,
  recordsOfLead,
  resumeRecords,
  stepToResume,
  unsubscribeRecords,
  updateLeadFields,
  type LeadFieldChange,
  type RecordResume,
  type ResumeFacts,
} from "./change-store";
import { isValidEmail, normaliseEmail } from "../mail/address";
import { timezoneInput } from "./lead-input";
import { leadTimezone, TIMEZONE_FIELDS } from "./rules";
import { ACK } from "../campaigns/schemas";

const DAY_MS = 86_400_000;
const MAX_CUSTOM_FIELDS = 200;
const LAST_STEP = "This is the last sequence. You cannot resume this lead.";

/** Ids in bodies: a number or its decimal string (shared rules). */
const BodyId = z
  .union([z.number().int().positive(), z.string().regex(/^[1-9][0-9]{0,15}$/, "Must be a decimal integer").transform(Number)])
  .pipe(z.number().int().positive().max(Number.MAX_SAFE_INTEGER));

const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() }).openapi("LeadAck");
const AckData = Ack.extend({ data: z.string() }).openapi("LeadAckSuccess");
const Resumed = Ack.extend({ data: z.string(), will_resume_at: z.string() }).openapi("LeadResumed");
const InboxResumed = Ack.extend({
  data: z.object({
    campaign_id: z.number().int(),
    email_lead_map_id: z.number().int(),
    resume_delay_days: z.number().int().nullable(),
    will_resume_at: z.string(),
  }),
}).openapi("InboxLeadResumed");

function ack<T extends Record<string, unknown>>(message: string, extra?: T) {
  return { ok: true, success: true, message, ...(extra as T) };
}

const optionalText = z.string().max(500).nullish();

const LeadUpdate = z
  .object({
    email: z.string().max(320).optional(),
    first_name: optionalText,
    last_name: optionalText,
    phone_number: optionalText,
    company_name: optionalText,
    website: optionalText,
    location: optionalText,
    linkedin_profile: optionalText,
    company_url: optionalText,
    custom_fields: z.record(z.string(), z.unknown()).nullish(),
    ...timezoneInput,
  })
  .openapi("LeadUpdate");

const Updated = Ack.extend({
  invalid_timezone_count: z.number().int().openapi({ description: "1 when the given time zone was not a known IANA name (the lead's zone is then cleared, CONTRACT 23.1)" }),
}).openapi("LeadUpdated");

const ResumeBody = z
  .object({
    resume_lead_with_delay_days: z.number().int().min(0).max(365).optional(),
    resume_delay_days: z.number().int().min(0).max(365).optional(),
  })
  .openapi("ResumeLead");

const CategoryValue = z.union([z.number().int(), z.string().max(100)]).nullable();
const CategoryBody = z
  .object({ category_id: CategoryValue.optional(), category: CategoryValue.optional(), pause_lead: z.boolean().default(false) })
  .openapi("CampaignLeadCategory");

const StatusBody = z
  .object({ status: z.string().transform((value) => value.toLowerCase()).pipe(z.enum(["unsubscribed", "paused", "active"])) })
  .openapi("LeadStatus");

/** The aliases (`campaign_id`, `lead_id`) fill the canonical fields when those are absent. */
const RepinBody = z
  .preprocess(
    (body) =>
      body !== null && typeof body === "object"
        ? {
            ...body,
            email_campaign_id: (body as Record<string, unknown>).email_campaign_id ?? (body as Record<string, unknown>).campaign_id,
            email_lead_id: (body as Record<string, unknown>).email_lead_id ?? (body as Record<string, unknown>).lead_id,
          }
        : body,
    z.object({
      email_account_id: BodyId,
      email_campaign_id: BodyId,
      email_lead_id: BodyId,
      override_lead_email_account: z.boolean().default(false),
    }),
  )
  .openapi("RepinLeadMailbox");

const InboxResumeBody = z
  .object({ campaign_id: BodyId, email_lead_map_id: BodyId, resume_delay_days: z.number().int().min(0).max(365).optional() })
  .openapi("InboxResumeLead");

const LeadParams = z.object({ lead_id: pathId("lead_id") });
const CampaignLeadParams = z.object({ campaign_id: pathId("campaign_id"), lead_id: pathId("lead_id") });
const CampaignRecordParams = z.object({ campaign_id: pathId("campaign_id"), email_lead_map_id: pathId("email_lead_map_id") });

function route<const M extends "post" | "put" | "patch" | "delete", const P extends string, const R extends RouteConfig["request"], S extends z.ZodType>(
  method: M,
  path: P,
  words: OperationWords,
  request: R,
  schema: S,
) {
  return createRoute({
    method,
    path,
    ...operationWords(words),
    tags: ["Leads"],
    security: API_KEY_SECURITY,
    request,
    responses: { 200: json(schema, "Done"), ...errorResponses(400, 401, 404, 422, 429) },
  });
}

const routes = {
  update: route("post", "/api/v1/campaigns/{campaign_id}/leads/{lead_id}", {
    operationId: "updateCampaignLead",
    summary: "Update a lead (every campaign shows the change)",
    description: "Updates the lead (one per account, so every campaign shows the change); `email` may be left out. Rules as `PUT /leads/{lead_id}`.",
  }, {
    params: CampaignLeadParams,
    body: jsonBody(LeadUpdate, { email: "ann@example.com", last_name: "Lee-Smith" }),
  }, Updated),
  updateLead: route("put", "/api/v1/leads/{lead_id}", {
    operationId: "updateLead",
    summary: "Update a lead",
    description: "Updates a lead's fields; `custom_fields` merge (a key set to null is removed; ≤ 200 keys). A new `email` already used by another " +
      "lead → 400 `Email already belongs to lead N`. `timezone` (or an alias, or a custom field of those names) sets the lead's IANA zone; " +
      "null clears it; an unknown name clears it and answers `invalid_timezone_count: 1`. " + ACK,
  }, { params: LeadParams, body: jsonBody(LeadUpdate, { first_name: "Ann", company_name: "Acme GmbH", custom_fields: { role: "CEO" }, timezone: "Europe/Paris" }) }, Updated),
  pause: route("post", "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/pause", {
    operationId: "pauseCampaignLead",
    summary: "Pause a lead in a campaign",
    description: "Pauses the record (from DRAFTED, STARTED or INPROGRESS; PAUSED is a no-op). A final record (COMPLETED, STOPPED, BLOCKED) → 400 `Lead is <STATE>`.",
  }, { params: CampaignLeadParams }, AckData),
  resume: route(
    "post",
    "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/resume",
    {
      operationId: "resumeCampaignLead",
      summary: "Resume a paused lead, optionally after a delay in days",
      description: "Returns a paused record to the state it was paused from; the next step is due after `resume_lead_with_delay_days` (0–365) or its " +
        "own delay counted from the pause. Not paused → 400; nothing left to send → 400 `This is the last sequence...`.",
    },
    { params: CampaignLeadParams, body: optionalJsonBody(ResumeBody, { resume_lead_with_delay_days: 1 }) },
    Resumed,
  ),
  complete: route(
    "post",
    "/api/v1/campaigns/{campaign_id}/leads/{email_lead_map_id}/manual-complete",
    {
      operationId: "completeCampaignLead",
      summary: "Mark a lead's record complete (a record id, or a lead id)",
      description: "Marks the record COMPLETED (no more steps). The id is a record id; when the campaign has no such record it is tried as a lead id.",
    },
    { params: CampaignRecordParams },
    Ack,
  ),
  unsubscribe: route(
    "post",
    "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/unsubscribe",
    {
      operationId: "unsubscribeCampaignLead",
      summary: "Unsubscribe a lead from one campaign",
      description: "Stops the record and records an UNSUBSCRIBE event (source `api`), so `unsubscribed_count` and LEAD_UNSUBSCRIBED follow.",
    },
    { params: CampaignLeadParams },
    Ack,
  ),
  unsubscribeEverywhere: route(
    "post",
    "/api/v1/leads/{lead_id}/unsubscribe",
    {
      operationId: "unsubscribeLead",
      summary: "Unsubscribe a lead from every campaign, and from later uploads",
      description: "Unsubscribes the lead everywhere: `is_unsubscribed`, every live record STOPPED with an UNSUBSCRIBE event, later campaign adds " +
        "skip it. Answers `{ok: true}` also when it already was.",
    },
    { params: LeadParams },
    z.object({ ok: z.boolean() }),
  ),
  status: route("put", "/api/v1/leads/{lead_id}/status", {
    operationId: "setLeadStatus",
    summary: "Unsubscribe, pause or resume a lead everywhere",
    description: "`{status}`: `unsubscribed` unsubscribes everywhere; `paused`/`active` pause or resume every record of the lead where allowed; anything else → 422.",
  }, {
    params: LeadParams,
    body: jsonBody(StatusBody, { status: "paused" }),
  }, Ack),
  remove: route("delete", "/api/v1/campaigns/{campaign_id}/leads/{lead_id}", {
    operationId: "deleteCampaignLead",
    summary: "Delete a lead from a campaign (its events stay)",
    description: "Removes the lead's record (and its conversation) from the campaign; its events stay, so windowed counts keep them. " + ACK,
  }, { params: CampaignLeadParams }, Ack),
  removeLead: route("delete", "/api/v1/leads/{lead_id}", {
    operationId: "deleteLead",
    summary: "Delete a lead from every campaign, then the lead",
    description: "Removes the lead from every campaign and list, then deletes it; its events stay in the windowed counts. " + ACK,
  }, { params: LeadParams }, Ack),
  category: route("post", "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/category", {
    operationId: "setCampaignLeadCategory",
    summary: "Categorise a lead in a campaign (id or name; null clears)",
    description: "Categorises the lead's record: `category_id` (null or `\"\"` clears) or `category` (id or name). `pause_lead` also pauses it. " +
      "Fires LEAD_CATEGORY_UPDATED. Unknown category → 400 `Invalid category - <value>`.",
  }, {
    params: CampaignLeadParams,
    body: jsonBody(CategoryBody, { category_id: 1, pause_lead: false }),
  }, Ack),
  repin: route("post", "/api/v1/campaigns/update-lead-email-account", {
    operationId: "updateLeadEmailAccount",
    summary: "Pin a lead's record to another mailbox of the campaign",
    description: "Pins a record to another mailbox of its campaign. The mailbox must be attached (else 400); a record already pinned needs " +
      "`override_lead_email_account: true` (else 400).",
  }, {
    body: jsonBody(RepinBody, { email_account_id: 1, email_campaign_id: 1, email_lead_id: 1, override_lead_email_account: true }),
  }, Ack),
  inboxResume: route("patch", "/api/v1/master-inbox/resume-lead", {
    operationId: "inboxResumeLead",
    summary: "Resume a paused lead from the master inbox",
    description: "Resumes a paused record from the inbox: `{campaign_id, email_lead_map_id, resume_delay_days?}`. A `campaign_id` that is not the " +
      "record's → 404; not paused → 400 `Lead is not paused`.",
  }, { body: jsonBody(InboxResumeBody, { campaign_id: 1, email_lead_map_id: 1, resume_delay_days: 2 }) }, InboxResumed),
};

function refuseFinal(record: CampaignRecordRow): void {
  if (FINAL_STATES.includes(record.state)) throw ApiError.badRequest(`Lead is ${record.state}`);
}

/** The fields a lead update writes: a new address (free in the lead's scope), and custom fields merged. */
async function leadChange(db: Database, lead: LeadRow, body: z.infer<typeof LeadUpdate>): Promise<LeadFieldChange> {
  const change: LeadFieldChange = {};
  if (body.email !== undefined) {
    const email = normaliseEmail(body.email);
    if (!isValidEmail(email)) throw ApiError.validation([{ path: "email", message: "Invalid email address" }]);
    const owner = email === lead.email ? null : await leadWithEmail(db, lead, email);
    if (owner !== null) throw ApiError.badRequest(`Email already belongs to lead ${owner}`);
    change.email = email;
  }
  const text = {
    firstName: body.first_name,
    lastName: body.last_name,
    phoneNumber: body.phone_number,
    companyName: body.company_name,
    website: body.website,
    location: body.location,
    linkedinProfile: body.linkedin_profile,
    companyUrl: body.company_url,
  };
  for (const [key, value] of Object.entries(text)) {
    if (value !== undefined) (change as Record<string, unknown>)[key] = value;
  }
  if (body.custom_fields === null) change.customFields = null;
  else if (body.custom_fields !== undefined) {
    // A key set to null is removed; the others merge into what is stored.
    const merged: Record<string, unknown> = { ...(lead.customFields ?? {}) };
    for (const [key, value] of Object.entries(body.custom_fields)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    if (Object.keys(merged).length > MAX_CUSTOM_FIELDS) {
      throw ApiError.validation([{ path: "custom_fields", message: `At most ${MAX_CUSTOM_FIELDS} custom fields` }]);
    }
    change.customFields = merged;
  }
  const zone = leadTimezone(body);
  if (zone.given) change.timezone = zone.zone;
  else if (TIMEZONE_FIELDS.some((name) => body[name] === null)) change.timezone = null;
  return change;
}

async function update(c: Context<AppEnv>, lead: LeadRow, body: z.infer<typeof LeadUpdate>) {
  const db = database(c.env.DB);
  const change = await leadChange(db, lead, body);
  const redating = change.timezone === undefined ? [] : await leadRedating(db, [{ leadId: lead.id, before: lead.timezone, after: change.timezone }], Date.now());
  await updateLeadFields(db, lead, change, redating);
  const invalidZone = leadTimezone(body).given && change.timezone === null ? 1 : 0;
  return c.json(ack("Lead updated successfully", { invalid_timezone_count: invalidZone }), 200);
}

/**
 * How a PAUSED record resumes: into the state it was paused from; the next step is due after `days`,
 * or when absent after that step's own delay counted from the pause. 400 when it cannot resume.
 */
function resumeOf({ record, campaign, step, hasSteps }: ResumeFacts, days: number | undefined, now: number): RecordResume {
  if (record.state !== "PAUSED") throw ApiError.badRequest("Lead is not paused");
  // A campaign whose sequence is not written yet still has everything to send.
  if (record.nextStep === null || (hasSteps && step === null)) throw ApiError.badRequest(LAST_STEP);
  const pausedAt = record.pausedAt?.getTime() ?? now;
  const dueAt =
    days !== undefined ? now + days * DAY_MS : step ? stepDueAt(pausedAt, step.delayInDays, scheduleOf(campaign.schedule)?.timezone ?? "UTC") : pausedAt;
  return { recordId: record.id, state: record.pausedFrom ?? (record.hasSent ? "INPROGRESS" : "DRAFTED"), dueAt };
}

/** Resumes one PAUSED record (`resumeOf`) and wakes its campaign's senders; answers when it is due. */
async function resume(c: Context<AppEnv>, campaign: CampaignRow, record: CampaignRecordRow, days: number | undefined): Promise<number> {
  const now = Date.now();
  const planned = resumeOf({ record, campaign, ...(await stepToResume(database(c.env.DB), campaign.id, record.nextStep)) }, days, now);
  if ((await resumeRecords(c.env.DB, [planned], now)).length === 0) throw ApiError.badRequest("Lead is not paused");
  if (campaign.status === "ACTIVE") await wakeCampaign(c.env, campaign.id);
  return planned.dueAt;
}

/**
 * Resumes every paused record of a lead where it can (one with nothing left to send stays paused),
 * all in one statement; then wakes the senders of the ACTIVE campaigns that got a record back, since
 * a sender woken before the commit could find nothing due and sleep past it. A constant number of
 * reads however many campaigns the lead is paused in.
 */
async function resumeEverywhere(c: Context<AppEnv>, principal: Principal, leadId: number): Promise<void> {
  const now = Date.now();
  const planned = (await pausedRecordsOfLead(database(c.env.DB), principal, leadId)).flatMap((facts) => {
    try {
      return [{ campaign: facts.campaign, resume: resumeOf(facts, undefined, now) }];
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return [];
      throw error;
    }
  });
  const resumed = new Set(await resumeRecords(c.env.DB, planned.map(({ resume }) => resume), now));
  const toWake = new Set(planned.filter(({ campaign, resume }) => campaign.status === "ACTIVE" && resumed.has(resume.recordId)).map(({ campaign }) => campaign.id));
  await wakeCampaigns(c.env, [...toWake]);
}

async function unsubscribeEverywhere(c: Context<AppEnv>, principal: Principal, lead: LeadRow): Promise<void> {
  await enqueue(c.env, await unsubscribeRecords(c.env.DB, database(c.env.DB), principal, lead.id, null, Date.now()));
}

export const leadChangeRoutes = createRouter();

/** Routes under literal segments that parameter routes elsewhere would otherwise catch (C9): registered first. */
export const leadLiteralChangeRoutes = createRouter();

leadChangeRoutes.openapi(routes.update, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const db = database(c.env.DB);
  const principal = c.get("principal");
  await findLeadRecord(db, principal, campaign_id, lead_id);
  return update(c, await requireLead(db, principal, lead_id), c.req.valid("json"));
});

leadChangeRoutes.openapi(routes.updateLead, async (c) => {
  const lead = await requireLead(database(c.env.DB), c.get("principal"), c.req.valid("param").lead_id);
  return update(c, lead, c.req.valid("json"));
});

leadChangeRoutes.openapi(routes.pause, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const { record } = await findLeadRecord(database(c.env.DB), c.get("principal"), campaign_id, lead_id);
  refuseFinal(record);
  await pauseRecords(c.env.DB, [record.id], Date.now());
  return c.json(ack("Lead paused successfully", { data: "success" }), 200);
});

leadChangeRoutes.openapi(routes.resume, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const body = c.req.valid("json") ?? {};
  const { campaign, record } = await findLeadRecord(database(c.env.DB), c.get("principal"), campaign_id, lead_id);
  const dueAt = await resume(c, campaign, record, body.resume_lead_with_delay_days ?? body.resume_delay_days);
  return c.json(ack("Lead resumed successfully", { data: "success", will_resume_at: iso(dueAt) }), 200);
});

leadLiteralChangeRoutes.openapi(routes.inboxResume, async (c) => {
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const record = await findCampaignRecord(db, c.get("principal"), body.email_lead_map_id);
  if (record.campaignId !== body.campaign_id) throw ApiError.notFound("Lead mapping not found");
  const campaign = await findCampaign(db, c.get("principal"), record.campaignId);
  const dueAt = await resume(c, campaign, record, body.resume_delay_days);
  return c.json(
    ack("Lead resumed successfully", {
      data: {
        campaign_id: campaign.id,
        email_lead_map_id: record.id,
        resume_delay_days: body.resume_delay_days ?? null,
        will_resume_at: iso(dueAt),
      },
    }),
    200,
  );
});

leadChangeRoutes.openapi(routes.complete, async (c) => {
  const { campaign_id, email_lead_map_id } = c.req.valid("param");
  const { record } = await findRecordOrLeadRecord(database(c.env.DB), c.get("principal"), campaign_id, email_lead_map_id);
  if (record.state !== "COMPLETED") {
    refuseFinal(record);
    await completeRecord(database(c.env.DB), record.id, Date.now());
  }
  return c.json(ack("Lead marked as complete"), 200);
});

leadChangeRoutes.openapi(routes.unsubscribe, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const { record } = await findLeadRecord(db, principal, campaign_id, lead_id);
  // Unsubscribing twice records one opt-out.
  if (!(record.state === "STOPPED" && record.hasUnsubscribed)) {
    await enqueue(c.env, await unsubscribeRecords(c.env.DB, db, principal, lead_id, record.id, Date.now()));
  }
  return c.json(ack("Lead unsubscribed successfully"), 200);
});

leadChangeRoutes.openapi(routes.unsubscribeEverywhere, async (c) => {
  const principal = c.get("principal");
  const lead = await requireLead(database(c.env.DB), principal, c.req.valid("param").lead_id);
  await unsubscribeEverywhere(c, principal, lead);
  return c.json({ ok: true }, 200);
});

leadChangeRoutes.openapi(routes.status, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const lead = await requireLead(db, principal, c.req.valid("param").lead_id);
  const { status } = c.req.valid("json");
  if (status === "unsubscribed") await unsubscribeEverywhere(c, principal, lead);
  else {
    if (status === "paused") {
      const pausable = (await recordsOfLead(db, principal, lead.id)).filter((record) => PAUSABLE_STATES.includes(record.state)).map((record) => record.id);
      await pauseRecords(c.env.DB, pausable, Date.now());
    } else await resumeEverywhere(c, principal, lead.id);
  }
  return c.json(ack("Lead status updated successfully"), 200);
});

leadChangeRoutes.openapi(routes.remove, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const db = database(c.env.DB);
  const { record } = await findLeadRecord(db, c.get("principal"), campaign_id, lead_id);
  await deleteRecord(db, record.id);
  return c.json(ack("Lead deleted from campaign successfully"), 200);
});

leadChangeRoutes.openapi(routes.removeLead, async (c) => {
  const db = database(c.env.DB);
  const lead = await requireLead(db, c.get("principal"), c.req.valid("param").lead_id);
  await deleteLead(db, lead.id);
  return c.json(ack("Lead deleted successfully"), 200);
});

/** `category_id` wins over `category`; either may be an id, a decimal string or a name, and "" clears. */
async function categoryOf(db: Database, accountId: number, body: z.infer<typeof CategoryBody>) {
  const value = body.category_id !== undefined ? body.category_id : body.category;
  if (value === undefined) throw ApiError.validation([{ path: "category_id", message: "category_id is required" }]);
  if (value === null || value === "") return null;
  const key = typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : value;
  const category = await findCategory(db, accountId, typeof key === "string" ? key.trim() : key);
  if (!category) throw ApiError.badRequest(`Invalid category - ${value}`);
  return category;
}

leadChangeRoutes.openapi(routes.category, async (c) => {
  const { campaign_id, lead_id } = c.req.valid("param");
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const { record: found } = await findLeadRecord(db, principal, campaign_id, lead_id);
  const category = await categoryOf(db, principal.accountId, body);
  const categoryId = category?.id ?? null;
  // The pause is part of the change: committed with the category and its webhook, or not at all.
  await changeCategory(c.env, principal, found.id, categoryId, body.pause_lead ? [pauseStatement([found.id], Date.now())] : []);
  return c.json(ack("Lead category updated"), 200);
});

leadLiteralChangeRoutes.openapi(routes.repin, async (c) => {
  const body = c.req.valid("json");
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const { campaign, record } = await findLeadRecord(db, principal, body.email_campaign_id, body.email_lead_id);
  if (!(await mailboxAttached(db, campaign.id, body.email_account_id))) {
    throw ApiError.badRequest("Email account is not attached to this campaign");
  }
  if (record.emailAccountId !== body.email_account_id) {
    if (record.emailAccountId !== null && !body.override_lead_email_account) {
      throw ApiError.badRequest("Lead already has an email account; set override_lead_email_account to change it");
    }
    await pinRecord(db, record.id, body.email_account_id, Date.now());
    if (campaign.status === "ACTIVE" && record.dueAt !== null) await wakeCampaign(c.env, campaign.id);
  }
  return c.json(ack("Lead email account updated"), 200);
});
