import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { config } from "../config";
import { MAILBOX_TYPES, PORT_TYPES } from "../db/schema";
import type { AppEnv } from "../platform/env";
import { findCampaign, owningClient } from "../platform/access";
import { loadKeyring } from "../platform/crypto";
import { log } from "../platform/logging";
import { database, type Database } from "../platform/db";
import { ApiError, type ValidationIssue } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, pathId, queryBoolean, queryCount, queryId, optionalJsonBody } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { runConnectionCheck } from "./connection-check";
import { wakeMailboxes } from "./wake";
import { mailboxSendingStatusOf, presentSendingStatus, SendingStatusAnswer } from "../engine/status";
import {
  defaultPortType,
  DEFAULT_TAG_COLOR,
  distinct,
  mailHost,
  newSecret,
  OAUTH_NOT_CONFIGURED,
  OAUTH_SERVERS,
  presentMailbox,
  presentTag,
  trackingDomain,
  utcDayStart,
  warmupStats,
  type MailboxRow,
} from "./rules";
import {
  assignTags,
  attachMailboxes,
  campaignIdsOf,
  campaignMailboxes,
  createTag,
  deleteMailbox,
  detachMailboxes,
  findMailbox,
  findTag,
  insertMailbox,
  listMailboxes,
  mailboxesOfAddresses,
  mailboxOfAddress,
  mailboxUsage,
  queueRecheck,
  reconnectTargets,
  recordConnectionOutcome,
  removeTags,
  tagNamed,
  tagsOfMailboxes,
  updateMailbox,
  updateTag,
  visibleMailboxIds,
  visibleTagIds,
  visibleTags,
  type MailboxChanges,
  type MailboxSecrets,
  type NewMailbox,
} from "./store";

// Schemas.

/** An optional address that may also be cleared with "" or null. */
const OptionalEmail = z.union([z.email().max(320), z.literal("")]).nullable().optional();
const Secret = z.string().max(1024).nullable().optional().openapi({ description: 'Write-only; absent, null, "" or "********" keeps the stored one' });
const Host = z.string().max(255).optional();
const Port = z
  .number()
  .int()
  .min(1)
  .max(65535)
  .optional();

const MailboxFields = z.object({
  from_name: z.string().trim().min(1).max(255).optional(),
  from_email: z.email().max(320).optional(),
  user_name: z.string().trim().min(1).max(320).optional().openapi({ description: "SMTP login (aliases username, smtp_username); default from_email" }),
  username: z.string().trim().min(1).max(320).optional(),
  smtp_username: z.string().trim().min(1).max(320).optional(),
  password: Secret,
  smtp_password: Secret,
  smtp_host: Host,
  smtp_port: Port.refine((port) => port !== 25, "Port 25 is not available (Workers cannot open it): use 465 or 587"),
  smtp_port_type: z.enum(PORT_TYPES).optional(),
  imap_user_name: z.string().trim().max(320).nullable().optional(),
  imap_username: z.string().trim().max(320).nullable().optional(),
  imap_password: Secret,
  imap_host: Host,
  imap_port: Port,
  imap_port_type: z.enum(PORT_TYPES).optional(),
  type: z.enum(MAILBOX_TYPES).optional(),
  max_email_per_day: z.number().int().min(1).max(10000).optional(),
  time_to_wait_in_mins: z.number().int().min(0).max(1440).optional(),
  custom_tracking_url: z.string().max(300).nullable().optional(),
  custom_tracking_domain: z.string().max(300).nullable().optional(),
  bcc: OptionalEmail,
  signature: z.string().max(10_000).nullable().optional(),
  different_reply_to_address: OptionalEmail,
  warmup_enabled: z.boolean().optional(),
  total_warmup_per_day: z.number().int().min(1).max(100).optional(),
  daily_rampup: z.number().int().min(0).max(100).optional(),
  reply_rate_percentage: z.number().int().min(0).max(100).optional(),
  client_id: BodyId.nullable().optional(),
  is_suspended: z.boolean().optional(),
});
type Fields = z.infer<typeof MailboxFields>;

const SaveMailbox = MailboxFields.extend({
  id: BodyId.nullable().optional().openapi({ description: "Update this mailbox; absent or null creates" }),
}).openapi("SaveEmailAccount");
const UpdateMailbox = MailboxFields.openapi("UpdateEmailAccount");

const OAuthToken = z
  .object({
    access_token: z.string().max(4096).optional(),
    refresh_token: z.string().max(4096).optional(),
    expiry_date: z.number().int().nonnegative().openapi({ description: "Epoch milliseconds" }),
    scope: z.string().max(2048),
    token_type: z.string().max(100).optional(),
    id_token: z.string().max(8192).optional(),
  })
  .openapi({ description: "Write-only OAuth material" });

const SaveOAuthMailbox = z
  .object({
    id: BodyId.nullable().optional(),
    from_name: z.string().trim().min(1).max(255),
    from_email: z.email().max(320),
    username: z.string().trim().min(1).max(320),
    type: z.enum(["GMAIL", "OUTLOOK"]),
    token: OAuthToken,
    warmup_enabled: z.boolean().optional(),
    use_whitelabel_credentials: z.boolean().optional().openapi({ description: "Ignored" }),
    max_email_per_day: z.number().int().min(1).max(10000).optional(),
    time_to_wait_in_mins: z.number().int().min(0).max(1440).optional(),
    custom_tracking_url: z.string().max(300).nullable().optional(),
    bcc: OptionalEmail,
    signature: z.string().max(10_000).nullable().optional(),
    client_id: BodyId.nullable().optional(),
  })
  .openapi("SaveOAuthEmailAccount");

const Tag = z.object({ id: z.number().int(), name: z.string(), color: z.string() }).openapi("Tag");

const WarmupDetails = z.object({
  id: z.number().int(),
  status: z.enum(["ACTIVE", "INACTIVE"]),
  total_warmup_per_day: z.number().int(),
  daily_rampup: z.number().int(),
  reply_rate_percentage: z.number().int(),
  warmup_min_count: z.number().int(),
  warmup_max_count: z.number().int(),
  max_email_per_day: z.number().int(),
  is_warmup_blocked: z.boolean(),
  blocked_reason: z.string().nullable(),
  warmup_reputation: z.number().nullable(),
  total_sent_count: z.number().int(),
  total_spam_count: z.number().int(),
  warmup_key_id: z.string().nullable(),
  auto_adjust_warmup: z.boolean(),
  is_rampup_enabled: z.boolean(),
  created_at: z.string(),
});

const EmailAccount = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    user_id: z.number().int(),
    client_id: z.number().int().nullable(),
    from_name: z.string(),
    from_email: z.string(),
    username: z.string(),
    password: z.string().nullable().openapi({ description: '"********" when stored, null when not; never the secret' }),
    smtp_host: z.string(),
    smtp_port: z.number().int(),
    smtp_port_type: z.enum(PORT_TYPES),
    imap_username: z.string(),
    imap_password: z.string().nullable(),
    imap_host: z.string(),
    imap_port: z.number().int(),
    imap_port_type: z.enum(PORT_TYPES),
    is_different_imap_account: z.boolean(),
    different_reply_to_address: z.string().nullable(),
    type: z.enum(MAILBOX_TYPES),
    message_per_day: z.number().int(),
    time_to_wait_in_mins: z.number().int(),
    minTimeToWaitInMins: z.number().int(),
    signature: z.string().nullable(),
    custom_tracking_domain: z.string().nullable(),
    bcc_email: z.string().nullable(),
    is_smtp_success: z.boolean().nullable(),
    is_imap_success: z.boolean().nullable(),
    smtp_failure_error: z.string().nullable(),
    imap_failure_error: z.string().nullable(),
    is_suspended: z.boolean(),
    daily_sent_count: z.number().int(),
    campaign_count: z.number().int(),
    warmup_details: WarmupDetails,
    campaign_ids: z.array(z.number().int()).optional(),
    tags: z.array(Tag).optional(),
    sending_status: SendingStatusAnswer.optional().openapi({ description: "By id only: why the mailbox sends nothing now, or sending" }),
  })
  .openapi("EmailAccount");

const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() }).openapi("Ack");
const TagResponse = z.object({ ok: z.boolean(), data: Tag });

const IdParams = z.object({ id: pathId("id") });
const CampaignParams = z.object({ campaign_id: pathId("campaign_id") });

const MailboxIdList = (max: number) => z.array(BodyId).min(1).max(max);

/** Mailboxes by id or by address (BC), one of the two: checked in the handler, after the tags it names. */
const TagMapping = z
  .object({
    email_account_ids: MailboxIdList(25).optional(),
    emails: z.array(z.email().max(320)).min(1).max(25).optional().openapi({ description: "Mailboxes by address, instead of email_account_ids" }),
    tag_ids: z.array(BodyId).min(1).max(100),
  })
  .openapi("TagMapping");

/** `email_account_ids`, or DL's single `email_account_id`: one is required (checked once the campaign is found). */
const CampaignMailboxes = z
  .object({
    email_account_ids: MailboxIdList(100).optional(),
    email_account_id: BodyId.optional().openapi({ description: "One mailbox, instead of email_account_ids" }),
  })
  .openapi("CampaignEmailAccounts");

const ListQuery = z.object({
  offset: queryCount(0).optional(),
  limit: queryCount(1, 100).optional(),
  isInUse: queryBoolean.optional(),
  emailWarmupStatus: z.enum(["ACTIVE", "INACTIVE"]).optional(),
  isSmtpSuccess: queryBoolean.optional(),
  isWarmupBlocked: queryBoolean.optional(),
  esp: z.enum(["GMAIL", "OUTLOOK", "SMTP"]).optional(),
  // D1 refuses LIKE patterns over 50 bytes.
  username: z.string().trim().min(1).max(40).optional(),
  client_id: queryId().optional(),
});

// Routes. Literal paths are registered before the {id} ones, so `save`, `tags`, ... are never ids.

const tag = ["Email accounts"];
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
  saveOAuth: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/save-oauth",
    operationId: "saveOauthEmailAccount",
    tags: tag,
    summary: "Create or update a Gmail/Outlook mailbox from OAuth material",
    description:
      "The token is stored encrypted and never answered. Salvo holds no provider OAuth client yet, so the mailbox is kept with is_smtp_success false and smtp_failure_error \"OAuth client not configured\".",
    security,
    request: { body: jsonBody(SaveOAuthMailbox, {
          from_name: "Ann from Acme",
          from_email: "ann@acme.example",
          username: "ann@acme.example",
          type: "GMAIL",
          token: { refresh_token: "1//0g-refresh-token", expiry_date: 1769331600000, scope: "https://mail.google.com/", token_type: "Bearer" },
        }) },
    responses: {
      200: json(Ack.extend({ id: z.number().int(), data: EmailAccount }), "The saved mailbox"),
      ...errorResponses(400, 401, 404, 422, 429, 503),
    },
  }),
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
    description: "Gives mailboxes (`email_account_ids` 1–25, or `emails`) tags; idempotent. An unknown mailbox or tag → 400 naming it.",
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
  warmup: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/warmup",
    operationId: "setEmailAccountWarmup",
    description: "Stores warmup settings (shown in `warmup_details`); Salvo runs no warmup network, so they change nothing sent.",
    tags: tag,
    summary: "Warmup settings (stored and shown; Salvo runs no warmup network)",
    security,
    request: {
      params: IdParams,
      body: jsonBody(
        z.object({
          warmup_enabled: z.boolean(),
          total_warmup_per_day: z.number().int().min(1).max(100).optional(),
          daily_rampup: z.number().int().min(0).max(100).optional(),
          reply_rate_percentage: z.number().int().min(0).max(100).optional(),
          warmup_key_id: z.string().trim().max(100).nullable().optional(),
          auto_adjust_warmup: z.boolean().optional(),
          is_rampup_enabled: z.boolean().optional(),
        }), { warmup_enabled: true, total_warmup_per_day: 20, daily_rampup: 2 },
      ),
    },
    responses: { 200: json(Ack, "Stored"), ...errorResponses(401, 404, 422, 429) },
  }),
  warmupStats: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/{id}/warmup-stats",
    operationId: "getEmailAccountWarmupStats",
    description: "Warmup statistics of the last 7 UTC days; all 0, as Salvo runs no warmup network.",
    tags: tag,
    summary: "Warmup statistics of the last 7 UTC days (all 0: no warmup network)",
    security,
    request: { params: IdParams },
    responses: {
      200: json(
        z.object({
          ok: z.boolean(),
          total_sent: z.number().int(),
          spam_count: z.number().int(),
          sent_count: z.number().int(),
          inbox_count: z.number().int(),
          reputation_score: z.number().nullable(),
          daily_stats: z.array(z.object({ date: z.string(), sent: z.number().int(), spam: z.number().int(), delivered: z.number().int(), opened: z.number().int(), replied: z.number().int() })),
        }),
        "Statistics",
      ),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
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

// Deciding.

const ack = (message: string) => ({ ok: true, success: true, message });

/** The written fields with their aliases resolved (the canonical name wins). */
function canonical(body: Fields) {
  return {
    ...body,
    user_name: body.user_name ?? body.username ?? body.smtp_username,
    password: body.password ?? body.smtp_password,
    imap_user_name: body.imap_user_name !== undefined ? body.imap_user_name : body.imap_username,
    custom_tracking_url: body.custom_tracking_url !== undefined ? body.custom_tracking_url : body.custom_tracking_domain,
  };
}
type Written = ReturnType<typeof canonical>;

const REQUIRED_ON_CREATE = ["from_name", "from_email", "password", "smtp_host", "smtp_port", "imap_host", "imap_port"] as const;

/** Hosts and the tracking domain as stored, or the 422 naming each refused one. */
function checkedHosts(body: Written, allowLocal: boolean) {
  const issues: ValidationIssue[] = [];
  const host = (field: "smtp_host" | "imap_host") => {
    const value = body[field];
    if (value === undefined) return undefined;
    const checked = mailHost(value, allowLocal);
    if ("problem" in checked) issues.push({ path: field, message: `${field} ${checked.problem}` });
    return "host" in checked ? checked.host : undefined;
  };
  const smtpHost = host("smtp_host");
  const imapHost = host("imap_host");
  let tracking: string | null | undefined;
  if (body.custom_tracking_url === null) tracking = null;
  else if (body.custom_tracking_url !== undefined) {
    const checked = trackingDomain(body.custom_tracking_url);
    if ("problem" in checked) issues.push({ path: "custom_tracking_url", message: `custom_tracking_url ${checked.problem}` });
    else tracking = checked.host || null;
  }
  if (issues.length) throw ApiError.validation(issues);
  return { smtpHost, imapHost, tracking };
}

/** The client a mailbox write sets: the shared rule, or unchanged (undefined) when an account key names none. */
function mailboxClient(db: Database, principal: Principal, requested: number | null | undefined): Promise<number | null> | undefined {
  return requested === undefined && principal.clientId === null ? undefined : owningClient(db, principal, requested);
}

const emptyToNull = (value: string | null | undefined) => (value === undefined ? undefined : value || null);

/** The columns a write sets (undefined = unchanged), from canonical fields already checked. */
function changesOf(body: Written, hosts: ReturnType<typeof checkedHosts>): MailboxChanges {
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

// Storing and presenting.

const hasSecrets = (secrets: MailboxSecrets) => secrets.password !== undefined || secrets.imapPassword !== undefined || secrets.oauthToken !== undefined;

async function keyringFor(c: Context<AppEnv>, secrets: MailboxSecrets) {
  return hasSecrets(secrets) ? loadKeyring(config(c.env).secretsKey) : null;
}

/** Starts the connection check after the answer (the save does not wait on the servers). */
function checkInBackground(c: Context<AppEnv>, db: Database, row: MailboxRow, secrets: MailboxSecrets) {
  if (!config(c.env).mailboxConnectionChecks) return;
  // A mailbox that passes may have work waiting for it: its sender looks at once.
  const check = runConnectionCheck(db, row, secrets, config(c.env).secretsKey)
    .then(() => wakeMailboxes(c.env, [row.id]))
    .catch((error: Error) =>
    log("error", "mailbox connection check failed", { request_id: c.get("requestId"), mailbox_id: row.id, error: error.message }),
  );
  c.executionCtx.waitUntil(check);
}

async function presentRows(db: Database, principal: Principal, rows: MailboxRow[], withTags = false) {
  const ids = rows.map((row) => row.id);
  const usage = await mailboxUsage(db, principal.accountId, ids, utcDayStart(Date.now()));
  const tagsOf = withTags ? await tagsOfMailboxes(db, ids) : null;
  return rows.map((row) => ({
    ...presentMailbox(row, usage.get(row.id)!),
    ...(tagsOf ? { tags: tagsOf.get(row.id)!.map(presentTag) } : {}),
  }));
}

/** Applies a validated write to an existing mailbox. */
async function applyUpdate(c: Context<AppEnv>, db: Database, principal: Principal, existing: MailboxRow, body: Written, oauthToken?: string): Promise<MailboxRow> {
  const hosts = checkedHosts(body, config(c.env).allowLocalMailHosts);
  const changes = changesOf(body, hosts);
  if (body.client_id !== undefined) changes.clientId = await mailboxClient(db, principal, body.client_id);
  if (changes.fromEmail !== undefined && changes.fromEmail !== existing.fromEmail) {
    const holder = await mailboxOfAddress(db, principal.accountId, changes.fromEmail);
    if (holder && holder.id !== existing.id) throw ApiError.badRequest("Email account already exists");
  }
  if (body.smtp_port !== undefined && body.smtp_port_type === undefined && body.smtp_port !== existing.smtpPort) changes.smtpPortType = defaultPortType(body.smtp_port);
  if (body.imap_port !== undefined && body.imap_port_type === undefined && body.imap_port !== existing.imapPort) changes.imapPortType = defaultPortType(body.imap_port);
  const secrets: MailboxSecrets = { password: newSecret(body.password), imapPassword: newSecret(body.imap_password), oauthToken };
  const keyring = await keyringFor(c, secrets);
  const recheck = touchesConnection(existing, changes, secrets);
  const row = await updateMailbox(db, keyring, existing.id, { ...changes, ...(recheck ? UNCHECKED : {}), updatedAt: new Date() }, secrets);
  if (recheck) checkInBackground(c, db, row, secrets);
  return row;
}

async function createMailbox(c: Context<AppEnv>, db: Database, principal: Principal, body: Written, oauthToken?: string): Promise<MailboxRow> {
  const required = oauthToken === undefined ? REQUIRED_ON_CREATE : REQUIRED_ON_CREATE.filter((field) => field !== "password");
  const missing = required.filter((field) => body[field] === undefined || (field === "password" && newSecret(body.password) === undefined));
  if (missing.length) throw ApiError.validation(missing.map((field) => ({ path: field, message: `${field} is required to create an email account` })));
  const hosts = checkedHosts(body, config(c.env).allowLocalMailHosts);
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
  };
  const secrets: MailboxSecrets = { password: newSecret(body.password), imapPassword: newSecret(body.imap_password), oauthToken };
  const keyring = await loadKeyring(config(c.env).secretsKey);
  const row = await insertMailbox(db, keyring, values, secrets);
  checkInBackground(c, db, row, secrets);
  return row;
}

/** Mailbox ids named by id or by address; any the caller cannot see is a 400 naming it. */
async function namedMailboxes(db: Database, principal: Principal, ids: number[] | undefined, emails: string[] | undefined): Promise<number[]> {
  if ((ids === undefined) === (emails === undefined)) {
    throw ApiError.validation([{ path: "email_account_ids", message: "Give either email_account_ids or emails" }]);
  }
  if (emails !== undefined) {
    const wanted = distinct(emails.map((email) => email.toLowerCase()));
    const found = await mailboxesOfAddresses(db, principal, wanted);
    const unknown = wanted.find((email) => !found.some((row) => row.fromEmail === email));
    if (unknown !== undefined) throw ApiError.badRequest(`Email account not found: ${unknown}`);
    return found.map((row) => row.id);
  }
  const wanted = distinct(ids!);
  const visible = new Set(await visibleMailboxIds(db, principal, wanted));
  const unknown = wanted.find((id) => !visible.has(id));
  if (unknown !== undefined) throw ApiError.badRequest(`Email account not found: ${unknown}`);
  return wanted;
}

async function namedTags(db: Database, principal: Principal, ids: number[]): Promise<number[]> {
  const wanted = distinct(ids);
  const visible = new Set(await visibleTagIds(db, principal, wanted));
  const unknown = wanted.find((id) => !visible.has(id));
  if (unknown !== undefined) throw ApiError.badRequest(`Tag not found: ${unknown}`);
  return wanted;
}

/** The tag scope a caller creates in: a client key's client, else the account itself. */
const tagScope = (principal: Principal) => principal.clientId;

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

async function answerSaved(db: Database, principal: Principal, row: MailboxRow, updated: boolean) {
  const [data] = await presentRows(db, principal, [row]);
  const message = updated ? "Email account updated successfully" : "Email account added successfully";
  return { ...ack(message), id: row.id, data: data! };
}

mailboxRoutes.openapi(routes.save, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const { id, ...fields } = c.req.valid("json");
  const body = canonical(fields);
  const existing = await mailboxToSave(db, principal, id, body.from_email);
  const row = existing ? await applyUpdate(c, db, principal, existing, body) : await createMailbox(c, db, principal, body);
  return c.json(await answerSaved(db, principal, row, existing !== null), 200);
});

mailboxRoutes.openapi(routes.saveOAuth, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  // use_whitelabel_credentials rides along in `fields` and is ignored (no column reads it).
  const { id, token, username, type, ...fields } = c.req.valid("json");
  const servers = OAUTH_SERVERS[type];
  const body = canonical({
    ...fields,
    type,
    user_name: username,
    smtp_host: servers.smtp.host,
    smtp_port: servers.smtp.port,
    smtp_port_type: servers.smtp.portType,
    imap_host: servers.imap.host,
    imap_port: servers.imap.port,
    imap_port_type: servers.imap.portType,
  });
  const existing = await mailboxToSave(db, principal, id, body.from_email);
  const oauthToken = JSON.stringify(token);
  const saved = existing ? await applyUpdate(c, db, principal, existing, body, oauthToken) : await createMailbox(c, db, principal, body, oauthToken);
  await recordConnectionOutcome(db, saved.id, OAUTH_NOT_CONFIGURED, Date.now());
  const row = await findMailbox(db, principal, saved.id);
  return c.json(await answerSaved(db, principal, row, existing !== null), 200);
});

mailboxRoutes.openapi(routes.createTag, async (c) => {
  const principal = c.get("principal");
  const { name, color } = c.req.valid("json");
  const row = await createTag(database(c.env.DB), principal.accountId, tagScope(principal), name, color?.toUpperCase() ?? DEFAULT_TAG_COLOR);
  return c.json({ ok: true, data: presentTag(row) }, 200);
});

mailboxRoutes.openapi(routes.tagManager, async (c) => {
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

mailboxRoutes.openapi(routes.listTags, async (c) => {
  const rows = await visibleTags(database(c.env.DB), c.get("principal"));
  return c.json({ ok: true, data: rows.map(presentTag) }, 200);
});

mailboxRoutes.openapi(routes.assignTags, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const tagIds = await namedTags(db, principal, body.tag_ids);
  const mailboxIds = await namedMailboxes(db, principal, body.email_account_ids, body.emails);
  await assignTags(db, mailboxIds, tagIds);
  return c.json(ack("Tags assigned successfully"), 200);
});

mailboxRoutes.openapi(routes.removeTags, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const tagIds = await namedTags(db, principal, body.tag_ids);
  const mailboxIds = await namedMailboxes(db, principal, body.email_account_ids, body.emails);
  await removeTags(db, mailboxIds, tagIds);
  return c.json(ack("Tags removed successfully"), 200);
});

mailboxRoutes.openapi(routes.tagList, async (c) => {
  const db = database(c.env.DB);
  const addresses = distinct(c.req.valid("json").email_ids.map((email) => email.toLowerCase()));
  const mailboxes = await mailboxesOfAddresses(db, c.get("principal"), addresses);
  const tagsOf = await tagsOfMailboxes(db, mailboxes.map((row) => row.id));
  const data = mailboxes.map((row) => ({ email_account_id: row.id, from_email: row.fromEmail, tags: tagsOf.get(row.id)!.map(presentTag) }));
  return c.json({ ok: true, data }, 200);
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
    },
    query.offset ?? 0,
    query.limit ?? 100,
  );
  return c.json(await presentRows(db, principal, rows), 200);
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

mailboxRoutes.openapi(routes.read, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const query = c.req.valid("query");
  const row = await findMailbox(db, principal, c.req.valid("param").id);
  const [data] = await presentRows(db, principal, [row], query.fetch_tags === true);
  const campaignIds = query.fetch_campaigns ? { campaign_ids: await campaignIdsOf(db, principal, row.id) } : {};
  const status = await mailboxSendingStatusOf(db, row.id, Date.now());
  return c.json({ ...data!, ...campaignIds, ...(status && { sending_status: presentSendingStatus(status) }) }, 200);
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

mailboxRoutes.openapi(routes.warmup, async (c) => {
  const db = database(c.env.DB);
  const existing = await findMailbox(db, c.get("principal"), c.req.valid("param").id);
  const body = c.req.valid("json");
  const changes: MailboxChanges = {
    warmupEnabled: body.warmup_enabled,
    totalWarmupPerDay: body.total_warmup_per_day,
    dailyRampup: body.daily_rampup,
    replyRatePercentage: body.reply_rate_percentage,
    warmupKeyId: body.warmup_key_id === undefined ? undefined : body.warmup_key_id || null,
    autoAdjustWarmup: body.auto_adjust_warmup,
    isRampupEnabled: body.is_rampup_enabled,
  };
  const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  await updateMailbox(db, null, existing.id, { ...defined, updatedAt: new Date() }, {});
  return c.json(ack("Warmup settings updated successfully"), 200);
});

mailboxRoutes.openapi(routes.warmupStats, async (c) => {
  await findMailbox(database(c.env.DB), c.get("principal"), c.req.valid("param").id);
  return c.json(warmupStats(Date.now()), 200);
});

mailboxRoutes.openapi(routes.campaignList, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const rows = await campaignMailboxes(db, campaign.id);
  return c.json(await presentRows(db, principal, rows, c.req.valid("query").include_tags === true), 200);
});

function idsOf(body: z.infer<typeof CampaignMailboxes>): number[] {
  if (body.email_account_ids !== undefined) return body.email_account_ids;
  if (body.email_account_id !== undefined) return [body.email_account_id];
  throw ApiError.validation([{ path: "email_account_ids", message: "email_account_ids (or email_account_id) is required" }]);
}

mailboxRoutes.openapi(routes.campaignAttach, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const ids = await namedMailboxes(db, principal, idsOf(c.req.valid("json")), undefined);
  const attached = await attachMailboxes(db, campaign.id, ids);
  if (campaign.status === "ACTIVE") await wakeMailboxes(c.env, ids);
  return c.json({ ...ack("Email accounts added to the campaign"), data: { email_account_ids: attached } }, 200);
});

mailboxRoutes.openapi(routes.campaignDetach, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  await detachMailboxes(db, campaign.id, distinct(idsOf(c.req.valid("json"))));
  return c.json(ack("Email accounts removed from the campaign"), 200);
});

mailboxRoutes.openapi(routes.campaignDetachOne, async (c) => {
  const db = database(c.env.DB);
  const { campaign_id, email_account_id } = c.req.valid("param");
  const campaign = await findCampaign(db, c.get("principal"), campaign_id);
  await detachMailboxes(db, campaign.id, [email_account_id]);
  return c.json(ack("Email account removed from the campaign"), 200);
});
