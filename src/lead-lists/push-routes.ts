import { createRoute, z } from "@hono/zod-openapi";
import { database, type Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { findCampaign, findLeadList, type CampaignRow, type LeadListRow } from "../platform/access";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { insertCampaign } from "../campaigns/store";
import { pushToCampaign, pushToList } from "./push";
import { oldestCampaignNamed, type LeadSource, type PushLeaves } from "./store";
import { LEAD_LIST_TAG, LIST_SCOPE, skipSettings, PushToCampaignBody, PushCounts, PushBetweenListsBody, PushToListBody, CampaignToListBody, required } from "./schemas";


const tag = LEAD_LIST_TAG;
const routes = {
  pushToCampaign: createRoute({
    method: "post",
    path: "/api/v1/leads/push-to-campaign",
    operationId: "pushLeadsToCampaign",
    description: "Adds a list's leads (`leadList.listId`), chosen leads (`leadIds`, 1–10000) or every lead (`allLeads`) to a campaign given by " +
      "`campaignId` or `campaignName` (a new name creates a DRAFTED campaign), as add-leads would, without its 400 cap. `move` takes them " +
      "out of the source list. None of listId/leadIds/allLeads → 422.",
    tags: tag,
    summary: "Add a list's leads (or leads by id) to a campaign, as add-leads would",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(PushToCampaignBody, { campaignId: 1, action: "copy", leadList: { listId: 1 } }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: PushCounts }), "What the push did"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  pushBetweenLists: createRoute({
    method: "post",
    path: "/api/v1/leads/leads/push-between-lists",
    operationId: "pushLeadsBetweenLists",
    description: `Copies or moves leads to \`toListId\`, from \`fromListId\` or by \`leadIds\` (one of them required). Answers \`{total_leads_moved}\`. ${LIST_SCOPE}`,
    tags: tag,
    summary: "Copy or move leads between lists",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(PushBetweenListsBody, { action: "copy", toListId: 2, fromListId: 1 }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.object({ total_leads_moved: z.number().int() }) }), "Copied or moved"), ...errorResponses(401, 404, 422, 429) },
  }),
  pushToList: createRoute({
    method: "post",
    path: "/api/v1/leads/push-to-list",
    operationId: "pushLeadsToList",
    description: `Adds leads (\`leadIds\` or \`allLeads\`) to a list; \`move\` also takes them out of their other lists. ${LIST_SCOPE}`,
    tags: tag,
    summary: "Add leads to a list (move: out of their other lists)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(PushToListBody, { listId: 1, leadIds: [1, 2] }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.object({ total_leads: z.number().int() }) }), "Added"), ...errorResponses(401, 404, 422, 429) },
  }),
  campaignToList: createRoute({
    method: "post",
    path: "/api/v1/leads/campaign/push-to-list",
    operationId: "pushCampaignLeadsToList",
    description: `Adds the leads of the given records (\`leadMapIds\` or \`allLeads\`) to a list and deletes those records from the campaign. ${LIST_SCOPE}`,
    tags: tag,
    summary: "Move a campaign's leads to a list (their records leave the campaign)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(CampaignToListBody, { campaignId: 1, listId: 1, allLeads: true }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.object({ total_leads: z.number().int() }) }), "Moved"), ...errorResponses(401, 404, 422, 429) },
  }),
};

/**
 * The campaign a push names by name: the caller's oldest of that name; none creates a DRAFTED one,
 * in the caller's client or else the source list's.
 */
async function campaignNamed(db: Database, principal: Principal, name: string, list: LeadListRow | null): Promise<CampaignRow> {
  const named = await oldestCampaignNamed(db, principal, name);
  return named ?? insertCampaign(db, { accountId: principal.accountId, clientId: principal.clientId ?? list?.clientId ?? null, name });
}

export const leadListPushRoutes = createRouter();

leadListPushRoutes.openapi(routes.pushToCampaign, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const listId = body.leadList?.listId ?? body.id;
  const leadIds = body.leadList?.leadIds;
  const allLeads = body.leadList?.allLeads ?? false;
  const campaignId = body.campaignId ?? body.campaign_id;
  const list = listId === undefined ? null : await findLeadList(db, principal, listId);
  const byId = campaignId === undefined ? null : await findCampaign(db, principal, campaignId);
  if (listId === undefined && leadIds === undefined && !allLeads) required("leadList", "leadList needs listId, leadIds or allLeads");
  if (!byId && body.campaignName === undefined) required("campaignId", "campaignId or campaignName is required");
  const campaign = byId ?? (await campaignNamed(db, principal, body.campaignName!, list));
  const source: LeadSource = list
    ? { kind: "list", listId: list.id, leadIds: allLeads ? undefined : leadIds }
    : { kind: "leads", principal, leadIds: allLeads ? undefined : leadIds };
  const moveFrom = body.action === "move" && list ? list.id : null;
  const counts = await pushToCampaign(c.env, campaign, source, skipSettings(body), moveFrom);
  return c.json({ ok: true, data: counts }, 200);
});

leadListPushRoutes.openapi(routes.pushBetweenLists, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const toId = body.toListId ?? body.to_list_id;
  const fromId = body.fromListId ?? body.from_list_id;
  const leadIds = body.leadIds ?? body.lead_ids;
  const to = toId === undefined ? null : await findLeadList(db, principal, toId);
  const from = fromId === undefined ? null : await findLeadList(db, principal, fromId);
  if (!to) required("toListId", "toListId is required");
  if (!from && leadIds === undefined) required("fromListId", "fromListId or leadIds is required");
  const move = body.action ? body.action === "move" : (body.move ?? false);
  const source: LeadSource = from ? { kind: "list", listId: from.id, leadIds } : { kind: "leads", principal, leadIds };
  const leaves: PushLeaves | null = !move ? null : from ? { kind: "list", listId: from.id } : { kind: "other lists", principal };
  const moved = await pushToList(c.env.DB, to, source, leaves);
  return c.json({ ok: true, data: { total_leads_moved: moved } }, 200);
});

leadListPushRoutes.openapi(routes.pushToList, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const list = await findLeadList(db, principal, body.listId);
  if (!body.leadIds && !body.allLeads) required("leadIds", "leadIds or allLeads is required");
  const source: LeadSource = { kind: "leads", principal, leadIds: body.allLeads ? undefined : body.leadIds };
  const total = await pushToList(c.env.DB, list, source, body.action === "move" ? { kind: "other lists", principal } : null);
  return c.json({ ok: true, data: { total_leads: total } }, 200);
});

leadListPushRoutes.openapi(routes.campaignToList, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const campaign = await findCampaign(db, principal, body.campaignId);
  const list = await findLeadList(db, principal, body.listId);
  if (!body.leadMapIds && !body.allLeads) required("leadMapIds", "leadMapIds or allLeads is required");
  const source: LeadSource = { kind: "records", campaignId: campaign.id, recordIds: body.allLeads ? undefined : body.leadMapIds };
  const total = await pushToList(c.env.DB, list, source, { kind: "campaign", campaignId: campaign.id });
  return c.json({ ok: true, data: { total_leads: total } }, 200);
});

