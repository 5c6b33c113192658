import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { clientsOf, insertClient, updateClient } from "./store";
import { iso } from "../platform/time";
import { requireAccountKey } from "../platform/principal";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { PageQuery } from "../platform/paging";

const SaveClient = z
  .object({
    id: z.number().int().positive().optional(),
    name: z.string().trim().min(1).max(255),
    email: z.email().max(254),
  })
  .openapi("SaveClient");

const SavedClient = z
  .object({ ok: z.boolean(), clientId: z.number().int(), id: z.number().int(), name: z.string(), email: z.string() })
  .openapi("SavedClient");

const Client = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    user_id: z.number().int(),
    created_at: z.string(),
  })
  .openapi("Client");

const saveClient = createRoute({
  method: "post",
  path: "/api/v1/client/save",
  operationId: "saveClient",
  description: "Creates a client sub-account, or updates it when `id` names one of the caller's clients (another's → 400). Answers " +
    "`{ok, clientId, id, name, email}`. Account key only.",
  tags: ["Clients"],
  summary: "Create a client sub-account, or update one when id is given",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(SaveClient, { name: "Acme Corp", email: "ops@acme.example" }) },
  responses: { 200: json(SavedClient, "The saved client"), ...errorResponses(400, 401, 422, 429) },
});

const listClients = createRoute({
  method: "get",
  path: "/api/v1/client",
  operationId: "listClients",
  description: "The account's clients as a bare array `[{id, name, email, user_id, created_at}]`, by id. Account key only.",
  tags: ["Clients"],
  summary: "List the account's clients, by id",
  security: API_KEY_SECURITY,
  request: { query: z.object(PageQuery) },
  responses: { 200: json(z.array(Client), "The account's clients (one page when paged)"), ...errorResponses(401, 422, 429) },
});

export const clientRoutes = createRouter();

clientRoutes.openapi(saveClient, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const fields = { name: body.name, email: body.email };
  const row = body.id
    ? await updateClient(db, principal.accountId, body.id, fields)
    : await insertClient(db, principal.accountId, fields);
  if (!row) throw ApiError.badRequest("Client not found");
  return c.json({ ok: true, clientId: row.id, id: row.id, name: row.name, email: row.email }, 200);
});

clientRoutes.openapi(listClients, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const rows = await clientsOf(database(c.env.DB), principal.accountId, c.req.valid("query"));
  return c.json(
    rows.map((row) => ({
      id: row.id,
      name: row.name,
      email: row.email,
      user_id: row.accountId,
      created_at: iso(row.createdAt),
    })),
    200,
  );
});
