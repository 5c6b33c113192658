import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { database } from "../platform/db";
import { accounts } from "../db/schema";
import { requireAccountKey } from "../platform/auth";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";

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
  tags: ["Account"],
  summary: "Read the account's settings",
  security: API_KEY_SECURITY,
  responses: { 200: json(Account, "The account"), ...errorResponses(401, 429) },
});

const updateAccount = createRoute({
  method: "patch",
  path: "/api/v1/account",
  tags: ["Account"],
  summary: "Change the account's settings (the ignore-out-of-office toggle)",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(AccountSettings) },
  responses: { 200: json(Account, "The account after the change"), ...errorResponses(400, 401, 422, 429) },
});

type AccountRow = typeof accounts.$inferSelect;

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
  const row = await database(c.env.DB).select().from(accounts).where(eq(accounts.id, principal.accountId)).get();
  if (!row) throw ApiError.unauthorized("Invalid API Key");
  return c.json(present(row), 200);
});

accountRoutes.openapi(updateAccount, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal, ACCOUNT_ONLY);
  const { ignore_ooo_replies } = c.req.valid("json");
  const row = await database(c.env.DB)
    .update(accounts)
    .set({ ignoreOooReplies: ignore_ooo_replies })
    .where(eq(accounts.id, principal.accountId))
    .returning()
    .get();
  if (!row) throw ApiError.unauthorized("Invalid API Key");
  return c.json(present(row), 200);
});
