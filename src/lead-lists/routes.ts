import { createRoute, z } from "@hono/zod-openapi";
import { leadOutput, leadOutputFields } from "../leads/lead-input";
import { database, type Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { ApiError } from "../platform/errors";
import { findLeadList, LEAD_LIST_NOT_FOUND, owningClient, refuseForeignTags, type LeadListRow } from "../platform/access";
import { leadLists } from "../db/schema";
import { Ack } from "./schemas";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { visibleTagIds } from "../mailboxes/store";
import { pushToList } from "./push";
import { changeListTags, deleteLeadList, insertLeadList, leadListPage, listDetails, listMemberPage, renameLeadList, visibleListIds } from "./store";
import { ACK } from "../campaigns/schemas";
import { LEAD_LIST_TAG, LIST_SCOPE, ListName, LeadList, ListParams, AssignTagsBody, MoveLeadsBody, ListQuery, MemberQuery, required } from "./schemas";


const tag = LEAD_LIST_TAG;
const routes = {
  assignTags: createRoute({
    method: "post",
    path: "/api/v1/lead-list/assign-tags",
    operationId: "assignLeadListTags",
    description:
      "Adds `tagIds` (0–10) and removes `removeTagIds` on 1–10 lists (`{id, tag_ids}` for one list is read too). Unknown tag → 400. A tag added of another " +
      "scope than a list's (another client's, or the account's for a client's list) → 400, nothing changed; removing one stays allowed.",
    tags: tag,
    summary: "Add and remove tags on lists",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(AssignTagsBody, { listIds: [1], tagIds: [1] }) },
    responses: { 200: json(Ack, "Tags updated"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  moveLeads: createRoute({
    method: "post",
    path: "/api/v1/lead-list/move-leads",
    operationId: "moveLeadListLeads",
    description: `Moves leads from \`sourceListId\` to \`targetListId\`: \`leadIds\`, or \`allLeads: true\`. Foreign list → 404. ${LIST_SCOPE}`,
    tags: tag,
    summary: "Move leads from one list to another (DL)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(MoveLeadsBody, { sourceListId: 1, targetListId: 2, allLeads: true }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.object({ total_leads_moved: z.number().int() }) }), "Moved"), ...errorResponses(401, 404, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/api/v1/lead-list",
    operationId: "listLeadLists",
    description: "The caller's lead lists by id: `listName` (substring), `tagIds` (comma-separated), `client_id`, `limit` (1–1000), `offset`.",
    tags: tag,
    summary: "The caller's lead lists by id",
    security: API_KEY_SECURITY,
    request: { query: ListQuery },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(LeadList), has_more: z.boolean() }), "One page of lists"), ...errorResponses(401, 422, 429) },
  }),
  create: createRoute({
    method: "post",
    path: "/api/v1/lead-list",
    operationId: "createLeadList",
    description: "Creates a named list of leads (`listName` 1–255, or `name`). Foreign `client_id` → 400.",
    tags: tag,
    summary: "Create a lead list",
    security: API_KEY_SECURITY,
    request: {
      body: jsonBody(
        z
          .object({ listName: ListName.optional(), name: ListName.optional().openapi({ description: "Alias of listName (BC)" }), client_id: BodyId.nullable().optional() })
          .openapi("CreateLeadList"), { listName: "Trade show 2026" },
      ),
    },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: z.object({ id: z.number().int(), name: z.string(), created_at: z.string() }) }), "The new list"),
      ...errorResponses(400, 401, 422, 429),
    },
  }),
  get: createRoute({
    method: "get",
    path: "/api/v1/lead-list/{id}",
    operationId: "getLeadList",
    description: "One list with `lead_count` and tags. Missing or foreign → 404 `Lead list not found`.",
    tags: tag,
    summary: "One lead list",
    security: API_KEY_SECURITY,
    request: { params: ListParams },
    responses: { 200: json(z.object({ ok: z.boolean(), data: LeadList }), "The list"), ...errorResponses(401, 404, 422, 429) },
  }),
  rename: createRoute({
    method: "put",
    path: "/api/v1/lead-list/{id}",
    operationId: "renameLeadList",
    description: "Renames the list (`listName` or `name`).",
    tags: tag,
    summary: "Rename a lead list",
    security: API_KEY_SECURITY,
    request: {
      params: ListParams,
      body: jsonBody(z.object({ listName: ListName.optional(), name: ListName.optional() }).openapi("RenameLeadList"), { listName: "Trade show 2026 (Berlin)" }),
    },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: z.object({ id: z.number().int(), name: z.string() }) }), "The renamed list"),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
  delete: createRoute({
    method: "delete",
    path: "/api/v1/lead-list/{id}",
    operationId: "deleteLeadList",
    description: "Deletes the list; its leads remain in the account and their campaigns. " + ACK,
    tags: tag,
    summary: "Delete a lead list (its leads stay)",
    security: API_KEY_SECURITY,
    request: { params: ListParams },
    responses: { 200: json(Ack, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  members: createRoute({
    method: "get",
    path: "/api/v1/lead-list/{id}/leads",
    operationId: "listLeadListLeads",
    description: "The list's leads by lead id, paged by `offset` and `limit`.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "A list's leads by lead id (extension)",
    security: API_KEY_SECURITY,
    request: { params: ListParams, query: MemberQuery },
    responses: {
      200: json(
        z.object({
          ok: z.boolean(),
          data: z.array(
            z.object({ ...leadOutputFields, added_at: z.string() }),
          ),
          has_more: z.boolean(),
        }),
        "One page of the list's leads",
      ),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
};

async function presentLists(db: Database, principal: Principal, rows: LeadListRow[]) {
  const { counts, tagsOf } = await listDetails(
    db,
    principal,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    lead_count: counts.get(row.id) ?? 0,
    client_id: row.clientId,
    tags: tagsOf.get(row.id) ?? [],
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }));
}


/** Every list named must be the caller's, else the section 16 404. */
async function requireLists(db: Database, principal: Principal, ids: number[]): Promise<void> {
  const visible = await visibleListIds(db, principal, ids);
  if (ids.some((id) => !visible.has(id))) throw ApiError.notFound(LEAD_LIST_NOT_FOUND);
}

/** Every tag named must be one the caller may use, else 400 naming the first that is not. */
async function requireTags(db: Database, principal: Principal, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  const visible = new Set(await visibleTagIds(db, principal, ids));
  const unknown = ids.find((id) => !visible.has(id));
  if (unknown !== undefined) throw ApiError.badRequest(`Tag not found: ${unknown}`);
}

export const leadListRoutes = createRouter();

leadListRoutes.openapi(routes.assignTags, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const listIds = body.listIds ?? (body.id !== undefined ? [body.id] : undefined);
  const add = body.tagIds ?? body.tag_ids ?? [];
  const remove = body.removeTagIds ?? [];
  if (listIds) await requireLists(db, principal, listIds);
  await requireTags(db, principal, [...add, ...remove]);
  if (!listIds) required("listIds", "listIds (or id) is required");
  // Only what is added: a pair of another scope stored before stays removable.
  await refuseForeignTags(db, leadLists, listIds, add);
  await changeListTags(c.env.DB, listIds, add, remove);
  return c.json({ ok: true, success: true, message: "Tags updated successfully" }, 200);
});

leadListRoutes.openapi(routes.moveLeads, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const from = await findLeadList(db, principal, body.sourceListId);
  const to = await findLeadList(db, principal, body.targetListId);
  if (!body.leadIds && !body.allLeads) required("leadIds", "leadIds or allLeads is required");
  const moved = await pushToList(c.env.DB, to, { kind: "list", listId: from.id, leadIds: body.allLeads ? undefined : body.leadIds }, { kind: "list", listId: from.id });
  return c.json({ ok: true, data: { total_leads_moved: moved } }, 200);
});

leadListRoutes.openapi(routes.list, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const query = c.req.valid("query");
  const rows = await leadListPage(
    db,
    principal,
    { listName: query.listName, tagIds: query.tagIds, clientId: query.client_id },
    { offset: query.offset, limit: query.limit + 1, startingAfter: query.starting_after },
  );
  const page = rows.slice(0, query.limit);
  return c.json({ ok: true, data: await presentLists(db, principal, page), has_more: rows.length > query.limit }, 200);
});

leadListRoutes.openapi(routes.create, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const name = body.listName ?? body.name ?? required("listName", "listName is required");
  const clientId = await owningClient(db, principal, body.client_id);
  const row = await insertLeadList(db, { accountId: principal.accountId, clientId, name });
  return c.json({ ok: true, data: { id: row.id, name: row.name, created_at: iso(row.createdAt) } }, 200);
});

leadListRoutes.openapi(routes.get, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const list = await findLeadList(db, principal, c.req.valid("param").id);
  const [data] = await presentLists(db, principal, [list]);
  return c.json({ ok: true, data: data! }, 200);
});

leadListRoutes.openapi(routes.rename, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const body = c.req.valid("json");
  const name = body.listName ?? body.name ?? required("listName", "listName is required");
  const row = (await renameLeadList(db, list.id, name)) ?? list;
  return c.json({ ok: true, data: { id: row.id, name: row.name } }, 200);
});

leadListRoutes.openapi(routes.delete, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  await deleteLeadList(db, list.id);
  return c.json({ ok: true, success: true, message: "Lead list deleted successfully" }, 200);
});

leadListRoutes.openapi(routes.members, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const query = c.req.valid("query");
  const rows = await listMemberPage(db, list.id, { afterLeadId: query.starting_after ?? 0, offset: query.offset, limit: query.limit + 1 });
  const data = rows.slice(0, query.limit).map(({ lead, addedAt }) => ({
    ...leadOutput(lead),
    added_at: iso(addedAt),
  }));
  return c.json({ ok: true, data, has_more: rows.length > query.limit }, 200);
});

