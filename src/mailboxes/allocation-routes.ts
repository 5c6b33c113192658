import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, optionalJsonBody, queryCount } from "../platform/openapi";
import { connectionStateOf, connectionUsable, distinct } from "./rules";
import { wakeMailboxes } from "./wake";
import { CampaignParams } from "./schemas";
import { MAILBOX_TAG } from "./shared";
import { attachedAmong, attachWithinCap, mailboxesTagged, reallocateRecords, attachedWithState, visibleTagsOf } from "./allocation-store";

/** A campaign's mailboxes chosen by tag, and its records moved onto the mailboxes it has (CONTRACT 21.1). */

/** This route's cap on a campaign's mailboxes (the hosted service's, above the usual 2,500). */
const BY_TAG_CAP = 5000;

const ByTag = z
  .object({
    tag_ids: z.array(BodyId).min(1).max(100),
    only_connected: z.boolean().optional().openapi({ description: "Skip mailboxes whose SMTP and IMAP checks do not both pass (default false)" }),
    auto_adjust_warmup: z.boolean().optional().openapi({ description: "Accepted; warmup is set per mailbox" }),
  })
  .openapi("AddCampaignEmailAccountsByTag");

const ByTagAnswer = z
  .object({
    ok: z.boolean(),
    result: z.array(z.object({ id: z.number().int(), email_campaign_id: z.number().int(), email_account_id: z.number().int() })),
    added_count: z.number().int(),
    already_associated_count: z.number().int(),
    tag_resolution: z.object({
      matched_tags: z.array(z.object({ id: z.number().int(), name: z.string() })),
      resolved_account_count: z.number().int(),
      disconnected_account_count: z.number().int(),
      skipped_disconnected_count: z.number().int(),
    }),
    message: z.string().optional(),
  })
  .openapi("CampaignEmailAccountsByTag");

const Reallocate = z
  .object({
    from_email_account_ids: z
      .array(BodyId)
      .min(1)
      .max(100)
      .refine((ids) => new Set(ids).size === ids.length, "from_email_account_ids must be unique")
      .optional(),
  })
  .openapi("ReallocateCampaignMailboxes");

const routes = {
  byTag: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/email-accounts/by-tag",
    operationId: "addCampaignEmailAccountsByTag",
    summary: "Attach every mailbox carrying the given tags to a campaign",
    description:
      "Attaches the caller's mailboxes that carry any of `tag_ids` (1-100); `only_connected` skips those whose SMTP and IMAP checks do not both " +
      "pass. Already attached ones are counted, not added. The campaign may reach `max_limit` mailboxes (at most and by default 5,000): over it " +
      "→ 400, nothing attached. A tag the caller cannot see → 400 `Tag id - <id> not allowed. Permission Error.`",
    tags: MAILBOX_TAG,
    security: API_KEY_SECURITY,
    request: {
      params: CampaignParams,
      query: z.object({ max_limit: queryCount(1, BY_TAG_CAP).optional().openapi({ description: "The campaign's mailbox cap for this call (1-5000, default 5000)" }) }),
      body: jsonBody(ByTag, { tag_ids: [1], only_connected: true }),
    },
    responses: { 200: json(ByTagAnswer, "The links made"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  reallocate: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/reallocate-mailboxes",
    operationId: "reallocateCampaignMailboxes",
    summary: "Move a campaign's records off mailboxes it no longer has",
    description:
      "Records pinned to a mailbox no longer attached (or to none; with `from_email_account_ids`, to one of those), with sending left and not " +
      "STARTED, each get one of the campaign's usable attached mailboxes at random. None attached → 400 `No email accounts are attached to this " +
      "campaign.`; a `from_email_account_ids` id still attached → 400 naming it.",
    tags: MAILBOX_TAG,
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: optionalJsonBody(Reallocate, { from_email_account_ids: [12] }) },
    responses: {
      200: json(
        z.object({ ok: z.boolean(), leads_reallocated: z.number().int(), to_email_account_ids: z.array(z.number().int()) }).openapi("MailboxesReallocated"),
        "The records moved and the mailboxes they went to",
      ),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
};

export const mailboxAllocationRoutes = createRouter();

mailboxAllocationRoutes.openapi(routes.byTag, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const cap = c.req.valid("query").max_limit ?? BY_TAG_CAP;
  const tagIds = distinct(body.tag_ids);
  const matched = await visibleTagsOf(db, principal, tagIds);
  const refused = tagIds.find((id) => !matched.some((tag) => tag.id === id));
  if (refused !== undefined) throw ApiError.badRequest(`Tag id - ${refused} not allowed. Permission Error.`);
  const tagged = await mailboxesTagged(db, principal, tagIds);
  const connected = tagged.filter((row) => connectionStateOf(row) === "connected");
  const candidates = body.only_connected === true ? connected : tagged;
  const { total, among } = await attachedAmong(db, campaign.id, candidates.map((row) => row.id));
  const fresh = candidates.map((row) => row.id).filter((id) => !among.has(id));
  if (total + fresh.length > cap) {
    throw ApiError.badRequest(`A campaign can have at most ${cap} email accounts: it has ${total}, and ${fresh.length} more were requested.`);
  }
  const result = fresh.length > 0 ? await attachWithinCap(c.env.DB, campaign.id, fresh, cap, Date.now()) : [];
  if (campaign.status === "ACTIVE" && result.length > 0) await wakeMailboxes(c.env, result.map((row) => row.email_account_id));
  return c.json(
    {
      ok: true,
      result,
      added_count: result.length,
      already_associated_count: candidates.length - result.length,
      tag_resolution: {
        matched_tags: matched,
        resolved_account_count: tagged.length,
        disconnected_account_count: tagged.length - connected.length,
        skipped_disconnected_count: tagged.length - candidates.length,
      },
      ...(tagged.length === 0 && { message: "No mailboxes carry the requested tag(s)." }),
    },
    200,
  );
});

mailboxAllocationRoutes.openapi(routes.reallocate, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const from = c.req.valid("json")?.from_email_account_ids;
  const attached = await attachedWithState(db, campaign.id);
  if (attached.length === 0) throw ApiError.badRequest("No email accounts are attached to this campaign.");
  const stillAttached = from?.find((id) => attached.some((row) => row.id === id));
  if (stillAttached !== undefined) throw ApiError.badRequest(`Email account ${stillAttached} is still attached to this campaign.`);
  const usable = attached.filter((row) => !row.isSuspended && connectionUsable(row)).map((row) => row.id);
  if (usable.length === 0) throw ApiError.badRequest("No attached email account can send: each is suspended or failing its connection check.");
  const given = await reallocateRecords(c.env.DB, campaign.id, from, usable, Date.now());
  const to = distinct(given).sort((a, b) => a - b);
  if (campaign.status === "ACTIVE" && to.length > 0) await wakeMailboxes(c.env, to);
  return c.json({ ok: true, leads_reallocated: given.length, to_email_account_ids: to }, 200);
});
