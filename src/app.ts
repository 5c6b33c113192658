import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { config } from "./config";
import type { AppEnv } from "./platform/env";
import { apiKeyAuth } from "./keys/auth";
import { KEY_PREFIX } from "./keys/rules";
import { apiAuth } from "./sessions/auth";
import { sessionRoutes } from "./sessions/routes";
import { ApiError } from "./platform/errors";
import { isAccountMoving } from "./platform/db-errors";
import { MOVE_RETRY_SECONDS } from "./platform/moving";
import { accessLog, log } from "./platform/logging";
import { emptyBodyIsNoBody, validationHook } from "./platform/validation";
import { accountRoutes } from "./accounts/routes";
import { adminRoutes } from "./accounts/admin-routes";
import { engineAdminRoutes } from "./mailbox-agent/admin-routes";
import { moveAdminRoutes } from "./moves/admin-routes";
import { metricsRoutes } from "./ops/metrics-routes";
import { seedMailboxRoutes } from "./deliverability/seed-routes";
import { campaignFeatureRoutes } from "./campaigns/index";
import { analyticsRoutes } from "./analytics/routes";
import { eventRoutes } from "./events/routes";
import { leadRoutes } from "./leads/routes";
import { conversationRoutes, inboxRoutes } from "./inbox/index";
import { leadLiteralRoutes, leadOperationRoutes } from "./leads/index";
import { blockListRoutes } from "./leads/block-list-routes";
import { campaignAnalyticsRoutes } from "./analytics/campaign-routes";
import { globalAnalyticsRoutes } from "./analytics/global-routes";
import { peopleAnalyticsRoutes } from "./analytics/people-routes";
import { clientKeyRoutes } from "./keys/client-key-routes";
import { clientRoutes } from "./clients/routes";
import { clientAssignRoutes } from "./clients/assign-routes";
import { clientDetailRoutes } from "./clients/detail-routes";
import { opsRoutes } from "./ops/routes";
import { apiDocument } from "./ops/openapi-document";
import { rateLimitRoutes } from "./keys/rate-limit-routes";
import { webhookRoutes } from "./webhooks/routes";
import { globalWebhookRoutes } from "./webhooks/global-routes";
import { deliverabilityRoutes } from "./deliverability/index";
import { savedSearchRoutes } from "./prospect/routes";
import { sequenceRoutes } from "./sequences/routes";
import { mailboxFeatureRoutes } from "./mailboxes/index";
import { oauthRoutes } from "./oauth/routes";
import { oauthCallbackRoutes } from "./oauth/callback-routes";
import { trackingRoutes } from "./tracking/routes";
import { replyRoutes } from "./replies/reply-routes";
import { forwardRoutes } from "./replies/forward-routes";
import { singleEmailRoutes } from "./manual-mail/single-routes";
import { testEmailRoutes } from "./test-email/routes";
import { leadListFeatureRoutes } from "./lead-lists/index";
import { crmTagRoutes } from "./lead-lists/crm-tag-routes";
import { untrackedReplyRoutes } from "./replies/untracked-routes";
import { SecretsKeyError } from "./platform/crypto";
import { UnknownShardError } from "./platform/shards";
import { mcpRoutes } from "./mcp/routes";
import { categoryRoutes } from "./triage/category-routes";
import { promptRoutes } from "./triage/prompt-routes";
import { triageRoutes } from "./triage/routes";
import { verificationRoutes } from "./verification/index";

const MAX_BODY_BYTES = 1024 * 1024;
const MAINTENANCE_RETRY_AFTER_SECONDS = 300;

const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const given = c.req.header("X-Request-Id");
  const id = given && /^[\w.-]{1,128}$/.test(given) ? given : crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
});

/** Operations routes (/health, /docs, /openapi.json) stay up during maintenance so operators can see it. */
const maintenance = createMiddleware<AppEnv>(async (c, next) => {
  if (config(c.env).maintenance) throw ApiError.unavailable(MAINTENANCE_RETRY_AFTER_SECONDS);
  await next();
});

const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw ApiError.badRequest("Request body exceeds 1 MiB");
  },
});

/** Hono's own exceptions (malformed JSON, wrong media type) are client errors with the contract's 400 body. */
function fromHttpException(error: HTTPException): ApiError {
  if (error.status === 415) return ApiError.badRequest("Request body must be JSON (Content-Type: application/json)");
  if (error.status < 500) return ApiError.badRequest(error.message || "Bad request");
  return new ApiError(error.status, { error: error.message });
}

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ strict: false, defaultHook: validationHook });

  app.use("*", requestId, accessLog(Object.values(KEY_PREFIX)));
  app.use("/api/*", maintenance, limitBody);
  app.use("/admin/*", maintenance, limitBody, emptyBodyIsNoBody);
  // An API key, or a web app session cookie on requests from the app's own pages (src/sessions/).
  app.use("/api/v1/*", apiAuth, emptyBodyIsNoBody);
  app.use("/mcp", maintenance, limitBody, apiKeyAuth);

  app.route("/", opsRoutes);
  app.route("/", adminRoutes);
  app.route("/", engineAdminRoutes);
  app.route("/", moveAdminRoutes);
  app.route("/", metricsRoutes);
  app.route("/", seedMailboxRoutes);
  app.route("/", sessionRoutes);
  app.route("/", accountRoutes);
  app.route("/", clientRoutes);
  app.route("/", clientAssignRoutes);
  app.route("/", clientKeyRoutes);
  // After the client keys: `/client/api-key` is a literal path, never a client id.
  app.route("/", clientDetailRoutes);
  // Before the lead routes: `/leads/verify` is a literal segment, never a lead id.
  app.route("/", verificationRoutes);
  app.route("/", leadLiteralRoutes);
  // Literal `/leads/categories` paths: before `/leads/{lead_id}` (C9).
  app.route("/", categoryRoutes);
  app.route("/", promptRoutes);
  app.route("/", triageRoutes);
  // Before the campaign routes: `/leads/get-domain-block-list` and its siblings are literal segments, never a lead id.
  app.route("/", blockListRoutes);
  app.route("/", leadListFeatureRoutes);
  app.route("/", crmTagRoutes);
  app.route("/", campaignAnalyticsRoutes);
  app.route("/", globalAnalyticsRoutes);
  app.route("/", peopleAnalyticsRoutes);
  // Campaigns and what hangs off them: analytics, events, leads, then the campaign itself.
  app.route("/", analyticsRoutes);
  app.route("/", eventRoutes);
  app.route("/", leadRoutes);
  app.route("/", campaignFeatureRoutes);
  app.route("/", rateLimitRoutes);
  // Literal before the inbox's `/master-inbox/{id}` (C9).
  app.route("/", untrackedReplyRoutes);
  app.route("/", inboxRoutes);
  app.route("/", webhookRoutes);
  app.route("/", globalWebhookRoutes);
  app.route("/", deliverabilityRoutes);
  app.route("/", savedSearchRoutes);
  app.route("/", sequenceRoutes);
  // Before the mailbox routes: `/email-accounts/save-oauth` and `/email-accounts/oauth/...` are literal paths.
  app.route("/", oauthRoutes);
  app.route("/", mailboxFeatureRoutes);
  app.route("/", replyRoutes);
  app.route("/", forwardRoutes);
  app.route("/", singleEmailRoutes);
  app.route("/", testEmailRoutes);
  app.route("/", conversationRoutes);
  // Last: its `/leads/{lead_id}` routes must not catch the literal `/leads/<name>` paths above (C9).
  app.route("/", leadOperationRoutes);
  // The links in emails: outside /api/v1 (no API key) and outside the OpenAPI document.
  app.route("/", trackingRoutes);
  // The OAuth consent's callback: a page for the person's browser, outside /api/v1 and the document.
  app.route("/", oauthCallbackRoutes);
  // The API as MCP tools; each tool call is a request to this app, through the routes above.
  app.route("/", mcpRoutes(app.fetch));

  // Three ways to present one key; the headers are recommended, as URLs end up in logs.
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "Recommended: the API key in the X-API-Key header.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyBearer", {
    type: "http",
    scheme: "bearer",
    description: "The API key as a bearer token: Authorization: Bearer <key>.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyAuth", {
    type: "apiKey",
    in: "query",
    name: "api_key",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "SessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "__Host-salvo_session",
    description: "The web app's session (POST /api/v1/sessions), on requests from the app's own pages only; `salvo_session` on plain http to loopback.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "AdminBearer", { type: "http", scheme: "bearer" });
  // Built per request from the registry (cheap), so the servers entry is the caller's own origin.
  app.get("/openapi.json", (c) => c.json(apiDocument(app, new URL(c.req.url).origin)));

  app.notFound((c) => c.json({ error: "Not found" }, 404));

  app.onError((error, c) => {
    const apiError =
      error instanceof ApiError ? error : error instanceof HTTPException ? fromHttpException(error) : isAccountMoving(error) ? ApiError.unavailable(MOVE_RETRY_SECONDS) : null;
    if (apiError) return c.json(apiError.body, apiError.status, apiError.headers);
    // An id from a shard this deployment does not bind names nothing here.
    if (error instanceof UnknownShardError) return c.json({ error: "Not found" }, 404);
    // Never store a secret unencrypted: without a usable SECRETS_KEY, routes that store one refuse.
    if (error instanceof SecretsKeyError) {
      log("error", error.message, { request_id: c.get("requestId") });
      return c.json({ error: "Credential storage is not configured" }, 503);
    }
    log("error", error.message, { request_id: c.get("requestId"), stack: error.stack });
    return c.json({ error: "Internal server error", request_id: c.get("requestId") }, 500);
  });

  return app;
}
