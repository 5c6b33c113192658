import { createRoute, z } from "@hono/zod-openapi";
import { config } from "../config";
import { createMiddleware } from "hono/factory";
import { digestKey, mintKey } from "../keys/rules";
import type { AppEnv } from "../platform/env";
import { ApiError } from "../platform/errors";
import { clientIp } from "../platform/client-ip";
import { createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { accountKeyHashes, deleteAccountKey, insertAccountKey, listAccountKeys } from "../keys/store";
import { emailTaken, findAccount, highestAccountId, provisionAccount, updateAccountStanding } from "./store";
import { listKey, releaseAccount, reserveAccount } from "../directory/store";
import { claimIdRange, currentBlock } from "../directory/id-ranges";
import { onAccountShard, roomiestShard } from "../directory/placement";
import { currentShard, hasShard, onShard, shardCount } from "../platform/shards";
import { invalidateKeys, revokeKey } from "../keys/auth";
import { refuseAuthentication, refuseIfBlocked, requestBucket } from "../keys/auth-failures";
import { ACCOUNT_KEY_NOT_FOUND, AccountApiKeyList, presentAccountKey } from "./routes";

/**
 * Operator routes answer as if absent unless ADMIN_TOKEN is configured, and only to its bearer.
 * The token is compared in constant time (digests of equal length through timingSafeEqual), and
 * failures count against the caller's IP like API key failures: 429 past the limit, and a caller
 * this isolate knows to be blocked is refused before any comparison.
 */
export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = config(c.env).adminToken;
  if (!token) throw ApiError.notFound("Not found");
  const bucket = requestBucket(clientIp(c.req, config(c.env)));
  refuseIfBlocked(bucket);
  const header = c.req.header("Authorization") ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
  const [expected, given] = await Promise.all([digestKey(token), digestKey(presented)]);
  const a = new TextEncoder().encode(expected);
  const b = new TextEncoder().encode(given);
  if (!crypto.subtle.timingSafeEqual(a, b)) {
    return refuseAuthentication(c.env, bucket, ApiError.unauthorized("Invalid admin token"));
  }
  await next();
});

const ProvisionAccount = z
  .object({
    email: z.email().max(254),
    name: z.string().trim().min(1).max(255),
    deliverability_enabled: z.boolean().default(true),
    ignore_ooo_replies: z.boolean().default(false),
    rate_limit_per_minute: z.number().int().min(1).max(100_000).optional(),
    rate_limit_burst: z.number().int().min(1).max(10_000).optional(),
    shard: z.number().int().min(0).max(1000).optional().openapi({ description: "The shard (0 for DB, k for DB_k) to place the account on; default: the one with the most room" }),
  })
  .openapi("ProvisionAccount");

const ProvisionedAccount = z
  .object({ id: z.number().int(), email: z.string(), api_key: z.string(), shard: z.number().int() })
  .openapi("ProvisionedAccount");

const MintedAccountKey = z
  .object({ id: z.number().int(), account_id: z.number().int(), api_key: z.string() })
  .openapi("MintedAccountKey");

const AccountStanding = z
  .object({
    disabled: z.boolean().optional(),
    warmup_shared_pool: z.boolean().optional().openapi({ description: "With WARMUP_POOL_SCOPE=deployment, the account's warmup mailboxes share one pool with every other flagged account (CONTRACT 19.4)" }),
  })
  .refine((body) => body.disabled !== undefined || body.warmup_shared_pool !== undefined, { message: "Give disabled or warmup_shared_pool", path: ["disabled"] })
  .openapi("AccountStanding");

const AdminAccount = z
  .object({ id: z.number().int(), email: z.string(), name: z.string(), disabled: z.boolean(), warmup_shared_pool: z.boolean(), shard: z.number().int() })
  .openapi("AdminAccount");

const EMAIL_TAKEN = "An account with this email already exists";

export const adminSecurity = [{ AdminBearer: [] }];
const AccountParams = z.object({ id: pathId("id") });

const createAccount = createRoute({
  method: "post",
  path: "/admin/v1/accounts",
  operationId: "adminCreateAccount",
  description: "Operators only (`Authorization: Bearer <ADMIN_TOKEN>`; every admin route answers 404 while that secret is unset). Creates an account " +
    "and answers 201 with its first account key, shown once. `rate_limit_per_minute`/`rate_limit_burst` override the default budget. " +
    "The account goes to the shard with the most room unless `shard` names one (an unbound shard → 400). An email already provisioned on any shard → 400.",
  tags: ["Admin"],
  summary: "Provision an account and its first account API key",
  security: adminSecurity,
  request: { body: jsonBody(ProvisionAccount, { email: "owner@example.com", name: "Owner", deliverability_enabled: true, ignore_ooo_replies: false }) },
  responses: {
    201: json(ProvisionedAccount, "The account; api_key is shown only here"),
    ...errorResponses(400, 401, 404, 422),
  },
});

const createAccountKey = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{id}/api-keys",
  operationId: "adminCreateAccountKey",
  description: "Mints another account key for the account (several may exist); the value is shown once. Unknown account → 404.",
  tags: ["Admin"],
  summary: "Mint another account API key",
  security: adminSecurity,
  request: { params: AccountParams },
  responses: {
    201: json(MintedAccountKey, "The new key; api_key is shown only here"),
    ...errorResponses(401, 404, 422),
  },
});

const listAccountKeysRoute = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{id}/api-keys",
  operationId: "adminListAccountKeys",
  description: "The account's keys with their values masked (prefix … last 4).",
  tags: ["Admin"],
  summary: "List an account's API keys (values masked)",
  security: adminSecurity,
  request: { params: AccountParams },
  responses: { 200: json(AccountApiKeyList, "The account's keys, oldest first"), ...errorResponses(401, 404, 422) },
});

const deleteAccountKeyRoute = createRoute({
  method: "delete",
  path: "/admin/v1/accounts/{id}/api-keys/{key_id}",
  operationId: "adminRevokeAccountKey",
  description: "Revokes a key, even the account's last one. The key's Durable Object hears it before the answer, so the next request with it gets 401.",
  tags: ["Admin"],
  summary: "Revoke an account API key (even the last one); it stops working at once",
  security: adminSecurity,
  request: { params: z.object({ id: pathId("id"), key_id: pathId("key_id") }) },
  responses: { 200: json(z.object({ ok: z.boolean() }), "Revoked"), ...errorResponses(401, 404, 422) },
});

const updateAccountRoute = createRoute({
  method: "patch",
  path: "/admin/v1/accounts/{id}",
  operationId: "adminUpdateAccount",
  description:
    "`{disabled?: true|false, warmup_shared_pool?: true|false}`. While disabled, the account's account keys and client keys answer 401; nothing is deleted. `warmup_shared_pool` (default false) lets the account's warmup mailboxes join the deployment's shared pool when WARMUP_POOL_SCOPE=deployment.",
  tags: ["Admin"],
  summary: "Disable or re-enable an account (its keys answer 401 while disabled), or let it share the deployment's warmup pool",
  security: adminSecurity,
  request: { params: AccountParams, body: jsonBody(AccountStanding, { disabled: true }) },
  responses: { 200: json(AdminAccount, "The account after the change"), ...errorResponses(400, 401, 404, 422) },
});

/** An account's routes work on its shard (the directory's word; shard 0 for an account from before shards). */
const onTheAccountsShard = createMiddleware<AppEnv>(async (c, next) => {
  const id = Number(c.req.param("id"));
  if (Number.isSafeInteger(id) && id > 0) c.env = await onAccountShard(c.env, id);
  await next();
});

export const adminRoutes = createRouter();
adminRoutes.use("/admin/v1/*", adminAuth);
adminRoutes.use("/admin/v1/accounts/:id", onTheAccountsShard);
adminRoutes.use("/admin/v1/accounts/:id/*", onTheAccountsShard);

adminRoutes.openapi(createAccount, async (c) => {
  const body = c.req.valid("json");
  const email = body.email.toLowerCase();
  if (body.shard !== undefined && !hasShard(c.env, body.shard)) throw ApiError.badRequest(`No shard ${body.shard}: this deployment binds ${shardCount(c.env)}`);
  // Emails are unique across shards: the directory's index, and shard 0 for accounts from before shards.
  if (await emailTaken(c.env.DB, email)) throw ApiError.badRequest(EMAIL_TAKEN);
  const shard = body.shard ?? (await roomiestShard(c.env));
  const reserved = await reserveAccount(c.env.DIRECTORY, { shard, email }, await highestAccountId(c.env.DB));
  if (reserved === "email_taken") throw ApiError.badRequest(EMAIL_TAKEN);
  const { DB } = onShard(c.env, shard);
  const key = await mintKey("account");
  const account = {
    id: reserved.id,
    email,
    name: body.name,
    deliverabilityEnabled: body.deliverability_enabled,
    ignoreOooReplies: body.ignore_ooo_replies,
    rateLimitPerMinute: body.rate_limit_per_minute ?? null,
    rateLimitBurst: body.rate_limit_burst ?? null,
  };
  // A reservation whose account was not made (refused below, or a failure here) is given back.
  const result = await (async () => {
    await claimIdRange(DB, await currentBlock(c.env.DIRECTORY, shard));
    await listKey(c.env.DIRECTORY, key.keyHash, reserved.id);
    return provisionAccount(DB, account, key);
  })().catch(async (error: unknown) => {
    await releaseAccount(c.env.DIRECTORY, reserved.id);
    throw error;
  });
  if ("refused" in result) {
    await releaseAccount(c.env.DIRECTORY, reserved.id);
    throw ApiError.badRequest(EMAIL_TAKEN);
  }
  return c.json({ id: result.id, email, api_key: key.value, shard }, 201);
});

adminRoutes.openapi(createAccountKey, async (c) => {
  const { id } = c.req.valid("param");
  if (!(await findAccount(c.env.DB, id))) throw ApiError.notFound("Account not found");
  const key = await mintKey("account");
  const keyId = await insertAccountKey(c.env.DB, id, key);
  // Listed once stored, before the answer: a key its caller holds always finds its shard.
  await listKey(c.env.DIRECTORY, key.keyHash, id);
  return c.json({ id: keyId, account_id: id, api_key: key.value }, 201);
});

adminRoutes.openapi(listAccountKeysRoute, async (c) => {
  const { id } = c.req.valid("param");
  if (!(await findAccount(c.env.DB, id))) throw ApiError.notFound("Account not found");
  const rows = await listAccountKeys(c.env.DB, id);
  return c.json({ ok: true, data: rows.map(presentAccountKey) }, 200);
});

adminRoutes.openapi(deleteAccountKeyRoute, async (c) => {
  const { id, key_id } = c.req.valid("param");
  const result = await deleteAccountKey(c.env.DB, id, key_id, { keepOne: false });
  if ("refused" in result) throw ApiError.notFound(ACCOUNT_KEY_NOT_FOUND);
  await revokeKey(c.env, result.deleted.keyHash);
  return c.json({ ok: true }, 200);
});

adminRoutes.openapi(updateAccountRoute, async (c) => {
  const { id } = c.req.valid("param");
  const { disabled, warmup_shared_pool } = c.req.valid("json");
  const row = await updateAccountStanding(c.env.DB, id, { disabled, warmupSharedPool: warmup_shared_pool });
  if (!row) throw ApiError.notFound("Account not found");
  // Every key's object reads its key again, so the change holds from the very next request.
  if (disabled !== undefined) await invalidateKeys(c.env, await accountKeyHashes(c.env.DB, id));
  return c.json({ id: row.id, email: row.email, name: row.name, disabled: row.disabledAt !== null, warmup_shared_pool: row.warmupSharedPool, shard: currentShard(c.env) }, 200);
});
