import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, optionalJsonBody } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { deleteCampaign, duplicateCampaign, insertSubsequence, setTeamMember, subsequenceIdsOf } from "./lifecycle-store";
import { Ack, ack, bodyId, CampaignParams } from "./schemas";

const ACTIVE_DELETE = "Cannot delete an active campaign. Pause or stop it first.";

const Duplicate = z
  .object({
    duplicate_sub_sequence: z.boolean().optional().openapi({ description: "Default false" }),
    duplicate_client_label: z.boolean().optional().openapi({ description: "Default false: the copy belongs to no client" }),
  })
  .openapi("DuplicateCampaign");

const TeamMember = z
  .object({
    teamMemberId: bodyId.nullable().optional(),
    team_member_id: bodyId.nullable().optional().openapi({ description: "Alias of teamMemberId" }),
  })
  .openapi("SetCampaignTeamMember");

const subsequenceFields = {
  subsequence_name: z.string().trim().min(1).max(255).optional(),
  name: z.string().trim().min(1).max(255).optional().openapi({ description: "Alias of subsequence_name" }),
  condition_events: z.array(z.string().max(100)).max(50).optional().openapi({ description: "Stored, not acted on" }),
  trigger: z.string().max(100).optional().openapi({ description: "Stored, not acted on" }),
  trigger_seq_number: z.number().int().min(1).max(20).optional().openapi({ description: "Stored, not acted on" }),
};

const CreateSubsequence = z.object({ parent_campaign_id: bodyId, ...subsequenceFields }).openapi("CreateSubsequence");
const CreateSubsequenceOf = z.object(subsequenceFields).openapi("CreateSubsequenceOf");

const CreatedSubsequence = z
  .object({
    ok: z.boolean(),
    success: z.boolean(),
    id: z.number().int(),
    subsequence_id: z.number().int(),
    name: z.string(),
    created_at: z.string(),
  })
  .openapi("CreatedSubsequence");

const removeCampaign = createRoute({
  method: "delete",
  path: "/api/v1/campaigns/{campaign_id}",
  operationId: "deleteCampaign",
  description: "Deletes the campaign, its records, sequence, campaign-scope webhooks and mailbox links; the leads stay. ACTIVE → 400 " +
    "`Cannot delete an active campaign. Pause or stop it first.`",
  tags: ["Campaigns"],
  summary: "Delete a campaign with its records, sequence, webhooks and mailbox links (not while ACTIVE)",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams },
  responses: { 200: json(Ack, "Deleted"), ...errorResponses(400, 401, 404, 422, 429) },
});

const duplicate = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/duplicate",
  operationId: "duplicateCampaign",
  description: "Copies the campaign as DRAFTED `<name> (copy)` with its settings, schedule, sequence (new ids), mailboxes and tags, no leads and no " +
    "webhooks; `duplicate_client_label` keeps the client, `duplicate_sub_sequence` copies subsequences. Answers `{ok, newCampaignId, id}`.",
  tags: ["Campaigns"],
  summary: "Copy a campaign: DRAFTED, same settings, schedule, sequence, mailboxes and tags; no leads, no webhooks",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: optionalJsonBody(Duplicate) },
  responses: {
    200: json(z.object({ ok: z.boolean(), newCampaignId: z.number().int(), id: z.number().int() }), "The copy"),
    ...errorResponses(401, 404, 422, 429),
  },
});

const teamMember = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/team-member",
  operationId: "setCampaignTeamMember",
  description: "`{teamMemberId}` (or `team_member_id`), null clears. The inbox filter `campaignTeamMemberId` matches it.",
  tags: ["Campaigns"],
  summary: "Assign the campaign to a team member (null clears it)",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: jsonBody(TeamMember, { teamMemberId: 7 }) },
  responses: { 200: json(Ack, "Updated"), ...errorResponses(401, 404, 422, 429) },
});

const createSubsequence = createRoute({
  method: "post",
  path: "/api/v1/campaigns/create-subsequence",
  operationId: "createSubsequence",
  description: "Creates a DRAFTED campaign whose `parent_campaign_id` is the given campaign; leads enter it only through " +
    "`master-inbox/push-to-subsequence`. `condition_events` are stored, not acted on. Foreign parent → 404.",
  tags: ["Campaigns"],
  summary: "Create a subsequence (a DRAFTED campaign leads are pushed into) of a campaign",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(CreateSubsequence, { parent_campaign_id: 1, subsequence_name: "Interested follow-up" }) },
  responses: { 200: json(CreatedSubsequence, "The subsequence"), ...errorResponses(401, 404, 422, 429) },
});

const createSubsequenceOf = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/create-subsequence",
  operationId: "createCampaignSubsequence",
  description: "`create-subsequence` with the parent in the path (the form two clients use).",
  tags: ["Campaigns"],
  summary: "Create a subsequence of the campaign in the path",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, body: optionalJsonBody(CreateSubsequenceOf) },
  responses: { 200: json(CreatedSubsequence, "The subsequence"), ...errorResponses(401, 404, 422, 429) },
});

export const lifecycleRoutes = createRouter();

// Literal paths first: `create-subsequence` is never the campaign id of `{campaign_id}/…` routes.
lifecycleRoutes.openapi(createSubsequence, async (c) => {
  const body = c.req.valid("json");
  return c.json(await subsequence(c.env.DB, c.get("principal"), body.parent_campaign_id, body), 200);
});

lifecycleRoutes.openapi(removeCampaign, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  if (campaign.status === "ACTIVE" || !(await deleteCampaign(db, campaign.id))) throw ApiError.badRequest(ACTIVE_DELETE);
  return c.json(ack("Campaign deleted successfully"), 200);
});

lifecycleRoutes.openapi(duplicate, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  // Without a JSON body the validator hands over {}: every option at its default.
  const options = c.req.valid("json");
  // A client key's copy stays its client's, or the key could not see it.
  const clientId = principal.clientId ?? (options.duplicate_client_label ? campaign.clientId : null);
  const subsequenceIds = options.duplicate_sub_sequence ? await subsequenceIdsOf(db, campaign.id) : [];
  const id = await duplicateCampaign(c.env.DB, { source: campaign, clientId, subsequenceIds }, Date.now());
  return c.json({ ok: true, newCampaignId: id, id }, 200);
});

lifecycleRoutes.openapi(teamMember, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const memberId = body.teamMemberId !== undefined ? body.teamMemberId : body.team_member_id;
  if (memberId === undefined) throw ApiError.validation([{ path: "teamMemberId", message: "Required" }]);
  await setTeamMember(db, campaign.id, memberId);
  return c.json(ack("Team member updated"), 200);
});

lifecycleRoutes.openapi(createSubsequenceOf, async (c) => {
  return c.json(await subsequence(c.env.DB, c.get("principal"), c.req.valid("param").campaign_id, c.req.valid("json")), 200);
});

type SubsequenceFields = z.infer<typeof CreateSubsequenceOf>;

async function subsequence(d1: D1Database, principal: Principal, parentId: number, body: SubsequenceFields) {
  const db = database(d1);
  const parent = await findCampaign(db, principal, parentId);
  const conditions = Object.fromEntries(
    Object.entries({ condition_events: body.condition_events, trigger: body.trigger, trigger_seq_number: body.trigger_seq_number }).filter(
      ([, value]) => value !== undefined,
    ),
  );
  const row = await insertSubsequence(db, {
    accountId: parent.accountId,
    clientId: parent.clientId,
    parentCampaignId: parent.id,
    name: body.subsequence_name ?? body.name ?? `${parent.name} - Subsequence`,
    conditions,
  });
  return { ok: true, success: true, id: row.id, subsequence_id: row.id, name: row.name, created_at: iso(row.createdAt) };
}
