import { describe, expect, inject, it } from "vitest";
import { callJson, provisionAccount } from "../helpers";
import { checked, saveLabMailbox as saveFor } from "./lab-mailboxes";

const lab = inject("mailLab");
const sender = lab.mailboxes.find((m) => m.email === "sender2@lab.salvo.test")!;
const saveLabMailbox = (apiKey: string, password: string, extra: Record<string, unknown> = {}) => saveFor(apiKey, sender.email, password, extra);

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
