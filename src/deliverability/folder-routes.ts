import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { iso } from "../platform/time";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import type { FolderRow } from "./shared";
import { countFolderTests, deleteFolder, findFolder, insertFolder, listFolderTests, listFolders } from "./store";
import { DELIVERABILITY } from "./shared";

const Folder = z
  .object({ id: z.number().int(), name: z.string(), created_at: z.string(), updated_at: z.string() })
  .openapi("SpamTestFolder");

const FolderDetail = Folder.extend({
  test_count: z.number().int(),
  tests: z.array(z.object({ id: z.string(), test_name: z.string(), test_type: z.string(), status: z.string() })),
}).openapi("SpamTestFolderDetail");

const name = z.string().trim().min(1).max(255);
const CreateFolder = z
  .object({ name: name.optional(), folder_name: name.optional(), folderName: name.optional() })
  .refine((b) => b.name ?? b.folder_name ?? b.folderName, { message: "name is required", path: ["name"] })
  .openapi("CreateSpamTestFolder");

const FolderParams = z.object({ folder_id: pathId("folder_id") });
const tags = ["Deliverability"];

const routes = {
  create: createRoute({
    method: "post",
    path: "/api/v1/spam-test/folder",
    operationId: "createSpamTestFolder",
    description: "Creates a folder to group tests (`name`, or `folder_name`/`folderName`). " + DELIVERABILITY,
    tags,
    summary: "Create a folder for spam tests",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(CreateFolder, { name: "January tests" }) },
    responses: { 200: json(Folder, "The folder"), ...errorResponses(401, 404, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/api/v1/spam-test/folder",
    operationId: "listSpamTestFolders",
    description: "The caller's folders. " + DELIVERABILITY,
    tags,
    summary: "List folders",
    security: API_KEY_SECURITY,
    responses: { 200: json(z.array(Folder), "Folders"), ...errorResponses(401, 404, 429) },
  }),
  read: createRoute({
    method: "get",
    path: "/api/v1/smart-delivery/folders/{folder_id}",
    operationId: "getSpamTestFolderWithTests",
    description: "A folder with its tests, wrapped `{success, data}`. " + DELIVERABILITY,
    tags,
    summary: "Read a folder with its tests",
    security: API_KEY_SECURITY,
    request: { params: FolderParams },
    responses: { 200: json(z.object({ success: z.boolean(), data: FolderDetail }), "The folder"), ...errorResponses(401, 404, 422, 429) },
  }),
  readAlias: createRoute({
    method: "get",
    path: "/api/v1/spam-test/folder/{folder_id}",
    operationId: "getSpamTestFolder",
    description: "A folder, bare. " + DELIVERABILITY,
    tags,
    summary: "Read a folder (bare)",
    security: API_KEY_SECURITY,
    request: { params: FolderParams },
    responses: { 200: json(Folder, "The folder"), ...errorResponses(401, 404, 422, 429) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/api/v1/spam-test/folder/{folder_id}",
    operationId: "deleteSpamTestFolder",
    description: "Deletes an empty folder; one holding tests → 400. " + DELIVERABILITY,
    tags,
    summary: "Delete an empty folder",
    security: API_KEY_SECURITY,
    request: { params: FolderParams },
    responses: { 200: json(z.object({ ok: z.boolean() }), "Deleted"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

function present(row: FolderRow) {
  return { id: row.id, name: row.name, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt) };
}

export const folderRoutes = createRouter();

folderRoutes.openapi(routes.create, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const now = new Date();
  const row = await insertFolder(database(c.env.DB), {
    accountId: principal.accountId,
    clientId: principal.clientId,
    name: (body.name ?? body.folder_name ?? body.folderName)!,
    createdAt: now,
    updatedAt: now,
  });
  return c.json(present(row), 200);
});

folderRoutes.openapi(routes.list, async (c) => {
  const rows = await listFolders(database(c.env.DB), c.get("principal"));
  return c.json(rows.map(present), 200);
});

folderRoutes.openapi(routes.read, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const folder = await findFolder(db, principal, c.req.valid("param").folder_id);
  const tests = await listFolderTests(db, principal, folder.id);
  return c.json(
    {
      success: true,
      data: {
        ...present(folder),
        test_count: tests.length,
        tests: tests.map((t) => ({ id: String(t.id), test_name: t.testName, test_type: t.testType, status: t.status })),
      },
    },
    200,
  );
});

folderRoutes.openapi(routes.readAlias, async (c) => {
  const folder = await findFolder(database(c.env.DB), c.get("principal"), c.req.valid("param").folder_id);
  return c.json(present(folder), 200);
});

folderRoutes.openapi(routes.remove, async (c) => {
  const db = database(c.env.DB);
  const folder = await findFolder(db, c.get("principal"), c.req.valid("param").folder_id);
  if ((await countFolderTests(db, folder.id)) > 0) throw ApiError.badRequest("Folder is not empty");
  await deleteFolder(db, folder.id);
  return c.json({ ok: true }, 200);
});
