import { createRoute, z, type RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../platform/env";
import { database } from "../platform/db";
import { nextCampaignStatus, STATUS_COMMANDS } from "./rules";
import { iso } from "../platform/time";
import { statusDeliveries } from "../webhooks/fanout";
import { wakeCampaign } from "../mailboxes/wake";
import { campaignSendingStatus, presentSendingStatus } from "../engine/status";
import { enqueue } from "../webhooks/outbox";
import { changeStatus, insertCampaign, loadStatusChange, replaceCampaignTags, tagsOf, campaignsVisibleTo, type CampaignTag } from "./store";
import { findCampaign, owningClient, type CampaignRow } from "../platform/access";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, queryId, operationWords, type OperationWords } from "../platform/openapi";

import { Campaign, CampaignParams, Ok, Tag } from "./schemas";
import { PageQuery } from "../platform/paging";
import { presentSending, scheduleOf, settingsOf } from "../schedule/settings";

const CreateCampaign = z
  .object({
    name: z.string().trim().min(1).max(255).default("Untitled Campaign"),
    client_id: z.number().int().positive().nullable().optional(),
  })
  .openapi("CreateCampaign");

const CreatedCampaign = z
  .object({ ok: z.boolean(), id: z.number().int(), name: z.string(), created_at: z.string() })
  .openapi("CreatedCampaign");

const SetStatus = z.object({ status: z.enum(STATUS_COMMANDS) }).openapi("SetCampaignStatus");

const MAX_TAGS = 50;
const SetTags = z
  .object({ tags: z.array(z.string().trim().min(1).max(64)).max(MAX_TAGS) })
  .openapi("SetCampaignTags");

const ListQuery = z.object({
  client_id: queryId().optional(),
  folder_id: queryId().optional().openapi({ description: "Only the campaigns filed in this folder (CONTRACT 21.1)" }),
  ...PageQuery,
});

const createCampaign = createRoute({
  method: "post",
  path: "/api/v1/campaigns/create",
  operationId: "createCampaign",
  description: "Creates a DRAFTED campaign (`name` defaults to `Untitled Campaign`). A client key creates it for its client; an account key may " +
    "name its own `client_id` (foreign → 400 `Client not found`).",
  tags: ["Campaigns"],
  summary: "Create a campaign (status DRAFTED)",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(CreateCampaign, { name: "Q1 outreach", client_id: null }) },
  responses: { 200: json(CreatedCampaign, "The new campaign"), ...errorResponses(400, 401, 422, 429) },
});

const listCampaigns = createRoute({
  method: "get",
  path: "/api/v1/campaigns",
  operationId: "listCampaigns",
  description: "The caller's campaigns as a bare array (read shape with settings and tags); `client_id` and `folder_id` narrow. A client key sees its client's only.",
  tags: ["Campaigns"],
  summary: "List campaigns (a client key sees its client's only)",
  security: API_KEY_SECURITY,
  request: { query: ListQuery },
  responses: { 200: json(z.array(Campaign), "Campaigns, oldest first"), ...errorResponses(401, 422, 429) },
});

const getCampaign = createRoute({
  method: "get",
  path: "/api/v1/campaigns/{campaign_id}",
  operationId: "getCampaign",
  description: "One campaign with its status, settings, schedule (`scheduler_cron_value`) and tags. Foreign → 404.",
  tags: ["Campaigns"],
  summary: "Read a campaign",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams },
  responses: { 200: json(Campaign, "The campaign"), ...errorResponses(401, 404, 422, 429) },
});

function statusRoute(method: "post" | "patch", words: Omit<OperationWords, "summary">) {
  return createRoute({
    method,
    path: "/api/v1/campaigns/{campaign_id}/status",
    ...operationWords({ summary: "Start, pause or stop a campaign (STOPPED is final); PAUSE, STOP, ACTIVE and RESUME are read too", ...words }),
    tags: ["Campaigns"],
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(SetStatus, words.example) },
    responses: { 200: json(Ok, "Status changed"), ...errorResponses(400, 401, 404, 422, 429) },
  });
}

const setStatus = statusRoute("post", {
  operationId: "setCampaignStatus",
  description:
    "`START` → ACTIVE, `PAUSED`, `STOPPED` (final: a stopped campaign cannot start again, 400). `PAUSE`, `STOP`, `ACTIVE` and `RESUME` " +
    "are read as their pair. Fires CAMPAIGN_STATUS_CHANGED.",
  example: { status: "START" },
});
const patchStatus = statusRoute("patch", {
  operationId: "patchCampaignStatus",
  description: "The same as `POST .../status` (one client sends PATCH).",
  example: { status: "PAUSED" },
});

const setTags = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/tags",
  operationId: "setCampaignTags",
  description: "Replaces the campaign's tags with the names given (created in the account's tag catalogue when new); `[]` clears them.",
  "x-salvo-extension": true,
  tags: ["Campaigns"],
  summary: "Replace a campaign's tags",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: jsonBody(SetTags, { tags: ["q1", "enterprise"] }) },
  responses: {
    200: json(z.object({ ok: z.boolean(), tags: z.array(Tag) }), "The campaign's tags"),
    ...errorResponses(401, 404, 422, 429),
  },
});

export function presentCampaign(row: CampaignRow, campaignTagList: CampaignTag[]) {
  return {
    id: row.id,
    user_id: row.accountId,
    client_id: row.clientId,
    name: row.name,
    status: row.status,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    tags: campaignTagList,
    ...presentSending(scheduleOf(row.schedule), settingsOf(row.settings)),
    parent_campaign_id: row.parentCampaignId,
    team_member_id: row.teamMemberId,
    folder_id: row.folderId,
  };
}

export const campaignRoutes = createRouter();

campaignRoutes.openapi(createCampaign, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const clientId = await owningClient(db, principal, body.client_id);
  const row = await insertCampaign(db, { accountId: principal.accountId, clientId, name: body.name });
  return c.json({ ok: true, id: row.id, name: row.name, created_at: iso(row.createdAt) }, 200);
});

campaignRoutes.openapi(listCampaigns, async (c) => {
  const principal = c.get("principal");
  const { client_id, folder_id, ...page } = c.req.valid("query");
  const db = database(c.env.DB);
  const rows = await campaignsVisibleTo(db, principal, { clientId: client_id, folderId: folder_id }, page);
  const tagMap = await tagsOf(
    db,
    rows.map((row) => row.id),
  );
  return c.json(
    rows.map((row) => presentCampaign(row, tagMap.get(row.id) ?? [])),
    200,
  );
});

campaignRoutes.openapi(getCampaign, async (c) => {
  const db = database(c.env.DB);
  const row = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const [tagMap, status] = await Promise.all([tagsOf(db, [row.id]), campaignSendingStatus(db, row, Date.now())]);
  return c.json({ ...presentCampaign(row, tagMap.get(row.id) ?? []), sending_status: presentSendingStatus(status) }, 200);
});

const changeCampaignStatus: RouteHandler<typeof setStatus, AppEnv> = async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const { campaign, webhooks } = await loadStatusChange(db, principal, c.req.valid("param").campaign_id);
  const next = nextCampaignStatus(campaign.status, c.req.valid("json").status);
  if (next === null) throw ApiError.badRequest("A stopped campaign cannot change status");
  if (next === campaign.status) return c.json({ ok: true }, 200);
  const now = Date.now();
  const deliveries = statusDeliveries(webhooks, { ...campaign, status: next }, campaign.status, now);
  const deliveryIds = await changeStatus(c.env.DB, campaign, next, deliveries, now);
  await enqueue(c.env, deliveryIds);
  if (next === "ACTIVE") await wakeCampaign(c.env, campaign.id);
  return c.json({ ok: true }, 200);
};

campaignRoutes.openapi(setStatus, changeCampaignStatus);
campaignRoutes.openapi(patchStatus, changeCampaignStatus);

campaignRoutes.openapi(setTags, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const names = [...new Set(c.req.valid("json").tags)];
  await replaceCampaignTags(c.env.DB, { accountId: principal.accountId, campaignId: campaign.id, clientId: campaign.clientId }, names);
  const tagMap = await tagsOf(db, [campaign.id]);
  return c.json({ ok: true, tags: tagMap.get(campaign.id) ?? [] }, 200);
});
