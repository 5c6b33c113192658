import { createRoute, z } from "@hono/zod-openapi";
import { CampaignParams } from "../campaigns/schemas";
import { findCampaign } from "../platform/access";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { iso } from "../platform/time";
import { unknownCategoryIds } from "./category-store";
import { findTemplate, insertTemplate, newestTemplate, updateTemplate, type TemplateRow } from "./prompt-store";

/**
 * A campaign's prompt templates (CONTRACT section 20.2): the prompt the model gets for its replies
 * and the categories it may choose from. The newest is read back; a new one is active and the
 * others turn inactive. `version` moves on with every change of prompt or categories, and each
 * categorisation names the version it used (`<template id>.<version>`).
 */

const TEMPLATE_NOT_FOUND = "Prompt template not found";

export const PromptCategories = z.array(BodyId).min(1).max(50).openapi({ description: "1-50 category ids the caller can use (built-in or the account's own)" });
export const PromptContent = z.string().min(1).max(20_000);

const Template = z
  .object({
    id: z.number().int(),
    categories: z.array(z.number().int()),
    prompt_content: z.string(),
    is_active: z.boolean(),
    version: z.number().int().openapi({ description: "Starts at 1; +1 when the prompt or the categories change (extension)" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("PromptTemplate");

const TemplateAnswer = z.object({ ok: z.boolean(), success: z.boolean(), data: z.object({ template: Template.nullable() }) }).openapi("PromptTemplateAnswer");
const CreateTemplate = z.object({ prompt_content: PromptContent, categories: PromptCategories }).openapi("CreatePromptTemplate");
const UpdateTemplate = z
  .object({ prompt_content: PromptContent.optional(), categories: PromptCategories.optional(), is_active: z.boolean().optional() })
  .openapi("UpdatePromptTemplate");
const TemplateParams = CampaignParams.extend({ template_id: pathId("template_id") });

const tags = ["Reply categorisation"];
const routes = {
  get: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/prompt-template",
    tags,
    operationId: "getPromptTemplate",
    summary: "The campaign's newest prompt template (or null)",
    description:
      "The prompt the categoriser's model gets for this campaign's replies and the categories it may choose from: " +
      "`{ok, success, data:{template}}`, the newest template (null when none was saved; Salvo's default prompt is used then).",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams },
    responses: { 200: json(TemplateAnswer, "The newest template"), ...errorResponses(401, 404, 422, 429) },
  }),
  create: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/prompt-template",
    tags,
    operationId: "createPromptTemplate",
    summary: "Save a new prompt template; it becomes the active one",
    description:
      "`{prompt_content (1-20000), categories (1-50 ids the caller can use)}` → 201 with the template. Earlier templates of the " +
      "campaign turn inactive. An unknown category → 400 `Invalid category - <id>`.",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(CreateTemplate) },
    responses: { 201: json(TemplateAnswer, "The new template"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  update: createRoute({
    method: "patch",
    path: "/api/v1/campaigns/{campaign_id}/prompt-template/{template_id}",
    tags,
    operationId: "updatePromptTemplate",
    summary: "Change a prompt template (prompt, categories, active)",
    description:
      "`{prompt_content?, categories?, is_active?}`, at least one (else 400). A change of prompt or categories moves `version` on; " +
      "`is_active: true` makes it the campaign's one active template. Another campaign's or unknown template → 404.",
    security: API_KEY_SECURITY,
    request: { params: TemplateParams, body: jsonBody(UpdateTemplate) },
    responses: {
      200: json(z.object({ ok: z.boolean(), success: z.boolean(), data: z.object({ id: z.number().int() }) }), "Changed"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
};

function present(row: TemplateRow): z.infer<typeof Template> {
  return {
    id: row.id,
    categories: row.categories,
    prompt_content: row.promptContent,
    is_active: row.isActive,
    version: row.version,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Category ids the account can use, deduplicated in order; the first unknown one → 400 (CONTRACT section 20.2). */
export async function checkedCategories(db: Database, accountId: number, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const unknown = await unknownCategoryIds(db, accountId, unique);
  if (unknown.length > 0) throw ApiError.badRequest(`Invalid category - ${unknown[0]}`);
  return unique;
}

export const promptRoutes = createRouter();

promptRoutes.openapi(routes.get, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const row = await newestTemplate(db, campaign.id);
  return c.json({ ok: true, success: true, data: { template: row ? present(row) : null } }, 200);
});

promptRoutes.openapi(routes.create, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const categories = await checkedCategories(db, principal.accountId, body.categories);
  const id = await insertTemplate(c.env.DB, { accountId: campaign.accountId, campaignId: campaign.id, promptContent: body.prompt_content, categories }, Date.now());
  return c.json({ ok: true, success: true, data: { template: present((await findTemplate(db, campaign.id, id))!) } }, 201);
});

promptRoutes.openapi(routes.update, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const { campaign_id, template_id } = c.req.valid("param");
  const campaign = await findCampaign(db, principal, campaign_id);
  const body = c.req.valid("json");
  if (body.prompt_content === undefined && body.categories === undefined && body.is_active === undefined) {
    throw ApiError.badRequest("Give at least one of prompt_content, categories, is_active");
  }
  const current = await findTemplate(db, campaign.id, template_id);
  if (!current) throw ApiError.notFound(TEMPLATE_NOT_FOUND);
  const categories = body.categories === undefined ? undefined : await checkedCategories(db, principal.accountId, body.categories);
  await updateTemplate(c.env.DB, current, { promptContent: body.prompt_content, categories, isActive: body.is_active }, Date.now());
  return c.json({ ok: true, success: true, data: { id: current.id } }, 200);
});
