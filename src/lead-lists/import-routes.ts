import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { database } from "../platform/db";
import { iso } from "../platform/time";
import { ApiError } from "../platform/errors";
import { findLeadList } from "../platform/access";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { createCsvImport, findImport, importLeads, runImport, type ImportRow } from "./import";
import { saveListCustomFields } from "./store";
import { LEAD_LIST_TAG, ListParams, skipSettings, ImportBody, ImportCounts, CsvImportJson, CsvImport, required } from "./schemas";


const tag = LEAD_LIST_TAG;
const routes = {
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
};

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
    invalid_timezone_count: row.invalidTimezone,
    error: row.error,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    finished_at: row.finishedAt ? iso(row.finishedAt) : null,
  };
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


export const leadListImportRoutes = createRouter();

leadListImportRoutes.openapi(routes.import, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const body = c.req.valid("json");
  const upload = body.leadList ?? body.leads ?? body.lead_list ?? required("leadList", "leadList is required");
  if (body.customFields !== undefined) await saveListCustomFields(db, list.id, body.customFields);
  const counts = await importLeads(c.env, list, upload, skipSettings(body), (work) => c.executionCtx.waitUntil(work));
  return c.json({ ok: true, data: counts }, 200);
});

leadListImportRoutes.openapi(routes.importCsv, async (c) => {
  const db = database(c.env.DB);
  const list = await findLeadList(db, c.get("principal"), c.req.valid("param").id);
  const upload = await csvUpload(c, c.req.valid("json"), c.req.valid("query"));
  const job = await createCsvImport(db, list, upload.csv, upload.fileName, upload.settings);
  c.executionCtx.waitUntil(runImport(c.env, job.id));
  return c.json({ ok: true, data: presentImport(job) }, 202);
});

leadListImportRoutes.openapi(routes.importProgress, async (c) => {
  const db = database(c.env.DB);
  const { id, import_id } = c.req.valid("param");
  const list = await findLeadList(db, c.get("principal"), id);
  const job = await findImport(db, list.id, import_id);
  if (!job) throw ApiError.notFound("Import not found");
  return c.json({ ok: true, data: presentImport(job) }, 200);
});

// Ids that are present are resolved (404) before a missing choice is refused (422), so another
// tenant's id always answers as a missing one, whatever else the body lacks.

