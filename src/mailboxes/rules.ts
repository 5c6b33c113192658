import type { MailCredential } from "../mail/sasl";
import type { MailboxType, PortType } from "../db/schema";
import { iso } from "../platform/time";
import { heldNow, type SendHold } from "./hold";
import { minCountOf } from "../warmup/rules";
import { newWarmupKey } from "../warmup/corpus";
import type { WarmupView } from "../warmup/view";

/** What a stored secret reads as: the secret itself never leaves the Worker. */
export const SECRET_MASK = "********";
export const DEFAULT_TAG_COLOR = "#9E9E9E";

/** SSL is implicit TLS; TLS and STARTTLS both mean an upgrade on the plain port, required (never clear). */
export function transportSecurity(portType: PortType): "tls" | "starttls" {
  return portType === "SSL" ? "tls" : "starttls";
}

/** Where and as whom a mailbox sends (SMTP) and reads (IMAP), given its password in clear. */
export function smtpTarget(row: MailboxRow, credential: MailCredential) {
  return { host: row.smtpHost, port: row.smtpPort, security: transportSecurity(row.smtpPortType), username: row.username, ...credential };
}

export function imapTarget(row: MailboxRow, credential: MailCredential) {
  return { host: row.imapHost, port: row.imapPort, security: transportSecurity(row.imapPortType), username: row.imapUsername ?? row.username, ...credential };
}

/** 465 (SMTPS) and 993 (IMAPS) speak TLS from the first byte; anything else is taken to upgrade. */
export function defaultPortType(port: number): PortType {
  return port === 465 || port === 993 ? "SSL" : "TLS";
}

/**
 * A secret field as written: absent, null, "" and the mask keep the stored secret (so a client can
 * post back what it read); anything else replaces it.
 */
export function newSecret(value: string | null | undefined): string | undefined {
  return value === undefined || value === null || value === "" || value === SECRET_MASK ? undefined : value;
}

/** A tracking domain as written, its leading scheme and trailing slashes dropped ("" clears it); the host rule is the outbound one. */
export function bareTrackingDomain(value: string): string {
  return value.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/\/+$/, "");
}

export interface MailboxRow {
  id: number;
  accountId: number;
  clientId: number | null;
  type: MailboxType;
  fromName: string;
  fromEmail: string;
  username: string;
  passwordCiphertext: string | null;
  smtpHost: string;
  smtpPort: number;
  smtpPortType: PortType;
  imapUsername: string | null;
  imapPasswordCiphertext: string | null;
  imapHost: string;
  imapPort: number;
  imapPortType: PortType;
  oauthTokenCiphertext: string | null;
  maxEmailPerDay: number;
  timeToWaitInMins: number;
  signature: string | null;
  customTrackingDomain: string | null;
  bccEmail: string | null;
  differentReplyToAddress: string | null;
  isSmtpSuccess: boolean | null;
  isImapSuccess: boolean | null;
  smtpFailureError: string | null;
  imapFailureError: string | null;
  isSuspended: boolean;
  warmupEnabled: boolean;
  totalWarmupPerDay: number;
  dailyRampup: number;
  replyRatePercentage: number;
  warmupKeyId: string | null;
  autoAdjustWarmup: boolean;
  isRampupEnabled: boolean;
  warmupMinCount: number | null;
  sendWarmupsOnlyOnWeekdays: boolean;
  dailyReplyLimit: number | null;
  useCustomDomain: boolean;
  warmupEnabledAt: Date | null;
  warmupBlockedReason: string | null;
  warmupBouncedReason: string | null;
  authType: "PASSWORD" | "OAUTH";
  oauthProvider: "google" | "microsoft" | null;
  oauthAppId: number | null;
  oauthAppLevel: "client" | "account" | "deployment" | null;
  oauthAccountKind: "workspace" | "consumer" | "work" | "personal" | null;
  oauthScopes: string | null;
  oauthTenant: string | null;
  oauthConnectedAt: Date | null;
  oauthLastRefreshAt: Date | null;
  disconnectCode: string | null;
  disconnectMessage: string | null;
  disconnectedAt: Date | null;
  /** Its server refused its sending until then, in its words (hold.ts `SendHold`); null when not held. */
  sendHeldUntil: Date | null;
  sendHeldReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One protocol's connection check: `ok` null = not checked; `error` is the server's message on failure. */
export interface ProtocolOutcome {
  ok: boolean | null;
  error: string | null;
  /** The server refused the login (not a passing fault): the mailbox is disconnected (CONTRACT 18.5). */
  refused?: boolean;
}

export interface ConnectionOutcome {
  smtp: ProtocolOutcome;
  imap: ProtocolOutcome;
}

export interface TagRow {
  id: number;
  name: string;
  color: string;
}

export function presentTag(tag: TagRow) {
  return { id: tag.id, name: tag.name, color: tag.color };
}

/** What a mailbox's usage adds to its row when presented. */
export interface MailboxUsage {
  dailySentCount: number;
  campaignCount: number;
  warmup: WarmupView;
}

/** `warmup_details` (CONTRACT 19.2): the settings, and the counters measured from the receivers' records. */
function presentWarmup(row: MailboxRow, view: WarmupView) {
  return {
    id: row.id,
    status: row.warmupEnabled ? ("ACTIVE" as const) : ("INACTIVE" as const),
    total_warmup_per_day: row.totalWarmupPerDay,
    daily_rampup: row.dailyRampup,
    reply_rate_percentage: row.replyRatePercentage,
    reply_rate: row.replyRatePercentage,
    warmup_min_count: minCountOf(row.warmupMinCount, row.totalWarmupPerDay),
    warmup_max_count: row.totalWarmupPerDay,
    max_email_per_day: row.maxEmailPerDay,
    is_warmup_blocked: row.warmupBlockedReason !== null,
    blocked_reason: row.warmupBlockedReason,
    warmup_reputation: view.reputation,
    total_sent_count: view.counters.totalSent,
    total_spam_count: view.counters.totalSpam,
    warmup_key_id: row.warmupKeyId,
    auto_adjust_warmup: row.autoAdjustWarmup,
    is_rampup_enabled: row.isRampupEnabled,
    send_warmups_only_on_weekdays: row.sendWarmupsOnlyOnWeekdays,
    daily_reply_limit: row.dailyReplyLimit,
    use_custom_domain: row.useCustomDomain,
    state: view.state,
    pool_size: view.poolSize,
    today_target: view.todayTarget,
    today_sent: view.counters.todaySent,
    created_at: iso(row.createdAt),
  };
}

/** The contract's EmailAccount at `now`: secrets as the mask (or null), never their value. */
export function presentMailbox(row: MailboxRow, usage: MailboxUsage, now: number) {
  return {
    id: row.id,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    user_id: row.accountId,
    client_id: row.clientId,
    from_name: row.fromName,
    from_email: row.fromEmail,
    username: row.username,
    password: row.authType === "OAUTH" || row.passwordCiphertext === null ? null : SECRET_MASK,
    smtp_host: row.smtpHost,
    smtp_port: row.smtpPort,
    smtp_port_type: row.smtpPortType,
    imap_username: row.imapUsername ?? row.username,
    imap_password: row.imapPasswordCiphertext === null ? null : SECRET_MASK,
    imap_host: row.imapHost,
    imap_port: row.imapPort,
    imap_port_type: row.imapPortType,
    is_different_imap_account: row.imapUsername !== null || row.imapPasswordCiphertext !== null,
    different_reply_to_address: row.differentReplyToAddress,
    type: row.type,
    message_per_day: row.maxEmailPerDay,
    time_to_wait_in_mins: row.timeToWaitInMins,
    minTimeToWaitInMins: row.timeToWaitInMins,
    signature: row.signature,
    custom_tracking_domain: row.customTrackingDomain,
    bcc_email: row.bccEmail,
    is_smtp_success: row.isSmtpSuccess,
    is_imap_success: row.isImapSuccess,
    smtp_failure_error: row.smtpFailureError,
    imap_failure_error: row.imapFailureError,
    is_suspended: row.isSuspended,
    auth_type: row.authType,
    connection_state: connectionStateOf(row),
    needs_reconnect: row.disconnectCode !== null,
    disconnect_reason: row.disconnectCode === null ? null : { code: row.disconnectCode, message: row.disconnectMessage ?? "", at: row.disconnectedAt ? iso(row.disconnectedAt) : null },
    oauth:
      row.authType === "OAUTH" && row.oauthProvider !== null
        ? {
            provider: row.oauthProvider,
            account_kind: row.oauthAccountKind,
            scopes: row.oauthScopes === null ? [] : row.oauthScopes.split(/\s+/).filter(Boolean),
            app_level: row.oauthAppLevel,
            connected_at: row.oauthConnectedAt ? iso(row.oauthConnectedAt) : null,
            last_refresh_at: row.oauthLastRefreshAt ? iso(row.oauthLastRefreshAt) : null,
          }
        : null,
    send_hold: presentHold(heldNow(row, now)),
    daily_sent_count: usage.dailySentCount,
    campaign_count: usage.campaignCount,
    warmup_details: presentWarmup(row, usage.warmup),
  };
}

/** A hold that still holds, as the list and the mailbox show it (one that ran out is none). */
function presentHold(hold: SendHold | null) {
  return hold === null ? null : { until: iso(hold.until), reason: hold.reason };
}

const DAY_MS = 86_400_000;

/** The start of the UTC day holding `now`. */
export function utcDayStart(now: number): number {
  return now - (now % DAY_MS);
}

/**
 * What turning warmup on adds (CONTRACT 19.1, 19.4): the ramp starts again, a block or bounce is
 * cleared (turning off and on is the way out), and an identifier is generated when none is stored.
 */
export function warmupTurnedOn(existing: { warmupEnabled: boolean; warmupKeyId: string | null } | null, enabled: boolean | undefined, now = Date.now()) {
  if (enabled !== true || existing?.warmupEnabled) return {};
  return { warmupEnabledAt: new Date(now), warmupBlockedReason: null, warmupBouncedReason: null, ...(!existing?.warmupKeyId && { warmupKeyId: newWarmupKey() }) };
}

/** A given list of ids without repeats, in first-seen order. */
export function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/**
 * Whether the engine may send from a mailbox: its SMTP check passed, and its IMAP check did not
 * fail (replies that cannot be read could not stop a sequence). Suspension is checked apart.
 */
export function connectionUsable(row: { isSmtpSuccess: boolean | null; isImapSuccess: boolean | null; disconnectCode?: string | null }): boolean {
  return row.isSmtpSuccess === true && row.isImapSuccess !== false && !row.disconnectCode;
}

type ConnectionState = "unchecked" | "connected" | "failing" | "disconnected";

/**
 * CONTRACT 18.5: `disconnected` when a person must act (a refused grant or login: `disconnect_code`),
 * `failing` for a passing fault (a check failed, retried), `connected` when both checks pass,
 * `unchecked` before any check. Derived from the columns, so it can never disagree with them.
 */
export function connectionStateOf(row: { isSmtpSuccess: boolean | null; isImapSuccess: boolean | null; disconnectCode: string | null }): ConnectionState {
  if (row.disconnectCode) return "disconnected";
  if (row.isSmtpSuccess === false || row.isImapSuccess === false) return "failing";
  if (row.isSmtpSuccess === true && row.isImapSuccess !== null) return "connected";
  return "unchecked";
}
