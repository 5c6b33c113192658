import { z } from "@hono/zod-openapi";
import { MAILBOX_TYPES, PORT_TYPES } from "../db/schema";
import { emailAddress } from "../mail/address";
import { BodyId, pathId, queryBoolean, queryCount, queryId } from "../platform/openapi";
import { MailboxSendingStatusAnswer } from "../engine/status";

// Schemas.


/** An optional address that may also be cleared with "" or null. */
export const OptionalEmail = z.union([emailAddress(), z.literal("")]).nullable().optional();
/**
 * A sender's display name goes into every From header: a line break (or another control character) there
 * would make each send from the mailbox fail, so it is refused when saved, by every route that writes it.
 */
export const FromName = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((name) => ![...name].some((char) => char.charCodeAt(0) < 0x20 || char === "\x7f"), "from_name must be one line without control characters");
const Secret = z.string().max(1024).nullable().optional().openapi({ description: 'Write-only; absent, null, "" or "********" keeps the stored one' });
const Host = z.string().max(255).optional();
const MailboxClient = BodyId.nullable().optional().openapi({ description: "Gives the mailbox to this client (null: the account's own); it leaves the tags of its old scope" });
const Port = z
  .number()
  .int()
  .min(1)
  .max(65535)
  .optional();

const MailboxFields = z.object({
  from_name: FromName.optional(),
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
  total_warmup_per_day: z.number().int().min(1).max(250).optional(),
  daily_rampup: z.number().int().min(0).max(100).optional(),
  reply_rate_percentage: z.number().int().min(0).max(100).optional(),
  client_id: MailboxClient,
  is_suspended: z.boolean().optional(),
});
export type Fields = z.infer<typeof MailboxFields>;

export const SaveMailbox = MailboxFields.extend({
  id: BodyId.nullable().optional().openapi({ description: "Update this mailbox; absent or null creates" }),
}).openapi("SaveEmailAccount");
export const UpdateMailbox = MailboxFields.openapi("UpdateEmailAccount");

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

export const SaveOAuthMailbox = z
  .object({
    id: BodyId.nullable().optional(),
    from_name: FromName,
    from_email: z.email().max(320),
    username: z.string().trim().min(1).max(320),
    type: z.enum(["GMAIL", "OUTLOOK"]),
    token: OAuthToken,
    warmup_enabled: z.boolean().optional(),
    use_whitelabel_credentials: z.boolean().optional().openapi({ description: "false: refresh with the deployment's app, not the client's or account's" }),
    max_email_per_day: z.number().int().min(1).max(10000).optional(),
    time_to_wait_in_mins: z.number().int().min(0).max(1440).optional(),
    custom_tracking_url: z.string().max(300).nullable().optional(),
    bcc: OptionalEmail,
    signature: z.string().max(10_000).nullable().optional(),
    client_id: MailboxClient,
  })
  .openapi("SaveOAuthEmailAccount");

export const Tag = z.object({ id: z.number().int(), name: z.string(), color: z.string() }).openapi("Tag");

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
  reply_rate: z.number().int(),
  send_warmups_only_on_weekdays: z.boolean(),
  daily_reply_limit: z.number().int().nullable(),
  use_custom_domain: z.boolean(),
  state: z.enum(["off", "warming", "weekend", "waiting_for_pool", "out_of_pool", "blocked"]),
  pool_size: z.number().int(),
  today_target: z.number().int(),
  today_sent: z.number().int(),
  created_at: z.string(),
});

export const EmailAccount = z
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
    auth_type: z.enum(["PASSWORD", "OAUTH"]),
    connection_state: z.enum(["unchecked", "connected", "failing", "disconnected"]).openapi({
      description: "failing: a passing fault, retried; disconnected: a person must act (see disconnect_reason)",
    }),
    needs_reconnect: z.boolean(),
    disconnect_reason: z.object({ code: z.string(), message: z.string(), at: z.string().nullable() }).nullable(),
    oauth: z
      .object({
        provider: z.enum(["google", "microsoft"]),
        account_kind: z.enum(["workspace", "consumer", "work", "personal"]).nullable(),
        scopes: z.array(z.string()),
        app_level: z.enum(["client", "account", "deployment"]).nullable(),
        connected_at: z.string().nullable(),
        last_refresh_at: z.string().nullable(),
      })
      .nullable(),
    send_hold: z
      .object({
        until: z.string().openapi({ description: "When Salvo tries its server again (ISO 8601)" }),
        reason: z.string().openapi({ description: "The server's words, or what went wrong" }),
      })
      .nullable()
      .openapi({
        description:
          "Extension: its mail server refused its sending for now (a 421, its provider's sending limit) or could not be reached; until the next try nothing of the mailbox knocks, and its emails wait. Null when not held",
      }),
    daily_sent_count: z.number().int(),
    campaign_count: z.number().int(),
    warmup_details: WarmupDetails,
    campaign_ids: z.array(z.number().int()).optional(),
    tags: z.array(Tag).optional(),
    sending_status: MailboxSendingStatusAnswer.optional().openapi({ description: "By id only: why the mailbox sends nothing now, or sending" }),
  })
  .openapi("EmailAccount");

export const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() }).openapi("Ack");
export const TagResponse = z.object({ ok: z.boolean(), data: Tag });

export const IdParams = z.object({ id: pathId("id") });
export const CampaignParams = z.object({ campaign_id: pathId("campaign_id") });

const MailboxIdList = (max: number) => z.array(BodyId).min(1).max(max);

/** Mailboxes by id or by address (BC), one of the two: checked in the handler, after the tags it names. */
export const TagMapping = z
  .object({
    email_account_ids: MailboxIdList(25).optional(),
    emails: z.array(z.email().max(320)).min(1).max(25).optional().openapi({ description: "Mailboxes by address, instead of email_account_ids" }),
    tag_ids: z.array(BodyId).min(1).max(100),
  })
  .openapi("TagMapping");

/** `email_account_ids`, or DL's single `email_account_id`: one is required (checked once the campaign is found). */
export const CampaignMailboxes = z
  .object({
    email_account_ids: MailboxIdList(100).optional(),
    email_account_id: BodyId.optional().openapi({ description: "One mailbox, instead of email_account_ids" }),
  })
  .openapi("CampaignEmailAccounts");

export const ListQuery = z.object({
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
  connection_state: z.enum(["unchecked", "connected", "failing", "disconnected"]).optional(),
  needs_reconnect: queryBoolean.optional(),
});

// Routes. Literal paths are registered before the {id} ones, so `save`, `tags`, ... are never ids.
