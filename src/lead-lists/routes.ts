import { createRoute, z } from "@hono/zod-openapi";
import { LeadInput, leadOutput, leadOutputFields } from "../leads/lead-input";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { database, type Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { ApiError } from "../platform/errors";
import { findCampaign, findLeadList, LEAD_LIST_NOT_FOUND, owningClient, type CampaignRow, type LeadListRow } from "../platform/access";
import { Ack } from "./schemas";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, pathId, queryCount, queryId } from "../platform/openapi";
import { insertCampaign } from "../campaigns/store";
import { visibleTagIds } from "../mailboxes/store";
import { createCsvImport, findImport, importLeads, runImport, type ImportRow, type ImportSettings } from "./import";
import { pushToCampaign } from "./push";
import {
  changeListTags,
  copyLeadsToList,
  deleteLeadList,
  insertLeadList,
  leadListPage,
  listDetails,
  listMemberPage,
  moveRecordsToList,
  oldestCampaignNamed,
  renameLeadList,
  saveListCustomFields,
  visibleListIds,
  type LeadSource,
} from "./store";
import { ACK } from "../campaigns/schemas";

// Schemas.

const MAX_PUSH_IDS = 10_000;
const LeadIds = z.array(BodyId).min(1).max(MAX_PUSH_IDS);

const ListName = z.string().trim().min(1).max(255);

const Tag = z.object({ id: z.number().int(), name: z.string(), color: z.string() });

const LeadList = z
  .object({
    id: z.number().int(),
    name: z.string(),
    lead_count: z.number().int(),
    client_id: z.number().int().nullable(),
    tags: z.array(Tag),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("LeadList");

const ListParams = z.object({ id: pathId("id") });

/** Skipping rules, read from `csvSettings` or from the top level (DL, BC); csvSettings wins. */
const SkipSettings = {
  csvSettings: z.object({ ignoreGlobalBlockList: z.boolean().optional(), ignoreUnsubscribeList: z.boolean().optional() }).optional(),
  ignoreGlobalBlockList: z.boolean().optional(),
  ignoreUnsubscribeList: z.boolean().optional(),
  ignore_global_block_list: z.boolean().optional(),
  ignore_unsubscribe_list: z.boolean().optional(),
};

type SkipInput = { [K in keyof typeof SkipSettings]?: z.infer<(typeof SkipSettings)[K]> };

function skipSettings(body: SkipInput): ImportSettings {
  return {
    ignoreGlobalBlockList: body.csvSettings?.ignoreGlobalBlockList ?? body.ignoreGlobalBlockList ?? body.ignore_global_block_list ?? false,
    ignoreUnsubscribeList: body.csvSettings?.ignoreUnsubscribeList ?? body.ignoreUnsubscribeList ?? body.ignore_unsubscribe_list ?? false,
  };
}

const MAX_IMPORT_LEADS = 1000;
const ImportBody = z
  .object({
    leadList: z.array(LeadInput).min(1).max(MAX_IMPORT_LEADS).optional(),
    leads: z.array(LeadInput).min(1).max(MAX_IMPORT_LEADS).optional().openapi({ description: "Alias of leadList (BC)" }),
    lead_list: z.array(LeadInput).min(1).max(MAX_IMPORT_LEADS).optional().openapi({ description: "Alias of leadList" }),
    fileName: z.string().max(255).optional(),
    emailFieldsAdded: z.unknown().optional(),
    customFields: z.unknown().optional(),
    allow_duplicate: z.boolean().optional(),
    ...SkipSettings,
  })
  .openapi("LeadListImport");

const ImportCounts = z.object({
  total_leads: z.number().int(),
  imported: z.number().int(),
  duplicates: z.number().int(),
  blocked: z.number().int(),
  invalid: z.number().int(),
});

const CsvImportJson = z
  .object({ csv: z.string().min(1), fileName: z.string().max(255).optional(), file_name: z.string().max(255).optional(), ...SkipSettings })
  .openapi("LeadListCsvImport");

const CsvImport = z
  .object({
    id: z.number().int(),
    list_id: z.number().int(),
    file_name: z.string(),
    state: z.enum(["queued", "running", "done", "failed"]),
    total: z.number().int(),
    processed: z.number().int(),
    imported: z.number().int(),
    duplicates: z.number().int(),
    blocked: z.number().int(),
    invalid: z.number().int(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .openapi("LeadListCsvImportProgress");

const AssignTagsBody = z
  .object({
    listIds: z.array(BodyId).min(1).max(10).optional(),
    tagIds: z.array(BodyId).max(10).optional(),
    removeTagIds: z.array(BodyId).max(10).optional(),
    id: BodyId.optional().openapi({ description: "One list (BC), instead of listIds" }),
    tag_ids: z.array(BodyId).max(10).optional().openapi({ description: "Alias of tagIds (BC)" }),
  })
  .openapi("LeadListAssignTags");

const PushToCampaignBody = z
  .object({
    campaignId: BodyId.optional(),
    campaign_id: BodyId.optional().openapi({ description: "Alias of campaignId (BC)" }),
    campaignName: z.string().trim().min(1).max(255).optional().openapi({ description: "A campaign by name; none of that name creates a DRAFTED one" }),
    action: z.enum(["copy", "move"]).optional(),
    leadList: z
      .object({ listId: BodyId.optional(), leadIds: LeadIds.optional(), allLeads: z.boolean().optional() })
      .optional(),
    id: BodyId.optional().openapi({ description: "The source list (BC), instead of leadList.listId" }),
    filters: z.unknown().optional(),
    ...SkipSettings,
  })
  .openapi("PushToCampaign");

const PushCounts = z.object({
  campaign_id: z.number().int(),
  total_leads: z.number().int(),
  pushed: z.number().int(),
  duplicates: z.number().int(),
  blocked: z.number().int(),
  unsubscribed: z.number().int(),
});

const PushBetweenListsBody = z
  .object({
    action: z.enum(["copy", "move"]).optional(),
    move: z.boolean().optional().openapi({ description: "BC: true = move" }),
    toListId: BodyId.optional(),
    to_list_id: BodyId.optional(),
    fromListId: BodyId.optional(),
    from_list_id: BodyId.optional(),
    leadIds: LeadIds.optional(),
    lead_ids: LeadIds.optional(),
  })
  .openapi("PushBetweenLists");

const MoveLeadsBody = z
  .object({ sourceListId: BodyId, targetListId: BodyId, leadIds: LeadIds.optional(), allLeads: z.boolean().optional() })
  .openapi("MoveLeadsBetweenLists");

const PushToListBody = z
  .object({ listId: BodyId, leadIds: LeadIds.optional(), allLeads: z.boolean().optional(), action: z.enum(["copy", "move"]).optional() })
  .openapi("PushToList");

const CampaignToListBody = z
  .object({ campaignId: BodyId, listId: BodyId, leadMapIds: LeadIds.optional(), allLeads: z.boolean().optional() })
  .openapi("CampaignPushToList");

const ListQuery = z.object({
  listName: z.string().max(255).optional(),
  tagIds: z
    .string()
    .regex(/^\s*[1-9][0-9]{0,15}\s*(,\s*[1-9][0-9]{0,15}\s*)*$/, "Comma-separated tag ids")
    .transform((value) => value.split(",").map((id) => Number(id.trim())))
    .optional()
    .openapi({ type: "string", example: "1,2" }),
  client_id: queryId().optional(),
  limit: queryCount(1, 1000).default(10),
  offset: queryCount(0).default(0),
  starting_after: queryId().optional().openapi({ description: "A list id: the page starts after it (stays right while lists are added)" }),
});

const MemberQuery = z.object({
  limit: queryCount(1, 1000).default(100),
  offset: queryCount(0).default(0),
  starting_after: queryId().optional().openapi({ description: "A lead id: the page starts after it" }),
});

// Routes: literal paths before the {id} ones.

const tag = ["Lead lists"];
const routes = {
  assignTags: createRoute({
    method: "post",
    path: "/api/v1/lead-list/assign-tags",
    operationId: "assignLeadListTags",
    description: "Adds `tagIds` (0–10) and removes `removeTagIds` on 1–10 lists (`{id, tag_ids}` for one list is read too). Unknown tag → 400.",
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
    description: "Moves leads from `sourceListId` to `targetListId`: `leadIds`, or `allLeads: true`. Foreign list → 404.",
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
  import: createRoute({
    method: "post",
    path: "/api/v1/lead-list/{id}/import",
    operationId: "importLeadListLeads",
    description: "Imports 1–1000 leads into the list (`leadList`, or `leads`/`lead_list`). New emails create leads; known ones get empty fields " +
      "filled and `custom_fields` merged. Block-listed and invalid addresses are counted, not added, unless the `csvSettings` say otherwise.",
    tags: tag,
    summary: "Import up to 1000 leads into a list",
    security: API_KEY_SECURITY,
    request: { params: ListParams, body: jsonBody(ImportBody, { leadList: [{ email: "ann@example.com", first_name: "Ann" }], fileName: "api-import" }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: ImportCounts }), "What the import did"), ...errorResponses(401, 404, 422, 429) },
  }),
  importCsv: createRoute({
    method: "post",
    path: "/api/v1/lead-list/{id}/import-csv",
    operationId: "importLeadListCsv",
    tags: tag,
    summary: "Import a CSV (header row with an email column) in the background; read progress from imports/{import_id}",
    description:
      "Send the CSV as the body (Content-Type text/csv, skipping rules as query parameters ignore_global_block_list / ignore_unsubscribe_list and the name as file_name) or as JSON {csv, fileName?, csvSettings?}. Up to the 1 MiB body limit.",
    security: API_KEY_SECURITY,
    request: {
      params: ListParams,
      query: z.object({
        file_name: z.string().max(255).optional(),
        ignore_global_block_list: z.enum(["true", "false", "1", "0"]).optional(),
        ignore_unsubscribe_list: z.enum(["true", "false", "1", "0"]).optional(),
      }),
      body: {
        required: false,
        content: { "application/json": { schema: CsvImportJson }, "text/csv": { schema: z.string() }, "text/plain": { schema: z.string() } },
      },
    },
    responses: { 202: json(z.object({ ok: z.boolean(), data: CsvImport }), "The import, queued"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  importProgress: createRoute({
    method: "get",
    path: "/api/v1/lead-list/{id}/imports/{import_id}",
    operationId: "getLeadListImport",
    description: "A CSV import's state and counts (rows read, imported, duplicates, invalid).",
    tags: tag,
    summary: "A CSV import's progress",
    security: API_KEY_SECURITY,
    request: { params: z.object({ id: pathId("id"), import_id: pathId("import_id") }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: CsvImport }), "The import"), ...errorResponses(401, 404, 422, 429) },
  }),
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
    description: "Copies or moves leads to `toListId`, from `fromListId` or by `leadIds` (one of them required). Answers `{total_leads_moved}`.",
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
    description: "Adds leads (`leadIds` or `allLeads`) to a list; `move` also takes them out of their other lists.",
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
    description: "Adds the leads of the given records (`leadMapIds` or `allLeads`) to a list and deletes those records from the campaign.",
    tags: tag,
    summary: "Move a campaign's leads to a list (their records leave the campaign)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(CampaignToListBody, { campaignId: 1, listId: 1, allLeads: true }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.object({ total_leads: z.number().int() }) }), "Moved"), ...errorResponses(401, 404, 422, 429) },
  }),
};

// Presenting.

async function presentLists(db: Database, rows: LeadListRow[]) {
  const { counts, tagsOf } = await listDetails(
    db,
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

function presentImport(row: ImportRow) {
  return {
    id: row.id,
    list_id: row.listId,
    file_name: row.fileName,
    state: row.state,
    total: row.total,
    processed: row.processed,
    imported: row.imported,
    duplicates: row.duplicates,
    blocked: row.blocked,
    invalid: row.invalid,
    error: row.error,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    finished_at: row.finishedAt ? iso(row.finishedAt) : null,
  };
}

// Deciding.

/** A required choice among alias fields the schema cannot express: the contract's 422 body. */
function required(path: string, message: string): never {
  throw ApiError.validation([{ path, message }]);
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

/**
 * The campaign a push names by name: the caller's oldest of that name; none creates a DRAFTED one,
 * in the caller's client or else the source list's.
 */
async function campaignNamed(db: Database, principal: Principal, name: string, list: LeadListRow | null): Promise<CampaignRow> {
  const named = await oldestCampaignNamed(db, principal, name);
  return named ?? insertCampaign(db, { accountId: principal.accountId, clientId: principal.clientId ?? list?.clientId ?? null, name });
}

function queryFlag(value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : value === "true" || value === "1";
}

/** The CSV and its settings, from a text/csv (or text/plain) body or from JSON. */
async function csvUpload(c: Context<AppEnv>, json: z.infer<typeof CsvImportJson> | Record<string, never> | string, query: Record<string, string | undefined>) {
  const contentType = c.req.header("content-type") ?? "";
  if (/^text\/(csv|plain)/i.test(contentType)) {
    const csv = await c.req.text();
    if (csv.trim() === "") required("body", "The CSV is empty");
    return {
      csv,
      fileName: query.file_name ?? "api-import.csv",
      settings: skipSettings({
        ignore_global_block_list: queryFlag(query.ignore_global_block_list),
        ignore_unsubscribe_list: queryFlag(query.ignore_unsubscribe_list),
      }),
    };
  }
  if (typeof json === "string" || !("csv" in json)) required("csv", "Send the CSV as a text/csv body or as JSON {csv}");
  return { csv: json.csv, fileName: json.fileName ?? json.file_name ?? query.file_name ?? "api-import.csv", settings: skipSettings(json) };
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
  const moved = await copyLeadsToList(c.env.DB, principal, { kind: "list", listId: from.id, leadIds: body.allLeads ? undefined : body.leadIds }, to.id, from.id);
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
  return c.json({ ok: true, data: await presentLists(db, page), has_more: rows.length > query.limit }, 200);
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
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const [data] = await presentLists(db, [list]);
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

leadListRoutes.openapi(routes.import, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const body = c.req.valid("json");
  const upload = body.leadList ?? body.leads ?? body.lead_list ?? required("leadList", "leadList is required");
  if (body.customFields !== undefined) await saveListCustomFields(db, list.id, body.customFields);
  const counts = await importLeads(c.env.DB, list, upload, skipSettings(body));
  return c.json({ ok: true, data: counts }, 200);
});

leadListRoutes.openapi(routes.importCsv, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const upload = await csvUpload(c, c.req.valid("json"), c.req.valid("query"));
  const job = await createCsvImport(db, list, upload.csv, upload.fileName, upload.settings);
  c.executionCtx.waitUntil(runImport(c.env, job.id));
  return c.json({ ok: true, data: presentImport(job) }, 202);
});

leadListRoutes.openapi(routes.importProgress, async (c) => {
  const db = database(c.env.DB);
  const { id, import_id } = c.req.valid("param");
  const list = await findLeadList(db, c.get("principal"), id);
  const job = await findImport(db, list.id, import_id);
  if (!job) throw ApiError.notFound("Import not found");
  return c.json({ ok: true, data: presentImport(job) }, 200);
});

// Ids that are present are resolved (404) before a missing choice is refused (422), so another
// tenant's id always answers as a missing one, whatever else the body lacks.

leadListRoutes.openapi(routes.pushToCampaign, async (c) => {
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

leadListRoutes.openapi(routes.pushBetweenLists, async (c) => {
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
  const moved = await copyLeadsToList(c.env.DB, principal, source, to.id, move ? (from?.id ?? "others") : null);
  return c.json({ ok: true, data: { total_leads_moved: moved } }, 200);
});

leadListRoutes.openapi(routes.pushToList, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const list = await findLeadList(db, principal, body.listId);
  if (!body.leadIds && !body.allLeads) required("leadIds", "leadIds or allLeads is required");
  const source: LeadSource = { kind: "leads", principal, leadIds: body.allLeads ? undefined : body.leadIds };
  const total = await copyLeadsToList(c.env.DB, principal, source, list.id, body.action === "move" ? "others" : null);
  return c.json({ ok: true, data: { total_leads: total } }, 200);
});

leadListRoutes.openapi(routes.campaignToList, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const campaign = await findCampaign(db, principal, body.campaignId);
  const list = await findLeadList(db, principal, body.listId);
  if (!body.leadMapIds && !body.allLeads) required("leadMapIds", "leadMapIds or allLeads is required");
  const total = await moveRecordsToList(c.env.DB, campaign.id, body.allLeads ? null : body.leadMapIds!, list.id);
  return c.json({ ok: true, data: { total_leads: total } }, 200);
});
