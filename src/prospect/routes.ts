import { createRoute, z } from "@hono/zod-openapi";
import { and, count, desc, eq } from "drizzle-orm";
import { database, type Database } from "../platform/db";
import { savedSearches } from "../db/schema";
import { iso } from "../platform/time";
import type { Principal } from "../platform/principal";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryCount } from "../platform/openapi";
import { ownedBy } from "../deliverability/shared";

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
    tags,
    summary: "Save a prospect search (flat filter fields or a filters object)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(SaveSearch) },
    responses: { 200: json(Message.extend({ data: SavedSearch }), "The saved search"), ...errorResponses(401, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: `${BASE}/saved-searches`,
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
    tags,
    summary: "Rename a saved search",
    security: API_KEY_SECURITY,
    request: { params: SearchParams, body: jsonBody(z.object({ search_string: z.string().trim().min(1).max(255) }).openapi("RenameSearch")) },
    responses: { 200: json(Message, "Renamed"), ...errorResponses(401, 404, 422, 429) },
  }),
  remove: createRoute({
    method: "delete",
    path: `${BASE}/save-search/{id}`,
    tags,
    summary: "Delete a saved search",
    security: API_KEY_SECURITY,
    request: { params: SearchParams },
    responses: { 200: json(Message, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
};

type SearchRow = typeof savedSearches.$inferSelect;

function present(row: SearchRow) {
  return {
    id: row.id,
    search_string: row.searchString,
    filter_details: row.filterDetails,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function mine(principal: Principal, id: number) {
  return and(eq(savedSearches.id, id), ownedBy(principal, savedSearches));
}

async function changeOrThrow(db: Database, query: Promise<unknown[]>) {
  if ((await query).length === 0) throw ApiError.notFound(NOT_FOUND);
  return db;
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
  const row = await database(c.env.DB)
    .insert(savedSearches)
    .values({ accountId: principal.accountId, clientId: principal.clientId, searchString: search_string, filterDetails: details, createdAt: now, updatedAt: now })
    .returning()
    .get();
  return c.json({ success: true, message: "Search saved successfully", data: present(row) }, 200);
});

savedSearchRoutes.openapi(routes.list, async (c) => {
  const principal = c.get("principal");
  const { limit, offset } = c.req.valid("query");
  const db = database(c.env.DB);
  const where = ownedBy(principal, savedSearches);
  const [rows, total] = await Promise.all([
    db.select().from(savedSearches).where(where).orderBy(desc(savedSearches.id)).limit(limit).offset(offset),
    db.select({ n: count() }).from(savedSearches).where(where),
  ]);
  return c.json(
    { success: true, message: "Saved searches fetched successfully", data: { savedSearches: rows.map(present), totalCount: total[0]?.n ?? 0 } },
    200,
  );
});

savedSearchRoutes.openapi(routes.rename, async (c) => {
  const db = database(c.env.DB);
  await changeOrThrow(
    db,
    db
      .update(savedSearches)
      .set({ searchString: c.req.valid("json").search_string, updatedAt: new Date() })
      .where(mine(c.get("principal"), c.req.valid("param").id))
      .returning({ id: savedSearches.id }),
  );
  return c.json({ success: true, message: "Search renamed successfully" }, 200);
});

savedSearchRoutes.openapi(routes.remove, async (c) => {
  const db = database(c.env.DB);
  await changeOrThrow(db, db.delete(savedSearches).where(mine(c.get("principal"), c.req.valid("param").id)).returning({ id: savedSearches.id }));
  return c.json({ success: true, message: "Search deleted successfully" }, 200);
});
