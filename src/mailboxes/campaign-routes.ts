import { config } from "../config";
import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, json, jsonBody, pathId, queryBoolean, errorResponses } from "../platform/openapi";
import { wakeMailboxes } from "./wake";
import { distinct } from "./rules";
import { attachMailboxes, campaignMailboxes, detachMailboxes } from "./store";
import { EmailAccount, Ack, CampaignParams, CampaignMailboxes } from "./schemas";
import { MAILBOX_TAG, ack, presentRows } from "./shared";
import { namedMailboxes } from "./shared";

// Schemas.

const tag = MAILBOX_TAG;
const security = API_KEY_SECURITY;
const routes = {
  campaignList: createRoute({
    method: "get",
    path: "/api/v1/campaigns/{campaign_id}/email-accounts",
    operationId: "listCampaignEmailAccounts",
    description: "The mailboxes the campaign sends through (bare array); `include_tags` adds tags.",
    tags: tag,
    summary: "The mailboxes a campaign sends through",
    security,
    request: { params: CampaignParams, query: z.object({ include_tags: queryBoolean.optional() }) },
    responses: { 200: json(z.array(EmailAccount), "Bare array"), ...errorResponses(401, 404, 422, 429) },
  }),
  campaignAttach: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/email-accounts",
    operationId: "attachCampaignEmailAccounts",
    description: "Attaches mailboxes (`email_account_ids` 1–100, or one `email_account_id`); already attached is a no-op. A mailbox the caller cannot see → 400.",
    tags: tag,
    summary: "Attach mailboxes to a campaign",
    security,
    request: { params: CampaignParams, body: jsonBody(CampaignMailboxes, { email_account_ids: [1] }) },
    responses: {
      200: json(Ack.extend({ data: z.object({ email_account_ids: z.array(z.number().int()) }) }), "Every mailbox now attached"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
  campaignDetach: createRoute({
    method: "delete",
    path: "/api/v1/campaigns/{campaign_id}/email-accounts",
    operationId: "detachCampaignEmailAccounts",
    description: "Detaches the mailboxes named in the body; not attached is a no-op.",
    tags: tag,
    summary: "Detach mailboxes from a campaign",
    security,
    request: { params: CampaignParams, body: jsonBody(CampaignMailboxes, { email_account_ids: [1] }) },
    responses: { 200: json(Ack, "Detached"), ...errorResponses(401, 404, 422, 429) },
  }),
  campaignDetachOne: createRoute({
    method: "delete",
    path: "/api/v1/campaigns/{campaign_id}/email-accounts/{email_account_id}",
    operationId: "detachCampaignEmailAccount",
    description: "Detaches one mailbox; not attached is a no-op.",
    tags: tag,
    summary: "Detach one mailbox from a campaign",
    security,
    request: { params: z.object({ campaign_id: pathId("campaign_id"), email_account_id: pathId("email_account_id") }) },
    responses: { 200: json(Ack, "Detached"), ...errorResponses(401, 404, 422, 429) },
  }),
};

export const campaignMailboxRoutes = createRouter();

campaignMailboxRoutes.openapi(routes.campaignList, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const rows = await campaignMailboxes(db, campaign.id);
  return c.json(await presentRows(db, principal, config(c.env).warmup, rows, c.req.valid("query").include_tags === true), 200);
});

function idsOf(body: z.infer<typeof CampaignMailboxes>): number[] {
  if (body.email_account_ids !== undefined) return body.email_account_ids;
  if (body.email_account_id !== undefined) return [body.email_account_id];
  throw ApiError.validation([{ path: "email_account_ids", message: "email_account_ids (or email_account_id) is required" }]);
}

campaignMailboxRoutes.openapi(routes.campaignAttach, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const ids = await namedMailboxes(db, principal, idsOf(c.req.valid("json")), undefined);
  const attached = await attachMailboxes(db, campaign.id, ids);
  if (campaign.status === "ACTIVE") await wakeMailboxes(c.env, ids);
  return c.json({ ...ack("Email accounts added to the campaign"), data: { email_account_ids: attached } }, 200);
});

campaignMailboxRoutes.openapi(routes.campaignDetach, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  await detachMailboxes(db, campaign.id, distinct(idsOf(c.req.valid("json"))));
  return c.json(ack("Email accounts removed from the campaign"), 200);
});

campaignMailboxRoutes.openapi(routes.campaignDetachOne, async (c) => {
  const db = database(c.env.DB);
  const { campaign_id, email_account_id } = c.req.valid("param");
  const campaign = await findCampaign(db, c.get("principal"), campaign_id);
  await detachMailboxes(db, campaign.id, [email_account_id]);
  return c.json(ack("Email account removed from the campaign"), 200);
});

