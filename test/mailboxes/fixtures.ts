import { mailboxRow } from "../db";
import { callJson } from "../helpers";

export type EmailAccount = Record<string, unknown> & { id: number; from_email: string; warmup_details: Record<string, unknown> };

let sequence = 0;

/** A valid create body with a fresh address. */
export function mailboxBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    from_name: "Ada Sender",
    from_email: `ada-${sequence}-${crypto.randomUUID().slice(0, 8)}@sender.example.com`,
    user_name: "ada-login",
    password: "smtp-secret-A1",
    smtp_host: "smtp.example.com",
    smtp_port: 465,
    imap_host: "imap.example.com",
    imap_port: 993,
    ...overrides,
  };
}

export function save(apiKey: string, body: Record<string, unknown>) {
  return callJson<{ ok: boolean; success: boolean; message: string; id: number; data: EmailAccount; error?: string }>("/api/v1/email-accounts/save", {
    method: "POST",
    apiKey,
    body,
  });
}

/** Creates a mailbox and answers it as presented. */
export async function createMailbox(apiKey: string, overrides: Record<string, unknown> = {}): Promise<EmailAccount> {
  const { status, body } = await save(apiKey, mailboxBody(overrides));
  if (status !== 200) throw new Error(`mailbox creation failed with ${status}: ${JSON.stringify(body)}`);
  return body.data;
}

export async function readMailbox(apiKey: string, id: number, query = "") {
  return callJson<EmailAccount & { error?: string }>(`/api/v1/email-accounts/${id}${query}`, { apiKey });
}

/** The stored row, read straight from D1 (not through our code). */
export const storedMailbox = mailboxRow;
