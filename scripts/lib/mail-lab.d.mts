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
  /** The daemons' own directory (/var/tmp/salvo-mail-lab-<hash>): configuration, sockets, queue, mail, logs. */
  runtime_dir: string;
  /** Maildirs: <mail_dir>/<domain>/<local part>/Maildir, owned by nobody. */
  mail_dir: string;
  logs: { postfix: string; dovecot: string; rspamd?: string };
  mailboxes: {
    email: string;
    password: string;
    role: "sender" | "lead" | "seed" | "bench-seed";
    /** Seeds only: the catalogue provider and the folders that mean inbox, tab and spam. */
    provider_id?: string;
    inbox_folders?: string[];
    tab_folders?: string[];
    spam_folders?: string[];
  }[];
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
