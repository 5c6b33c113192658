import { createRoute, z } from "@hono/zod-openapi";
import { requireAccountKey } from "../platform/principal";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { deleteAccountKey, listAccountKeys, type AccountKeyRow } from "../keys/store";
import { findAccount, updateAccountSettings, type AccountRow } from "./store";
import { maskKey } from "../keys/rules";
import { iso } from "../platform/time";
import { revokeKey } from "../keys/auth";

const ACCOUNT_ONLY = "This API key cannot manage the account";

const Account = z
  .object({
    id: z.number().int(),
    email: z.string(),
    name: z.string(),
    ignore_ooo_replies: z.boolean(),
    deliverability_enabled: z.boolean(),
  })
  .openapi("Account");

const AccountSettings = z.object({ ignore_ooo_replies: z.boolean() }).openapi("AccountSettings");

const readAccount = createRoute({
  method: "get",
  path: "/api/v1/account",
  operationId: "getAccount",
  description: "The calling account's settings `{id, email, name, ignore_ooo_replies, deliverability_enabled}`. Account key only.",
  "x-salvo-extension": true,
  tags: ["Account"],
  summary: "Read the account's settings",
  security: API_KEY_SECURITY,
  responses: { 200: json(Account, "The account"), ...errorResponses(401, 429) },
});

const updateAccount = createRoute({
  method: "patch",
  path: "/api/v1/account",
  operationId: "updateAccount",
  description: "Sets `ignore_ooo_replies`: when on, out-of-office replies (`is_ooo`, or category 6) are flagged ignored and leave `reply_count`. " +
    "Account key only; a client key → 401.",
  "x-salvo-extension": true,
  tags: ["Account"],
  summary: "Change the account's settings (the ignore-out-of-office toggle)",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(AccountSettings, { ignore_ooo_replies: true }) },
  responses: { 200: json(Account, "The account after the change"), ...errorResponses(400, 401, 422, 429) },
});

export const ACCOUNT_KEY_NOT_FOUND = "API key not found";

const AccountApiKey = z
  .object({
    id: z.number().int(),
    api_key: z.string().openapi({ description: "Masked: the prefix and the last four characters" }),
    last4: z.string(),
    created_at: z.string(),
  })
  .openapi("AccountApiKey");

export const AccountApiKeyList = z.object({ ok: z.boolean(), data: z.array(AccountApiKey) }).openapi("AccountApiKeyList");

export function presentAccountKey(row: AccountKeyRow): z.infer<typeof AccountApiKey> {
  return { id: row.id, api_key: maskKey("account", row.last4), last4: row.last4, created_at: iso(row.createdAt) };
}

const listKeys = createRoute({
  method: "get",
  path: "/api/v1/account/api-keys",
  operationId: "listAccountKeys",
  description: "The account's own account keys, values masked. Account key only.",
  "x-salvo-extension": true,
  tags: ["Account"],
  summary: "List the account's own API keys (values masked)",
  security: API_KEY_SECURITY,
  responses: { 200: json(AccountApiKeyList, "The account's keys, oldest first"), ...errorResponses(401, 429) },
});

const deleteKey = createRoute({
  method: "delete",
  path: "/api/v1/account/api-keys/{id}",
  operationId: "revokeAccountKey",
  description: "Revokes one of the account's keys, the calling one included, but never the last (400). It stops working on the next request.",
  "x-salvo-extension": true,
  tags: ["Account"],
  summary: "Revoke one of the account's API keys (it may be the calling key, not the last one); it stops working at once",
  security: API_KEY_SECURITY,
  request: { params: z.object({ id: pathId("id") }) },
  responses: { 200: json(z.object({ ok: z.boolean() }), "Revoked"), ...errorResponses(400, 401, 404, 422, 429) },
});

function present(row: AccountRow): z.infer<typeof Account> {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    ignore_ooo_replies: row.ignoreOooReplies,
    deliverability_enabled: row.deliverabilityEnabled,
  };
}

export const accountRoutes = createRouter();

accountRoutes.openapi(readAccount, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, ACCOUNT_ONLY);
  const row = await findAccount(c.env.DB, principal.accountId);
  if (!row) throw ApiError.unauthorized("Invalid API Key");
  return c.json(present(row), 200);
});

accountRoutes.openapi(updateAccount, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, ACCOUNT_ONLY);
  const { ignore_ooo_replies } = c.req.valid("json");
  const row = await updateAccountSettings(c.env.DB, principal.accountId, { ignoreOooReplies: ignore_ooo_replies });
  if (!row) throw ApiError.unauthorized("Invalid API Key");
  return c.json(present(row), 200);
});

accountRoutes.openapi(listKeys, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, ACCOUNT_ONLY);
  const rows = await listAccountKeys(c.env.DB, principal.accountId);
  return c.json({ ok: true, data: rows.map(presentAccountKey) }, 200);
});

accountRoutes.openapi(deleteKey, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, ACCOUNT_ONLY);
  const { id } = c.req.valid("param");
  // The calling key may revoke itself (a holder who knows it leaked can kill it), but never the
  // account's last key: that would lock the owner out until an operator mints a new one.
  const result = await deleteAccountKey(c.env.DB, principal.accountId, id, { keepOne: true });
  if ("refused" in result) {
    if (result.refused === "last_key") throw ApiError.badRequest("An account must keep at least one API key");
    throw ApiError.notFound(ACCOUNT_KEY_NOT_FOUND);
  }
  await revokeKey(c.env, result.deleted.keyHash);
  return c.json({ ok: true }, 200);
});
