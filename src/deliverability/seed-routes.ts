import { createRoute, z } from "@hono/zod-openapi";
import { adminAuth, adminSecurity } from "../accounts/admin-routes";
import { config } from "../config";
import { checkHost, mailPolicy } from "../platform/outbound";
import { encryptSecret, loadKeyring } from "../platform/crypto";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import { iso } from "../platform/time";
import { checkSeedMailboxes, sumSeedChecks } from "./checker";
import { allShards, onEveryShard, shardDatabase } from "../platform/shards";
import {
  deleteSeedMailbox,
  findSeedMailbox,
  insertSeedMailbox,
  listSeedMailboxes,
  seedEmailTaken,
  seedPasswordContext,
  type SeedMailboxRow,
} from "./seed-store";
import { listProviders } from "./store";

const SEED_NOT_FOUND = "Seed mailbox not found";
const folderList = z.array(z.string().trim().min(1).max(200)).max(20);

const NewSeed = z
  .object({
    provider_id: z.union([z.string().min(1).max(64), z.number().int().positive()]).openapi({ description: "A catalogue provider id, or its provider_num" }),
    email: z.email().max(254),
    imap_host: z.string().trim().min(1).max(253).optional().openapi({ description: "Without it the seed is not read by Salvo: its results come through `POST /api/v1/spam-test/{id}/results`" }),
    imap_port: z.number().int().min(1).max(65535).default(993),
    imap_security: z.enum(["tls", "starttls"]).optional().openapi({ description: "Implicit TLS (default on port 993) or STARTTLS (default otherwise); never clear text" }),
    imap_username: z.string().min(1).max(254).optional().openapi({ description: "Default: the email" }),
    password: z.string().min(1).max(1000).optional().openapi({ description: "Required with imap_host; stored encrypted, never returned" }),
    inbox_folders: folderList.min(1).default(["INBOX"]),
    tab_folders: folderList.default([]).openapi({ description: "Folders that mean a tab (e.g. Gmail's category labels)" }),
    spam_folders: folderList.default([]).openapi({ description: "Folders that mean spam (e.g. `[Gmail]/Spam`, `Junk`)" }),
  })
  .openapi("NewSeedMailbox");

const SeedMailbox = z
  .object({
    id: z.number().int(),
    provider_id: z.string(),
    email: z.string(),
    polled: z.boolean().openapi({ description: "Whether Salvo's placement checker reads it (it has IMAP settings)" }),
    imap_host: z.string().nullable(),
    imap_port: z.number().int().nullable(),
    imap_security: z.string().nullable(),
    imap_username: z.string().nullable(),
    inbox_folders: z.array(z.string()),
    tab_folders: z.array(z.string()),
    spam_folders: z.array(z.string()),
    checked_at: z.string().nullable(),
    check_error: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("SeedMailbox");

const CheckPass = z
  .object({
    ok: z.boolean(),
    seeds: z.number().int(),
    messages: z.number().int(),
    recorded: z.number().int(),
    expired: z.number().int(),
    d1_write_batches: z.number().int(),
    failures: z.array(z.object({ seed: z.string(), error: z.string() })),
  })
  .openapi("PlacementCheckPass");

const tags = ["Admin"];

const routes = {
  create: createRoute({
    method: "post",
    path: "/admin/v1/seed-mailboxes",
    operationId: "adminCreateSeedMailbox",
    tags,
    summary: "Register a seed mailbox for a provider",
    description:
      "A test inbox of a catalogue provider. With IMAP settings the placement checker reads its inbox, tab and spam folders for test emails; a provider is offered for new spam tests once it has a seed mailbox.",
    security: adminSecurity,
    middleware: [adminAuth] as const,
    request: { body: jsonBody(NewSeed) },
    responses: { 200: json(SeedMailbox, "The seed mailbox (never its password)"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/admin/v1/seed-mailboxes",
    operationId: "adminListSeedMailboxes",
    tags,
    summary: "List the seed mailboxes",
    description: "Every seed mailbox by provider, with where its last check stands.",
    security: adminSecurity,
    middleware: [adminAuth] as const,
    responses: { 200: json(z.object({ data: z.array(SeedMailbox) }), "The seed mailboxes"), ...errorResponses(401, 404, 429) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/admin/v1/seed-mailboxes/{id}",
    operationId: "adminDeleteSeedMailbox",
    tags,
    summary: "Remove a seed mailbox",
    description: "New runs stop placing cells at it; results already recorded keep its address. A provider left with none is no longer offered.",
    security: adminSecurity,
    middleware: [adminAuth] as const,
    request: { params: z.object({ id: pathId("id") }) },
    responses: { 200: json(z.object({ ok: z.boolean() }), "Removed"), ...errorResponses(401, 404, 422, 429) },
  }),
  check: createRoute({
    method: "post",
    path: "/admin/v1/seed-mailboxes/check",
    operationId: "adminCheckSeedMailboxes",
    tags,
    summary: "Run the placement checker now",
    description: "One pass of what the minute cron runs: reads every seed with a pending cell, records placements, then marks cells past their deadline not_received.",
    security: adminSecurity,
    middleware: [adminAuth] as const,
    responses: { 200: json(CheckPass, "What the pass found"), ...errorResponses(401, 404, 429) },
  }),
};

function present(row: SeedMailboxRow): z.infer<typeof SeedMailbox> {
  return {
    id: row.id,
    provider_id: row.providerId,
    email: row.email,
    polled: row.imapHost !== null,
    imap_host: row.imapHost,
    imap_port: row.imapPort,
    imap_security: row.imapSecurity,
    imap_username: row.imapUsername,
    inbox_folders: row.inboxFolders,
    tab_folders: row.tabFolders,
    spam_folders: row.spamFolders,
    checked_at: row.checkedAt === null ? null : iso(row.checkedAt),
    check_error: row.checkError,
    created_at: iso(row.createdAt),
  };
}

export const seedMailboxRoutes = createRouter();

seedMailboxRoutes.openapi(routes.create, async (c) => {
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const settings = config(c.env);
  const catalogue = await listProviders(db);
  const provider = catalogue.find((row) => row.id === String(body.provider_id) || String(row.providerNum) === String(body.provider_id));
  if (!provider) throw ApiError.badRequest(`Unknown provider ${body.provider_id}`);
  const email = body.email.toLowerCase();
  if (await seedEmailTaken(db, email)) throw ApiError.badRequest("A seed mailbox with this email exists");
  let host: string | null = null;
  if (body.imap_host !== undefined) {
    const checked = await checkHost(body.imap_host, mailPolicy(settings));
    if ("problem" in checked) throw ApiError.validation([{ path: "imap_host", message: `imap_host ${checked.problem}` }]);
    if (body.password === undefined) throw ApiError.badRequest("password is required with imap_host");
    host = checked.host;
  } else if (body.password !== undefined) {
    throw ApiError.badRequest("password is only kept for a seed with imap_host");
  }
  const now = new Date();
  const seed = {
    providerId: provider.id,
    email,
    imapHost: host,
    imapPort: host === null ? null : body.imap_port,
    imapSecurity: host === null ? null : (body.imap_security ?? (body.imap_port === 993 ? "tls" : "starttls")),
    imapUsername: host === null ? null : (body.imap_username ?? null),
    imapPassword: host === null ? null : await encryptSecret(await loadKeyring(settings.secretsKey), body.password!, seedPasswordContext(email)),
    inboxFolders: body.inbox_folders,
    tabFolders: body.tab_folders,
    spamFolders: body.spam_folders,
    createdAt: now,
    updatedAt: now,
  };
  // The operator's seeds serve every shard's spam tests: shard 0 numbers the seed, every other
  // shard keeps a copy under the same id (each reads it for its own tests).
  const row = await insertSeedMailbox(db, seed);
  await Promise.all(allShards(c.env).slice(1).map((shard) => insertSeedMailbox(database(shardDatabase(c.env, shard)), { ...seed, id: row.id })));
  return c.json(present(row), 200);
});

seedMailboxRoutes.openapi(routes.list, async (c) => {
  const rows = await listSeedMailboxes(database(c.env.DB));
  return c.json({ data: rows.map(present) }, 200);
});

seedMailboxRoutes.openapi(routes.check, async (c) => {
  const now = Date.now();
  const report = sumSeedChecks(await onEveryShard(c.env, (shardEnv) => checkSeedMailboxes(shardEnv, now)));
  return c.json(
    {
      ok: true,
      seeds: report.seeds,
      messages: report.messages,
      recorded: report.recorded,
      expired: report.expired,
      d1_write_batches: report.writeBatches,
      failures: report.failures,
    },
    200,
  );
});

seedMailboxRoutes.openapi(routes.remove, async (c) => {
  const db = database(c.env.DB);
  const row = await findSeedMailbox(db, c.req.valid("param").id);
  if (!row) throw ApiError.notFound(SEED_NOT_FOUND);
  await onEveryShard(c.env, (shardEnv) => deleteSeedMailbox(database(shardEnv.DB), row.id));
  return c.json({ ok: true }, 200);
});
