import { createRoute, z } from "@hono/zod-openapi";
import { withPayloadBodies } from "../platform/bodies";
import { PageQuery } from "../platform/paging";
import type { Context } from "hono";
import { config } from "../config";
import type { WebhookScope } from "../db/schema";
import type { AppEnv } from "../platform/env";
import { accountHasClient, findCampaign } from "../platform/access";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { checkUrl, urlPolicy } from "../platform/outbound";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryCount, queryId } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { iso } from "../platform/time";
import type { WebhookEventKind } from "./event-kinds";
import { insertWebhook, rotateSigningSecret, sealSecretKey } from "./secrets";
import {
  AssociationType,
  bodyId,
  checkKinds,
  EventKindName,
  kindAndCategoryFields,
  presentWebhook,
  requestedCategories,
  requestedKinds,
  resolveCategories,
  Webhook,
  type KindAndCategoryInput,
} from "./shapes";
import {
  categoryNames,
  deleteWebhook,
  findDelivery,
  findDeliveryWithAttempts,
  findSimilarWebhook,
  findWebhook,
  listWebhooks,
  redeliver,
  updateWebhook,
  webhookDeliveryLog,
  type WebhookTargetKey,
} from "./store";
import { MAX_WEBHOOK_URL_LENGTH, WEBHOOK_URL_RULES } from "./delivery-rules";

/**
 * Webhooks of every scope (CONTRACT section 14): the hosted API's create/update/delete forms, BC's
 * `/webhooks` forms, and each webhook's delivery log with redelivery (Salvo's own design).
 */

const UNAUTHORIZED_USER_SCOPE = "This API key cannot manage account-level webhooks";

const CreateWebhook = z
  .object({
    webhook_url: z.string().max(MAX_WEBHOOK_URL_LENGTH),
    association_type: AssociationType,
    email_campaign_id: bodyId.optional(),
    campaign_id: bodyId.optional(),
    client_id: bodyId.nullable().optional(),
    name: z.string().trim().min(1).max(255).optional(),
    webhook_name: z.string().trim().min(1).max(255).optional(),
    webhook_type: z.string().max(100).nullable().optional(),
    force_create: z.boolean().optional(),
    secret_key: z.string().max(255).nullable().optional(),
    ...kindAndCategoryFields,
  })
  .openapi("CreateWebhook");

const UpdateWebhook = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    webhook_name: z.string().trim().min(1).max(255).optional(),
    webhook_url: z.string().max(MAX_WEBHOOK_URL_LENGTH).optional(),
    webhook_type: z.string().max(100).nullable().optional(),
    secret_key: z.string().max(255).nullable().optional(),
    ...kindAndCategoryFields,
  })
  .openapi("UpdateWebhook");

const BcCreate = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    url: z.string().max(MAX_WEBHOOK_URL_LENGTH),
    events: z.array(EventKindName).max(50),
    client_id: bodyId.nullable().optional(),
    force_create: z.boolean().optional(),
  })
  .openapi("CreateWebhookShort");

const BcUpdate = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    url: z.string().max(MAX_WEBHOOK_URL_LENGTH).optional(),
    events: z.array(EventKindName).max(50).optional(),
  })
  .openapi("UpdateWebhookShort");

const IdParams = z.object({ id: pathId("id") });
const DeliveryParams = z.object({ id: pathId("id"), delivery_id: pathId("delivery_id") });

const CreateAnswer = z.object({ ok: z.boolean(), id: z.number().int(), webhook_url: z.string(), data: Webhook, secret: z.string().optional() });
const UpdateAnswer = z.object({ ok: z.boolean(), id: z.number().int(), message: z.string(), data: Webhook });
const Ok = z.object({ ok: z.boolean() });

const Attempt = z.object({
  attempted_at: z.string(),
  status_code: z.number().int().nullable(),
  outcome: z.enum(["delivered", "retry", "failed", "disabled"]),
  error: z.string().nullable(),
  response_time_ms: z.number().int(),
});
const Delivery = z
  .object({
    id: z.number().int(),
    webhook_id: z.number().int(),
    event_type: z.string(),
    campaign_id: z.number().int().nullable(),
    message_id: z.string(),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    next_retry_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
    attempt_log: z.array(Attempt),
  })
  .openapi("WebhookDelivery");

const tag = ["Webhooks"];
const routes = {
  create: createRoute({
    method: "post",
    path: "/api/v1/webhook/create",
    operationId: "createWebhook",
    description: "Creates a webhook of any scope: `association_type` user (every campaign), client (`client_id`) or campaign (`email_campaign_id`). " +
      "Without `force_create`, a webhook with the same scope, target and URL is updated instead. Event kinds as `event_type_map`, " +
      "`event_types` or `event_type`; URL rules as the campaign route (≤ 2048 characters). A client key cannot create user scope (401). " +
      "The signing secret is answered once, on creation.",
    tags: tag,
    summary: "Create a webhook of any scope (user, client, campaign); without force_create a webhook with the same scope, target and URL is updated instead",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(CreateWebhook, { webhook_url: "https://hooks.example.com/salvo", association_type: "user", name: "All replies", event_types: ["EMAIL_REPLY"] }) },
    responses: { 200: json(CreateAnswer, "The webhook (secret only when one was created)"), ...errorResponses(400, 401, 404, 422, 429, 503) },
  }),
  update: createRoute({
    method: "put",
    path: "/api/v1/webhook/update/{id}",
    operationId: "updateWebhook",
    description: "Changes name, URL, kinds or categories; scope and target are fixed (ignored if sent).",
    tags: tag,
    summary: "Update a webhook's name, URL, kinds or categories (scope and target are fixed)",
    security: API_KEY_SECURITY,
    request: { params: IdParams, body: jsonBody(UpdateWebhook, { name: "Replies and bounces", event_types: ["EMAIL_REPLY", "EMAIL_BOUNCE"] }) },
    responses: { 200: json(UpdateAnswer, "Saved"), ...errorResponses(401, 404, 422, 429, 503) },
  }),
  deleteByBody: createRoute({
    method: "delete",
    path: "/api/v1/webhook/delete",
    operationId: "deleteWebhookByBody",
    description: "Deletes the webhook `{id}` named in the body; queued deliveries are still tried.",
    tags: tag,
    summary: "Delete the webhook named in the body (deliveries already queued are still tried)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(z.object({ id: bodyId }), { id: 1 }) },
    responses: { 200: json(Ok, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  deleteByPath: createRoute({
    method: "delete",
    path: "/api/v1/webhook/delete/{id}",
    operationId: "deleteWebhookById",
    description: "Deletes a webhook of any scope.",
    tags: tag,
    summary: "Delete a webhook",
    security: API_KEY_SECURITY,
    request: { params: IdParams },
    responses: { 200: json(Ok, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/api/v1/webhooks",
    operationId: "listWebhooks",
    description: "Every webhook the key sees, of every scope, narrowed by `association_type`, `client_id`, `email_campaign_id`; paged by `offset`/`limit` or `starting_after`.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "The caller's webhooks of every scope, narrowed by scope and target",
    security: API_KEY_SECURITY,
    request: {
      query: z.object({
        association_type: AssociationType.optional(),
        client_id: queryId().optional(),
        email_campaign_id: queryId().optional(),
        ...PageQuery,
      }),
    },
    responses: { 200: json(z.array(Webhook), "Bare array of webhooks"), ...errorResponses(401, 422, 429) },
  }),
  bcCreate: createRoute({
    method: "post",
    path: "/api/v1/webhooks",
    operationId: "createWebhookShort",
    description: "`{name, url, events, client_id?}`: client scope with `client_id`, else user scope; otherwise `webhook/create`'s rules.",
    tags: tag,
    summary: "Create a webhook: client scope with client_id, else user scope (webhook/create's rules)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(BcCreate, { name: "Replies", url: "https://hooks.example.com/salvo", events: ["EMAIL_REPLY"] }) },
    responses: { 200: json(CreateAnswer, "The webhook (secret only when one was created)"), ...errorResponses(400, 401, 422, 429, 503) },
  }),
  bcUpdate: createRoute({
    method: "patch",
    path: "/api/v1/webhooks/{id}",
    operationId: "updateWebhookShort",
    description: "`{name?, url?, events?}`, `webhook/update`'s rules.",
    tags: tag,
    summary: "Update a webhook (webhook/update's rules)",
    security: API_KEY_SECURITY,
    request: { params: IdParams, body: jsonBody(BcUpdate, { events: ["EMAIL_REPLY", "EMAIL_OPEN"] }) },
    responses: { 200: json(UpdateAnswer, "Saved"), ...errorResponses(401, 404, 422, 429, 503) },
  }),
  bcDelete: createRoute({
    method: "delete",
    path: "/api/v1/webhooks/{id}",
    operationId: "deleteWebhook",
    description: "Deletes a webhook of any scope.",
    tags: tag,
    summary: "Delete a webhook",
    security: API_KEY_SECURITY,
    request: { params: IdParams },
    responses: { 200: json(Ok, "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  rotateSecret: createRoute({
    method: "post",
    path: "/api/v1/webhook/{id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    description: "Replaces any webhook's signing secret (answered once); for 24 h deliveries carry the old signature beside the new.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "Replace a webhook's signing secret, any scope (shown once); for 24 h deliveries carry the old signature beside the new",
    security: API_KEY_SECURITY,
    request: { params: IdParams },
    responses: { 200: json(z.object({ ok: z.boolean(), secret: z.string() }), "The new signing secret"), ...errorResponses(401, 404, 422, 429, 503) },
  }),
  deliveries: createRoute({
    method: "get",
    path: "/api/v1/webhook/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    description: "The webhook's deliveries, newest first, each with its attempts (status code, response time, error) and next retry: `limit` (1–100), `before` cursor, `status`.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "A webhook's deliveries, newest first, each with its attempts (status code, response time) and next retry",
    security: API_KEY_SECURITY,
    request: {
      params: IdParams,
      query: z.object({
        limit: queryCount(1, 100).optional(),
        before: queryId().optional().openapi({ description: "Paging cursor: only deliveries older than this delivery id (the previous page's next_before)" }),
        status: z.enum(["pending", "delivered", "failed"]).optional(),
      }),
    },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: z.array(Delivery), next_before: z.number().int().nullable() }), "Deliveries"),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
  delivery: createRoute({
    method: "get",
    path: "/api/v1/webhook/{id}/deliveries/{delivery_id}",
    operationId: "getWebhookDelivery",
    description: "One delivery with its payload and every attempt.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "One delivery with its payload and attempts",
    security: API_KEY_SECURITY,
    request: { params: DeliveryParams },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: Delivery.extend({ payload: z.record(z.string(), z.unknown()) }) }), "The delivery"),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
  redeliver: createRoute({
    method: "post",
    path: "/api/v1/webhook/{id}/deliveries/{delivery_id}/redeliver",
    operationId: "redeliverWebhookDelivery",
    description: "Sends a settled (delivered or failed) delivery again now with the same `webhook-id`. Still pending, or the webhook disabled → 400.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "Send a settled delivery (delivered or failed) again, same webhook-id, now",
    security: API_KEY_SECURITY,
    request: { params: DeliveryParams },
    responses: {
      200: json(z.object({ ok: z.boolean(), success: z.boolean(), message: z.string(), data: z.object({ delivery_id: z.number().int(), status: z.string() }) }), "Queued"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
};

interface CreateInput extends KindAndCategoryInput {
  webhook_url: string;
  association_type: WebhookScope;
  email_campaign_id?: number;
  campaign_id?: number;
  client_id?: number | null;
  name?: string;
  webhook_name?: string;
  webhook_type?: string | null;
  force_create?: boolean;
  secret_key?: string | null;
}

/** The URL under the outbound rule (lookup included) and section 5's, or the 422 naming why. */
async function checkedUrl(c: Context<AppEnv>, url: string, path: string): Promise<string> {
  const problem = await checkUrl(url, urlPolicy(config(c.env)), WEBHOOK_URL_RULES);
  if (problem) throw ApiError.validation([{ path, message: `webhook_url ${problem}` }]);
  return url;
}

/** A client id the caller may name: a client key's own, or one of the account's clients; else 400. */
async function callersClient(db: Database, principal: Principal, requested: number): Promise<number> {
  const known = principal.clientId === null ? await accountHasClient(db, principal.accountId, requested) : requested === principal.clientId;
  if (!known) throw ApiError.badRequest("Client not found");
  return requested;
}

/**
 * The scope's target, checked against the caller (CONTRACT section 14). Every id the body names is
 * checked, even one the scope does not use, so a foreign id is refused rather than silently dropped.
 */
async function targetOf(db: Database, principal: Principal, body: CreateInput): Promise<WebhookTargetKey> {
  const requestedCampaign = body.email_campaign_id ?? body.campaign_id;
  const campaign = requestedCampaign === undefined ? null : await findCampaign(db, principal, requestedCampaign);
  const named = body.client_id == null ? null : await callersClient(db, principal, body.client_id);
  const key = { accountId: principal.accountId, associationType: body.association_type, clientId: null, campaignId: null };
  switch (body.association_type) {
    case "user":
      if (principal.clientId !== null) throw ApiError.unauthorized(UNAUTHORIZED_USER_SCOPE);
      return key;
    case "client": {
      const clientId = named ?? principal.clientId;
      if (clientId === null) throw ApiError.validation([{ path: "client_id", message: "client_id is required for a client webhook" }]);
      return { ...key, clientId };
    }
    case "campaign":
      if (campaign === null) throw ApiError.validation([{ path: "email_campaign_id", message: "email_campaign_id is required for a campaign webhook" }]);
      return { ...key, campaignId: campaign.id };
  }
}

async function createWebhook(c: Context<AppEnv>, body: CreateInput) {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const url = await checkedUrl(c, body.webhook_url, "webhook_url");
  const target = await targetOf(db, principal, body);
  const names = await categoryNames(db, principal.accountId);
  const kinds = checkKinds(requestedKinds(body) ?? [], target.associationType);
  const categoryIds = resolveCategories(requestedCategories(body) ?? [], names);
  const name = body.name ?? body.webhook_name;
  const now = new Date();
  const similar = body.force_create ? undefined : await findSimilarWebhook(db, target, url);
  if (similar) {
    const secretKey = body.secret_key === undefined ? {} : { secretKeyCiphertext: await sealSecretKey(config(c.env).secretsKey, similar.id, body.secret_key) };
    const row = await updateWebhook(db, similar.id, {
      ...(name !== undefined && { name }),
      ...(body.webhook_type !== undefined && { webhookType: body.webhook_type }),
      eventTypes: kinds,
      categoryIds,
      ...secretKey,
      updatedAt: now,
    });
    return { ok: true, id: row.id, webhook_url: row.url, data: presentWebhook(row, names) };
  }
  const { row, secret } = await insertWebhook(
    db,
    config(c.env).secretsKey,
    {
      accountId: principal.accountId,
      associationType: target.associationType,
      clientId: target.clientId,
      campaignId: target.campaignId,
      webhookType: body.webhook_type ?? null,
      // Inferred default: the hosted docs name none.
      name: name ?? "Webhook",
      url,
      eventTypes: kinds,
      categoryIds,
      createdAt: now,
      updatedAt: now,
    },
    body.secret_key ?? null,
  );
  return { ok: true, id: row.id, webhook_url: row.url, data: presentWebhook(row, names), secret };
}

interface UpdateInput extends KindAndCategoryInput {
  name?: string;
  webhook_name?: string;
  webhook_url?: string;
  webhook_type?: string | null;
  secret_key?: string | null;
}

async function saveWebhook(c: Context<AppEnv>, id: number, body: UpdateInput) {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const webhook = await findWebhook(db, principal, id);
  const names = await categoryNames(db, principal.accountId);
  const kinds = requestedKinds(body);
  const categories = requestedCategories(body);
  const name = body.name ?? body.webhook_name;
  const row = await updateWebhook(db, webhook.id, {
    ...(name !== undefined && { name }),
    ...(body.webhook_url !== undefined && { url: await checkedUrl(c, body.webhook_url, "webhook_url") }),
    ...(body.webhook_type !== undefined && { webhookType: body.webhook_type }),
    ...(kinds !== undefined && { eventTypes: checkKinds(kinds, webhook.associationType) }),
    ...(categories !== undefined && { categoryIds: resolveCategories(categories, names) }),
    ...(body.secret_key !== undefined && { secretKeyCiphertext: await sealSecretKey(config(c.env).secretsKey, webhook.id, body.secret_key) }),
    updatedAt: new Date(),
  });
  return { ok: true, id: row.id, message: "Webhook saved successfully", data: presentWebhook(row, names) };
}

async function removeWebhook(c: Context<AppEnv>, id: number) {
  const db = database(c.env.DB);
  const webhook = await findWebhook(db, c.get("principal"), id);
  await deleteWebhook(db, webhook.id, Date.now());
  return { ok: true };
}

type DeliveryRow = Awaited<ReturnType<typeof findDelivery>>;
type AttemptRow = Awaited<ReturnType<typeof webhookDeliveryLog>>["attempts"][number];

function presentDelivery(row: DeliveryRow, attempts: AttemptRow[]) {
  const at = (value: Date | null) => (value === null ? null : iso(value.getTime()));
  return {
    id: row.id,
    webhook_id: row.webhookId,
    event_type: row.eventType,
    campaign_id: row.campaignId,
    message_id: row.messageId,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    last_attempt_at: at(row.lastAttemptAt),
    next_retry_at: row.status === "pending" ? at(row.nextAttemptAt) : null,
    delivered_at: at(row.deliveredAt),
    created_at: iso(row.createdAt.getTime()),
    attempt_log: attempts
      .filter((attempt) => attempt.deliveryId === row.id)
      .map((attempt) => ({
        attempted_at: iso(attempt.attemptedAt.getTime()),
        status_code: attempt.statusCode,
        outcome: attempt.outcome,
        error: attempt.error,
        response_time_ms: attempt.durationMs,
      })),
  };
}

const DEFAULT_LOG_PAGE = 20;

export const globalWebhookRoutes = createRouter();

globalWebhookRoutes.openapi(routes.create, async (c) => c.json(await createWebhook(c, c.req.valid("json")), 200));

globalWebhookRoutes.openapi(routes.update, async (c) => c.json(await saveWebhook(c, c.req.valid("param").id, c.req.valid("json")), 200));

globalWebhookRoutes.openapi(routes.deleteByBody, async (c) => c.json(await removeWebhook(c, c.req.valid("json").id), 200));

globalWebhookRoutes.openapi(routes.deleteByPath, async (c) => c.json(await removeWebhook(c, c.req.valid("param").id), 200));

globalWebhookRoutes.openapi(routes.list, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const query = c.req.valid("query");
  const rows = await listWebhooks(
    db,
    principal,
    { associationType: query.association_type, clientId: query.client_id, campaignId: query.email_campaign_id },
    query,
  );
  const names = await categoryNames(db, principal.accountId);
  return c.json(
    rows.map((row) => presentWebhook(row, names)),
    200,
  );
});

globalWebhookRoutes.openapi(routes.bcCreate, async (c) => {
  const body = c.req.valid("json");
  const clientId = body.client_id ?? null;
  const scope: WebhookScope = clientId === null ? "user" : "client";
  const events: WebhookEventKind[] = body.events;
  return c.json(
    await createWebhook(c, {
      webhook_url: body.url,
      association_type: scope,
      client_id: clientId,
      name: body.name,
      event_types: events,
      force_create: body.force_create,
    }),
    200,
  );
});

globalWebhookRoutes.openapi(routes.bcUpdate, async (c) => {
  const body = c.req.valid("json");
  return c.json(await saveWebhook(c, c.req.valid("param").id, { name: body.name, webhook_url: body.url, event_types: body.events }), 200);
});

globalWebhookRoutes.openapi(routes.bcDelete, async (c) => c.json(await removeWebhook(c, c.req.valid("param").id), 200));

globalWebhookRoutes.openapi(routes.rotateSecret, async (c) => {
  const db = database(c.env.DB);
  const webhook = await findWebhook(db, c.get("principal"), c.req.valid("param").id);
  return c.json({ ok: true, secret: await rotateSigningSecret(db, config(c.env).secretsKey, webhook.id, Date.now()) }, 200);
});

globalWebhookRoutes.openapi(routes.deliveries, async (c) => {
  const db = database(c.env.DB);
  const webhook = await findWebhook(db, c.get("principal"), c.req.valid("param").id);
  const query = c.req.valid("query");
  const limit = query.limit ?? DEFAULT_LOG_PAGE;
  const { deliveries, attempts } = await webhookDeliveryLog(db, webhook.id, { limit, before: query.before, status: query.status });
  const data = deliveries.map((row) => presentDelivery(row, attempts));
  return c.json({ ok: true, data, next_before: deliveries.length === limit ? deliveries[deliveries.length - 1]!.id : null }, 200);
});

globalWebhookRoutes.openapi(routes.delivery, async (c) => {
  const db = database(c.env.DB);
  const { id, delivery_id } = c.req.valid("param");
  const webhook = await findWebhook(db, c.get("principal"), id);
  const { delivery, attempts } = await findDeliveryWithAttempts(db, webhook.id, delivery_id);
  const payload = await withPayloadBodies(c.env.BODIES, delivery.accountId, delivery.payload);
  return c.json({ ok: true, data: { ...presentDelivery(delivery, attempts), payload } }, 200);
});

globalWebhookRoutes.openapi(routes.redeliver, async (c) => {
  const db = database(c.env.DB);
  const { id, delivery_id } = c.req.valid("param");
  const webhook = await findWebhook(db, c.get("principal"), id);
  const row = await findDelivery(db, webhook.id, delivery_id);
  if (webhook.disabledAt !== null) throw ApiError.badRequest("Webhook is disabled (its receiver answered 410 Gone)");
  if (row.status === "pending") throw ApiError.badRequest("Delivery is already pending");
  if (!(await redeliver(c.env, row.id))) throw ApiError.badRequest("Delivery is already pending");
  return c.json({ ok: true, success: true, message: "Delivery queued", data: { delivery_id: row.id, status: "pending" } }, 200);
});
