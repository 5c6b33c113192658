import { createRoute, z } from "@hono/zod-openapi";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { toValidationIssues } from "../platform/validation";
import type { InboxFilters } from "./query";
import { ViewFilters } from "./schemas";
import { deleteSavedView, findSavedView, insertSavedView, savedViewsOf, type SavedViewRow } from "./saved-view-store";

// Schemas.

const SavedView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    filters: z.record(z.string(), z.unknown()),
    limitedAccess: z.boolean(),
    teamMemberId: z.null(),
    clientId: z.number().int().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("InboxSavedView");

const NewSavedView = z
  .object({
    name: z.string().trim().min(1).max(255),
    filters: z.record(z.string(), z.unknown()).openapi({ description: "Exactly section 15's view filters (those of POST /master-inbox/views); another key → 400" }),
    limitedAccess: z.boolean().default(true),
  })
  .openapi("NewInboxSavedView");

export const SAVED_VIEW_NOT_FOUND = "Saved view not found";

const tags = ["Master inbox"];
const security = API_KEY_SECURITY;
const routes = {
  create: createRoute({
    method: "post",
    path: "/api/v1/master-inbox/saved-views",
    operationId: "createInboxSavedView",
    summary: "Save a view of the master inbox (a name and the views' filters)",
    description:
      "`{name (1-255), filters, limitedAccess?=true}`: `filters` are exactly those of `POST /master-inbox/views` (another key → 400 naming it; a bad value → 422), stored as given. A client key saves to its client. `POST /master-inbox/views` with `saved_view_id` lists with them.",
    tags,
    security,
    request: { body: jsonBody(NewSavedView, { name: "Hot leads", filters: { leadCategories: { categoryIdsIn: [1] }, emailStatus: "Replied" } }) },
    responses: { 201: json(z.object({ success: z.boolean(), ok: z.boolean(), data: SavedView }), "Saved"), ...errorResponses(400, 401, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/api/v1/master-inbox/saved-views",
    operationId: "listInboxSavedViews",
    summary: "The saved views of the master inbox, by id",
    description: "Extension. The caller's saved views (a client key: its client's), by id.",
    "x-salvo-extension": true,
    tags,
    security,
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(SavedView) }), "Saved views"), ...errorResponses(401, 429) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/api/v1/master-inbox/saved-views/{id}",
    operationId: "deleteInboxSavedView",
    summary: "Delete a saved view",
    description: "Extension. Unknown or another tenant's → 404 `Saved view not found`.",
    "x-salvo-extension": true,
    tags,
    security,
    request: { params: z.object({ id: pathId("id") }) },
    responses: { 200: json(z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() }), "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
};

// Deciding.

const FILTER_KEYS = new Set(Object.keys(ViewFilters.shape));

/** Filters as saved: only the views' keys (another → 400), each value valid (else 422 under `filters.`). */
function checkedFilters(filters: Record<string, unknown>): Record<string, unknown> {
  const unknown = Object.keys(filters).find((key) => !FILTER_KEYS.has(key));
  if (unknown !== undefined) throw ApiError.badRequest(`Unknown filter: ${unknown}`);
  const parsed = ViewFilters.safeParse(filters);
  if (!parsed.success) throw ApiError.validation(toValidationIssues(parsed.error).map((issue) => ({ ...issue, path: `filters.${issue.path}` })));
  return filters;
}

/** A saved view's filters as a listing reads them, or 404 for one the caller cannot see. */
export async function savedViewFilters(db: Database, principal: Principal, id: number): Promise<InboxFilters> {
  const view = await findSavedView(db, principal, id);
  if (!view) throw ApiError.notFound(SAVED_VIEW_NOT_FOUND);
  return ViewFilters.parse(view.filters) as InboxFilters;
}

function present(row: SavedViewRow) {
  return {
    id: row.id,
    name: row.name,
    filters: row.filters,
    limitedAccess: row.limitedAccess,
    teamMemberId: null,
    clientId: row.clientId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export const savedViewRoutes = createRouter();

savedViewRoutes.openapi(routes.create, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const row = await insertSavedView(database(c.env.DB), {
    accountId: principal.accountId,
    clientId: principal.clientId,
    name: body.name,
    filters: checkedFilters(body.filters),
    limitedAccess: body.limitedAccess,
  });
  return c.json({ success: true, ok: true, data: present(row) }, 201);
});

savedViewRoutes.openapi(routes.list, async (c) => {
  const rows = await savedViewsOf(database(c.env.DB), c.get("principal"));
  return c.json({ ok: true, data: rows.map(present) }, 200);
});

savedViewRoutes.openapi(routes.remove, async (c) => {
  if (!(await deleteSavedView(database(c.env.DB), c.get("principal"), c.req.valid("param").id))) throw ApiError.notFound(SAVED_VIEW_NOT_FOUND);
  return c.json({ ok: true, success: true, message: "Saved view deleted successfully" }, 200);
});
