import { createRoute, z } from "@hono/zod-openapi";
import { CampaignParams } from "../campaigns/schemas";
import { VARIANT_DISTRIBUTION_TYPES, WINNING_METRICS } from "../db/schema";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { iso } from "../platform/time";
import { MAX_STEPS, sequenceProblem, type StepInput } from "./rules";
import { loadSequence, replaceSequence, storedShape, type StepRow, type VariantRow } from "./store";

const MAX_TEXT = 100_000;
const id = z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d{0,15}$/).transform(Number)]);

const VariantInput = z
  .object({
    id: id.nullish(),
    subject: z.string().max(998).default(""),
    email_body: z.string().min(1).max(MAX_TEXT),
    variant_label: z.string().trim().min(1).max(50).optional(),
    variant_id: z.string().trim().min(1).max(50).optional(),
    variant_distribution_percentage: z.number().min(0).max(100).optional(),
    distribution: z.number().min(0).max(100).optional(),
    variant_distribution: z.number().min(0).max(100).optional(),
  })
  .openapi("SequenceVariantInput");

const StepInputSchema = z
  .object({
    id: id.nullish(),
    seq_number: z.number().int().min(1).max(MAX_STEPS),
    seq_delay_details: z
      .object({ delay_in_days: z.number().int().min(0).max(365).optional(), delayInDays: z.number().int().min(0).max(365).optional() })
      .optional(),
    delay_in_days: z.number().int().min(0).max(365).optional(),
    subject: z.string().max(998).nullish(),
    email_body: z.string().max(MAX_TEXT).nullish(),
    seq_variants: z.array(VariantInput).max(26).nullish(),
    variants: z.array(VariantInput).max(26).nullish(),
    sequence_variants: z.array(VariantInput).max(26).nullish(),
    variant_distribution_type: z.enum(VARIANT_DISTRIBUTION_TYPES).optional(),
    lead_distribution_percentage: z.number().int().min(20).max(100).nullish(),
    winning_metric_property: z.enum(WINNING_METRICS).nullish(),
  })
  .refine(
    (step) =>
      step.seq_delay_details?.delay_in_days !== undefined ||
      step.seq_delay_details?.delayInDays !== undefined ||
      step.delay_in_days !== undefined,
    { message: "Required", path: ["seq_delay_details", "delay_in_days"] },
  )
  .openapi("SequenceStepInput");

type StepBody = z.infer<typeof StepInputSchema>;

const SaveSequences = z
  .union([z.object({ sequences: z.array(StepInputSchema).min(1).max(MAX_STEPS) }), z.array(StepInputSchema).min(1).max(MAX_STEPS)])
  .openapi("SaveSequences");

const Variant = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    is_deleted: z.boolean(),
    email_campaign_seq_id: z.number().int(),
    variant_label: z.string(),
    subject: z.string(),
    email_body: z.string(),
    optional_email_body_1: z.null(),
    variant_distribution_percentage: z.number().nullable(),
  })
  .openapi("SequenceVariant");

const Step = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    email_campaign_id: z.number().int(),
    seq_number: z.number().int(),
    subject: z.string(),
    email_body: z.string().nullable(),
    seq_delay_details: z.object({ delay_in_days: z.number().int(), delayInDays: z.number().int() }),
    variant_distribution_type: z.enum(VARIANT_DISTRIBUTION_TYPES),
    lead_distribution_percentage: z.number().int().nullable(),
    winning_metric_property: z.enum(WINNING_METRICS).nullable(),
    sequence_variants: z.array(Variant).nullable(),
  })
  .openapi("SequenceStep");

const tags = ["Sequences"];
const routes = {
  list: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/sequences",
    operationId: "getCampaignSequences",
    description: "The campaign's steps by `seq_number` with delays (`delay_in_days` and `delayInDays`) and live A/B variants.",
    tags,
    summary: "A campaign's sequence: its steps by number, with their A/B variants",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams },
    responses: { 200: json(z.array(Step), "Bare array of steps"), ...errorResponses(401, 404, 422, 429) },
  }),
  save: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/sequences",
    operationId: "saveCampaignSequences",
    description: "Replaces the whole sequence (1–20 steps): steps and variants with an `id` update in place, new ones are created, those left out are " +
      "retired (their sends stay in statistics). Variant percentages are weights (all 0 → 422). `{{first_name}}`-style variables and " +
      "`{A|B}` spintax render per lead. ACTIVE campaign → 400 `Pause the campaign before changing its sequences`; an id of another " +
      "campaign → 400.",
    tags,
    summary: "Replace a campaign's sequence (steps with an id update in place, those left out are retired)",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(SaveSequences, {
          sequences: [
            { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Quick question, {{first_name}}", email_body: "<p>Hi {{first_name}},</p>" },
            { seq_number: 2, seq_delay_details: { delay_in_days: 3 }, subject: "", email_body: "<p>Any thoughts?</p>" },
          ],
        }) },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: z.array(Step) }).openapi("SavedSequences"), "The sequence as stored"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
};

function toInput(step: StepBody): StepInput {
  const variants = step.seq_variants ?? step.variants ?? step.sequence_variants ?? null;
  return {
    id: step.id ?? null,
    seqNumber: step.seq_number,
    delayInDays: (step.seq_delay_details?.delay_in_days ?? step.seq_delay_details?.delayInDays ?? step.delay_in_days)!,
    subject: step.subject ?? "",
    emailBody: step.email_body ?? null,
    variantDistributionType: step.variant_distribution_type ?? "MANUAL_EQUAL",
    leadDistributionPercentage: step.lead_distribution_percentage ?? null,
    winningMetricProperty: step.winning_metric_property ?? null,
    variants:
      variants?.map((variant) => ({
        id: variant.id ?? null,
        label: variant.variant_label ?? variant.variant_id ?? null,
        subject: variant.subject,
        emailBody: variant.email_body,
        percentage: variant.variant_distribution_percentage ?? variant.distribution ?? variant.variant_distribution ?? null,
      })) ?? null,
  };
}

function presentVariant(row: VariantRow) {
  return {
    id: row.id,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    is_deleted: false,
    email_campaign_seq_id: row.stepId,
    variant_label: row.label,
    subject: row.subject,
    email_body: row.emailBody,
    optional_email_body_1: null,
    variant_distribution_percentage: row.percentage,
  };
}

function present({ step, variants }: { step: StepRow; variants: VariantRow[] }) {
  return {
    id: step.id,
    created_at: iso(step.createdAt),
    updated_at: iso(step.updatedAt),
    email_campaign_id: step.campaignId,
    seq_number: step.seqNumber,
    subject: step.subject,
    email_body: step.emailBody,
    seq_delay_details: { delay_in_days: step.delayInDays, delayInDays: step.delayInDays },
    variant_distribution_type: step.variantDistributionType,
    lead_distribution_percentage: step.leadDistributionPercentage,
    winning_metric_property: step.winningMetricProperty,
    sequence_variants: variants.length > 0 ? variants.map(presentVariant) : null,
  };
}

export const sequenceRoutes = createRouter();

sequenceRoutes.openapi(routes.list, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  return c.json((await loadSequence(db, campaign.id)).map(present), 200);
});

sequenceRoutes.openapi(routes.save, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const steps = (Array.isArray(body) ? body : body.sequences).map(toInput);
  if (campaign.status === "ACTIVE") throw ApiError.badRequest("Pause the campaign before changing its sequences");
  const problem = sequenceProblem(steps, storedShape(await loadSequence(db, campaign.id)));
  if (problem?.kind === "validation") throw ApiError.validation(problem.issues);
  if (problem?.kind === "foreign") throw ApiError.badRequest(problem.message);
  await replaceSequence(db, campaign.id, steps, new Date());
  return c.json({ ok: true, data: (await loadSequence(db, campaign.id)).map(present) }, 200);
});
