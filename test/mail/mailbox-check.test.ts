import { describe, expect, inject, it } from "vitest";
import { callJson, provisionAccount } from "../helpers";

const lab = inject("mailLab");
const sender = lab.mailboxes.find((m) => m.email === "sender2@lab.salvo.test")!;

interface Mailbox {
  id: number;
  is_smtp_success: boolean | null;
  smtp_failure_error: string | null;
  is_imap_success: boolean | null;
  imap_failure_error: string | null;
}

async function saveLabMailbox(apiKey: string, password: string, extra: Record<string, unknown> = {}) {
  const { status, body } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
    method: "POST",
    apiKey,
    body: {
      from_name: "Lab sender",
      from_email: sender.email,
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
async function checked(apiKey: string, id: number): Promise<Mailbox> {
  for (let i = 0; i < 100; i += 1) {
    const { body } = await callJson<Mailbox>(`/api/v1/email-accounts/${id}`, { apiKey });
    if (body.is_smtp_success !== null) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the connection check never finished");
}

const AUTH_FAILED = "[AUTHENTICATIONFAILED] Authentication failed.";

describe("mailbox connection check against the lab", () => {
  it("marks a mailbox whose SMTP and IMAP logins work (IMAP over STARTTLS)", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, sender.password);
    expect(await checked(account.apiKey, id)).toMatchObject({
      is_smtp_success: true,
      smtp_failure_error: null,
      is_imap_success: true,
      imap_failure_error: null,
    });
  });

  it("records the servers' own reasons when the password is wrong, and keeps the mailbox", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, "not-the-password");
    const mailbox = await checked(account.apiKey, id);
    expect(mailbox.is_smtp_success).toBe(false);
    expect(mailbox.smtp_failure_error).toMatch(/^535 /);
    expect(mailbox).toMatchObject({ is_imap_success: false, imap_failure_error: AUTH_FAILED });
  });

  it("checks IMAP with its own password when one is given", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, sender.password, { imap_password: "not-the-imap-password" });
    expect(await checked(account.apiKey, id)).toMatchObject({
      is_smtp_success: true,
      is_imap_success: false,
      imap_failure_error: AUTH_FAILED,
    });
  });

  it("re-checks a change of server alone with the stored passwords (IMAP now over implicit TLS)", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, sender.password, { imap_password: "not-the-imap-password" });
    expect(await checked(account.apiKey, id)).toMatchObject({ is_imap_success: false });

    const moved = await callJson(`/api/v1/email-accounts/${id}`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { imap_port: lab.imap_tls.port, imap_port_type: "SSL" },
    });
    expect(moved.status).toBe(200);
    // Still the stored (wrong) IMAP password: the new port is checked, the outcome is the server's.
    expect(await checked(account.apiKey, id)).toMatchObject({ is_smtp_success: true, is_imap_success: false, imap_failure_error: AUTH_FAILED });

    const fixed = await callJson(`/api/v1/email-accounts/${id}`, { method: "POST", apiKey: account.apiKey, body: { imap_password: sender.password } });
    expect(fixed.status).toBe(200);
    // Only the IMAP password was given: SMTP is checked again with the stored one.
    expect(await checked(account.apiKey, id)).toMatchObject({ is_smtp_success: true, smtp_failure_error: null, is_imap_success: true, imap_failure_error: null });
  });
});
