import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { config, type WarmupConfig } from "../config";
import type { AppEnv } from "../platform/env";
import { owningClient } from "../platform/access";
import { loadKeyring } from "../platform/crypto";
import { log } from "../platform/logging";
import { checkHost, mailPolicy, parseHost, type OutboundPolicy } from "../platform/outbound";
import { database, type Database } from "../platform/db";
import { ApiError, type ValidationIssue } from "../platform/errors";
import { isUniqueViolation } from "../platform/db-errors";
import { API_KEY_SECURITY, BodyId, createRouter, json, jsonBody, queryBoolean, optionalJsonBody, errorResponses } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { runConnectionCheck } from "./connection-check";
import { wakeMailboxes } from "./wake";
import { mailboxSendingStatusOf, presentSendingStatus } from "../engine/status";
import { bareTrackingDomain, defaultPortType, distinct, newSecret, type MailboxRow, utcDayStart, warmupTurnedOn } from "./rules";
import { warmupWarnings } from "../warmup/rules";
import { warmupCounters } from "../warmup/store";
import { campaignIdsOf, deleteMailbox, findMailbox, insertMailbox, listMailboxes, mailboxOfAddress, queueRecheck, reconnectTargets, updateMailbox, type MailboxChanges, type MailboxSecrets, type NewMailbox } from "./store";
import { SaveMailbox, UpdateMailbox, EmailAccount, Ack, IdParams, ListQuery, type Fields } from "./schemas";
import { MAILBOX_TAG, ack, presentRows } from "./shared";

// Schemas.

const tag = MAILBOX_TAG;
const security = API_KEY_SECURITY;
const routes = {
  save: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/save",
    operationId: "saveEmailAccount",
    tags: tag,
    summary: "Create a mailbox, or update one (id, or an address the caller already has)",
    description:
      "Required on create: from_name, from_email, password, smtp_host, smtp_port, imap_host, imap_port. Credentials are write-only. New credentials or servers start a connection check after the answer: SMTP login (is_smtp_success, smtp_failure_error) and IMAP LOGIN + SELECT INBOX (is_imap_success, imap_failure_error), each failure with the server's own text.",
    security,
    request: { body: jsonBody(SaveMailbox, {
          from_name: "Ann from Acme",
          from_email: "ann@acme.example",
          user_name: "ann@acme.example",
          password: "app-password",
          smtp_host: "smtp.acme.example",
          smtp_port: 465,
          imap_host: "imap.acme.example",
          imap_port: 993,
          max_email_per_day: 100,
        }) },
    responses: {
      200: json(Ack.extend({ id: z.number().int(), data: EmailAccount }), "The saved mailbox"),
      ...errorResponses(400, 401, 404, 422, 429, 503),
    },
  }),
  reconnect: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/reconnect-failed-email-accounts",
    operationId: "reconnectEmailAccounts",
    description: "Queues a connection check for the given mailboxes, or every one whose last check failed; answers how many.",
    tags: tag,
    summary: "Re-check these mailboxes, or every one whose last check failed",
    security,
    request: { body: optionalJsonBody(z.object({ email_account_ids: z.array(BodyId).max(1000).optional() })) },
    responses: { 200: json(Ack.extend({ data: z.object({ queued: z.number().int() }) }), "Queued"), ...errorResponses(401, 422, 429) },
  }),
  list: createRoute({
    method: "get",
    path: "/api/v1/email-accounts",
    operationId: "listEmailAccounts",
    description: "The caller's mailboxes by id, paged (`offset`, `limit` 1–100), with send counts and warmup settings; passwords masked.",
    tags: tag,
    summary: "The mailboxes, by id",
    security,
    request: { query: ListQuery },
    responses: { 200: json(z.array(EmailAccount), "Bare array"), ...errorResponses(401, 422, 429) },
  }),
  suspend: createRoute({
    method: "put",
    path: "/api/v1/email-accounts/suspend/{id}",
    operationId: "suspendEmailAccount",
    description: "Suspends a mailbox: it sends nothing and rotation skips it.",
    tags: tag,
    summary: "Suspend a mailbox (it sends nothing)",
    security,
    request: { params: IdParams },
    responses: { 200: json(Ack.extend({ data: z.object({ accountId: z.number().int(), isSuspended: z.boolean() }) }), "Suspended"), ...errorResponses(401, 404, 422, 429) },
  }),
  unsuspend: createRoute({
    method: "delete",
    path: "/api/v1/email-accounts/unsuspend/{id}",
    operationId: "unsuspendEmailAccount",
    description: "Lifts a suspension: the mailbox sends again and rotation may pick it.",
    tags: tag,
    summary: "Unsuspend a mailbox",
    security,
    request: { params: IdParams },
    responses: { 200: json(Ack.extend({ data: z.object({ accountId: z.number().int(), isSuspended: z.boolean() }) }), "Unsuspended"), ...errorResponses(401, 404, 422, 429) },
  }),
  read: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/{id}",
    operationId: "getEmailAccount",
    description: "A mailbox; `fetch_campaigns` and `fetch_tags` add its campaign ids and tags.",
    tags: tag,
    summary: "A mailbox",
    security,
    request: { params: IdParams, query: z.object({ fetch_campaigns: queryBoolean.optional(), fetch_tags: queryBoolean.optional() }) },
    responses: { 200: json(EmailAccount, "Bare EmailAccount"), ...errorResponses(401, 404, 422, 429) },
  }),
  update: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}",
    operationId: "updateEmailAccount",
    description: "Updates a mailbox (absent fields unchanged; `********` keeps a password). A credential change re-runs the connection check.",
    tags: tag,
    summary: "Update a mailbox (absent fields unchanged)",
    security,
    request: { params: IdParams, body: jsonBody(UpdateMailbox, { max_email_per_day: 150, signature: "<p>Ann</p>" }) },
    responses: { 200: json(Ack, "Updated"), ...errorResponses(400, 401, 404, 422, 429, 503) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/api/v1/email-accounts/{id}",
    operationId: "deleteEmailAccount",
    description: "Deletes a mailbox: it leaves its campaigns and records pinned to it go back to rotation.",
    tags: tag,
    summary: "Delete a mailbox (it leaves its campaigns; pinned records go back to rotation)",
    security,
    request: { params: IdParams },
    responses: { 200: json(Ack.extend({ emailAccountId: z.number().int() }), "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
};

// Deciding.

/** The written fields with their aliases resolved (the canonical name wins). */
export function canonical(body: Fields) {
  return {
    ...body,
    user_name: body.user_name ?? body.username ?? body.smtp_username,
    // A null password is the canonical name written (it keeps the stored secret), not an absent one.
    password: body.password !== undefined ? body.password : body.smtp_password,
    imap_user_name: body.imap_user_name !== undefined ? body.imap_user_name : body.imap_username,
    custom_tracking_url: body.custom_tracking_url !== undefined ? body.custom_tracking_url : body.custom_tracking_domain,
  };
}
type Written = ReturnType<typeof canonical>;

/** What an OAuth save adds to a mailbox write: its sealed material (`{refresh_token}`), its OAuth columns, a fresh access token for the check. */
interface OAuthWrite {
  material: string;
  columns: MailboxChanges;
  accessToken?: string;
}

const REQUIRED_ON_CREATE = ["from_name", "from_email", "password", "smtp_host", "smtp_port", "imap_host", "imap_port"] as const;

/**
 * A tracking domain as stored ("" for none), or why it is refused: the outbound rule with names looked
 * up, and a public host name whatever the development switch says (recipients' clicks go there).
 */
export async function checkedTrackingDomain(value: string, policy: OutboundPolicy): Promise<{ host: string } | { problem: string }> {
  const bare = bareTrackingDomain(value);
  if (bare === "") return { host: "" };
  const checked = await checkHost(bare, { ...policy, local: "none" });
  if ("problem" in checked) return checked;
  return parseHost(checked.host)?.kind === "name" ? checked : { problem: "must be a host name" };
}

/**
 * Hosts and the tracking domain as stored, or the 422 naming each refused one: the outbound rule
 * (src/platform/outbound.ts), names looked up.
 */
async function checkedHosts(body: Written, policy: OutboundPolicy) {
  const judge = async (field: "smtp_host" | "imap_host" | "custom_tracking_url", value: string | undefined) => {
    if (value === undefined) return { field, host: undefined };
    const checked = field === "custom_tracking_url" ? await checkedTrackingDomain(value, policy) : await checkHost(value, policy);
    if ("problem" in checked) return { field, problem: `${field} ${checked.problem}` };
    return { field, host: checked.host };
  };
  const judged = await Promise.all([
    judge("smtp_host", body.smtp_host),
    judge("imap_host", body.imap_host),
    judge("custom_tracking_url", body.custom_tracking_url ?? undefined),
  ]);
  const issues: ValidationIssue[] = judged.flatMap((one) => ("problem" in one && one.problem ? [{ path: one.field, message: one.problem }] : []));
  if (issues.length) throw ApiError.validation(issues);
  const [smtp, imap, tracking] = judged.map((one) => ("host" in one ? one.host : undefined));
  return { smtpHost: smtp, imapHost: imap, tracking: body.custom_tracking_url === undefined ? undefined : tracking || null };
}

/** The client a mailbox write sets: the shared rule, or unchanged (undefined) when an account key names none. */
function mailboxClient(db: Database, principal: Principal, requested: number | null | undefined): Promise<number | null> | undefined {
  return requested === undefined && principal.clientId === null ? undefined : owningClient(db, principal, requested);
}

const emptyToNull = (value: string | null | undefined) => (value === undefined ? undefined : value || null);

/** The columns a write sets (undefined = unchanged), from canonical fields already checked. */
function changesOf(body: Written, hosts: Awaited<ReturnType<typeof checkedHosts>>): MailboxChanges {
  const changes: MailboxChanges = {
    fromName: body.from_name,
    fromEmail: body.from_email?.toLowerCase(),
    username: body.user_name,
    smtpHost: hosts.smtpHost,
    smtpPort: body.smtp_port,
    smtpPortType: body.smtp_port_type,
    imapUsername: body.imap_user_name === undefined ? undefined : body.imap_user_name || null,
    imapHost: hosts.imapHost,
    imapPort: body.imap_port,
    imapPortType: body.imap_port_type,
    type: body.type,
    maxEmailPerDay: body.max_email_per_day,
    timeToWaitInMins: body.time_to_wait_in_mins,
    customTrackingDomain: hosts.tracking,
    bccEmail: emptyToNull(body.bcc),
    signature: body.signature === undefined ? undefined : body.signature || null,
    differentReplyToAddress: emptyToNull(body.different_reply_to_address),
    warmupEnabled: body.warmup_enabled,
    totalWarmupPerDay: body.total_warmup_per_day,
    dailyRampup: body.daily_rampup,
    replyRatePercentage: body.reply_rate_percentage,
    isSuspended: body.is_suspended,
  };
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as MailboxChanges;
}

const CONNECTION_FIELDS = ["username", "smtpHost", "smtpPort", "smtpPortType", "imapUsername", "imapHost", "imapPort", "imapPortType", "type"] as const;

/** Whether a change alters what the connection check tests (so its last outcome no longer holds). */
function touchesConnection(existing: MailboxRow, changes: MailboxChanges, secrets: MailboxSecrets): boolean {
  if (hasSecrets(secrets)) return true;
  return CONNECTION_FIELDS.some((field) => changes[field] !== undefined && changes[field] !== existing[field]);
}

const UNCHECKED = { isSmtpSuccess: null, isImapSuccess: null, smtpFailureError: null, imapFailureError: null, checkedAt: null };
const NOT_HELD = { sendHeldUntil: null, sendHeldReason: null };

// Storing and presenting.

const hasSecrets = (secrets: MailboxSecrets) => secrets.password !== undefined || secrets.imapPassword !== undefined || secrets.oauthToken !== undefined;

async function keyringFor(c: Context<AppEnv>, secrets: MailboxSecrets) {
  return hasSecrets(secrets) ? loadKeyring(config(c.env).secretsKey) : null;
}

/** Starts the connection check after the answer (the save does not wait on the servers). */
function checkInBackground(c: Context<AppEnv>, row: MailboxRow, secrets: MailboxSecrets) {
  if (!config(c.env).mailboxConnectionChecks) return;
  // A mailbox that passes may have work waiting for it: its sender looks at once.
  const check = runConnectionCheck(c.env, row, secrets)
    .then(() => wakeMailboxes(c.env, [row.id]))
    .catch((error: Error) =>
    log("error", "mailbox connection check failed", { request_id: c.get("requestId"), mailbox_id: row.id, error: error.message }),
  );
  c.executionCtx.waitUntil(check);
}

/** Applies a validated write to an existing mailbox. */
async function applyUpdate(c: Context<AppEnv>, db: Database, principal: Principal, existing: MailboxRow, body: Written, oauth?: OAuthWrite): Promise<MailboxRow> {
  const hosts = await checkedHosts(body, mailPolicy(config(c.env)));
  const changes = { ...changesOf(body, hosts), ...oauth?.columns };
  if (body.client_id !== undefined) changes.clientId = await mailboxClient(db, principal, body.client_id);
  if (changes.fromEmail !== undefined && changes.fromEmail !== existing.fromEmail) {
    const holder = await mailboxOfAddress(db, principal.accountId, changes.fromEmail);
    if (holder && holder.id !== existing.id) throw ApiError.badRequest("Email account already exists");
  }
  if (body.smtp_port !== undefined && body.smtp_port_type === undefined && body.smtp_port !== existing.smtpPort) changes.smtpPortType = defaultPortType(body.smtp_port);
  if (body.imap_port !== undefined && body.imap_port_type === undefined && body.imap_port !== existing.imapPort) changes.imapPortType = defaultPortType(body.imap_port);
  const secrets: MailboxSecrets = oauth
    ? { password: null, imapPassword: null, oauthToken: oauth.material, accessToken: oauth.accessToken }
    : { password: newSecret(body.password), imapPassword: newSecret(body.imap_password) };
  const keyring = await keyringFor(c, secrets);
  const recheck = touchesConnection(existing, changes, secrets);
  // What its server refused for now (hold.ts) was another way of sending: the next pass may knock at once.
  const unheld = existing.sendHeldUntil !== null && (recheck || (changes.fromEmail !== undefined && changes.fromEmail !== existing.fromEmail));
  const row = await updateMailbox(
    db,
    keyring,
    existing.id,
    { ...changes, ...warmupTurnedOn(existing, changes.warmupEnabled), ...(recheck ? UNCHECKED : {}), ...(unheld ? NOT_HELD : {}), updatedAt: new Date() },
    secrets,
  ).catch((error: unknown) => {
    // Another save took the address between the check above and this write.
    throw isUniqueViolation(error) ? ApiError.badRequest("Email account already exists") : error;
  });
  if (recheck) checkInBackground(c, row, secrets);
  else if (unheld) c.executionCtx.waitUntil(wakeMailboxes(c.env, [row.id]));
  return row;
}

async function createMailbox(c: Context<AppEnv>, db: Database, principal: Principal, body: Written, oauth?: OAuthWrite): Promise<MailboxRow> {
  const required = oauth === undefined ? REQUIRED_ON_CREATE : REQUIRED_ON_CREATE.filter((field) => field !== "password");
  const missing = required.filter((field) => body[field] === undefined || (field === "password" && newSecret(body.password) === undefined));
  if (missing.length) throw ApiError.validation(missing.map((field) => ({ path: field, message: `${field} is required to create an email account` })));
  const hosts = await checkedHosts(body, mailPolicy(config(c.env)));
  const clientId = await mailboxClient(db, principal, body.client_id);
  const fromEmail = body.from_email!.toLowerCase();
  const values: NewMailbox = {
    ...changesOf(body, hosts),
    accountId: principal.accountId,
    clientId: clientId ?? null,
    fromName: body.from_name!,
    fromEmail,
    username: body.user_name ?? fromEmail,
    smtpHost: hosts.smtpHost!,
    smtpPort: body.smtp_port!,
    smtpPortType: body.smtp_port_type ?? defaultPortType(body.smtp_port!),
    imapHost: hosts.imapHost!,
    imapPort: body.imap_port!,
    imapPortType: body.imap_port_type ?? defaultPortType(body.imap_port!),
    ...oauth?.columns,
    ...warmupTurnedOn(null, body.warmup_enabled),
  };
  const secrets: MailboxSecrets = oauth
    ? { oauthToken: oauth.material, accessToken: oauth.accessToken }
    : { password: newSecret(body.password), imapPassword: newSecret(body.imap_password) };
  const keyring = await loadKeyring(config(c.env).secretsKey);
  const row = await insertMailbox(db, keyring, values, secrets);
  checkInBackground(c, row, secrets);
  return row;
}

export const mailboxRoutes = createRouter();

/** The mailbox a save without `id` means: the caller's own with that address, none, or a 400 when another client holds it. */
async function mailboxToSave(db: Database, principal: Principal, id: number | null | undefined, fromEmail: string | undefined): Promise<MailboxRow | null> {
  if (id != null) return findMailbox(db, principal, id);
  if (fromEmail === undefined) return null;
  const holder = await mailboxOfAddress(db, principal.accountId, fromEmail.toLowerCase());
  if (!holder) return null;
  if (principal.clientId !== null && holder.clientId !== principal.clientId) throw ApiError.badRequest("Email account already exists");
  return findMailbox(db, principal, holder.id);
}

/**
 * A save (with `id`, or by address): the mailbox updated, or created. Two saves of one new address at
 * once make one mailbox: the one whose insert the address's unique index refuses updates it, as it would
 * have a moment later.
 */
export async function saveMailbox(c: Context<AppEnv>, db: Database, principal: Principal, id: number | null | undefined, body: Written, oauth?: OAuthWrite) {
  const existing = await mailboxToSave(db, principal, id, body.from_email);
  if (existing) return { row: await applyUpdate(c, db, principal, existing, body, oauth), updated: true };
  try {
    return { row: await createMailbox(c, db, principal, body, oauth), updated: false };
  } catch (error) {
    const holder = isUniqueViolation(error) ? await mailboxToSave(db, principal, id, body.from_email) : null;
    if (!holder) throw error;
    return { row: await applyUpdate(c, db, principal, holder, body, oauth), updated: true };
  }
}

export async function answerSaved(db: Database, principal: Principal, row: MailboxRow, updated: boolean, warmup: WarmupConfig) {
  const [data] = await presentRows(db, principal, warmup, [row]);
  const message = updated ? "Email account updated successfully" : "Email account added successfully";
  return { ...ack(message), id: row.id, data: data! };
}

mailboxRoutes.openapi(routes.save, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const { id, ...fields } = c.req.valid("json");
  const body = canonical(fields);
  const { row, updated } = await saveMailbox(c, db, principal, id, body);
  return c.json(await answerSaved(db, principal, row, updated, config(c.env).warmup), 200);
});

mailboxRoutes.openapi(routes.reconnect, async (c) => {
  const body = c.req.valid("json") as { email_account_ids?: number[] } | undefined;
  const ids = body?.email_account_ids === undefined ? undefined : distinct(body.email_account_ids);
  const db = database(c.env.DB);
  const targets = await reconnectTargets(db, c.get("principal"), ids);
  // The minute cron's re-check job (recheck.ts) takes them first, RECHECKS_PER_MINUTE at a time.
  await queueRecheck(db, targets);
  return c.json({ ...ack("Reconnection queued"), data: { queued: targets.length } }, 200);
});

mailboxRoutes.openapi(routes.list, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const query = c.req.valid("query");
  const rows = await listMailboxes(
    db,
    principal,
    {
      isInUse: query.isInUse,
      warmupEnabled: query.emailWarmupStatus === undefined ? undefined : query.emailWarmupStatus === "ACTIVE",
      isSmtpSuccess: query.isSmtpSuccess,
      isWarmupBlocked: query.isWarmupBlocked,
      type: query.esp,
      username: query.username,
      clientId: query.client_id,
      connectionState: query.connection_state,
      needsReconnect: query.needs_reconnect,
    },
    query.offset ?? 0,
    query.limit ?? 100,
  );
  return c.json(await presentRows(db, principal, config(c.env).warmup, rows), 200);
});

async function setSuspended(c: Context<AppEnv>, id: number, isSuspended: boolean) {
  const db = database(c.env.DB);
  const existing = await findMailbox(db, c.get("principal"), id);
  if (existing.isSuspended !== isSuspended) await updateMailbox(db, null, existing.id, { isSuspended, updatedAt: new Date() }, {});
  if (!isSuspended) await wakeMailboxes(c.env, [existing.id]);
  const message = isSuspended ? "Email account suspended successfully" : "Email account unsuspended successfully";
  return { ...ack(message), data: { accountId: existing.id, isSuspended } };
}

mailboxRoutes.openapi(routes.suspend, async (c) => c.json(await setSuspended(c, c.req.valid("param").id, true), 200));
mailboxRoutes.openapi(routes.unsuspend, async (c) => c.json(await setSuspended(c, c.req.valid("param").id, false), 200));

/** §10's by-id answer: the mailbox, its sending status (with warmup's warnings), and when asked its campaign ids and tags. */
export async function mailboxReadAnswer(db: Database, principal: Principal, warmupConfig: WarmupConfig, row: MailboxRow, query: { fetch_campaigns?: boolean; fetch_tags?: boolean }) {
  const [data] = await presentRows(db, principal, warmupConfig, [row], query.fetch_tags === true);
  const campaignIds = query.fetch_campaigns ? { campaign_ids: await campaignIdsOf(db, principal, row.id) } : {};
  const now = Date.now();
  const status = await mailboxSendingStatusOf(db, row.id, now);
  const week = (await warmupCounters(db, [row.id], now, utcDayStart(now))).get(row.id)!;
  const warmup = warmupWarnings({ state: data!.warmup_details.state, spam: week.spam, observed: week.observed, warnPercent: warmupConfig.spamWarnPercent, blockedReason: row.warmupBlockedReason });
  const sending = status && presentSendingStatus(status);
  return { ...data!, ...campaignIds, ...(sending && { sending_status: { ...sending, warnings: [...sending.warnings, ...warmup] } }) };
}

mailboxRoutes.openapi(routes.read, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const row = await findMailbox(db, principal, c.req.valid("param").id);
  return c.json(await mailboxReadAnswer(db, principal, config(c.env).warmup, row, c.req.valid("query")), 200);
});

mailboxRoutes.openapi(routes.update, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const existing = await findMailbox(db, principal, c.req.valid("param").id);
  await applyUpdate(c, db, principal, existing, canonical(c.req.valid("json")));
  return c.json(ack("Email account updated successfully"), 200);
});

mailboxRoutes.openapi(routes.remove, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const existing = await findMailbox(db, principal, c.req.valid("param").id);
  await deleteMailbox(db, principal.accountId, existing.id);
  return c.json({ ...ack("Email account deleted successfully"), emailAccountId: existing.id }, 200);
});
