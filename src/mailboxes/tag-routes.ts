import { createRoute, z } from "@hono/zod-openapi";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { refuseForeignTags } from "../platform/access";
import { emailAccounts } from "../db/schema";
import { API_KEY_SECURITY, BodyId, createRouter, json, jsonBody, errorResponses } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { DEFAULT_TAG_COLOR, distinct, presentTag } from "./rules";
import { assignTags, createTag, findTag, mailboxesOfAddresses, removeTags, tagNamed, tagsOfMailboxes, updateTag, visibleTagIds, visibleTags } from "./store";
import { Tag, Ack, TagResponse, TagMapping } from "./schemas";
import { MAILBOX_TAG, ack } from "./shared";
import { namedMailboxes } from "./shared";

// Schemas.

const tag = MAILBOX_TAG;
const security = API_KEY_SECURITY;
const routes = {
  createTag: createRoute({
    method: "post",
    path: "/api/v1/tags",
    operationId: "createTag",
    description: "Creates a tag `{name (1–50), color? #RRGGBB}` in the account's catalogue; an existing name answers that tag.",
    tags: tag,
    summary: "Create a tag (an existing name answers that tag)",
    security,
    request: { body: jsonBody(z.object({ name: z.string().trim().min(1).max(50), color: z.string().regex(/^#[0-9A-Fa-f]{6}$/).optional() }), { name: "warm", color: "#4CAF50" }) },
    responses: { 200: json(TagResponse, "The tag"), ...errorResponses(401, 422, 429) },
  }),
  tagManager: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/tag-manager",
    operationId: "saveTag",
    description: "Updates the tag `id`, or creates one without it. Foreign id → 404 `Tag not found`; a name another tag has → 400.",
    tags: tag,
    summary: "Update a tag (id) or create one",
    security,
    request: {
      body: jsonBody(z.object({ id: BodyId.optional(), name: z.string().trim().min(1).max(50), color: z.string().regex(/^#[0-9A-Fa-f]{6}$/).optional() }), { name: "warm", color: "#4CAF50" }),
    },
    responses: { 200: json(TagResponse, "The tag"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  listTags: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/tags",
    operationId: "listTags",
    description: "The account's tag catalogue (shared by mailboxes and campaigns).",
    tags: tag,
    summary: "The tag catalogue",
    security,
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(Tag) }), "Tags"), ...errorResponses(401, 429) },
  }),
  assignTags: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/tag-mapping",
    operationId: "tagEmailAccounts",
    description:
      "Gives mailboxes (`email_account_ids` 1–25, or `emails`) tags; idempotent. An unknown mailbox or tag → 400 naming it. A tag of another scope " +
      "than a mailbox's (another client's, or the account's for a client's mailbox) → 400, nothing changed.",
    tags: tag,
    summary: "Give mailboxes tags",
    security,
    request: { body: jsonBody(TagMapping, { email_account_ids: [1], tag_ids: [1] }) },
    responses: { 200: json(Ack, "Assigned"), ...errorResponses(400, 401, 422, 429) },
  }),
  removeTags: createRoute({
    method: "delete",
    path: "/api/v1/email-accounts/tag-mapping",
    operationId: "untagEmailAccounts",
    description: "Takes tags off mailboxes; idempotent.",
    tags: tag,
    summary: "Take tags from mailboxes",
    security,
    request: { body: jsonBody(TagMapping, { email_account_ids: [1], tag_ids: [1] }) },
    responses: { 200: json(Ack, "Removed"), ...errorResponses(400, 401, 422, 429) },
  }),
  tagList: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/tag-list",
    operationId: "listEmailAccountTags",
    description: "The tags of mailboxes named by address (`email_ids`, 1–100); addresses without a mailbox are left out.",
    tags: tag,
    summary: "The tags of mailboxes named by address",
    security,
    request: { body: jsonBody(z.object({ email_ids: z.array(z.email().max(320)).min(1).max(100) }), { email_ids: ["ann@acme.example"] }) },
    responses: {
      200: json(
        z.object({ ok: z.boolean(), data: z.array(z.object({ email_account_id: z.number().int(), from_email: z.string(), tags: z.array(Tag) })) }),
        "Each known mailbox's tags",
      ),
      ...errorResponses(401, 422, 429),
    },
  }),
};

async function namedTags(db: Database, principal: Principal, ids: number[]): Promise<number[]> {
  const wanted = distinct(ids);
  const visible = new Set(await visibleTagIds(db, principal, wanted));
  const unknown = wanted.find((id) => !visible.has(id));
  if (unknown !== undefined) throw ApiError.badRequest(`Tag not found: ${unknown}`);
  return wanted;
}

/** The tag scope a caller creates in: a client key's client, else the account itself. */
const tagScope = (principal: Principal) => principal.clientId;

export const mailboxTagRoutes = createRouter();

mailboxTagRoutes.openapi(routes.createTag, async (c) => {
  const principal = c.get("principal");
  const { name, color } = c.req.valid("json");
  const row = await createTag(database(c.env.DB), principal.accountId, tagScope(principal), name, color?.toUpperCase() ?? DEFAULT_TAG_COLOR);
  return c.json({ ok: true, data: presentTag(row) }, 200);
});

mailboxTagRoutes.openapi(routes.tagManager, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const { id, name, color } = c.req.valid("json");
  if (id === undefined) {
    const row = await createTag(db, principal.accountId, tagScope(principal), name, color?.toUpperCase() ?? DEFAULT_TAG_COLOR);
    return c.json({ ok: true, data: presentTag(row) }, 200);
  }
  const existing = await findTag(db, principal, id);
  if (!existing) throw ApiError.notFound("Tag not found");
  const namesake = await tagNamed(db, principal.accountId, existing.clientId, name);
  if (namesake && namesake.id !== existing.id) throw ApiError.badRequest("Tag already exists");
  const row = await updateTag(db, existing.id, { name, ...(color ? { color: color.toUpperCase() } : {}) });
  return c.json({ ok: true, data: presentTag(row) }, 200);
});

mailboxTagRoutes.openapi(routes.listTags, async (c) => {
  const rows = await visibleTags(database(c.env.DB), c.get("principal"));
  return c.json({ ok: true, data: rows.map(presentTag) }, 200);
});

mailboxTagRoutes.openapi(routes.assignTags, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const tagIds = await namedTags(db, principal, body.tag_ids);
  const mailboxIds = await namedMailboxes(db, principal, body.email_account_ids, body.emails);
  await refuseForeignTags(db, emailAccounts, mailboxIds, tagIds);
  await assignTags(db, mailboxIds, tagIds);
  return c.json(ack("Tags assigned successfully"), 200);
});

mailboxTagRoutes.openapi(routes.removeTags, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const tagIds = await namedTags(db, principal, body.tag_ids);
  const mailboxIds = await namedMailboxes(db, principal, body.email_account_ids, body.emails);
  await removeTags(db, mailboxIds, tagIds);
  return c.json(ack("Tags removed successfully"), 200);
});

mailboxTagRoutes.openapi(routes.tagList, async (c) => {
  const db = database(c.env.DB);
  const addresses = distinct(c.req.valid("json").email_ids.map((email) => email.toLowerCase()));
  const mailboxes = await mailboxesOfAddresses(db, c.get("principal"), addresses);
  const tagsOf = await tagsOfMailboxes(db, c.get("principal"), mailboxes.map((row) => row.id));
  const data = mailboxes.map((row) => ({ email_account_id: row.id, from_email: row.fromEmail, tags: tagsOf.get(row.id)!.map(presentTag) }));
  return c.json({ ok: true, data }, 200);
});
