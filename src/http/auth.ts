import { createMiddleware } from "hono/factory";
import { and, eq } from "drizzle-orm";
import { database } from "../db/client";
import { accountKeys, clientKeys } from "../db/schema";
import { digestKey, keyKindOf, type KeyKind } from "../domain/api-keys";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

/** Who is calling: the account, and for client keys the one client they act for. */
export interface Principal {
  kind: KeyKind;
  accountId: number;
  clientId: number | null;
  keyId: number;
  keyHash: string;
}

export const INVALID_KEY = "Invalid API Key";

export async function resolvePrincipal(db: D1Database, apiKey: string): Promise<Principal | null> {
  const kind = keyKindOf(apiKey);
  if (!kind) return null;
  const keyHash = await digestKey(apiKey);
  const orm = database(db);
  if (kind === "account") {
    const row = await orm
      .select({ id: accountKeys.id, accountId: accountKeys.accountId })
      .from(accountKeys)
      .where(eq(accountKeys.keyHash, keyHash))
      .get();
    return row ? { kind, accountId: row.accountId, clientId: null, keyId: row.id, keyHash } : null;
  }
  const row = await orm
    .select({ id: clientKeys.id, accountId: clientKeys.accountId, clientId: clientKeys.clientId })
    .from(clientKeys)
    .where(and(eq(clientKeys.keyHash, keyHash), eq(clientKeys.status, "active")))
    .get();
  return row ? { kind, accountId: row.accountId, clientId: row.clientId, keyId: row.id, keyHash } : null;
}

/** Query-string `api_key` authentication for every /api/v1/ route. */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const apiKey = c.req.query("api_key");
  if (!apiKey) throw ApiError.unauthorized("API key is required");
  const principal = await resolvePrincipal(c.env.DB, apiKey);
  if (!principal) throw ApiError.unauthorized(INVALID_KEY);
  c.set("principal", principal);
  await next();
});

/** Client keys act for one client and may not manage clients, keys or the account itself. */
export function requireAccountKey(principal: Principal, message = "This API key cannot manage clients or API keys"): void {
  if (principal.kind !== "account") throw ApiError.unauthorized(message);
}
