import { createRoute, z } from "@hono/zod-openapi";
import { config } from "../config";
import type { Context } from "hono";
import { database } from "../platform/db";
import { checkUrl, urlPolicy } from "../platform/outbound";
import { MAX_WEBHOOK_URL_LENGTH, WEBHOOK_URL_RULES } from "./delivery-rules";
import type { AppEnv } from "../platform/env";
import { findCampaign } from "../platform/access";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody, pathId, optionalJsonBody } from "../platform/openapi";
import { PageQuery } from "../platform/paging";
import { insertWebhook, rotateSigningSecret, sealSecretKey } from "./secrets";
import { checkKinds, EventKindName, presentWebhook, resolveCategories, Webhook } from "./shapes";
import {
  campaignWebhooks,
  categoryNames,
  deleteWebhook,
  deliveryCounts,
  findWebhook,
  retryFailedDeliveries,
  updateWebhook,
  type TimeWindow,
} from "./store";

const SaveWebhook = z
  .object({
    // C1: `"id": null` is a create, like no id.
    id: z.number().int().positive().nullable().optional(),
    name: z.string().trim().min(1).max(255).optional(),
    webhook_name: z.string().trim().min(1).max(255).optional(),
    webhook_url: z.string().max(MAX_WEBHOOK_URL_LENGTH),
    event_types: z.array(EventKindName).min(1).max(50),
    categories: z.array(z.union([z.number().int().positive(), z.string().trim().min(1).max(100)])).max(50).optional(),
    secret_key: z
      .string()
      .max(255)
      .nullable()
      .optional()
      .openapi({ description: "Your own token, echoed as `secret_key` in every delivery (never the signing secret); null or empty clears it, absent keeps it" }),
  })
  .refine((body) => body.name !== undefined || body.webhook_name !== undefined, {
    message: "name (or webhook_name) is required",
    path: ["name"],
  })
  .openapi("SaveWebhook");

const TimeRange = z.object({
  fromTime: instant().optional(),
  toTime: instant().optional(),
});

const CampaignParams = z.object({ campaign_id: pathId("campaign_id") });
const WebhookParams = z.object({ campaign_id: pathId("campaign_id"), webhook_id: pathId("webhook_id") });
const Counts = z.object({ total: z.number().int(), delivered: z.number().int(), failed: z.number().int(), pending: z.number().int() });

const tag = ["Webhooks"];
const routes = {
  read: createRoute({
    method: "get",
    path: "/api/v1/webhook/{id}",
    operationId: "getWebhook",
    description: "A webhook of any scope: `{ok, data: Webhook}` with `event_type_map`, `category_id_map` and their array forms.",
    tags: tag,
    summary: "Read a webhook",
    security: API_KEY_SECURITY,
    request: { params: z.object({ id: pathId("id") }) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: Webhook }), "The webhook"), ...errorResponses(401, 404, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/webhooks",
    operationId: "listCampaignWebhooks",
    description: "The campaign's campaign-scope webhooks as a bare array, by id.",
    tags: tag,
    summary: "A campaign's webhooks, by id",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, query: z.object(PageQuery) },
    responses: { 200: json(z.array(Webhook), "Bare array of webhooks"), ...errorResponses(401, 404, 422, 429) },
  }),
  save: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/webhooks",
    operationId: "saveCampaignWebhook",
    description: "Creates a campaign webhook (no `id`, or `id: null`) and answers its signing secret `whsec_…` once; with an `id`, updates it. " +
      "`webhook_url`: https, no credentials, no IP literal, no local-only name, at most 2048 characters (else 422). `event_types`: kinds " +
      "or their aliases (else 422 `Invalid event_types - <name>`). `categories` (ids or names) limit EMAIL_REPLY and LEAD_CATEGORY_UPDATED. " +
      "`secret_key` is your own token, echoed in payloads. 503 without SECRETS_KEY.",
    tags: tag,
    summary: "Create a webhook (no id; the signing secret is shown once) or update one (id)",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(SaveWebhook, { id: null, name: "CRM sync", webhook_url: "https://hooks.example.com/salvo", event_types: ["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED"], categories: [1, 2] }) },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: Webhook, secret: z.string().optional() }), "The saved webhook"),
      ...errorResponses(401, 404, 422, 429, 503),
    },
  }),
  deleteByBody: createRoute({
    method: "delete",
    path: "/api/v1/campaigns/{campaign_id}/webhooks",
    operationId: "deleteCampaignWebhookByBody",
    description: "Deletes the campaign webhook `{id}` named in the body.",
    tags: tag,
    summary: "Delete a webhook named in the body",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(z.object({ id: z.number().int().positive() }), { id: 1 }) },
    responses: { 200: json(z.object({ ok: z.boolean() }), "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  deleteByPath: createRoute({
    method: "delete",
    path: "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}",
    operationId: "deleteCampaignWebhook",
    description: "Deletes a campaign webhook; deliveries already queued are still tried.",
    tags: tag,
    summary: "Delete a webhook",
    security: API_KEY_SECURITY,
    request: { params: WebhookParams },
    responses: { 200: json(z.object({ ok: z.boolean() }), "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
  rotateSecret: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/rotate-secret",
    operationId: "rotateCampaignWebhookSecret",
    description: "Replaces the signing secret and answers the new one once; for 24 h deliveries carry both signatures, space-separated.",
    "x-salvo-extension": true,
    tags: tag,
    summary: "Replace the signing secret (shown once); for 24 h deliveries carry the old signature beside the new",
    security: API_KEY_SECURITY,
    request: { params: WebhookParams },
    responses: {
      200: json(z.object({ ok: z.boolean(), secret: z.string() }), "The new signing secret"),
      ...errorResponses(401, 404, 422, 429, 503),
    },
  }),
  summary: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/webhooks/summary",
    operationId: "getCampaignWebhookSummary",
    description: "Delivery counts of the campaign's webhooks by state and event kind, for `fromTime`..`toTime`; `total`, `success`, `failed` also at the top.",
    tags: tag,
    summary: "Delivery counts of a campaign's webhooks, by state and event kind",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, query: TimeRange },
    responses: {
      200: json(
        z.object({
          ok: z.boolean(),
          // C11: the vendor CLI's WebhookSummarySchema reads these at the top.
          total: z.number().int(),
          success: z.number().int().openapi({ description: "Delivered (= data.delivered)" }),
          failed: z.number().int(),
          data: Counts.extend({ by_event_type: z.record(z.string(), Counts) }),
        }),
        "Counts",
      ),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
  retrigger: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/webhooks/retrigger-failed-events",
    operationId: "retriggerFailedWebhookEvents",
    description: "Queues again every failed delivery of the campaign in `fromTime`..`toTime`; answers `{ok, requeued}`.",
    tags: tag,
    summary: "Send failed deliveries of a time range again",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(TimeRange, { fromTime: "2026-01-01T00:00:00Z", toTime: "2026-01-31T23:59:59Z" }) },
    responses: { 200: json(z.object({ ok: z.boolean(), requeued: z.number().int() }), "Requeued"), ...errorResponses(401, 404, 422, 429) },
  }),
  retriggerAlias: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/retrigger-webhooks",
    operationId: "retriggerWebhooks",
    description: "Alias of `webhooks/retrigger-failed-events`; without a body, every failed delivery of the campaign.",
    tags: tag,
    summary: "Alias of webhooks/retrigger-failed-events (the body may be left out: every failed delivery)",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: optionalJsonBody(TimeRange) },
    responses: { 200: json(z.object({ ok: z.boolean(), requeued: z.number().int() }), "Requeued"), ...errorResponses(401, 404, 422, 429) },
  }),
};

function timeWindow(range: z.infer<typeof TimeRange>): TimeWindow {
  return {
    from: range.fromTime ? Date.parse(range.fromTime) : 0,
    to: range.toTime ? Date.parse(range.toTime) : Number.MAX_SAFE_INTEGER,
  };
}

async function removeWebhook(c: Context<AppEnv>, campaignId: number, webhookId: number) {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), campaignId);
  const webhook = await findWebhook(db, c.get("principal"), webhookId, campaign.id);
  await deleteWebhook(db, webhook.id, Date.now());
}

export const webhookRoutes = createRouter();

webhookRoutes.openapi(routes.read, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const row = await findWebhook(db, principal, c.req.valid("param").id);
  return c.json({ ok: true, data: presentWebhook(row, await categoryNames(db, principal.accountId)) }, 200);
});

webhookRoutes.openapi(routes.list, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const rows = await campaignWebhooks(db, campaign.id, c.req.valid("query"));
  const names = await categoryNames(db, principal.accountId);
  return c.json(
    rows.map((row) => presentWebhook(row, names)),
    200,
  );
});

webhookRoutes.openapi(routes.save, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const problem = await checkUrl(body.webhook_url, urlPolicy(config(c.env)), WEBHOOK_URL_RULES);
  if (problem) throw ApiError.validation([{ path: "webhook_url", message: `webhook_url ${problem}` }]);
  const names = await categoryNames(db, principal.accountId);
  const fields = {
    name: (body.name ?? body.webhook_name)!,
    url: body.webhook_url,
    eventTypes: checkKinds([...new Set(body.event_types)], "campaign"),
    categoryIds: resolveCategories(body.categories ?? [], names),
  };
  const now = new Date();
  if (body.id != null) {
    const existing = await findWebhook(db, principal, body.id, campaign.id);
    // Left out, the stored secret_key stays.
    const secretKey = body.secret_key === undefined ? {} : { secretKeyCiphertext: await sealSecretKey(config(c.env).secretsKey, existing.id, body.secret_key) };
    const row = await updateWebhook(db, existing.id, { ...fields, ...secretKey, updatedAt: now });
    return c.json({ ok: true, data: presentWebhook(row, names) }, 200);
  }
  const { row, secret } = await insertWebhook(
    db,
    config(c.env).secretsKey,
    { ...fields, accountId: principal.accountId, associationType: "campaign", campaignId: campaign.id, createdAt: now, updatedAt: now },
    body.secret_key ?? null,
  );
  return c.json({ ok: true, data: presentWebhook(row, names), secret }, 200);
});

webhookRoutes.openapi(routes.deleteByBody, async (c) => {
  await removeWebhook(c, c.req.valid("param").campaign_id, c.req.valid("json").id);
  return c.json({ ok: true }, 200);
});

webhookRoutes.openapi(routes.deleteByPath, async (c) => {
  const { campaign_id, webhook_id } = c.req.valid("param");
  await removeWebhook(c, campaign_id, webhook_id);
  return c.json({ ok: true }, 200);
});

webhookRoutes.openapi(routes.rotateSecret, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const { campaign_id, webhook_id } = c.req.valid("param");
  const campaign = await findCampaign(db, principal, campaign_id);
  const webhook = await findWebhook(db, principal, webhook_id, campaign.id);
  const secret = await rotateSigningSecret(db, config(c.env).secretsKey, webhook.id, Date.now());
  return c.json({ ok: true, secret }, 200);
});

webhookRoutes.openapi(routes.summary, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const rows = await deliveryCounts(db, campaign.id, timeWindow(c.req.valid("query")));
  const empty = () => ({ total: 0, delivered: 0, failed: 0, pending: 0 });
  const totals = empty();
  const byType: Record<string, ReturnType<typeof empty>> = {};
  for (const row of rows) {
    const bucket = (byType[row.eventType] ??= empty());
    for (const counts of [totals, bucket]) {
      counts.total += row.n;
      counts[row.status] += row.n;
    }
  }
  return c.json({ ok: true, total: totals.total, success: totals.delivered, failed: totals.failed, data: { ...totals, by_event_type: byType } }, 200);
});

async function retrigger(c: Context<AppEnv>, campaignId: number, range: z.infer<typeof TimeRange>) {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), campaignId);
  // Same rows, same webhook-id: a receiver that did get an earlier attempt can still drop the repeat.
  const ids = await retryFailedDeliveries(c.env, campaign.id, timeWindow(range));
  return ids.length;
}

webhookRoutes.openapi(routes.retrigger, async (c) => {
  return c.json({ ok: true, requeued: await retrigger(c, c.req.valid("param").campaign_id, c.req.valid("json")) }, 200);
});

webhookRoutes.openapi(routes.retriggerAlias, async (c) => {
  return c.json({ ok: true, requeued: await retrigger(c, c.req.valid("param").campaign_id, c.req.valid("json") ?? {}) }, 200);
});
