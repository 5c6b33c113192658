import { z } from "zod";

/**
 * The vars and secrets the Worker reads, as the platform hands them over: strings from
 * wrangler.toml [vars], .dev.vars locally, and `wrangler secret put` in production.
 */
export interface Vars {
  MAINTENANCE_MODE?: string;
  ADMIN_TOKEN?: string;
  RATE_LIMIT_PER_MINUTE?: string;
  RATE_LIMIT_BURST?: string;
  AUTH_FAILURES_PER_MINUTE?: string;
  /** Seconds a key's object trusts its cached owner before reading the key's row again (default 60). */
  KEY_REVALIDATE_SECONDS?: string;
  /** "true" (local development) admits http and loopback webhook URLs. */
  ALLOW_INSECURE_WEBHOOKS?: string;
  /** "true" (local development) admits local and private SMTP/IMAP hosts (a mail sink on 127.0.0.1). */
  ALLOW_LOCAL_MAIL_HOSTS?: string;
  /** "false" turns off the mailbox connection checks, on save and daily (a suite or an environment with no mail servers). */
  MAILBOX_CONNECTION_CHECKS?: string;
  /** The Worker's public origin, e.g. `https://salvo.example.com`: tracking and unsubscribe links in emails point here. */
  PUBLIC_URL?: string;
  /** Seconds between two reads of a mailbox's INBOX for replies (default 300; .dev.vars uses 20). */
  MAILBOX_POLL_SECONDS?: string;
  /** Rspamd's HTTP address (e.g. `http://127.0.0.1:11333`): spam tests with `spam_filters` on are scored by its `/checkv2`. Unset: no scores. */
  RSPAMD_URL?: string;
  /** Minutes a spam test's email may take to reach a seed before its cell counts as not received (default 60). */
  SPAM_TEST_DEADLINE_MINUTES?: string;
  /**
   * The DNS-over-HTTPS resolver (RFC 8484) names Salvo reaches are checked with before it connects
   * (default Cloudflare's); "" turns the lookups off (names are then judged by their spelling only).
   */
  DNS_RESOLVER_URL?: string;
  /** The request header holding the caller's address (default `CF-Connecting-IP`); trusted as given. */
  CLIENT_IP_HEADER?: string;
  /** Secret: keys for secrets at rest, `kid:base64key[,kid:base64key...]`; the first encrypts (src/platform/crypto.ts). */
  SECRETS_KEY?: string;
}

const flag = z.enum(["true", "false"]).default("false").transform((value) => value === "true");
const positiveInteger = (fallback: number) =>
  z
    .string()
    .regex(/^[1-9]\d{0,8}$/, "must be a positive whole number")
    .transform(Number)
    .default(fallback);
const text = z
  .string()
  .optional()
  .transform((value) => value?.trim() || undefined);

/** `wrangler dev`'s address: a fresh clone runs without configuring PUBLIC_URL. */
const LOCAL_ORIGIN = "http://127.0.0.1:8787";

/** An http(s) origin (a path would not reach the Worker's routes); a trailing slash is dropped. */
const origin = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
  .refine((value) => {
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password;
  }, "must be an origin only (scheme, host and port; no path, query or credentials)")
  .transform((value) => new URL(value).origin);

const VarsSchema = z.object({
  MAINTENANCE_MODE: flag,
  ADMIN_TOKEN: text,
  RATE_LIMIT_PER_MINUTE: positiveInteger(60),
  RATE_LIMIT_BURST: positiveInteger(10),
  AUTH_FAILURES_PER_MINUTE: positiveInteger(30),
  KEY_REVALIDATE_SECONDS: positiveInteger(60),
  MAILBOX_POLL_SECONDS: positiveInteger(300),
  RSPAMD_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .optional()
    .or(z.literal("").transform(() => undefined)),
  SPAM_TEST_DEADLINE_MINUTES: positiveInteger(60),
  ALLOW_INSECURE_WEBHOOKS: flag,
  ALLOW_LOCAL_MAIL_HOSTS: flag,
  SECRETS_KEY: text,
  DNS_RESOLVER_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL, or empty to turn lookups off" })
    .or(z.literal(""))
    .default("https://cloudflare-dns.com/dns-query"),
  CLIENT_IP_HEADER: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9-]{1,64}$/, "must be a header name")
    .default("CF-Connecting-IP"),
  PUBLIC_URL: origin.default(LOCAL_ORIGIN),
  MAILBOX_CONNECTION_CHECKS: z.enum(["true", "false"]).default("true").transform((value) => value === "true"),
});

/** The environment as the code uses it: typed, defaulted, checked. */
export interface Config {
  maintenance: boolean;
  /** Absent: the operator routes answer 404. */
  adminToken: string | undefined;
  rateLimit: { perMinute: number; burst: number };
  authFailuresPerMinute: number;
  keyRevalidateMs: number;
  /** How often each mailbox's INBOX is read for replies, bounces and out-of-office answers. */
  mailboxPollMs: number;
  allowInsecureWebhooks: boolean;
  allowLocalMailHosts: boolean;
  secretsKey: string | undefined;
  mailboxConnectionChecks: boolean;
  /** Rspamd's base URL for spam-test scoring; undefined when not configured. */
  rspamdUrl: string | undefined;
  /** How long a spam test's cell waits for its email before it is not_received. */
  spamTestDeadlineMinutes: number;
  /** Where tracking and unsubscribe links point unless a mailbox has its own tracking domain; no trailing slash. */
  publicUrl: string;
  /** The RFC 8484 resolver outbound hosts are checked with (src/platform/outbound.ts); null: no lookups. */
  dnsResolverUrl: string | null;
  /** The header the caller's address is read from (failed-authentication buckets). */
  clientIpHeader: string;
}

/** A var with a value the Worker cannot run with: named, so the operator can fix it. */
export class ConfigError extends Error {}

const parsed = new WeakMap<object, Config>();

/** The environment parsed once per env object (an isolate keeps one), so requests pay nothing. */
export function config(env: Vars): Config {
  const known = parsed.get(env);
  if (known) return known;
  const result = VarsSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid Worker configuration (${problems.join("; ")})`);
  }
  const vars = result.data;
  const value: Config = {
    maintenance: vars.MAINTENANCE_MODE,
    adminToken: vars.ADMIN_TOKEN,
    rateLimit: { perMinute: vars.RATE_LIMIT_PER_MINUTE, burst: vars.RATE_LIMIT_BURST },
    authFailuresPerMinute: vars.AUTH_FAILURES_PER_MINUTE,
    keyRevalidateMs: vars.KEY_REVALIDATE_SECONDS * 1000,
    mailboxPollMs: vars.MAILBOX_POLL_SECONDS * 1000,
    allowInsecureWebhooks: vars.ALLOW_INSECURE_WEBHOOKS,
    allowLocalMailHosts: vars.ALLOW_LOCAL_MAIL_HOSTS,
    secretsKey: vars.SECRETS_KEY,
    mailboxConnectionChecks: vars.MAILBOX_CONNECTION_CHECKS,
    publicUrl: vars.PUBLIC_URL,
    rspamdUrl: vars.RSPAMD_URL,
    spamTestDeadlineMinutes: vars.SPAM_TEST_DEADLINE_MINUTES,
    dnsResolverUrl: vars.DNS_RESOLVER_URL || null,
    clientIpHeader: vars.CLIENT_IP_HEADER,
  };
  parsed.set(env, value);
  return value;
}
