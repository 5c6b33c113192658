import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, clients } from "./accounts";
import { campaigns, EMAIL_PROVIDERS, tags } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";

export const MAILBOX_TYPES = ["SMTP", "GMAIL", "OUTLOOK", "ZOHO"] as const;
export type MailboxType = (typeof MAILBOX_TYPES)[number];
export const PORT_TYPES = ["SSL", "TLS", "STARTTLS"] as const;
export type PortType = (typeof PORT_TYPES)[number];

/**
 * A sending identity (`email_accounts` of the API). It belongs to the account and, optionally, one
 * client; `from_email` (stored lower-cased) is unique per account, whatever the client. Credentials
 * are ciphertexts of src/platform/crypto.ts bound to the row; `*_success` null = never checked.
 */
export const emailAccounts = sqliteTable(
  "email_accounts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: integer("client_id").references(() => clients.id),
    type: text("type", { enum: MAILBOX_TYPES }).notNull().default("SMTP"),
    fromName: text("from_name").notNull(),
    fromEmail: text("from_email").notNull(),
    username: text("username").notNull(),
    passwordCiphertext: text("password_ciphertext"),
    smtpHost: text("smtp_host").notNull(),
    smtpPort: integer("smtp_port").notNull(),
    smtpPortType: text("smtp_port_type", { enum: PORT_TYPES }).notNull(),
    imapUsername: text("imap_username"),
    imapPasswordCiphertext: text("imap_password_ciphertext"),
    imapHost: text("imap_host").notNull(),
    imapPort: integer("imap_port").notNull(),
    imapPortType: text("imap_port_type", { enum: PORT_TYPES }).notNull(),
    /** Gmail/Outlook OAuth material (JSON), encrypted like the passwords; never answered. */
    oauthTokenCiphertext: text("oauth_token_ciphertext"),
    maxEmailPerDay: integer("max_email_per_day").notNull().default(100),
    timeToWaitInMins: integer("time_to_wait_in_mins").notNull().default(0),
    signature: text("signature"),
    customTrackingDomain: text("custom_tracking_domain"),
    bccEmail: text("bcc_email"),
    differentReplyToAddress: text("different_reply_to_address"),
    isSmtpSuccess: integer("is_smtp_success", { mode: "boolean" }),
    isImapSuccess: integer("is_imap_success", { mode: "boolean" }),
    smtpFailureError: text("smtp_failure_error"),
    imapFailureError: text("imap_failure_error"),
    checkedAt: instant("checked_at"),
    /** The server refused the mailbox's sending for now, or could not be reached: the engine's next try (migration 0085). */
    sendHeldUntil: instant("send_held_until"),
    /** The server's words (or what went wrong) with `send_held_until`. */
    sendHeldReason: text("send_held_reason"),
    isSuspended: integer("is_suspended", { mode: "boolean" }).notNull().default(false),
    warmupEnabled: integer("warmup_enabled", { mode: "boolean" }).notNull().default(false),
    totalWarmupPerDay: integer("total_warmup_per_day").notNull().default(10),
    dailyRampup: integer("daily_rampup").notNull().default(0),
    replyRatePercentage: integer("reply_rate_percentage").notNull().default(20),
    warmupKeyId: text("warmup_key_id"),
    autoAdjustWarmup: integer("auto_adjust_warmup", { mode: "boolean" }).notNull().default(false),
    isRampupEnabled: integer("is_rampup_enabled", { mode: "boolean" }).notNull().default(false),
    /** Null: max(1, total - 5) (CONTRACT 19.1). */
    warmupMinCount: integer("warmup_min_count"),
    sendWarmupsOnlyOnWeekdays: integer("send_warmups_only_on_weekdays", { mode: "boolean" }).notNull().default(false),
    dailyReplyLimit: integer("daily_reply_limit"),
    useCustomDomain: integer("use_custom_domain", { mode: "boolean" }).notNull().default(false),
    /** When warmup was last turned on: the ramp counts sending days from it. */
    warmupEnabledAt: instant("warmup_enabled_at"),
    /** Warmup blocked (CONTRACT 19.4): the servers' words; null = not blocked. */
    warmupBlockedReason: text("warmup_blocked_reason"),
    /** When a person last unblocked warmup with the code: refusals of mail sent before no longer count. */
    warmupUnblockedAt: instant("warmup_unblocked_at"),
    /** Warmup mail to this address bounced: out of the pool until warmup is turned off and on. */
    warmupBouncedReason: text("warmup_bounced_reason"),
    /** PASSWORD, or OAUTH (CONTRACT 18): then `oauth_token_ciphertext` holds the refresh token and the app it was granted to. */
    authType: text("auth_type", { enum: ["PASSWORD", "OAUTH"] }).notNull().default("PASSWORD"),
    oauthProvider: text("oauth_provider", { enum: ["google", "microsoft"] }),
    /** The account's or client's app it was connected with; null with `oauth_app_level` deployment (or the app deleted). */
    oauthAppId: integer("oauth_app_id"),
    oauthAppLevel: text("oauth_app_level", { enum: ["client", "account", "deployment"] }),
    oauthAccountKind: text("oauth_account_kind", { enum: ["workspace", "consumer", "work", "personal"] }),
    /** The scopes granted, space-separated. */
    oauthScopes: text("oauth_scopes"),
    oauthTenant: text("oauth_tenant"),
    oauthConnectedAt: instant("oauth_connected_at"),
    oauthLastRefreshAt: instant("oauth_last_refresh_at"),
    /** Set when a person must act (CONTRACT 18.5): the code, the message, when; cleared by a reconnect, new credentials or a passing check. */
    disconnectCode: text("disconnect_code"),
    disconnectMessage: text("disconnect_message"),
    disconnectedAt: instant("disconnected_at"),
    /** When the mailbox's sender object next wakes (it writes this); the minute cron re-arms one that is late. */
    engineWakeAt: instant("engine_wake_at"),
    /** A live fetch (CONTRACT 21.2) asked for a read at this time; the reader clears it once that read has run. */
    liveFetchRequestedAt: instant("live_fetch_requested_at"),
    /** Its sending domain's provider from MX (CONTRACT 23.3, migration 0079); the type decides for GMAIL and OUTLOOK. */
    espProvider: text("esp_provider", { enum: EMAIL_PROVIDERS }),
    espCheckedAt: integer("esp_checked_at").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("email_accounts_account_email_idx").on(t.accountId, t.fromEmail),
    index("email_accounts_live_fetch_idx").on(t.accountId, t.liveFetchRequestedAt).where(sql`live_fetch_requested_at IS NOT NULL`),
    index("email_accounts_account_client_idx").on(t.accountId, t.clientId),
    index("email_accounts_esp_pending_idx").on(t.espCheckedAt).where(sql`esp_provider IS NULL`),
    // The daily connection re-check takes the longest-unchecked mailboxes with a password or refresh token (store.ts).
    index("email_accounts_recheck_idx")
      .on(sql`coalesce(${t.checkedAt}, ${t.updatedAt})`)
      .where(sql`password_ciphertext IS NOT NULL OR imap_password_ciphertext IS NOT NULL OR oauth_token_ciphertext IS NOT NULL`),
  ],
);

/** The mailboxes a campaign sends through. */
export const campaignEmailAccounts = sqliteTable(
  "campaign_email_accounts",
  {
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    emailAccountId: integer("email_account_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.emailAccountId] }), index("campaign_email_accounts_mailbox_idx").on(t.emailAccountId)],
);

/** A mailbox's tags, from the same catalogue as campaign tags. */
export const emailAccountTags = sqliteTable(
  "email_account_tags",
  {
    emailAccountId: integer("email_account_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.emailAccountId, t.tagId] }), index("email_account_tags_tag_idx").on(t.tagId)],
);

const MANUAL_SEND_KINDS = ["reply", "test_email", "forward", "single"] as const;
export type ManualSendKind = (typeof MANUAL_SEND_KINDS)[number];

/**
 * One email a mailbox sent outside its campaigns (src/manual-mail/), with how many recipients it
 * reached. A reply is also a SENT event of its thread (`in_events`): the day's count of the mailbox
 * (src/mailboxes/sends.ts) takes it from the events and this row only for its recipients.
 */
export const manualSends = sqliteTable(
  "manual_sends",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    emailAccountId: integer("email_account_id")
      .notNull()
      .references(() => emailAccounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: MANUAL_SEND_KINDS }).notNull(),
    recipients: integer("recipients").notNull(),
    inEvents: integer("in_events", { mode: "boolean" }).notNull().default(false),
    messageId: text("message_id"),
    sentAt: instant("sent_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("manual_sends_mailbox_time_idx").on(t.emailAccountId, t.sentAt, t.inEvents, t.recipients)],
);
