import { createRoute, z } from "@hono/zod-openapi";
import { clientKeyHash, createClientKey, deleteClientKey, listClientKeys, replaceClientKey, setClientKeyStatus, type ClientKeyRow } from "./store";
import { MAX_KEYS_PER_CLIENT, maskKey, mintKey } from "./rules";
import { iso } from "../platform/time";
import { requireAccountKey } from "../platform/principal";
import { invalidateKey, revokeKey } from "./auth";
import { ApiError } from "../platform/errors";
import { listKey } from "../directory/store";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryId } from "../platform/openapi";

export { MAX_KEYS_PER_CLIENT };
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

/** snake_case spellings (compat rule C5), read only where the camelCase name is absent, so camelCase wins. */
function withCamelCaseNames(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const { client_id, key_name, ...rest } = body as Record<string, unknown>;
  return { clientId: client_id, keyName: key_name, ...rest };
}

const CreateKey = z
  .preprocess(
    withCamelCaseNames,
    z.object({
      clientId: z.number().int().positive().openapi({ description: "Alias client_id" }),
      keyName: z
        .string()
        .min(1)
        .max(100)
        .regex(/^[A-Za-z0-9 _-]+$/, "keyName may hold only letters, digits, spaces, hyphens and underscores")
        .openapi({ description: "Alias key_name" }),
    }),
  )
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
  operationId: "createClientKey",
  description: "Creates a key that acts for one client: it sees and creates only that client's campaigns and what hangs off them. `keyName` 1–100 " +
    "chars of letters, digits, space, `_`, `-` (else 422); `client_id`/`key_name` are read too. Foreign client → 400 `Client not found`; " +
    "more than 25 keys per client → 400. The value is answered here only.",
  tags: ["Client API keys"],
  summary: "Create an API key for a client",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(CreateKey, { clientId: 1, keyName: "crm-sync" }) },
  responses: { 200: json(KeyEnvelope, "The new key; api_key is shown in full only here and on reset"), ...routeErrors },
});

const listKeys = createRoute({
  method: "get",
  path: "/api/v1/client/api-key",
  operationId: "listClientKeys",
  description: "Client keys, narrowed by `clientId`, `status` and `keyName` (case-insensitive substring); `api_key` masked as prefix … last 4.",
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
  operationId: "deleteClientKey",
  description: "Deletes a client key; it is refused from the next request. Unknown or foreign id → 400 `Client API key not found` (this family has no 404).",
  tags: ["Client API keys"],
  summary: "Delete a client API key; it stops working at once",
  security: API_KEY_SECURITY,
  request: { params: KeyParams },
  responses: { 200: json(z.object({ ok: z.boolean() }), "Deleted"), ...routeErrors },
});

const resetKey = createRoute({
  method: "put",
  path: "/api/v1/client/api-key/reset/{id}",
  operationId: "resetClientKey",
  description: "Gives the key a new value (same id and status) and answers it once; the old value stops working at once. Unknown id → 400.",
  tags: ["Client API keys"],
  summary: "Replace a key's value; the old value stops working at once",
  security: API_KEY_SECURITY,
  request: { params: KeyParams },
  responses: { 200: json(KeyEnvelope, "The same record with its new value"), ...routeErrors },
});

const setKeyStatus = createRoute({
  method: "put",
  path: "/api/v1/client/api-key/{id}/status",
  operationId: "setClientKeyStatus",
  description: "`{status: active|inactive}`. An inactive key answers 401 until activated again. Unknown id → 400.",
  "x-salvo-extension": true,
  tags: ["Client API keys"],
  summary: "Activate or deactivate a client API key",
  security: API_KEY_SECURITY,
  request: { params: KeyParams, body: jsonBody(z.object({ status: KeyStatus }).openapi("ClientApiKeyStatus"), { status: "inactive" }) },
  responses: { 200: json(KeyEnvelope, "The key with its new status"), ...routeErrors },
});

function present(row: ClientKeyRow, value?: string): z.infer<typeof ClientApiKey> {
  return {
    id: row.id,
    client_id: row.clientId,
    key_name: row.keyName,
    api_key: value ?? maskKey("client", row.last4),
    status: row.status,
    created_at: iso(row.createdAt),
  };
}

export const clientKeyRoutes = createRouter();

clientKeyRoutes.openapi(createKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { clientId, keyName } = c.req.valid("json");
  const key = await mintKey("client");
  const result = await createClientKey(c.env.DB, principal, clientId, keyName, key);
  if ("refused" in result) {
    throw ApiError.badRequest(
      result.refused === "too_many_keys" ? `A client can have at most ${MAX_KEYS_PER_CLIENT} API keys` : "Client not found",
    );
  }
  // Listed once stored, before the answer: a key its caller holds always finds its shard.
  await listKey(c.env.DIRECTORY, key.keyHash, principal.accountId);
  return c.json({ ok: true, data: present(result.created, key.value) }, 200);
});

clientKeyRoutes.openapi(listKeys, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const rows = await listClientKeys(c.env.DB, principal, c.req.valid("query"));
  return c.json({ ok: true, data: rows.map((row) => present(row)) }, 200);
});

clientKeyRoutes.openapi(deleteKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const keyHash = await deleteClientKey(c.env.DB, principal, c.req.valid("param").id);
  if (!keyHash) throw ApiError.badRequest(KEY_NOT_FOUND);
  await revokeKey(c.env, keyHash);
  return c.json({ ok: true }, 200);
});

clientKeyRoutes.openapi(resetKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { id } = c.req.valid("param");
  const current = await clientKeyHash(c.env.DB, principal, id);
  if (!current) throw ApiError.badRequest(KEY_NOT_FOUND);
  const key = await mintKey("client");
  const row = await replaceClientKey(c.env.DB, principal, id, current, key);
  if (!row) throw ApiError.badRequest(KEY_NOT_FOUND);
  await listKey(c.env.DIRECTORY, key.keyHash, principal.accountId);
  await revokeKey(c.env, current);
  return c.json({ ok: true, data: present(row, key.value) }, 200);
});

clientKeyRoutes.openapi(setKeyStatus, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const { id } = c.req.valid("param");
  const row = await setClientKeyStatus(c.env.DB, principal, id, c.req.valid("json").status);
  if (!row) throw ApiError.badRequest(KEY_NOT_FOUND);
  await invalidateKey(c.env, row.keyHash);
  return c.json({ ok: true, data: present(row) }, 200);
});
