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
  /** The lab's Rspamd (HTTP API on loopback). */
  rspamd: { url: string };
  ca_file: string;
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

export const LAB_JSON: string;
export const LAB_PID: string;
export function runningLab(): MailLab | null;
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
