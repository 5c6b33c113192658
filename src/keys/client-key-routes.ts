import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { database } from "../platform/db";
import { containsText } from "../platform/text-search";
import { clientKeys, clients } from "../db/schema";
import { maskKey, mintKey } from "./rules";
import { iso } from "../platform/time";
import { requireAccountKey } from "../platform/principal";
import { invalidateKey, revokeKey } from "./auth";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryId } from "../platform/openapi";

export const MAX_KEYS_PER_CLIENT = 25;
const KEY_NOT_FOUND = "Client API key not found";

const KeyStatus = z.enum(["active", "inactive"]);

const ClientApiKey = z
  .object({
    id: z.number().int(),
    client_id: z.number().int(),
    key_name: z.string(),
    api_key: z.string(),
    status: KeyStatus,
    created_at: z.string(),
  })
  .openapi("ClientApiKey");

const KeyEnvelope = z.object({ ok: z.boolean(), data: ClientApiKey }).openapi("ClientApiKeyResponse");

const CreateKey = z
  .object({
    clientId: z.number().int().positive(),
    keyName: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9 _-]+$/, "keyName may hold only letters, digits, spaces, hyphens and underscores"),
  })
  .openapi("CreateClientApiKey");

const ListQuery = z.object({
  clientId: queryId().optional(),
  status: KeyStatus.optional(),
  keyName: z.string().max(100).optional(),
});

const KeyParams = z.object({ id: pathId("id") });
const routeErrors = errorResponses(400, 401, 422, 429);

const createKey = createRoute({
  method: "post",
  path: "/api/v1/client/api-key",
  tags: ["Client API keys"],
  summary: "Create an API key for a client",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(CreateKey) },
  responses: { 200: json(KeyEnvelope, "The new key; api_key is shown in full only here and on reset"), ...routeErrors },
});

const listKeys = createRoute({
  method: "get",
  path: "/api/v1/client/api-key",
  tags: ["Client API keys"],
  summary: "List client API keys (values masked)",
  security: API_KEY_SECURITY,
  request: { query: ListQuery },
  responses: {
    200: json(z.object({ ok: z.boolean(), data: z.array(ClientApiKey) }), "Matching keys, oldest first"),
    ...routeErrors,
  },
});

const deleteKey = createRoute({
  method: "delete",
  path: "/api/v1/client/api-key/{id}",
  tags: ["Client API keys"],
  summary: "Delete a client API key; it stops working at once",
  security: API_KEY_SECURITY,
  request: { params: KeyParams },
  responses: { 200: json(z.object({ ok: z.boolean() }), "Deleted"), ...routeErrors },
});

const resetKey = createRoute({
  method: "put",
  path: "/api/v1/client/api-key/reset/{id}",
  tags: ["Client API keys"],
  summary: "Replace a key's value; the old value stops working at once",
  security: API_KEY_SECURITY,
  request: { params: KeyParams },
  responses: { 200: json(KeyEnvelope, "The same record with its new value"), ...routeErrors },
});

const setKeyStatus = createRoute({
  method: "put",
  path: "/api/v1/client/api-key/{id}/status",
  tags: ["Client API keys"],
  summary: "Activate or deactivate a client API key",
  security: API_KEY_SECURITY,
  request: { params: KeyParams, body: jsonBody(z.object({ status: KeyStatus }).openapi("ClientApiKeyStatus")) },
  responses: { 200: json(KeyEnvelope, "The key with its new status"), ...routeErrors },
});

type KeyRow = typeof clientKeys.$inferSelect;

function present(row: KeyRow, value?: string): z.infer<typeof ClientApiKey> {
  return {
    id: row.id,
    client_id: row.clientId,
    key_name: row.keyName,
    api_key: value ?? maskKey("client", row.last4),
    status: row.status,
    created_at: iso(row.createdAt),
  };
}

function ownKey(id: number, accountId: number): SQL | undefined {
  return and(eq(clientKeys.id, id), eq(clientKeys.accountId, accountId));
}

export const clientKeyRoutes = createRouter();

clientKeyRoutes.openapi(createKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { clientId, keyName } = c.req.valid("json");
  const db = database(c.env.DB);
  const key = await mintKey("client");
  // One statement checks ownership and the per-client cap and inserts, so concurrent creates cannot overshoot.
  const inserted = await db.get<{ id: number } | undefined>(sql`
    INSERT INTO client_keys (account_id, client_id, key_name, key_hash, last4, status, created_at)
    SELECT c.account_id, c.id, ${keyName}, ${key.keyHash}, ${key.last4}, 'active', ${Date.now()}
    FROM clients c
    WHERE c.id = ${clientId} AND c.account_id = ${principal.accountId}
      AND (SELECT count(*) FROM client_keys k WHERE k.client_id = c.id) < ${MAX_KEYS_PER_CLIENT}
    RETURNING id`);
  if (!inserted) {
    const client = await db
      .select({ id: clients.id })
      .from(clients)
      .where(and(eq(clients.id, clientId), eq(clients.accountId, principal.accountId)))
      .get();
    throw ApiError.badRequest(
      client ? `A client can have at most ${MAX_KEYS_PER_CLIENT} API keys` : "Client not found",
    );
  }
  const row = await db.select().from(clientKeys).where(eq(clientKeys.id, inserted.id)).get();
  return c.json({ ok: true, data: present(row!, key.value) }, 200);
});

clientKeyRoutes.openapi(listKeys, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const query = c.req.valid("query");
  const rows = await database(c.env.DB)
    .select()
    .from(clientKeys)
    .where(
      and(
        eq(clientKeys.accountId, principal.accountId),
        query.clientId ? eq(clientKeys.clientId, query.clientId) : undefined,
        query.status ? eq(clientKeys.status, query.status) : undefined,
        query.keyName ? containsText(clientKeys.keyName, query.keyName) : undefined,
      ),
    )
    .orderBy(asc(clientKeys.id));
  return c.json({ ok: true, data: rows.map((row) => present(row)) }, 200);
});

clientKeyRoutes.openapi(deleteKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { id } = c.req.valid("param");
  const row = await database(c.env.DB)
    .delete(clientKeys)
    .where(ownKey(id, principal.accountId))
    .returning({ keyHash: clientKeys.keyHash })
    .get();
  if (!row) throw ApiError.badRequest(KEY_NOT_FOUND);
  await revokeKey(c.env, row.keyHash);
  return c.json({ ok: true }, 200);
});

clientKeyRoutes.openapi(resetKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { id } = c.req.valid("param");
  const db = database(c.env.DB);
  const current = await db.select({ keyHash: clientKeys.keyHash }).from(clientKeys).where(ownKey(id, principal.accountId)).get();
  if (!current) throw ApiError.badRequest(KEY_NOT_FOUND);
  const key = await mintKey("client");
  // Only the value just read is replaced, so the value revoked below is exactly the one retired.
  const row = await db
    .update(clientKeys)
    .set({ keyHash: key.keyHash, last4: key.last4 })
    .where(and(ownKey(id, principal.accountId), eq(clientKeys.keyHash, current.keyHash)))
    .returning()
    .get();
  if (!row) throw ApiError.badRequest(KEY_NOT_FOUND);
  await revokeKey(c.env, current.keyHash);
  return c.json({ ok: true, data: present(row, key.value) }, 200);
});

clientKeyRoutes.openapi(setKeyStatus, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { id } = c.req.valid("param");
  const { status } = c.req.valid("json");
  const row = await database(c.env.DB)
    .update(clientKeys)
    .set({ status })
    .where(ownKey(id, principal.accountId))
    .returning()
    .get();
  if (!row) throw ApiError.badRequest(KEY_NOT_FOUND);
  await invalidateKey(c.env, row.keyHash);
  return c.json({ ok: true, data: present(row) }, 200);
});
