import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { config } from "../config";
import { listFolder, type ListedMessage } from "../mail/folder-list";
import { loadKeyring } from "../platform/crypto";
import { database, type Database } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, instant, json, jsonBody, optionalJsonBody } from "../platform/openapi";
import { mailPolicy } from "../platform/outbound";
import type { Principal } from "../platform/principal";
import { iso } from "../platform/time";
import { MailboxLogins } from "./login";
import { imapTarget, type MailboxRow } from "./rules";
import { IdParams } from "./schemas";
import { MAILBOX_TAG } from "./shared";
import { findMailbox } from "./store";
import { warmupMessageIds } from "../warmup/store";
import { agentTokens } from "./wake";

// Schemas.

const FetchOptions = {
  limit: z.number().int().min(1).max(500).default(100),
  folder: z.string().trim().min(1).max(255).default("INBOX").openapi({ description: "INBOX (default); SENT, SPAM or TRASH by their special-use flag, then usual names; or a folder's exact name" }),
  includeBody: z.boolean().default(false).openapi({ description: "Adds each message's body (HTML, else text), the newest first within 8 MiB together; beyond that `body` is null" }),
  from: instant("Messages that arrived at or after this instant").optional(),
  to: instant("Messages that arrived at or before this instant").optional(),
};
const FetchBody = z.object(FetchOptions).openapi("FetchMessagesRequest");
const AccountFetch = z.object({ account_id: BodyId, ...FetchOptions });
const MultiBody = z
  .union([z.array(AccountFetch).min(1).max(10), z.object({ accounts: z.array(AccountFetch).min(1).max(10) })])
  .openapi("FetchMessagesMultiRequest");

const Message = z
  .object({
    uid: z.number().int(),
    message_id: z.string().nullable(),
    in_reply_to: z.string().nullable(),
    from: z.string().nullable(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    subject: z.string(),
    date: z.string().nullable(),
    flags: z.array(z.string()),
    size: z.number().int(),
    has_attachments: z.boolean(),
    is_warmup: z.boolean().openapi({ description: "A warmup email of the pool (its Message-ID recorded at a warmup send)" }),
    body: z.string().nullable().optional(),
  })
  .openapi("MailboxMessage");
const Listing = z.object({ email_account_id: z.number().int(), folder: z.string(), total: z.number().int(), messages: z.array(Message) }).openapi("MailboxMessages");
const Failed = z.object({ email_account_id: z.number().int(), ok: z.literal(false), error: z.string() });

const LIVE =
  "A live IMAP read of the mailbox (read-only: nothing is marked seen), stored nowhere: `{limit? (1-500, default 100), folder? (INBOX; SENT, SPAM, TRASH), includeBody?, from?, to? (ISO instants, on arrival time)}` → the folder's messages newest first, with `total` within the bounds. ";
const FAILURES = "No answer in 25 s → 504 `{\"error\":\"The mailbox did not answer in time\"}`; a mailbox that cannot read (failed IMAP check, disconnected, login refused, folder missing) → 400 with its reason.";

const routes = {
  multi: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/multi/fetch-messages",
    operationId: "fetchMessagesOfEmailAccounts",
    summary: "Read the messages of several mailboxes now (live IMAP)",
    description: `${LIVE}For 1-10 mailboxes at once: a bare array (or \`{accounts:[…]}\`) of \`{account_id, …the same options}\`, read together; each answers its data, or \`{email_account_id, ok:false, error}\` (another tenant's mailbox reads as \`Email account not found\`).`,
    tags: MAILBOX_TAG,
    security: API_KEY_SECURITY,
    request: { body: jsonBody(MultiBody, [{ account_id: 1, limit: 20 }, { account_id: 2, folder: "SPAM" }]) },
    responses: { 200: json(z.object({ ok: z.boolean(), data: z.array(z.union([Listing, Failed])) }), "Each mailbox's messages"), ...errorResponses(401, 422, 429) },
  }),
  one: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/fetch-messages",
    operationId: "fetchEmailAccountMessages",
    summary: "Read a mailbox's messages now (live IMAP)",
    description: LIVE + FAILURES,
    tags: MAILBOX_TAG,
    security: API_KEY_SECURITY,
    request: { params: IdParams, body: optionalJsonBody(FetchBody, { limit: 20, folder: "INBOX" }) },
    responses: {
      200: json(z.object({ ok: z.boolean(), data: Listing }), "The messages"),
      504: json(z.object({ error: z.string() }), "The mailbox did not answer in time"),
      ...errorResponses(400, 401, 404, 422, 429),
    },
  }),
};

/** One read's whole time: the answer comes within it, whatever the mail server does. */
const DEADLINE_MS = 25_000;
const TOO_SLOW = "The mailbox did not answer in time";

type Options = z.infer<typeof FetchBody>;

// Deciding.

function present(message: ListedMessage, warmup: Set<string>): z.infer<typeof Message> {
  return {
    uid: message.uid,
    message_id: message.messageId,
    in_reply_to: message.inReplyTo,
    from: message.from,
    to: message.to,
    cc: message.cc,
    subject: message.subject,
    date: message.date === null ? null : iso(message.date),
    flags: message.flags,
    size: message.size,
    has_attachments: message.hasAttachments,
    // Warmup mail is known by the Message-IDs its sends record (CONTRACT 19.4), never by a header.
    is_warmup: message.messageId !== null && warmup.has(message.messageId),
    ...(message.body !== undefined && { body: message.body }),
  };
}

/** Why a mailbox cannot be read now, before any connection: its failed IMAP check (an OAuth disconnect is its login's answer). */
function unreadable(mailbox: MailboxRow): string | null {
  return mailbox.isImapSuccess === false ? (mailbox.imapFailureError ?? "The mailbox failed its IMAP check") : null;
}

/** Reads one mailbox's folder, answering the data or an ApiError (400 with its reason, 504 when too slow). */
async function readMailbox(c: Context<AppEnv>, db: Database, mailbox: MailboxRow, options: Options) {
  const reason = unreadable(mailbox);
  if (reason !== null) throw ApiError.badRequest(reason);
  const now = Date.now();
  const logins = new MailboxLogins(c.env, db, await loadKeyring(config(c.env).secretsKey), agentTokens(c.env));
  const read = (async () => {
    const login = await logins.for(mailbox, "imap", now);
    if (!login.ok) throw ApiError.badRequest(login.message);
    const result = await listFolder(imapTarget(mailbox, login.credential), { allowPlain: false, outbound: mailPolicy(config(c.env)) }, {
      folder: options.folder,
      limit: options.limit,
      from: options.from === undefined ? undefined : Date.parse(options.from),
      to: options.to === undefined ? undefined : Date.parse(options.to),
      includeBody: options.includeBody,
    });
    if (!result.ok && "notFound" in result) throw ApiError.badRequest(`Folder not found: ${result.notFound}`);
    if (!result.ok) {
      if (result.failure.kind === "auth_failed" && login.oauth) await logins.refused(mailbox, "imap", login, result.failure.text, now);
      throw ApiError.badRequest(result.failure.text);
    }
    const warmup = await warmupMessageIds(db, result.listing.messages.flatMap((m) => (m.messageId === null ? [] : [m.messageId])));
    return { email_account_id: mailbox.id, folder: result.listing.folder, total: result.listing.total, messages: result.listing.messages.map((m) => present(m, warmup)) };
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new ApiError(504, { error: TOO_SLOW })), DEADLINE_MS)));
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** One entry of a multi read: its data, or why not (another tenant's mailbox looks missing). */
async function readOne(c: Context<AppEnv>, db: Database, principal: Principal, request: z.infer<typeof AccountFetch>) {
  const { account_id: id, ...options } = request;
  try {
    return await readMailbox(c, db, await findMailbox(db, principal, id), options);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { email_account_id: id, ok: false as const, error: String(error.body.error ?? error.message) };
  }
}

export const mailboxMessageRoutes = createRouter();

mailboxMessageRoutes.openapi(routes.multi, async (c) => {
  const db = database(c.env.DB);
  const body = c.req.valid("json");
  const requests = Array.isArray(body) ? body : body.accounts;
  const data = await Promise.all(requests.map((request) => readOne(c, db, c.get("principal"), request)));
  return c.json({ ok: true, data }, 200);
});

mailboxMessageRoutes.openapi(routes.one, async (c) => {
  const db = database(c.env.DB);
  const mailbox = await findMailbox(db, c.get("principal"), c.req.valid("param").id);
  // No body (or an empty one) takes every default.
  const options = FetchBody.parse(c.req.valid("json") ?? {});
  return c.json({ ok: true, data: await readMailbox(c, db, mailbox, options) }, 200);
});
