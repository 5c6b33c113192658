import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody } from "../platform/openapi";
import { requireAccountKey } from "../platform/principal";
import { assignClient, clientOfAccount, refuseSubsequenceMove } from "./store";

/** `POST /campaigns/assign-client` (CONTRACT 21.1): a campaign, with its subsequences, changes client. */

const AssignClient = z
  .object({
    campaignId: BodyId,
    clientId: BodyId.nullable().openapi({ description: "The account's client, or null to take the campaign back to the account" }),
    applyClientDNC: z.boolean().optional().openapi({ description: "Also BLOCK now the live records the client's block list names (default false)" }),
  })
  .openapi("AssignCampaignClient");

const ClientAssigned = z
  .object({ ok: z.boolean(), message: z.string(), client: z.object({ id: z.number().int(), email: z.string() }).nullable() })
  .openapi("CampaignClientAssigned");

const assignRoute = createRoute({
  method: "post",
  path: "/api/v1/campaigns/assign-client",
  operationId: "assignCampaignClient",
  summary: "Assign a campaign (and its subsequences) to a client",
  description:
    "The campaign and its subsequences get `clientId` (null = the account's own again); the client's block-list entries apply to their " +
    "sends from then on, and `applyClientDNC: true` also BLOCKs the matching live records now; they leave the tags of their old scope. 400 `Cannot assign client to a sub sequence!`, " +
    "`Cannot assign the same client to the campaign` or `Client not found`; a client key → 401.",
  tags: ["Campaigns"],
  security: API_KEY_SECURITY,
  request: { body: jsonBody(AssignClient, { campaignId: 1, clientId: 2, applyClientDNC: false }) },
  responses: { 200: json(ClientAssigned, "The campaign's client now"), ...errorResponses(400, 401, 404, 422, 429) },
});

export const clientAssignRoutes = createRouter();

clientAssignRoutes.openapi(assignRoute, async (c) => {
  const principal = c.get("principal");
  requireAccountKey(principal);
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const campaign = await findCampaign(db, principal, body.campaignId);
  refuseSubsequenceMove(campaign);
  const client = body.clientId === null ? null : await clientOfAccount(db, principal.accountId, body.clientId);
  if (client === undefined) throw ApiError.badRequest("Client not found");
  if ((client?.id ?? null) === campaign.clientId) throw ApiError.badRequest("Cannot assign the same client to the campaign");
  await assignClient(db, campaign, client?.id ?? null, body.applyClientDNC === true, Date.now());
  return c.json({ ok: true, message: "success", client: client ? { id: client.id, email: client.email } : null }, 200);
});
