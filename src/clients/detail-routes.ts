import { createRoute, z } from "@hono/zod-openapi";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryBoolean } from "../platform/openapi";
import { requireAccountKey, type Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { accountOAuthAppIds, clientOfAccount, codeIntegrationsOf, deleteCodeIntegration, insertCodeIntegration, updateCodeIntegration } from "./store";

// Schemas.

const CLIENT_NOT_FOUND = "Client not found or does not belong to the user";
const INTEGRATION_NOT_FOUND = "Code integration not found";

const CodeIntegration = z.object({ id: z.number().int(), snippet_name: z.string(), snippet_code: z.string() }).openapi("ClientCodeIntegration");

const ClientDetails = z
  .object({
    id: z.number().int(),
    uuid: z.string(),
    name: z.string(),
    email: z.string(),
    logo: z.null(),
    user_id: z.number().int(),
    created_at: z.string(),
    logo_url: z.null(),
    is_credit_assigned: z.boolean(),
    mobile_device_id: z.null(),
    ga_view_access: z.boolean(),
    client_preferences: z.object({}),
    client_permissions: z.array(z.object({ permission: z.array(z.string()), retricted_category: z.array(z.number().int()) })).optional(),
    user_client_credit: z.null().optional(),
    client_code_integrations: z.array(CodeIntegration).optional(),
    user: z
      .object({
        gpt_api_info: z.null(),
        whitelabel_details: z.null(),
        display_whitelabel_credentials: z.boolean(),
        wl_google_client_id: z.string().nullable(),
        wl_microsoft_client_id: z.string().nullable(),
      })
      .optional(),
  })
  .openapi("ClientDetails");

const ClientParams = z.object({ id: pathId("id") });
const IntegrationParams = z.object({ client_id: pathId("client_id") });
const OneIntegrationParams = z.object({ client_id: pathId("client_id"), integration_id: pathId("integration_id") });

const SnippetName = z.string().trim().min(1).max(255);
const SnippetCode = z.string().min(1).max(100_000);
const NewIntegration = z.object({ snippet_name: SnippetName, snippet_code: SnippetCode }).openapi("NewClientCodeIntegration");
const IntegrationChange = z
  .object({ snippet_name: SnippetName.optional(), snippet_code: SnippetCode.optional() })
  .refine((body) => body.snippet_name !== undefined || body.snippet_code !== undefined, { message: "Give snippet_name or snippet_code" })
  .openapi("ClientCodeIntegrationChange");
const IntegrationSaved = z.object({ success: z.boolean(), ok: z.boolean(), data: z.object({ id: z.number().int() }) });

const tags = ["Clients"];
const security = API_KEY_SECURITY;
const ACCOUNT_ONLY = "Account key only (a client key → 401).";

const routes = {
  read: createRoute({
    method: "get",
    path: "/api/v1/client/{id}",
    operationId: "getClient",
    summary: "A client by id, with its permissions, credits, code snippets and white-label app ids when asked",
    description:
      `The hosted service's client read (CONTRACT 21.4). \`includePermissions\` adds \`client_permissions\` (always full access: Salvo has no per-client permissions), \`includeCredits\` adds \`user_client_credit:null\`, \`includeCodeIntegrations\` the client's stored snippets, \`includeWhitelabel\` the account-level OAuth apps' client ids (CONTRACT 18.1). An unknown id, or another account's → 404. ${ACCOUNT_ONLY}`,
    tags,
    security,
    request: {
      params: ClientParams,
      query: z.object({
        includePermissions: queryBoolean.optional(),
        includeCredits: queryBoolean.optional(),
        includeCodeIntegrations: queryBoolean.optional(),
        includeWhitelabel: queryBoolean.optional(),
      }),
    },
    responses: { 200: json(z.object({ ok: z.boolean(), data: ClientDetails }), "The client"), ...errorResponses(401, 404, 422, 429) },
  }),
  createIntegration: createRoute({
    method: "post",
    path: "/api/v1/client/{client_id}/code-integrations",
    operationId: "createClientCodeIntegration",
    summary: "Store a code snippet for a client (stored and listed only)",
    description: `Stores \`{snippet_name (1-255), snippet_code (1-100 000 characters)}\` for the client; \`GET /client/{id}?includeCodeIntegrations=true\` lists them. No white-label app runs them. ${ACCOUNT_ONLY}`,
    tags,
    security,
    request: { params: IntegrationParams, body: jsonBody(NewIntegration, { snippet_name: "Analytics", snippet_code: "<script>/* … */</script>" }) },
    responses: { 201: json(IntegrationSaved, "Stored"), ...errorResponses(401, 404, 422, 429) },
  }),
  updateIntegration: createRoute({
    method: "patch",
    path: "/api/v1/client/{client_id}/code-integrations/{integration_id}",
    operationId: "updateClientCodeIntegration",
    summary: "Change a client's code snippet (either field)",
    description: `Changes \`snippet_name\`, \`snippet_code\` or both (at least one, else 422). Unknown client or snippet → 404. ${ACCOUNT_ONLY}`,
    tags,
    security,
    request: { params: OneIntegrationParams, body: jsonBody(IntegrationChange, { snippet_code: "<script>/* v2 */</script>" }) },
    responses: { 200: json(IntegrationSaved, "Changed"), ...errorResponses(401, 404, 422, 429) },
  }),
  deleteIntegration: createRoute({
    method: "delete",
    path: "/api/v1/client/{client_id}/code-integrations/{integration_id}",
    operationId: "deleteClientCodeIntegration",
    summary: "Delete a client's code snippet",
    description: `Extension. Unknown client or snippet → 404. ${ACCOUNT_ONLY}`,
    "x-salvo-extension": true,
    tags,
    security,
    request: { params: OneIntegrationParams },
    responses: { 200: json(z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() }), "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
};

// Loading.

/** The account's client named in the path, for an account key only. */
async function ownClient(db: Database, principal: Principal, clientId: number) {
  requireAccountKey(principal);
  const row = await clientOfAccount(db, principal.accountId, clientId);
  if (!row) throw ApiError.refused(404, CLIENT_NOT_FOUND);
  return row;
}

const presentIntegration = (row: { id: number; snippetName: string; snippetCode: string }) => ({ id: row.id, snippet_name: row.snippetName, snippet_code: row.snippetCode });

export const clientDetailRoutes = createRouter();

clientDetailRoutes.openapi(routes.read, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const row = await ownClient(db, principal, c.req.valid("param").id);
  const query = c.req.valid("query");
  const apps = query.includeWhitelabel ? await accountOAuthAppIds(db, principal.accountId) : null;
  const integrations = query.includeCodeIntegrations ? await codeIntegrationsOf(db, row.id) : null;
  const data = {
    id: row.id,
    uuid: row.uuid!,
    name: row.name,
    email: row.email,
    logo: null,
    user_id: row.accountId,
    created_at: iso(row.createdAt),
    logo_url: null,
    is_credit_assigned: false,
    mobile_device_id: null,
    ga_view_access: false,
    client_preferences: {},
    ...(query.includePermissions && { client_permissions: [{ permission: ["full_access"], retricted_category: [] }] }),
    ...(query.includeCredits && { user_client_credit: null }),
    ...(integrations && { client_code_integrations: integrations.map(presentIntegration) }),
    ...(apps && {
      user: {
        gpt_api_info: null,
        whitelabel_details: null,
        display_whitelabel_credentials: apps.google !== null || apps.microsoft !== null,
        wl_google_client_id: apps.google,
        wl_microsoft_client_id: apps.microsoft,
      },
    }),
  };
  return c.json({ ok: true, data }, 200);
});

clientDetailRoutes.openapi(routes.createIntegration, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const client = await ownClient(db, principal, c.req.valid("param").client_id);
  const body = c.req.valid("json");
  const row = await insertCodeIntegration(db, principal.accountId, client.id, { snippetName: body.snippet_name, snippetCode: body.snippet_code });
  return c.json({ success: true, ok: true, data: { id: row.id } }, 201);
});

clientDetailRoutes.openapi(routes.updateIntegration, async (c) => {
  const db = database(c.env.DB);
  const { client_id, integration_id } = c.req.valid("param");
  const client = await ownClient(db, c.get("principal"), client_id);
  const body = c.req.valid("json");
  const row = await updateCodeIntegration(db, client.id, integration_id, {
    ...(body.snippet_name !== undefined && { snippetName: body.snippet_name }),
    ...(body.snippet_code !== undefined && { snippetCode: body.snippet_code }),
  });
  if (!row) throw ApiError.refused(404, INTEGRATION_NOT_FOUND);
  return c.json({ success: true, ok: true, data: { id: row.id } }, 200);
});

clientDetailRoutes.openapi(routes.deleteIntegration, async (c) => {
  const db = database(c.env.DB);
  const { client_id, integration_id } = c.req.valid("param");
  const client = await ownClient(db, c.get("principal"), client_id);
  const row = await deleteCodeIntegration(db, client.id, integration_id);
  if (!row) throw ApiError.refused(404, INTEGRATION_NOT_FOUND);
  return c.json({ ok: true, success: true, message: "Code integration deleted successfully" }, 200);
});
