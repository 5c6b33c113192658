import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { iso } from "../platform/time";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryCount } from "../platform/openapi";
import { deleteSavedSearch, insertSavedSearch, listSavedSearches, renameSavedSearch, type SearchRow } from "./store";

const BASE = "/api/v1/search-email-leads/search-filters";
const NOT_FOUND = "Saved search not found";
const MAX_FILTER_FIELDS = 50;

const filterValue = z.union([z.string().max(500), z.number(), z.boolean(), z.null(), z.array(z.union([z.string().max(500), z.number()])).max(500)]);

const SaveSearch = z
  .object({
    search_string: z.string().trim().min(1).max(255),
    filters: z.record(z.string().max(100), z.unknown()).optional(),
  })
  .catchall(filterValue)
  .openapi("SaveSearch");

const SavedSearch = z
  .object({
    id: z.number().int(),
    search_string: z.string(),
    filter_details: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("SavedSearch");

const Message = z.object({ success: z.boolean(), message: z.string() });
const SearchParams = z.object({ id: pathId("id") });
const tags = ["Prospect search"];

const routes = {
  save: createRoute({
    method: "post",
    path: `${BASE}/save-search`,
    operationId: "saveProspectSearch",
    description:
      "Saves a prospect search for the caller: `search_string` (1–255) and filter arrays (`title`, `country`, `companyDomain`, …) flat or " +
      "under `filters`. Hosted on the prospect host ({prospect_url}); in Salvo every host is the same origin.",
    tags,
    summary: "Save a prospect search (flat filter fields or a filters object)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(SaveSearch, { search_string: "CTOs in Berlin", title: ["CTO"], country: ["Germany"] }) },
    responses: { 200: json(Message.extend({ data: SavedSearch }), "The saved search"), ...errorResponses(401, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: `${BASE}/saved-searches`,
    operationId: "listProspectSearches",
    description: "The caller's saved searches, newest first, paged by `limit`/`offset`.",
    tags,
    summary: "Saved searches, newest first",
    security: API_KEY_SECURITY,
    request: {
      query: z.object({
        limit: queryCount(1, 100).default(20),
        offset: queryCount(0).default(0),
      }),
    },
    responses: {
      200: json(Message.extend({ data: z.object({ savedSearches: z.array(SavedSearch), totalCount: z.number().int() }) }), "One page"),
      ...errorResponses(401, 422, 429),
    },
  }),
  rename: createRoute({
    method: "put",
    path: `${BASE}/save-search/{id}`,
    operationId: "renameProspectSearch",
    description: "Renames a saved search. Foreign → 404.",
    tags,
    summary: "Rename a saved search",
    security: API_KEY_SECURITY,
    request: { params: SearchParams, body: jsonBody(z.object({ search_string: z.string().trim().min(1).max(255) }).openapi("RenameSearch"), { search_string: "CTOs in Munich" }) },
    responses: { 200: json(Message, "Renamed"), ...errorResponses(401, 404, 422, 429) },
  }),
  remove: createRoute({
    method: "delete",
    path: `${BASE}/save-search/{id}`,
    operationId: "deleteProspectSearch",
    description: "Deletes a saved search. Foreign → 404.",
    tags,
    summary: "Delete a saved search",
    security: API_KEY_SECURITY,
    request: { params: SearchParams },
    responses: { 200: json(Message, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
};

function present(row: SearchRow) {
  return {
    id: row.id,
    search_string: row.searchString,
    filter_details: row.filterDetails,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export const savedSearchRoutes = createRouter();

savedSearchRoutes.openapi(routes.save, async (c) => {
  const principal = c.get("principal");
  const { search_string, filters, ...flat } = c.req.valid("json");
  const details = filters ?? flat;
  if (Object.keys(details).length > MAX_FILTER_FIELDS) {
    throw ApiError.validation([{ path: filters ? "filters" : "", message: `At most ${MAX_FILTER_FIELDS} filter fields` }]);
  }
  const now = new Date();
  const row = await insertSavedSearch(database(c.env.DB), {
    accountId: principal.accountId,
    clientId: principal.clientId,
    searchString: search_string,
    filterDetails: details,
    createdAt: now,
    updatedAt: now,
  });
  return c.json({ success: true, message: "Search saved successfully", data: present(row) }, 200);
});

savedSearchRoutes.openapi(routes.list, async (c) => {
  const { rows, total } = await listSavedSearches(database(c.env.DB), c.get("principal"), c.req.valid("query"));
  return c.json(
    { success: true, message: "Saved searches fetched successfully", data: { savedSearches: rows.map(present), totalCount: total } },
    200,
  );
});

savedSearchRoutes.openapi(routes.rename, async (c) => {
  const renamed = await renameSavedSearch(database(c.env.DB), c.get("principal"), c.req.valid("param").id, c.req.valid("json").search_string, new Date());
  if (!renamed) throw ApiError.notFound(NOT_FOUND);
  return c.json({ success: true, message: "Search renamed successfully" }, 200);
});

savedSearchRoutes.openapi(routes.remove, async (c) => {
  if (!(await deleteSavedSearch(database(c.env.DB), c.get("principal"), c.req.valid("param").id))) throw ApiError.notFound(NOT_FOUND);
  return c.json({ success: true, message: "Search deleted successfully" }, 200);
});
