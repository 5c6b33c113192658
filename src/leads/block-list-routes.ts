import { createRoute, z } from "@hono/zod-openapi";
import { Ack, ack, bodyId } from "../campaigns/schemas";
import { BLOCK_LIST_ENTRY_NOT_FOUND, owningClient } from "../platform/access";
import { database } from "../platform/db";
import { ApiError, type ValidationIssue } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, pathId, queryCount, queryId } from "../platform/openapi";
import { iso } from "../platform/time";
import { BLOCK_LIST_SOURCES, blockListValue } from "./block-list";
import { addBlockListEntries, blockListPage, deleteBlockListEntry, deleteBlockListValue, type BlockListRow } from "./block-list-store";

const MAX_ITEMS = 1000;
const item = z.string().max(2048);

const Entry = z
  .object({
    id: z.number().int(),
    email_or_domain: z.string(),
    created_at: z.string(),
    source: z.string(),
    client_id: z.number().int().nullable(),
  })
  .openapi("BlockListEntry");

const ListQuery = z.object({
  offset: queryCount(0).optional(),
  limit: queryCount(1, MAX_ITEMS).optional().openapi({ description: "1-1000, default 100" }),
  filter_email_or_domain: z.string().max(320).optional().openapi({ description: "Substring of the entry" }),
  filter_client_id: queryId().optional(),
  filter_email_with_domain: z.string().max(320).optional().openapi({ description: "An address: the entries for it or its domain" }),
});

const AddEntries = z
  .object({
    domain_block_list: z.array(item).min(1).max(MAX_ITEMS).optional().openapi({ description: "Addresses (with @) and domains" }),
    domain: item.optional().openapi({ description: "One item, read as a one-item list when domain_block_list is absent" }),
    client_id: bodyId.nullable().optional().openapi({ description: "null: the whole account; a client key writes its client's" }),
  })
  .openapi("AddBlockListEntries");

const BlockDomains = z
  .object({
    domains: z.array(item).min(1).max(MAX_ITEMS),
    source: z.enum(BLOCK_LIST_SOURCES).optional().openapi({ description: "Default manual" }),
  })
  .openapi("BlockDomains");

const RemoveEntry = z.object({ domain: item, client_id: bodyId.nullable().optional() }).openapi("RemoveBlockListEntry");

const DeleteQuery = z.object({ id: queryId() });

const listEntries = createRoute({
  method: "get",
  path: "/api/v1/leads/get-domain-block-list",
  operationId: "listBlockList",
  description: "Global block-list entries by id: `offset`, `limit` (1–1000), `filter_email_or_domain` (substring), `filter_client_id`, `filter_email_with_domain`.",
  tags: ["Block list"],
  summary: "The global block list (a client key also reads the account-wide entries), by id",
  security: API_KEY_SECURITY,
  request: { query: ListQuery },
  responses: { 200: json(z.array(Entry), "Entries"), ...errorResponses(401, 422, 429) },
});

const addEntries = createRoute({
  method: "post",
  path: "/api/v1/leads/add-domain-block-list",
  operationId: "addToBlockList",
  description: "Blocks 1–1000 addresses (with `@`) or domains (lower-cased; scheme and `www.` dropped); duplicates are skipped, a bad item → 422 " +
    "with its index. Nothing is sent to them again, and live records of matching leads become BLOCKED. `client_id` null = whole account.",
  tags: ["Block list"],
  summary: "Block addresses and domains; live records of matching leads become BLOCKED",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(AddEntries, { domain_block_list: ["competitor.example", "noreply@partner.example"], client_id: null }) },
  responses: {
    200: json(Ack.extend({ data: z.object({ added: z.number().int(), skipped: z.number().int() }) }), "Added"),
    ...errorResponses(400, 401, 422, 429),
  },
});

const deleteByQuery = createRoute({
  method: "delete",
  path: "/api/v1/leads/delete-domain-block-list",
  operationId: "deleteBlockListEntryByQuery",
  description: "Deletes the entry `?id=`; records it blocked stay BLOCKED. Missing → 404 `Block list entry not found`.",
  tags: ["Block list"],
  summary: "Delete a block-list entry by id (query)",
  security: API_KEY_SECURITY,
  request: { query: DeleteQuery },
  responses: { 200: json(Ack, "Deleted"), ...errorResponses(401, 404, 422, 429) },
});

const deleteByPath = createRoute({
  method: "delete",
  path: "/api/v1/leads/delete-domain-block-list/{id}",
  operationId: "deleteBlockListEntry",
  description: "Deletes the entry by path id. Missing → 404 `Block list entry not found`.",
  tags: ["Block list"],
  summary: "Delete a block-list entry by id (path)",
  security: API_KEY_SECURITY,
  request: { params: z.object({ id: pathId("id") }) },
  responses: { 200: json(Ack, "Deleted"), ...errorResponses(401, 404, 422, 429) },
});

const removeByValue = createRoute({
  method: "delete",
  path: "/api/v1/leads/remove-domain-block-list",
  operationId: "removeBlockListDomain",
  description: "Deletes the entry for `{domain, client_id?}` (an address or a domain). Missing → 404.",
  tags: ["Block list"],
  summary: "Delete the block-list entry for an address or domain",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(RemoveEntry, { domain: "competitor.example" }) },
  responses: { 200: json(Ack, "Deleted"), ...errorResponses(400, 401, 404, 422, 429) },
});

const blockDomains = createRoute({
  method: "post",
  path: "/api/v1/master-inbox/block-domains",
  operationId: "inboxBlockDomains",
  description: "Writes the same global block list from the inbox: `{domains (1–1000), source?: manual|bounce|complaint|invalid}`.",
  tags: ["Block list"],
  summary: "Block domains (or addresses) from the master inbox: the same list as add-domain-block-list",
  security: API_KEY_SECURITY,
  request: { body: jsonBody(BlockDomains, { domains: ["spammy.example"], source: "manual" }) },
  responses: {
    200: json(
      Ack.extend({ data: z.object({ blocked_domains: z.array(z.string()), source: z.string(), blocked_at: z.string() }) }),
      "Blocked",
    ),
    ...errorResponses(401, 422, 429),
  },
});

function present(row: BlockListRow) {
  return { id: row.id, email_or_domain: row.emailOrDomain, created_at: iso(row.createdAt), source: row.source, client_id: row.clientId };
}

/** Each item as stored, distinct, or the 422 naming every bad one by its index. */
function storedValues(items: string[], field: string): string[] {
  const issues: ValidationIssue[] = [];
  const values = items.map((raw, index) => {
    const value = blockListValue(raw);
    if (value === null) issues.push({ path: `${field}.${index}`, message: "Not an email address or domain" });
    return value;
  });
  if (issues.length > 0) throw ApiError.validation(issues);
  return [...new Set(values as string[])];
}

export const blockListRoutes = createRouter();

blockListRoutes.openapi(listEntries, async (c) => {
  const query = c.req.valid("query");
  const rows = await blockListPage(database(c.env.DB), c.get("principal"), {
    offset: query.offset ?? 0,
    limit: query.limit ?? 100,
    contains: query.filter_email_or_domain,
    clientId: query.filter_client_id,
    coveringAddress: query.filter_email_with_domain,
  });
  return c.json(rows.map(present), 200);
});

blockListRoutes.openapi(addEntries, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const items = body.domain_block_list ?? (body.domain !== undefined ? [body.domain] : undefined);
  if (items === undefined) throw ApiError.validation([{ path: "domain_block_list", message: "Required" }]);
  const values = storedValues(items, body.domain_block_list ? "domain_block_list" : "domain");
  const db = database(c.env.DB);
  const clientId = await owningClient(db, principal, body.client_id);
  const added = await addBlockListEntries(c.env.DB, { accountId: principal.accountId, clientId, values, source: "manual" }, Date.now());
  return c.json(
    { ...ack(`${added.length} entries added to block list`), data: { added: added.length, skipped: items.length - added.length } },
    200,
  );
});

blockListRoutes.openapi(deleteByQuery, async (c) => {
  if (!(await deleteBlockListEntry(database(c.env.DB), c.get("principal"), c.req.valid("query").id))) throw ApiError.notFound(BLOCK_LIST_ENTRY_NOT_FOUND);
  return c.json(ack("Entry deleted successfully"), 200);
});

blockListRoutes.openapi(deleteByPath, async (c) => {
  if (!(await deleteBlockListEntry(database(c.env.DB), c.get("principal"), c.req.valid("param").id))) throw ApiError.notFound(BLOCK_LIST_ENTRY_NOT_FOUND);
  return c.json(ack("Entry deleted successfully"), 200);
});

blockListRoutes.openapi(removeByValue, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const [value] = storedValues([body.domain], "domain");
  const db = database(c.env.DB);
  const clientId = await owningClient(db, principal, body.client_id);
  if (!(await deleteBlockListValue(db, principal, value!, clientId))) throw ApiError.notFound(BLOCK_LIST_ENTRY_NOT_FOUND);
  return c.json(ack("Entry deleted successfully"), 200);
});

blockListRoutes.openapi(blockDomains, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const values = storedValues(body.domains, "domains");
  const source = body.source ?? "manual";
  const now = Date.now();
  await addBlockListEntries(c.env.DB, { accountId: principal.accountId, clientId: principal.clientId, values, source }, now);
  return c.json({ ...ack("Domains blocked successfully"), data: { blocked_domains: values, source, blocked_at: iso(now) } }, 200);
});
