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
  /** The deployment's Google OAuth app (CONTRACT 18.1): its client id (var) and secret (secret). */
  GOOGLE_OAUTH_CLIENT_ID?: string;
  GOOGLE_OAUTH_CLIENT_SECRET?: string;
  /** Google's endpoints and id-token issuer (defaults: Google's public ones; the mail lab points them at its own provider). */
  GOOGLE_OAUTH_AUTHORIZE_URL?: string;
  GOOGLE_OAUTH_TOKEN_URL?: string;
  GOOGLE_OAUTH_ISSUER?: string;
  /** The deployment's Microsoft (Entra) OAuth app: client id (var), secret (secret), tenant (`common`, `organizations`, `consumers`, an id or domain). */
  MICROSOFT_OAUTH_CLIENT_ID?: string;
  MICROSOFT_OAUTH_CLIENT_SECRET?: string;
  MICROSOFT_OAUTH_TENANT?: string;
  /** Microsoft's authority (`<authority>/<tenant>/oauth2/v2.0/authorize` and `/token`) and id-token issuer (`{tenantid}` stands for the token's `tid`). */
  MICROSOFT_OAUTH_AUTHORITY?: string;
  MICROSOFT_OAUTH_ISSUER?: string;
  /** A provider's mail servers as JSON `{"smtp":"host:port:TYPE","imap":"host:port:TYPE"}` (TYPE: SSL, TLS or STARTTLS). */
  GOOGLE_MAIL_SERVERS?: string;
  MICROSOFT_MAIL_SERVERS?: string;
  /** Seconds an OAuth consent may take from its init to its callback (default 600). */
  OAUTH_SESSION_TTL_SECONDS?: string;
  /** Reply categorisation (src/triage/): `rules` (default: rules only), `workers-ai` (binding AI), `openai` (any OpenAI-compatible chat endpoint) or `off`. */
  CATEGORISER?: string;
  /** The model: a Workers AI model id (default `@cf/meta/llama-3.2-3b-instruct`) or the endpoint's model name (required with `openai`). */
  CATEGORISER_MODEL?: string;
  /** The OpenAI-compatible endpoint's base URL (`POST {base}/chat/completions`), e.g. `https://api.openai.com/v1` or an AI Gateway URL. */
  CATEGORISER_OPENAI_BASE_URL?: string;
  /** Secret: that endpoint's API key (sent as a bearer token; never logged). */
  CATEGORISER_OPENAI_API_KEY?: string;
  /** A model answer below this confidence goes to the needs-review lane (default 0.7). */
  CATEGORISER_MIN_CONFIDENCE?: string;
  /** Do Not Contact needs at least this confidence from the model (default 0.9). */
  CATEGORISER_DNC_MIN_CONFIDENCE?: string;
  /** Calls of the categorisation test route per account and UTC day (default 200). */
  CATEGORISER_TEST_PER_DAY?: string;
  /** Warmup pools (CONTRACT 19.4): `account` (default: each account's mailboxes together) or `deployment` (accounts with the admin flag `warmup_shared_pool` share one). */
  WARMUP_POOL_SCOPE?: string;
  /** The IANA zone of warmup's sending hours (08:00-20:00) and weekends (default UTC). */
  WARMUP_TIME_ZONE?: string;
  /** A mailbox whose warmup mail of the last 7 days landed in spam at least this often (percent) is warned about (default 20). */
  WARMUP_SPAM_WARN_PERCENT?: string;
  /** An optional external email verifier (CONTRACT 22): `POST {"emails":[…]}` with a bearer key; unset: DNS checks only. */
  EMAIL_VERIFIER_URL?: string;
  /** Secret: that verifier's key (never logged). */
  EMAIL_VERIFIER_KEY?: string;
  /** Days a delivered webhook delivery (and its attempts) is kept before the minute cron prunes it (default 30; 0 keeps them all). */
  WEBHOOK_DELIVERY_RETENTION_DAYS?: string;
  /** A stored message body larger than this many UTF-8 bytes is kept in R2 (binding BODIES) with only its key in D1 (default 4096; 0 keeps every body in D1). */
  BODY_OFFLOAD_BYTES?: string;
  /** Seconds an account's move waits after its fence rises before it copies the account's webhook deliveries, so every post then in flight has recorded its outcome (default 15: the 10 s post timeout and its write). */
  MOVE_WEBHOOK_GRACE_SECONDS?: string;
}

const flag = z.enum(["true", "false"]).default("false").transform((value) => value === "true");
const positiveInteger = (fallback: number) =>
  z
    .string()
    .regex(/^[1-9]\d{0,8}$/, "must be a positive whole number")
    .transform(Number)
    .default(fallback);
/** A whole number from 0 up (0 has a meaning of its own where it is used). */
const wholeNumber = (fallback: number) =>
  z
    .string()
    .regex(/^(?:0|[1-9]\d{0,8})$/, "must be a whole number from 0 up")
    .transform(Number)
    .default(fallback);
const text = z
  .string()
  .optional()
  .transform((value) => value?.trim() || undefined);
const confidence = (fallback: number) =>
  z
    .string()
    .regex(/^(?:0(?:\.\d{1,6})?|1(?:\.0{1,6})?)$/, "must be a number from 0 to 1")
    .transform(Number)
    .default(fallback);

const CATEGORISERS = ["rules", "workers-ai", "openai", "off"] as const;
type CategoriserKind = (typeof CATEGORISERS)[number];
/** A small instruct model (CONTRACT section 20.4). */
const DEFAULT_WORKERS_AI_MODEL = "@cf/meta/llama-3.2-3b-instruct";

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

/** `host:port:TYPE` of one mail server. */
const serverSpec = z
  .string()
  .regex(/^[A-Za-z0-9.:[\]-]+:\d{1,5}:(SSL|TLS|STARTTLS)$/, "must be host:port:TYPE (SSL, TLS or STARTTLS)")
  .transform((value) => {
    const parts = value.split(":");
    const portType = parts.pop() as "SSL" | "TLS" | "STARTTLS";
    const port = Number(parts.pop());
    return { host: parts.join(":").replace(/^\[(.*)\]$/, "$1"), port, portType };
  });

/** A provider's mail servers, as JSON; absent: `fallback`. */
const mailServers = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((value) => value?.trim() || fallback)
    .pipe(
      z
        .string()
        .transform((value, ctx) => {
          try {
            return JSON.parse(value) as unknown;
          } catch {
            ctx.addIssue({ code: "custom", message: 'must be JSON {"smtp":"host:port:TYPE","imap":"host:port:TYPE"}' });
            return z.NEVER;
          }
        })
        .pipe(z.object({ smtp: serverSpec, imap: serverSpec })),
    );

const httpsUrl = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((value) => value?.trim() || fallback)
    .pipe(z.url({ protocol: /^https$/, error: "must be an https URL" }));

/** A zone name Intl knows (offsets like `+05:00` are no zone). */
function knownZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const VarsSchema = z.object({
  MAINTENANCE_MODE: flag,
  ADMIN_TOKEN: text,
  RATE_LIMIT_PER_MINUTE: positiveInteger(60),
  RATE_LIMIT_BURST: positiveInteger(10),
  AUTH_FAILURES_PER_MINUTE: positiveInteger(30),
  KEY_REVALIDATE_SECONDS: positiveInteger(60),
  MOVE_WEBHOOK_GRACE_SECONDS: wholeNumber(15),
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
  GOOGLE_OAUTH_CLIENT_ID: text,
  GOOGLE_OAUTH_CLIENT_SECRET: text,
  GOOGLE_OAUTH_AUTHORIZE_URL: httpsUrl("https://accounts.google.com/o/oauth2/v2/auth"),
  GOOGLE_OAUTH_TOKEN_URL: httpsUrl("https://oauth2.googleapis.com/token"),
  GOOGLE_OAUTH_ISSUER: text.transform((value) => value ?? "https://accounts.google.com"),
  MICROSOFT_OAUTH_CLIENT_ID: text,
  MICROSOFT_OAUTH_CLIENT_SECRET: text,
  MICROSOFT_OAUTH_TENANT: text.transform((value) => value ?? "common"),
  MICROSOFT_OAUTH_AUTHORITY: httpsUrl("https://login.microsoftonline.com").transform((value) => value.replace(/\/+$/, "")),
  MICROSOFT_OAUTH_ISSUER: text.transform((value) => value ?? "https://login.microsoftonline.com/{tenantid}/v2.0"),
  GOOGLE_MAIL_SERVERS: mailServers('{"smtp":"smtp.gmail.com:465:SSL","imap":"imap.gmail.com:993:SSL"}'),
  MICROSOFT_MAIL_SERVERS: mailServers('{"smtp":"smtp.office365.com:587:STARTTLS","imap":"outlook.office365.com:993:SSL"}'),
  OAUTH_SESSION_TTL_SECONDS: positiveInteger(600),
  CATEGORISER: z.enum(CATEGORISERS).default("rules"),
  CATEGORISER_MODEL: text,
  CATEGORISER_OPENAI_BASE_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .optional()
    .or(z.literal("").transform(() => undefined))
    .transform((value) => value?.replace(/\/+$/, "")),
  CATEGORISER_OPENAI_API_KEY: text,
  CATEGORISER_MIN_CONFIDENCE: confidence(0.7),
  CATEGORISER_DNC_MIN_CONFIDENCE: confidence(0.9),
  CATEGORISER_TEST_PER_DAY: positiveInteger(200),
  WARMUP_POOL_SCOPE: z.enum(["account", "deployment"]).default("account"),
  WARMUP_TIME_ZONE: z
    .string()
    .trim()
    .default("UTC")
    .refine((value) => knownZone(value), "must be an IANA time zone name"),
  WARMUP_SPAM_WARN_PERCENT: z
    .string()
    .regex(/^(?:100|[1-9]?\d)$/, "must be a whole number from 0 to 100")
    .transform(Number)
    .default(20),
  EMAIL_VERIFIER_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .optional()
    .or(z.literal("").transform(() => undefined)),
  EMAIL_VERIFIER_KEY: text,
  WEBHOOK_DELIVERY_RETENTION_DAYS: wholeNumber(30),
  BODY_OFFLOAD_BYTES: wholeNumber(4096),
}).superRefine((vars, context) => {
  if (vars.CATEGORISER !== "openai") return;
  if (!vars.CATEGORISER_OPENAI_BASE_URL) context.addIssue({ code: "custom", path: ["CATEGORISER_OPENAI_BASE_URL"], message: "is required when CATEGORISER is openai" });
  if (!vars.CATEGORISER_MODEL) context.addIssue({ code: "custom", path: ["CATEGORISER_MODEL"], message: "is required when CATEGORISER is openai" });
});

export type OAuthProvider = "google" | "microsoft";
interface MailServer {
  host: string;
  port: number;
  portType: "SSL" | "TLS" | "STARTTLS";
}
/** A provider as the deployment configures it: its app (when set), endpoints, id-token issuer and mail servers. */
export interface OAuthProviderConfig {
  /** The deployment's app; null when its client id or secret is not set. */
  app: { clientId: string; clientSecret: string; tenant: string } | null;
  /** Google: the endpoint itself. Microsoft: with `{tenant}` for the app's tenant. */
  authorizeUrl: string;
  tokenUrl: string;
  /** The id token's `iss`; `{tenantid}` stands for its `tid` (Microsoft). */
  issuer: string;
  servers: { smtp: MailServer; imap: MailServer };
}

/** The environment as the code uses it: typed, defaulted, checked. */
export interface Config {
  maintenance: boolean;
  /** Absent: the operator routes answer 404. */
  adminToken: string | undefined;
  rateLimit: { perMinute: number; burst: number };
  authFailuresPerMinute: number;
  keyRevalidateMs: number;
  moveWebhookGraceMs: number;
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
  /** Google and Microsoft mailboxes through OAuth (CONTRACT 18). */
  oauth: Record<OAuthProvider, OAuthProviderConfig> & { sessionTtlMs: number };
  categoriser: CategoriserConfig;
  /** The external email verifier (mailbox existence, catch-all); null: DNS checks only. */
  emailVerifier: { url: string; key: string | undefined } | null;
  warmup: WarmupConfig;
  /** Days delivered webhook deliveries are kept; null: kept for ever. */
  webhookDeliveryRetentionDays: number | null;
  /** Bodies above this many UTF-8 bytes go to R2 (src/platform/bodies.ts); null: every body stays in D1. */
  bodyOffloadBytes: number | null;
}

/** Warmup's pool scope, its sending zone and the spam share that warns (CONTRACT 19.4). */
export interface WarmupConfig {
  poolScope: "account" | "deployment";
  timeZone: string;
  spamWarnPercent: number;
}

/** How replies are categorised (src/triage/): which model, if any, and the confidence it needs. */
export interface CategoriserConfig {
  kind: CategoriserKind;
  /** The model's id for `workers-ai` and `openai`; undefined for `rules` and `off`. */
  model: string | undefined;
  openai: { baseUrl: string; apiKey: string | undefined } | undefined;
  minConfidence: number;
  dncMinConfidence: number;
  testPerDay: number;
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
    moveWebhookGraceMs: vars.MOVE_WEBHOOK_GRACE_SECONDS * 1000,
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
    oauth: {
      google: {
        app: vars.GOOGLE_OAUTH_CLIENT_ID && vars.GOOGLE_OAUTH_CLIENT_SECRET ? { clientId: vars.GOOGLE_OAUTH_CLIENT_ID, clientSecret: vars.GOOGLE_OAUTH_CLIENT_SECRET, tenant: "" } : null,
        authorizeUrl: vars.GOOGLE_OAUTH_AUTHORIZE_URL,
        tokenUrl: vars.GOOGLE_OAUTH_TOKEN_URL,
        issuer: vars.GOOGLE_OAUTH_ISSUER,
        servers: vars.GOOGLE_MAIL_SERVERS,
      },
      microsoft: {
        app:
          vars.MICROSOFT_OAUTH_CLIENT_ID && vars.MICROSOFT_OAUTH_CLIENT_SECRET
            ? { clientId: vars.MICROSOFT_OAUTH_CLIENT_ID, clientSecret: vars.MICROSOFT_OAUTH_CLIENT_SECRET, tenant: vars.MICROSOFT_OAUTH_TENANT }
            : null,
        authorizeUrl: `${vars.MICROSOFT_OAUTH_AUTHORITY}/{tenant}/oauth2/v2.0/authorize`,
        tokenUrl: `${vars.MICROSOFT_OAUTH_AUTHORITY}/{tenant}/oauth2/v2.0/token`,
        issuer: vars.MICROSOFT_OAUTH_ISSUER,
        servers: vars.MICROSOFT_MAIL_SERVERS,
      },
      sessionTtlMs: vars.OAUTH_SESSION_TTL_SECONDS * 1000,
    },
    categoriser: {
      kind: vars.CATEGORISER,
      model:
        vars.CATEGORISER === "workers-ai"
          ? (vars.CATEGORISER_MODEL ?? DEFAULT_WORKERS_AI_MODEL)
          : vars.CATEGORISER === "openai"
            ? vars.CATEGORISER_MODEL
            : undefined,
      openai: vars.CATEGORISER === "openai" ? { baseUrl: vars.CATEGORISER_OPENAI_BASE_URL!, apiKey: vars.CATEGORISER_OPENAI_API_KEY } : undefined,
      minConfidence: vars.CATEGORISER_MIN_CONFIDENCE,
      dncMinConfidence: vars.CATEGORISER_DNC_MIN_CONFIDENCE,
      testPerDay: vars.CATEGORISER_TEST_PER_DAY,
    },
    warmup: { poolScope: vars.WARMUP_POOL_SCOPE, timeZone: vars.WARMUP_TIME_ZONE, spamWarnPercent: vars.WARMUP_SPAM_WARN_PERCENT },
    emailVerifier: vars.EMAIL_VERIFIER_URL ? { url: vars.EMAIL_VERIFIER_URL, key: vars.EMAIL_VERIFIER_KEY } : null,
    webhookDeliveryRetentionDays: vars.WEBHOOK_DELIVERY_RETENTION_DAYS || null,
    bodyOffloadBytes: vars.BODY_OFFLOAD_BYTES || null,
  };
  parsed.set(env, value);
  return value;
}
