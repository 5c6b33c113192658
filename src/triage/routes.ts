import { createRoute, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { CampaignParams } from "../campaigns/schemas";
import { config } from "../config";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody, pathId, queryCount } from "../platform/openapi";
import { statement } from "../platform/sql";
import { iso } from "../platform/time";
import { withTrial } from "./allowed";
import { categorise } from "./categoriser";
import { modelOf } from "./consumer";
import { hostedError, hostedErrorResponse } from "./errors";
import { checkedCategories, PromptCategories, PromptContent } from "./prompt-routes";
import { applyDryRun, startReplayChunk } from "./replay";
import { countReplayable, diffPage, findReplay, insertReplay, type ReplayOptions } from "./replay-store";
import { campaignContext } from "./store";

/**
 * Trying the categoriser on a text (CONTRACT section 20.6) and replaying it over a campaign's past
 * replies (20.7). Both use the campaign's prompt and categories, or ones given for the try.
 */

const TestBody = z
  .object({
    reply_text: z.string().min(1).max(20_000),
    subject: z.string().max(998).optional(),
    prompt_content: PromptContent.optional(),
    categories: PromptCategories.optional(),
  })
  .openapi("ReplyCategorisationTest");

const TestAnswer = z
  .object({
    ok: z.boolean(),
    data: z.object({
      category_id: z.number().int().nullable(),
      category_name: z.string().nullable(),
      result: z.string().nullable().openapi({ description: "= category_name (the key Instantly's ai-reply-label answers)" }),
      source: z.enum(["rule", "model"]),
      confidence: z.number().nullable(),
      needs_review: z.boolean(),
      reason: z.string(),
      rule_id: z.string().nullable(),
      model: z.string().nullable(),
      prompt_version: z.string().nullable(),
      categories_considered: z.array(z.object({ id: z.number().int(), name: z.string() })),
      custom_labels_considered: z.array(z.string()),
    }),
  })
  .openapi("ReplyCategorisationTestAnswer");

const ReplayBody = z
  .object({
    dry_run: z.boolean().default(true),
    from: instant("Replies at or after this time").optional(),
    to: instant("Replies at or before this time").optional(),
    only_uncategorised: z.boolean().default(false),
    prompt_content: PromptContent.optional().openapi({ description: "Try a prompt without saving it (dry runs only)" }),
    categories: PromptCategories.optional().openapi({ description: "Try categories without saving them (dry runs only)" }),
    limit: z.number().int().min(1).max(5000).default(1000).openapi({ description: "At most this many replies, newest first" }),
  })
  .refine((body) => body.dry_run || (body.prompt_content === undefined && body.categories === undefined), {
    message: "prompt_content and categories are for dry runs only",
    path: ["dry_run"],
  })
  .openapi("ReplayRequest");

const ReplayStarted = z
  .object({ ok: z.boolean(), data: z.object({ job_id: z.number().int(), status: z.literal("queued") }) })
  .openapi("ReplayStarted");

const DiffItem = z.object({
  stats_id: z.string(),
  email_lead_map_id: z.number().int(),
  lead_email: z.string(),
  reply_time: z.string(),
  old: z.object({ category_id: z.number().int().nullable(), source: z.string().nullable() }),
  new: z.object({ category_id: z.number().int().nullable(), source: z.string(), confidence: z.number().nullable(), needs_review: z.boolean() }),
});

const ReplayState = z
  .object({
    ok: z.boolean(),
    data: z.object({
      job_id: z.number().int(),
      dry_run: z.boolean(),
      status: z.enum(["queued", "running", "completed", "failed"]),
      total: z.number().int(),
      processed: z.number().int(),
      changed: z.number().int(),
      unchanged: z.number().int(),
      kept_human: z.number().int(),
      needs_review: z.number().int(),
      applied_at: z.string().nullable().openapi({ description: "When the changes were applied (as the job went, or by apply); extension" }),
      error: z.string().nullable(),
      diff: z.array(DiffItem),
    }),
  })
  .openapi("ReplayState");

const JobParams = CampaignParams.extend({ job_id: pathId("job_id") });
const PageQuery = z.object({ offset: queryCount(0).optional(), limit: queryCount(1, 1000).optional() });

const tags = ["Reply categorisation"];
const routes = {
  test: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/reply-categorisation/test",
    tags,
    operationId: "testReplyCategorisation",
    "x-salvo-extension": true,
    summary: "Categorise a text as this campaign would (stores nothing)",
    description:
      "Runs the rules, then the configured model, on `reply_text` with the campaign's prompt and categories (or `prompt_content` / " +
      "`categories` given here, to try them without saving) and answers what it would decide and why. Stores nothing, fires nothing. " +
      "At most CATEGORISER_TEST_PER_DAY calls (default 200) per account and UTC day, then 429.",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(TestBody) },
    responses: { 200: json(TestAnswer, "What the categoriser decides"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  replay: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/reply-categorisation/replay",
    tags,
    operationId: "startReplyCategorisationReplay",
    "x-salvo-extension": true,
    summary: "Categorise a campaign's past replies again (dry run by default)",
    description:
      "Starts a job over the campaign's replies (newest first, at most `limit`, in `from`..`to`, only uncategorised ones if asked). " +
      "A dry run stores the diff for review (`…/replay/{job_id}`) and may try a `prompt_content` / `categories`; `dry_run:false` " +
      "applies as it goes. Categories set by a person or given with an event are never changed. One job per campaign at a time (409).",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(ReplayBody) },
    responses: {
      202: json(ReplayStarted, "Queued"),
      409: hostedErrorResponse("A replay of this campaign is queued or running"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
  state: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/reply-categorisation/replay/{job_id}",
    tags,
    operationId: "getReplyCategorisationReplay",
    "x-salvo-extension": true,
    summary: "A replay's progress and its diff (changed replies, paged)",
    description:
      "Counters (`total, processed, changed, unchanged, kept_human, needs_review`) and one page (`offset`, `limit` 1-1000, default 100) " +
      "of the replies whose category the replay changes, newest first, each with its old and new category.",
    security: API_KEY_SECURITY,
    request: { params: JobParams, query: PageQuery },
    responses: { 200: json(ReplayState, "The job"), ...errorResponses(401, 404, 422, 429) },
  }),
  apply: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/reply-categorisation/replay/{job_id}/apply",
    tags,
    operationId: "applyReplyCategorisationReplay",
    "x-salvo-extension": true,
    summary: "Apply a completed dry run",
    description:
      "Applies the diff of a completed dry run to the replies unchanged since it was made (a person's category since, or a newer " +
      "categorisation, is kept): `{ok, applied, skipped}`. Each lead whose current category changes gets one LEAD_CATEGORY_UPDATED. " +
      "Not a dry run, not completed, or applied already → 400.",
    security: API_KEY_SECURITY,
    request: { params: JobParams },
    responses: { 200: json(z.object({ ok: z.boolean(), applied: z.number().int(), skipped: z.number().int() }), "Applied"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

const REPLAY_NOT_FOUND = "Replay not found";
const APPLIED_ALREADY = "This replay has been applied already";

/** Counts one test call against the account's day; false when the day's allowance is spent. */
async function spendTestCall(d1: D1Database, accountId: number, perDay: number, now: number): Promise<boolean> {
  const day = new Date(now).toISOString().slice(0, 10);
  const row = await statement(
    d1,
    sql`INSERT INTO triage_test_usage (account_id, day, count) VALUES (${accountId}, ${day}, 1)
        ON CONFLICT (account_id, day) DO UPDATE SET count = count + 1 WHERE count < ${perDay} RETURNING count`,
  ).first<{ count: number }>();
  return row !== null;
}

export const triageRoutes = createRouter();

triageRoutes.openapi(routes.test, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const categories = body.categories === undefined ? undefined : await checkedCategories(db, principal.accountId, body.categories);
  const settings = config(c.env).categoriser;
  const now = Date.now();
  if (!(await spendTestCall(c.env.DB, principal.accountId, settings.testPerDay, now))) {
    throw ApiError.rateLimited(Math.max(1, Math.ceil((Math.floor(now / 86_400_000 + 1) * 86_400_000 - now) / 1000)));
  }
  const context = (await campaignContext(db, campaign.id))!;
  const triage = withTrial(context.triage, context.campaign.settings, context.categories, { promptContent: body.prompt_content ?? null, categories: categories ?? null });
  const result = await categorise(
    {
      reply: { subject: body.subject ?? null, body: body.reply_text, isOoo: false },
      answered: null,
      allowed: triage.allowed,
      names: triage.names,
      autoCategoriseOoo: triage.autoCategoriseOoo,
      prompt: triage.prompt,
    },
    modelOf(c.env),
    settings,
  );
  const custom = new Set(context.categories.filter((category) => category.accountId !== null).map((category) => category.id));
  return c.json(
    {
      ok: true,
      data: {
        category_id: result.categoryId,
        category_name: result.categoryName,
        result: result.categoryName,
        source: result.source,
        confidence: result.confidence,
        needs_review: result.needsReview,
        reason: result.reason,
        rule_id: result.ruleId,
        model: result.model,
        prompt_version: result.promptVersion,
        categories_considered: triage.allowed.map((category) => ({ id: category.id, name: category.name })),
        custom_labels_considered: triage.allowed.filter((category) => custom.has(category.id)).map((category) => category.name),
      },
    },
    200,
  );
});

triageRoutes.openapi(routes.replay, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const categories = body.categories === undefined ? null : await checkedCategories(db, principal.accountId, body.categories);
  const from = body.from === undefined ? null : Date.parse(body.from);
  const to = body.to === undefined ? null : Date.parse(body.to);
  if (from !== null && to !== null && to < from) throw ApiError.badRequest("to must not be before from");
  const options: ReplayOptions = { from, to, onlyUncategorised: body.only_uncategorised, promptContent: body.prompt_content ?? null, categories, limit: body.limit };
  const total = await countReplayable(c.env.DB, campaign.id, options);
  const jobId = await insertReplay(c.env.DB, { accountId: campaign.accountId, campaignId: campaign.id, dryRun: body.dry_run, options, total }, Date.now());
  if (jobId === null) throw hostedError(409, "A replay of this campaign is already queued or running");
  await startReplayChunk(c.env, jobId);
  return c.json({ ok: true, data: { job_id: jobId, status: "queued" as const } }, 202);
});

triageRoutes.openapi(routes.state, async (c) => {
  const db = database(c.env.DB);
  const { campaign_id, job_id } = c.req.valid("param");
  const campaign = await findCampaign(db, c.get("principal"), campaign_id);
  const job = await findReplay(db, campaign.id, job_id);
  if (!job) throw ApiError.notFound(REPLAY_NOT_FOUND);
  const query = c.req.valid("query");
  const rows = await diffPage(db, job.id, query.offset ?? 0, query.limit ?? 100);
  return c.json(
    {
      ok: true,
      data: {
        job_id: job.id,
        dry_run: job.dryRun,
        status: job.status,
        total: job.total,
        processed: job.processed,
        changed: job.changed,
        unchanged: job.unchanged,
        kept_human: job.keptHuman,
        needs_review: job.needsReview,
        applied_at: job.appliedAt ? iso(job.appliedAt) : null,
        error: job.error,
        diff: rows.map((row) => ({
          stats_id: String(row.eventId),
          email_lead_map_id: row.campaignLeadId,
          lead_email: row.leadEmail,
          reply_time: iso(row.replyTime),
          old: { category_id: row.oldCategoryId, source: row.oldSource },
          new: { category_id: row.newCategoryId, source: row.newSource, confidence: row.newConfidence, needs_review: row.newNeedsReview },
        })),
      },
    },
    200,
  );
});

triageRoutes.openapi(routes.apply, async (c) => {
  const db = database(c.env.DB);
  const { campaign_id, job_id } = c.req.valid("param");
  const campaign = await findCampaign(db, c.get("principal"), campaign_id);
  const job = await findReplay(db, campaign.id, job_id);
  if (!job) throw ApiError.notFound(REPLAY_NOT_FOUND);
  if (!job.dryRun) throw ApiError.badRequest("This replay applied its changes as it went");
  if (job.status !== "completed") throw ApiError.badRequest("This replay has not completed");
  if (job.appliedAt) throw ApiError.badRequest(APPLIED_ALREADY);
  const outcome = await applyDryRun(c.env, job.id);
  if (outcome === null) throw ApiError.badRequest(APPLIED_ALREADY);
  return c.json({ ok: true, applied: outcome.applied, skipped: outcome.pending - outcome.applied }, 200);
});
