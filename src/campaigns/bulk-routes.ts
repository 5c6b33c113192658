import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign, refuseForeignTags } from "../platform/access";
import { campaigns } from "../db/schema";
import { database, type Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { iso } from "../platform/time";
import { Ack, ack, bodyId } from "./schemas";
import {
  addTagsToCampaigns,
  deleteFolder,
  fileCampaigns,
  findFolder,
  foldersOf,
  insertFolder,
  removeTagsFromCampaigns,
  saveDraftSpintaxMode,
  visibleCampaignIds,
} from "./bulk-store";
import { distinctIds } from "./rules";
import { visibleTagIds } from "../mailboxes/store";

/**
 * The hosted service's newer campaign operations over several campaigns (CONTRACT 21.1): tags in bulk,
 * folders, the spintax distribution mode. Literal paths (`/campaigns/tags`, `/campaigns/folders`):
 * mounted before `/campaigns/{campaign_id}`.
 */

const tags = ["Campaigns"];
const security = API_KEY_SECURITY;

const ids = (max: number) => z.array(bodyId).min(1).max(max);

const CampaignTagPairs = z
  .object({
    campaignIds: ids(100).optional(),
    campaign_ids: ids(100).optional().openapi({ description: "Alias of campaignIds" }),
    tagIds: ids(100).optional(),
    tag_ids: ids(100).optional().openapi({ description: "Alias of tagIds" }),
  })
  .superRefine((body, ctx) => {
    if (body.campaignIds === undefined && body.campaign_ids === undefined) ctx.addIssue({ code: "custom", path: ["campaignIds"], message: "campaignIds is required" });
    if (body.tagIds === undefined && body.tag_ids === undefined) ctx.addIssue({ code: "custom", path: ["tagIds"], message: "tagIds is required" });
  })
  .openapi("CampaignTagPairs");

const TagPairsBase = z.object({ ok: z.boolean(), message: z.string(), campaign_ids: z.array(z.number().int()), tag_ids: z.array(z.number().int()), requested: z.number().int() });
const TagsAdded = TagPairsBase.extend({ added: z.number().int(), already_present: z.number().int() }).openapi("CampaignTagsAdded");
const TagsRemoved = TagPairsBase.extend({ removed: z.number().int(), not_present: z.number().int() }).openapi("CampaignTagsRemoved");

const UpdateFolder = z
  .object({ campaign_ids: ids(200), folder_id: bodyId.nullable() })
  .openapi("UpdateCampaignFolder");
const FolderUpdated = z
  .object({
    ok: z.boolean(),
    requested: z.number().int(),
    updated: z.number().int(),
    updated_campaign_ids: z.array(z.number().int()),
    not_found_campaign_ids: z.array(z.number().int()),
  })
  .openapi("CampaignFolderUpdated");

const NewFolder = z.object({ name: z.string().trim().min(1).max(255) }).openapi("NewCampaignFolder");
const Folder = z.object({ id: z.number().int(), name: z.string(), created_at: z.string() });
const FolderListed = Folder.extend({ campaign_count: z.number().int() }).openapi("CampaignFolder");

const SpintaxMode = z
  .object({
    campaignId: bodyId,
    spintaxDistributionMode: z.union([z.literal(1), z.literal(2)]).openapi({ description: "1 = incremental (record k takes option k mod n), 2 = random (default)" }),
  })
  .openapi("SpintaxDistributionMode");

const pairsDescription = (verb: string) =>
  `${verb} every (campaign, tag) pair of \`campaignIds\` × \`tagIds\` (1-100 each; \`campaign_ids\`/\`tag_ids\` are read too), idempotently and all or ` +
  "nothing. A campaign or tag the caller cannot see → 404 naming them (`not_found_campaign_ids`, `not_found_tag_ids`), nothing changed.";

const routes = {
  addTags: createRoute({
    method: "post",
    path: "/api/v1/campaigns/tags",
    operationId: "addTagsToCampaigns",
    summary: "Add tags to campaigns in bulk",
    description: `${pairsDescription("Adds")} A tag of another scope than a campaign's (another client's, or the account's for a client's campaign) → 400, nothing changed.`,
    tags,
    security,
    request: { body: jsonBody(CampaignTagPairs, { campaignIds: [1, 2], tagIds: [3] }) },
    responses: { 200: json(TagsAdded, "Pairs added and already present"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  removeTags: createRoute({
    method: "delete",
    path: "/api/v1/campaigns/tags",
    operationId: "removeTagsFromCampaigns",
    summary: "Remove tags from campaigns in bulk",
    description: pairsDescription("Removes"),
    tags,
    security,
    request: { body: jsonBody(CampaignTagPairs, { campaignIds: [1, 2], tagIds: [3] }) },
    responses: { 200: json(TagsRemoved, "Pairs removed and not present"), ...errorResponses(401, 404, 422, 429) },
  }),
  updateFolder: createRoute({
    method: "post",
    path: "/api/v1/campaigns/update-folder",
    operationId: "updateCampaignFolder",
    summary: "Move campaigns into a folder (or out of any)",
    description:
      "Files `campaign_ids` (1-200) in `folder_id` (`null` = no folder). Ids the caller cannot see are listed in `not_found_campaign_ids`; " +
      "an unknown folder → 404 `Folder not found - Invalid folder_id.`; no campaign found → 404 with `not_found_campaign_ids`. " +
      "A campaign is filed only in a folder of its own client or an account-wide one: a client's folder and a campaign of another scope " +
      "(another client's, or the account's own) → 400 `Folder belongs to another client than these campaigns: <ids>`, nothing filed.",
    tags,
    security,
    request: { body: jsonBody(UpdateFolder, { campaign_ids: [1, 2], folder_id: 5 }) },
    responses: { 200: json(FolderUpdated, "The campaigns filed"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  createFolder: createRoute({
    method: "post",
    path: "/api/v1/campaigns/folders",
    operationId: "createCampaignFolder",
    summary: "Create a campaign folder",
    description: "A folder of the caller's (a client key's belongs to its client). Campaigns are filed with `update-folder`.",
    "x-salvo-extension": true,
    tags,
    security,
    request: { body: jsonBody(NewFolder, { name: "Q1 outreach" }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: Folder }).openapi("CampaignFolderCreated"), "The folder"), ...errorResponses(401, 422, 429) },
  }),
  listFolders: createRoute({
    method: "get",
    path: "/api/v1/campaigns/folders",
    operationId: "listCampaignFolders",
    summary: "List campaign folders",
    description: "The caller's folders by id, each with how many of its campaigns the caller sees (`campaign_count`).",
    "x-salvo-extension": true,
    tags,
    security,
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(FolderListed) }).openapi("CampaignFolders"), "The folders"), ...errorResponses(401, 429) },
  }),
  deleteFolder: createRoute({
    method: "delete",
    path: "/api/v1/campaigns/folders/{id}",
    operationId: "deleteCampaignFolder",
    summary: "Delete a campaign folder",
    description: "Its campaigns stay, in no folder. A folder the caller cannot see → 404 `Folder not found - Invalid folder_id.`",
    "x-salvo-extension": true,
    tags,
    security,
    request: { params: z.object({ id: pathId("id") }) },
    responses: { 200: json(Ack, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  spintaxMode: createRoute({
    method: "post",
    path: "/api/v1/campaigns/spintax-distribution-mode",
    operationId: "setSpintaxDistributionMode",
    summary: "Set how spintax options are spread over a campaign's leads",
    description:
      "`spintaxDistributionMode` 2 (random, the default) = each record's stable hash picks; 1 (incremental) = the k-th record of the campaign " +
      "(`spintax_modulo_index`, 0-based, by id) takes option k mod n of every spintax group. Only a DRAFTED campaign → else 400 `Campaign is not in draft mode.`",
    tags,
    security,
    request: { body: jsonBody(SpintaxMode, { campaignId: 1, spintaxDistributionMode: 1 }) },
    responses: { 200: json(z.object({ ok: z.boolean() }), "Set"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

const FOLDER_NOT_FOUND = "Folder not found - Invalid folder_id.";
const CAMPAIGNS_NOT_FOUND = "Campaigns not found - one or more campaignIds are invalid.";
const TAGS_NOT_FOUND = "Tags not found - one or more tagIds are invalid.";

export const campaignBulkRoutes = createRouter();

/** The contract's 404 naming the requested campaigns not found. */
function campaignsNotFound(requested: number[], found: Pick<ReadonlySet<number>, "has">): ApiError {
  return new ApiError(404, { ok: false, error: CAMPAIGNS_NOT_FOUND, not_found_campaign_ids: requested.filter((id) => !found.has(id)) });
}

/** A folder of one client refuses another scope's campaigns (`folderHolds`): 400 naming them, nothing filed. */
function folderOfAnotherClient(campaignIds: number[]): ApiError {
  return new ApiError(400, { ok: false, error: `Folder belongs to another client than these campaigns: ${campaignIds.join(", ")}` });
}

/** The pairs' campaigns and tags, every one the caller's, or the contract's 404 naming those that are not. */
async function resolvePairs(db: Database, principal: Principal, body: z.infer<typeof CampaignTagPairs>) {
  const campaignIds = distinctIds(body.campaignIds ?? body.campaign_ids ?? []);
  const tagIds = distinctIds(body.tagIds ?? body.tag_ids ?? []);
  const [campaignsSeen, tagList] = await Promise.all([visibleCampaignIds(db, principal, campaignIds), visibleTagIds(db, principal, tagIds)]);
  const tagsSeen = new Set(tagList);
  if (campaignIds.some((id) => !campaignsSeen.has(id))) throw campaignsNotFound(campaignIds, campaignsSeen);
  const missingTags = tagIds.filter((id) => !tagsSeen.has(id));
  if (missingTags.length > 0) throw new ApiError(404, { ok: false, error: TAGS_NOT_FOUND, not_found_tag_ids: missingTags });
  return { campaignIds, tagIds, requested: campaignIds.length * tagIds.length };
}

campaignBulkRoutes.openapi(routes.addTags, async (c) => {
  const db = database(c.env.DB);
  const { campaignIds, tagIds, requested } = await resolvePairs(db, c.get("principal"), c.req.valid("json"));
  await refuseForeignTags(db, campaigns, campaignIds, tagIds);
  const added = await addTagsToCampaigns(db, campaignIds, tagIds);
  return c.json(
    { ok: true, message: "Tags added to campaigns successfully!", campaign_ids: campaignIds, tag_ids: tagIds, requested, added, already_present: requested - added },
    200,
  );
});

campaignBulkRoutes.openapi(routes.removeTags, async (c) => {
  const db = database(c.env.DB);
  const { campaignIds, tagIds, requested } = await resolvePairs(db, c.get("principal"), c.req.valid("json"));
  const removed = await removeTagsFromCampaigns(db, campaignIds, tagIds);
  return c.json(
    { ok: true, message: "Tags removed from campaigns successfully!", campaign_ids: campaignIds, tag_ids: tagIds, requested, removed, not_present: requested - removed },
    200,
  );
});

campaignBulkRoutes.openapi(routes.updateFolder, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const campaignIds = distinctIds(body.campaign_ids);
  const [folder, seen] = await Promise.all([
    body.folder_id === null ? Promise.resolve(null) : findFolder(db, principal, body.folder_id),
    visibleCampaignIds(db, principal, campaignIds),
  ]);
  if (folder === undefined) throw new ApiError(404, { ok: false, error: FOLDER_NOT_FOUND });
  if (seen.size === 0) throw campaignsNotFound(campaignIds, seen);
  // The folder's scope rule is held by the write itself (fileCampaigns), which answers which campaigns it refused.
  const filing = await fileCampaigns(db, principal, [...seen], folder?.id ?? null, Date.now());
  if ("folderGone" in filing) throw new ApiError(404, { ok: false, error: FOLDER_NOT_FOUND });
  if ("ofAnotherClient" in filing) throw folderOfAnotherClient(filing.ofAnotherClient);
  // What the write found: a campaign given to another client since the check is not found either.
  const filed = new Set(filing.filed);
  if (filed.size === 0) throw campaignsNotFound(campaignIds, filed);
  const notFound = campaignIds.filter((id) => !filed.has(id));
  return c.json({ ok: true, requested: campaignIds.length, updated: filed.size, updated_campaign_ids: filing.filed, not_found_campaign_ids: notFound }, 200);
});

campaignBulkRoutes.openapi(routes.createFolder, async (c) => {
  const principal = c.get("principal");
  const row = await insertFolder(database(c.env.DB), { accountId: principal.accountId, clientId: principal.clientId, name: c.req.valid("json").name });
  return c.json({ ok: true, data: { id: row.id, name: row.name, created_at: iso(row.createdAt) } }, 200);
});

campaignBulkRoutes.openapi(routes.listFolders, async (c) => {
  const rows = await foldersOf(database(c.env.DB), c.get("principal"));
  return c.json(
    { ok: true, data: rows.map((row) => ({ id: row.id, name: row.name, campaign_count: Number(row.campaignCount), created_at: iso(row.createdAt) })) },
    200,
  );
});

campaignBulkRoutes.openapi(routes.deleteFolder, async (c) => {
  const db = database(c.env.DB);
  const folder = await findFolder(db, c.get("principal"), c.req.valid("param").id);
  if (!folder) throw new ApiError(404, { ok: false, error: FOLDER_NOT_FOUND });
  await deleteFolder(db, folder.id);
  return c.json(ack("Folder deleted"), 200);
});

campaignBulkRoutes.openapi(routes.spintaxMode, async (c) => {
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const campaign = await findCampaign(db, c.get("principal"), body.campaignId);
  if (campaign.status !== "DRAFTED" || !(await saveDraftSpintaxMode(db, campaign.id, body.spintaxDistributionMode))) throw ApiError.badRequest("Campaign is not in draft mode.");
  return c.json({ ok: true }, 200);
});
