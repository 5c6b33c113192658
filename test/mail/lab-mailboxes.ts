import { expect, inject } from "vitest";
import type { OutboundPolicy } from "../../src/platform/outbound";
import { callJson } from "../helpers";

/** A lab mailbox saved through the API, and waiting for its background connection check. */

export interface CheckedMailbox {
  id: number;
  is_smtp_success: boolean | null;
  smtp_failure_error: string | null;
  is_imap_success: boolean | null;
  imap_failure_error: string | null;
  is_suspended: boolean;
}

/** Saves a mailbox on the lab's servers (SMTP over STARTTLS) for `email`; `extra` adds or overrides fields. */
export async function saveLabMailbox(apiKey: string, email: string, password: string, extra: Record<string, unknown> = {}): Promise<number> {
  const lab = inject("mailLab");
  const { status, body } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
    method: "POST",
    apiKey,
    body: {
      from_name: "Lab sender",
      from_email: email,
      password,
      smtp_host: lab.smtp.host,
      smtp_port: lab.smtp.port,
      smtp_port_type: "STARTTLS",
      imap_host: lab.imap.host,
      imap_port: lab.imap.port,
      ...extra,
    },
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.id;
}

/** The check runs after the answer: wait for its outcome (both sides are recorded together). */
export async function checked(apiKey: string, id: number): Promise<CheckedMailbox> {
  // Up to 20 s: a loaded machine and Dovecot's delay after a refused login both slow the check.
  for (let i = 0; i < 200; i += 1) {
    const { body } = await callJson<CheckedMailbox>(`/api/v1/email-accounts/${id}`, { apiKey });
    if (body.is_smtp_success !== null) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the connection check never finished");
}

/** The outbound rule as the lab needs it (its servers are on 127.0.0.1): ALLOW_LOCAL_MAIL_HOSTS's. */
export const LAB_HOSTS: OutboundPolicy = { local: "private", resolverUrl: null, ownHosts: [] };
