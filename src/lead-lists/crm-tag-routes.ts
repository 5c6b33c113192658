import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { refuseForeignTags } from "../platform/access";
import { leads } from "../db/schema";
import { ApiError } from "../platform/errors";
import { Ack } from "./schemas";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, pathId, queryId } from "../platform/openapi";
import { visibleTagIds, visibleTags } from "../mailboxes/store";
import { tagLead, tagsOfLead, untagLead, visibleLead } from "./store";

/**
 * CRM lead tags (the hosted reference's "lead-tags" pages; BC's `crm` commands): tags of the one
 * catalogue put on a lead. `tag_mapping_id` names one tag on one lead, for removal.
 */

const LEAD_NOT_FOUND = "Lead not found";

const LeadTag = z.object({ id: z.number().int(), tag_mapping_id: z.number().int().optional(), name: z.string(), color: z.string() }).openapi("LeadTag");

const tag = ["Lead tags"];
const routes = {
  list: createRoute({
    method: "get",
    path: "/api/v1/crm/leads/tags",
    operationId: "listLeadTags",
    description: "With `leadId`, that lead's tags the caller may use, with their `tag_mapping_id`; without, every tag the caller may use.",
    tags: tag,
    summary: "A lead's tags (with leadId), else every tag the caller may use",
    security: API_KEY_SECURITY,
    request: { query: z.object({ leadId: queryId().optional(), lead_id: queryId().optional().openapi({ description: "Alias of leadId (BC)" }) }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(LeadTag) }), "The tags"), ...errorResponses(401, 404, 422, 429) },
  }),
  add: createRoute({
    method: "post",
    path: "/api/v1/crm/leads/tags",
    operationId: "tagLead",
    description:
      "Puts tags on a lead; a tag it already has stays once. Unknown tag → 400, foreign lead → 404. A tag of another scope than the lead's " +
      "(another client's, or the account's for a client's lead) → 400, nothing changed.",
    tags: tag,
    summary: "Put tags on a lead (a tag it has already stays once)",
    security: API_KEY_SECURITY,
    request: {
      body: jsonBody(
        z
          .object({
            leadId: BodyId.optional(),
            lead_id: BodyId.optional().openapi({ description: "Alias of leadId (BC)" }),
            tagIds: z.array(BodyId).min(1).max(100).optional(),
            tag_ids: z.array(BodyId).min(1).max(100).optional().openapi({ description: "Alias of tagIds (BC)" }),
          })
          .openapi("AddLeadTags"), { leadId: 1, tagIds: [1] },
      ),
    },
    responses: { 200: json(Ack, "Tagged"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/api/v1/crm/leads/tags/{tagMappingId}",
    operationId: "untagLead",
    description: "Takes one tag off a lead by its `tag_mapping_id`.",
    tags: tag,
    summary: "Take one tag off a lead, by its tag_mapping_id",
    security: API_KEY_SECURITY,
    request: { params: z.object({ tagMappingId: pathId("tagMappingId") }) },
    responses: { 200: json(Ack, "Removed"), ...errorResponses(401, 404, 422, 429) },
  }),
};

export const crmTagRoutes = createRouter();

crmTagRoutes.openapi(routes.list, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const query = c.req.valid("query");
  const leadId = query.leadId ?? query.lead_id;
  if (leadId === undefined) {
    const all = await visibleTags(db, principal);
    return c.json({ ok: true, data: all.map(({ id, name, color }) => ({ id, name, color })) }, 200);
  }
  if (!(await visibleLead(db, principal, leadId))) throw ApiError.notFound(LEAD_NOT_FOUND);
  return c.json({ ok: true, data: await tagsOfLead(db, principal, leadId) }, 200);
});

crmTagRoutes.openapi(routes.add, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const leadId = body.leadId ?? body.lead_id;
  const tagIds = body.tagIds ?? body.tag_ids;
  // Present ids are resolved before a missing one is refused, so a foreign id answers as a missing one.
  if (leadId !== undefined && !(await visibleLead(db, principal, leadId))) throw ApiError.notFound(LEAD_NOT_FOUND);
  const visible = new Set(tagIds ? await visibleTagIds(db, principal, tagIds) : []);
  const unknown = tagIds?.find((id) => !visible.has(id));
  if (unknown !== undefined) throw ApiError.badRequest(`Tag not found: ${unknown}`);
  if (leadId === undefined) throw ApiError.validation([{ path: "leadId", message: "leadId is required" }]);
  if (tagIds === undefined) throw ApiError.validation([{ path: "tagIds", message: "tagIds is required" }]);
  await refuseForeignTags(db, leads, [leadId], [...visible]);
  await tagLead(db, leadId, [...visible]);
  return c.json({ ok: true, success: true, message: "Tags added to lead successfully" }, 200);
});

crmTagRoutes.openapi(routes.remove, async (c) => {
  const removed = await untagLead(database(c.env.DB), c.get("principal"), c.req.valid("param").tagMappingId);
  if (!removed) throw ApiError.notFound("Tag mapping not found");
  return c.json({ ok: true, success: true, message: "Tag removed from lead successfully" }, 200);
});
