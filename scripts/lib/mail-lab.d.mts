import type { TLSSocket } from "node:tls";

export interface LabEndpoint {
  host: string;
  port: number;
  security: "starttls" | "tls" | "plain";
}

/** `.mail-lab.json`, as scripts/mail-lab.mjs writes it. */
export interface MailLab {
  smtp: LabEndpoint;
  smtp_tls: LabEndpoint;
  smtp_plain: LabEndpoint;
  imap: LabEndpoint;
  imap_tls: LabEndpoint;
  /** The lab's Rspamd (HTTP API on loopback); absent when the lab runs with MAIL_LAB_RSPAMD=off. */
  rspamd?: { url: string };
  ca_file: string;
  /** Any address at this domain is taken on the same ports, queued and discarded (the benchmarks' clients). */
  sink_domain: string;
  /** Senders Postfix refuses at their first recipient as providers' sending limits do: `421 4.7.0` then a hang-up, or `550 5.4.5`. */
  limited_senders: { throttled: string; over_limit: string };
  /** A recipient Postfix refuses at RCPT as a provider throttling mail to its users does: `421 4.7.0`, then a hang-up. */
  limited_recipients: { throttling: string; policy: string; greylisting: string };
  /** The daemons' own directory (/var/tmp/salvo-mail-lab-<hash>): configuration, sockets, queue, mail, logs. */
  runtime_dir: string;
  /** Maildirs: <mail_dir>/<domain>/<local part>/Maildir, owned by nobody. */
  mail_dir: string;
  /** The daemons' logs. dovecot: each login's mechanism ("xoauth2(<user>,<ip>[,<session>]): Finished passdb lookup"). */
  logs: { postfix: string; dovecot: string; rspamd?: string; oauth: string };
  mailboxes: {
    email: string;
    password: string;
    role: "sender" | "lead" | "oauth" | "warmup" | "seed" | "bench-seed";
    /** Seeds only: the catalogue provider and the folders that mean inbox, tab and spam. */
    provider_id?: string;
    inbox_folders?: string[];
    tab_folders?: string[];
    spam_folders?: string[];
  }[];
  oauth: LabOAuth;
}

/** One registered app of the lab's provider, shaped like the provider it stands for. */
export interface LabOAuthApp {
  client_id: string;
  client_secret: string;
  /** The scopes Salvo asks for (CONTRACT 18.2). */
  scope: string;
  authorize_url: string;
  token_url: string;
  /** Loopback http ones match on any port. */
  redirect_uris: string[];
  token_endpoint_auth_method: "client_secret_post";
  rotates_refresh_tokens: boolean;
}

/** `.mail-lab.json` `oauth`: the lab's OAuth 2.0 / OpenID Connect provider (scripts/mail-lab-oauth.mjs). */
export interface LabOAuth {
  issuer: string;
  discovery_url: string;
  authorize_url: string;
  token_url: string;
  revocation_url: string;
  introspection_url: string;
  userinfo_url: string;
  jwks_url: string;
  /** Microsoft's shape: <authority>/<tenant>/oauth2/v2.0/authorize and /token. */
  microsoft_authority: string;
  tenant_id: string;
  access_token_ttl: number;
  /** Every lab user's password on the provider's login page. */
  password: string;
  /** POST revoke_url with `Authorization: Bearer <token>` and `{"email", "client_id"?}`: the user's grants are destroyed. */
  admin: { revoke_url: string; token: string };
  users: { email: string; name: string; email_verified: boolean }[];
  clients: { google: LabOAuthApp; microsoft: LabOAuthApp };
  /** CONTRACT 18.1's deployment settings pointing at the lab (exported by scripts/with-mail-lab.mjs). */
  salvo_vars: Record<string, string>;
}

export const LAB_DIR: string;
export const LAB_JSON: string;
export const LAB_PID: string;
export const RUNTIME_BASE: string;
export const RUNTIME_PREFIX: string;
export const PORT_VARS: string[];
export function labPaths(env?: Record<string, string | undefined>): { dir: string; json: string; pid: string };
export function runtimeDirFor(labDir: string): string;
export function alive(pid: number): boolean;
export function runningLab(): MailLab | null;

export interface StartedLab {
  config: MailLab;
  jsonPath: string;
  pid: number;
  exited: Promise<number | string | null>;
  stop(): Promise<void>;
  /** What the lab printed (when started quiet). */
  output(): string;
}
export function startLab(options?: { env?: Record<string, string>; quiet?: boolean; timeoutMs?: number }): Promise<StartedLab>;
export function quote(text: string): string;

export class LabImap {
  readonly socket: TLSSocket;
  static open(lab: MailLab, ca?: Buffer): Promise<LabImap>;
  static login(lab: MailLab, email: string, ca?: Buffer): Promise<LabImap>;
  line(): Promise<string>;
  literal(size: number): Promise<string>;
  command(text: string): Promise<{ lines: string[]; literals: string[]; literalAfter: number[] }>;
  close(): void;
}
