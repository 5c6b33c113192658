import { createRoute, z } from "@hono/zod-openapi";
import { and, sql, type SQL } from "drizzle-orm";
import { leads } from "../db/schema";
import { config } from "../config";
import { findCampaign, findLeadList, RECORD_NOT_FOUND, visibleLeads } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, queryCount } from "../platform/openapi";
import { checkUrl, urlPolicy } from "../platform/outbound";
import { jsonList } from "../platform/sql";
import { MAX_WEBHOOK_URL_LENGTH, WEBHOOK_URL_RULES } from "../webhooks/delivery-rules";
import { verifierSettings, verifyAddresses } from "./check";
import { runVerificationJob } from "./jobs";
import { REASONS } from "./rules";
import { createEmailJob, createLeadJob, findJob, jobResults } from "./store";
import { jobStatus } from "./webhook";

const tags = ["Email verification"];
/** At most this many addresses are answered in the request (and only without an external verifier). */
export const INLINE_LIMIT = 50;
const MAX_ADDRESSES = 10_000;
const JOB_NOT_FOUND = "Verification job not found";

const Result = z
  .object({
    email: z.string(),
    status: z.enum(["valid", "invalid", "risky", "unknown"]),
    reason: z.enum(Object.keys(REASONS) as [keyof typeof REASONS, ...(keyof typeof REASONS)[]]),
    reason_text: z.string(),
    is_disposable: z.boolean(),
    is_role_account: z.boolean(),
    mx_found: z.boolean(),
    is_catch_all: z.boolean().nullable(),
    mailbox_checked: z.boolean(),
    domain: z.string().nullable(),
    ascii_domain: z.string().nullable(),
    provider: z.enum(["google", "microsoft", "other"]).nullable(),
    checked_at: z.string(),
  })
  .openapi("VerificationResult");

const Address = z.string().max(320);
const VerifyBody = z.object({
  email: Address.optional().openapi({ description: "One address (the DL client's shape)" }),
  emails: z.array(Address).max(MAX_ADDRESSES).optional().openapi({ description: "1-10,000 addresses (the BC client's shape)" }),
  emailList: z.array(Address).max(MAX_ADDRESSES).optional().openapi({ description: "The hosted verify page's name for `emails`" }),
  webhook_url: z.string().max(MAX_WEBHOOK_URL_LENGTH).optional().openapi({ description: "POSTed the completed status once (background jobs)" }),
});

const JobAnswer = z.object({
  ok: z.literal(true),
  success: z.literal(true),
  job_id: z.string(),
  status: z.enum(["queued", "running", "completed", "failed"]),
  total: z.number().int(),
});

const StatusAnswer = JobAnswer.extend({
  processed: z.number().int(),
  counts: z.object({ valid: z.number().int(), invalid: z.number().int(), risky: z.number().int(), unknown: z.number().int() }),
  data: z.array(Result),
});

const LeadsVerifyBody = z.object({
  lead_ids: z.array(BodyId).min(1).max(MAX_ADDRESSES).optional(),
  campaign_id: BodyId.optional(),
  list_id: BodyId.optional(),
  all: z.literal(true).optional(),
  recheck_after_days: z.number().int().min(0).max(3650).default(30).openapi({ description: "Leads verified more recently than this are skipped (0: verify all again)" }),
});

const routes = {
  verify: createRoute({
    method: "post",
    path: "/api/v1/verify-emails",
    operationId: "verifyEmails",
    tags,
    summary: "Verify email addresses (syntax, DNS/MX, disposable, role; mailbox through the optional external verifier)",
    description:
      "Takes `{email}`, `{emails:[…]}` or `{emailList:[…]}` (1-10,000 addresses). Up to 50 addresses with no external verifier configured are " +
      "answered at once (200, `data`: one Result each, in order). Otherwise a background job is queued (202 with `job_id`); read its progress " +
      "and results from `GET /verify-emails/status`, and with `webhook_url` the completed status is POSTed there once. Status is " +
      "`valid`, `invalid`, `risky` or `unknown` with a reason code (`syntax`, `no_domain`, `no_mx`, `null_mx`, `undeliverable`, `hard_bounce`, " +
      "`disposable`, `role`, `catch_all`, `smtputf8`, `dns_error`, `external_unknown`, `mx_ok`, `deliverable`).",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(VerifyBody, { emails: ["ann@example.com", "info@example.org"] }) },
    responses: {
      200: json(z.object({ ok: z.literal(true), success: z.literal(true), data: z.array(Result) }), "The results, in order"),
      202: json(JobAnswer, "A background job"),
      ...errorResponses(400, 401, 422, 429),
    },
  }),
  status: createRoute({
    method: "get",
    path: "/api/v1/verify-emails/status",
    operationId: "getEmailVerificationJob",
    tags,
    summary: "A verification job's progress, counts and finished results",
    description:
      "`status` queued, running, completed or failed; `processed` of `total`; counts by status; `data` the finished results in order from " +
      "`offset` (`limit` 1-1000, default 100). An unknown job, or another tenant's, answers 404.",
    security: API_KEY_SECURITY,
    request: {
      query: z.object({
        job_id: z.string().min(1).max(64),
        offset: queryCount(0).optional(),
        limit: queryCount(1, 1000).optional(),
      }),
    },
    responses: { 200: json(StatusAnswer, "The job"), ...errorResponses(401, 404, 422, 429) },
  }),
  verifyLeads: createRoute({
    method: "post",
    path: "/api/v1/leads/verify",
    operationId: "verifyLeads",
    tags,
    summary: "Verify leads' addresses in the background and store the result on each lead",
    description:
      "Choose the leads with one of `lead_ids` (1-10,000; any id not the caller's → 404 `Lead not found`), `campaign_id`, `list_id` or `all: true` " +
      "(another tenant's campaign or list → 404); leads verified within " +
      "`recheck_after_days` (default 30) are skipped. Each lead's `verification_status`, `verification_reason` and `verified_at` are set as " +
      "the job advances; the engine never sends to a lead verified `invalid`. Progress: `GET /verify-emails/status?job_id=`.",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(LeadsVerifyBody, { campaign_id: 1, recheck_after_days: 30 }) },
    responses: { 202: json(JobAnswer, "The job (status completed at once when no lead needed checking)"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

export const verificationRoutes = createRouter();

verificationRoutes.openapi(routes.verify, async (c) => {
  const body = c.req.valid("json");
  const emails = body.emails ?? body.emailList ?? (body.email !== undefined ? [body.email] : []);
  if (emails.length === 0) throw ApiError.validation([{ path: "emails", message: "Give `email`, or 1-10,000 addresses in `emails`" }]);
  const settings = config(c.env);
  const webhookUrl = body.webhook_url ?? null;
  if (webhookUrl !== null) {
    const problem = await checkUrl(webhookUrl, urlPolicy(settings), WEBHOOK_URL_RULES);
    if (problem) throw ApiError.validation([{ path: "webhook_url", message: `webhook_url ${problem}` }]);
  }
  if (emails.length <= INLINE_LIMIT && settings.emailVerifier === null) {
    const data = await verifyAddresses(c.env.DB, verifierSettings(settings), emails);
    return c.json({ ok: true as const, success: true as const, data }, 200);
  }
  const principal = c.get("principal");
  const jobId = await createEmailJob(c.env.DB, principal, emails, webhookUrl, Date.now());
  const job = (await findJob(database(c.env.DB), principal, jobId))!;
  c.executionCtx.waitUntil(runVerificationJob(c.env, job.id));
  return c.json({ ok: true as const, success: true as const, job_id: job.publicId, status: job.state, total: job.total }, 202);
});

verificationRoutes.openapi(routes.status, async (c) => {
  const query = c.req.valid("query");
  const db = database(c.env.DB);
  const job = await findJob(db, c.get("principal"), query.job_id);
  if (!job) throw ApiError.notFound(JOB_NOT_FOUND);
  const data = await jobResults(db, job.id, query.offset ?? 0, query.limit ?? 100);
  return c.json(jobStatus(job, data) as z.infer<typeof StatusAnswer>, 200);
});

verificationRoutes.openapi(routes.verifyLeads, async (c) => {
  const body = c.req.valid("json");
  const principal = c.get("principal");
  const db = database(c.env.DB);
  let selection: SQL | null = null;
  // Ids that are present are resolved (404 for another tenant's) before a missing choice is refused.
  if (body.campaign_id !== undefined) {
    const campaign = await findCampaign(db, principal, body.campaign_id);
    selection = sql`SELECT lead_id FROM campaign_leads WHERE campaign_id = ${campaign.id}`;
  }
  if (body.list_id !== undefined) {
    const list = await findLeadList(db, principal, body.list_id);
    selection ??= sql`SELECT lead_id FROM lead_list_members WHERE list_id = ${list.id}`;
  }
  if (body.lead_ids !== undefined) {
    // Every id must be one of the caller's leads: another tenant's is answered as a missing one.
    const ids = [...new Set(body.lead_ids)];
    const visible = await db
      .select({ n: sql<number>`count(*)` })
      .from(leads)
      .where(and(visibleLeads(principal), sql`${leads.id} IN (SELECT value FROM json_each(${jsonList(ids)}))`))
      .get();
    if ((visible?.n ?? 0) !== ids.length) throw ApiError.notFound(RECORD_NOT_FOUND);
    selection ??= sql`SELECT value FROM json_each(${jsonList(ids)})`;
  }
  if (selection === null && body.all) selection = sql`SELECT id FROM leads WHERE account_id = ${principal.accountId}`;
  if (selection === null) throw ApiError.validation([{ path: "lead_ids", message: "Give one of lead_ids, campaign_id, list_id or all: true" }]);
  const now = Date.now();
  const { publicId, total } = await createLeadJob(c.env.DB, principal, selection, now - body.recheck_after_days * 86_400_000, now);
  const job = (await findJob(db, principal, publicId))!;
  if (total > 0) c.executionCtx.waitUntil(runVerificationJob(c.env, job.id));
  return c.json({ ok: true as const, success: true as const, job_id: publicId, status: job.state, total }, 202);
});
