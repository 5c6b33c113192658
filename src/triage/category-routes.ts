import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { requireAccountKey } from "../platform/principal";
import { foldText } from "../platform/text-search";
import { iso } from "../platform/time";
import { database } from "../platform/db";
import { deleteCategory, findCategory, insertCategory, updateCategory, type CategoryFields, type CategoryRow } from "./category-store";
import { hostedError, hostedErrorResponse } from "./errors";
import { presentCategoryListItem, CategoryListItem } from "./present";
import { visibleCategoryRows } from "./store";

/**
 * Custom lead categories (CONTRACT section 20.1): built-in ids 1-7 are global and read-only, an
 * account's own start at 1001. Client keys read and assign them; only account keys create, edit
 * and delete. Literal `/leads/categories` paths: mounted before `/leads/{lead_id}` (C9).
 */

const MANAGE = "This API key cannot manage lead categories";
const DUPLICATE = "A category with this name already exists";
const BUILT_IN = "Default categories cannot be modified or deleted";
const NOT_FOUND = "Lead category not found";
const IN_USE = "This category is assigned to some of the leads. Please unassign the category from those leads first and then delete it.";
const DEFAULT_COLOUR = "#f9f1e9";

const name = z.string().max(1000).transform((value) => value.trim()).pipe(z.string().min(1, "name must not be empty").max(255));
const sentiment = z
  .enum(["positive", "negative", "neutral"])
  .nullable()
  .transform((value) => (value === "neutral" ? null : value))
  .openapi({ description: "positive, negative, or null (neutral; \"neutral\" is read as null)" });
const colour = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "must be #RRGGBB");

const CreateCategory = z
  .object({ name, sentiment_type: sentiment.optional(), colour_code: colour.optional() })
  .openapi("CreateLeadCategory");
const UpdateCategory = z
  .object({ name: name.optional(), sentiment_type: sentiment.optional(), colour_code: colour.optional() })
  .openapi("UpdateLeadCategory");

const CustomCategory = z
  .object({
    id: z.number().int(),
    name: z.string(),
    user_id: z.number().int(),
    sentiment_type: z.enum(["positive", "negative"]).nullable(),
    colour_code: z.string(),
    created_at: z.string(),
  })
  .openapi("CustomLeadCategory");
const CategoryAnswer = z.object({ ok: z.boolean(), data: CustomCategory }).openapi("LeadCategoryAnswer");
const Deleted = z.object({ ok: z.boolean(), message: z.string() }).openapi("LeadCategoryDeleted");
const CategoryParams = z.object({ category_id: pathId("category_id") });

const tags = ["Leads"];
const routes = {
  list: createRoute({
    method: "get",
    path: "/api/v1/leads/categories",
    tags,
    operationId: "getLeadCategories",
    summary: "Lead categories: the built-in ones, then the account's own",
    description:
      "The same list as `GET /leads/fetch-categories`: built-in categories 1-7 then the account's custom ones, by id. Custom items add " +
      "`colour_code` and `user_id`; a custom category without a sentiment reads `neutral`.",
    security: API_KEY_SECURITY,
    responses: { 200: json(z.array(CategoryListItem), "Every category the account can use"), ...errorResponses(401, 429) },
  }),
  create: createRoute({
    method: "post",
    path: "/api/v1/leads/categories",
    tags,
    operationId: "createLeadCategory",
    summary: "Create a custom lead category",
    description:
      "`{name (1-255 after trimming, unique case-insensitively among built-in and custom), sentiment_type? (positive | negative | null), " +
      "colour_code? (#RRGGBB, default #f9f1e9)}` → 201. A taken name → 409. Account keys only (a client key → 401).",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(CreateCategory) },
    responses: {
      201: json(CategoryAnswer, "The new category"),
      409: hostedErrorResponse("A category with this name already exists"),
      ...errorResponses(401, 422, 429),
    },
  }),
  update: createRoute({
    method: "patch",
    path: "/api/v1/leads/categories/{category_id}",
    tags,
    operationId: "updateLeadCategory",
    summary: "Change a custom lead category",
    description:
      "The create fields, at least one (else 400). A built-in category → 403; unknown or another account's → 404; a taken name → 409. " +
      "Account keys only.",
    security: API_KEY_SECURITY,
    request: { params: CategoryParams, body: jsonBody(UpdateCategory) },
    responses: {
      200: json(CategoryAnswer, "The category as changed"),
      403: hostedErrorResponse("Built-in categories cannot be changed"),
      409: hostedErrorResponse("A category with this name already exists"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
  remove: createRoute({
    method: "delete",
    path: "/api/v1/leads/categories/{category_id}",
    tags,
    operationId: "deleteLeadCategory",
    summary: "Delete a custom lead category",
    description:
      "Refused with 409 while any campaign record is in it, 403 for a built-in one. Deleting also removes the id from webhook category " +
      "filters, prompt templates and campaigns' `ai_categorisation_options`; past categorisations keep it. Account keys only.",
    security: API_KEY_SECURITY,
    request: { params: CategoryParams },
    responses: {
      200: json(Deleted, "Deleted"),
      403: hostedErrorResponse("Built-in categories cannot be deleted"),
      409: hostedErrorResponse("The category is still assigned"),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
};

function present(row: CategoryRow): z.infer<typeof CustomCategory> {
  return {
    id: row.id,
    name: row.name,
    user_id: row.accountId!,
    sentiment_type: row.sentimentType ?? null,
    colour_code: row.colourCode ?? DEFAULT_COLOUR,
    created_at: iso(row.createdAt),
  };
}

/** The account's own category named in the path: 404 for unknown or foreign, 403 for a built-in one. */
async function ownCategory(c: Context<AppEnv>, id: number): Promise<CategoryRow> {
  const row = await findCategory(c.env.DB, c.get("principal").accountId, id);
  if (!row) throw hostedError(404, NOT_FOUND);
  if (row.accountId === null) throw hostedError(403, BUILT_IN);
  return row;
}

export const categoryRoutes = createRouter();

categoryRoutes.openapi(routes.list, async (c) => {
  const rows = await visibleCategoryRows(database(c.env.DB), c.get("principal").accountId);
  return c.json(rows.map(presentCategoryListItem), 200);
});

categoryRoutes.openapi(routes.create, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, MANAGE);
  const body = c.req.valid("json");
  const fields: CategoryFields = { name: body.name, nameFolded: foldText(body.name), sentimentType: body.sentiment_type ?? null, colourCode: body.colour_code ?? DEFAULT_COLOUR };
  const row = await insertCategory(c.env.DB, principal.accountId, fields, Date.now());
  if (!row) throw hostedError(409, DUPLICATE);
  return c.json({ ok: true, data: present(row) }, 201);
});

categoryRoutes.openapi(routes.update, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, MANAGE);
  const body = c.req.valid("json");
  if (body.name === undefined && body.sentiment_type === undefined && body.colour_code === undefined) {
    throw ApiError.badRequest("Give at least one of name, sentiment_type, colour_code");
  }
  const row = await ownCategory(c, c.req.valid("param").category_id);
  const change: Partial<CategoryFields> = {
    ...(body.name !== undefined && { name: body.name, nameFolded: foldText(body.name) }),
    ...(body.sentiment_type !== undefined && { sentimentType: body.sentiment_type }),
    ...(body.colour_code !== undefined && { colourCode: body.colour_code }),
  };
  if (!(await updateCategory(c.env.DB, principal.accountId, row.id, change, Date.now()))) throw hostedError(409, DUPLICATE);
  return c.json({ ok: true, data: present((await findCategory(c.env.DB, principal.accountId, row.id))!) }, 200);
});

categoryRoutes.openapi(routes.remove, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, MANAGE);
  const row = await ownCategory(c, c.req.valid("param").category_id);
  if (!(await deleteCategory(c.env.DB, principal.accountId, row.id, Date.now()))) throw hostedError(409, IN_USE);
  return c.json({ ok: true, message: "Lead category deleted successfully" }, 200);
});
