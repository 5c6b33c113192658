import { describe, expect, inject, it } from "vitest";
import { callJson, provisionAccount } from "../helpers";

const lab = inject("mailLab");
const sender = lab.mailboxes.find((m) => m.email === "sender2@lab.salvo.test")!;

interface Mailbox {
  id: number;
  is_smtp_success: boolean | null;
  smtp_failure_error: string | null;
  is_imap_success: boolean | null;
}

async function saveLabMailbox(apiKey: string, password: string) {
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
    },
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.id;
}

/** The check runs after the answer: wait for its outcome. */
async function checked(apiKey: string, id: number): Promise<Mailbox> {
  for (let i = 0; i < 100; i += 1) {
    const { body } = await callJson<Mailbox>(`/api/v1/email-accounts/${id}`, { apiKey });
    if (body.is_smtp_success !== null) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the connection check never finished");
}

describe("mailbox connection check against the lab", () => {
  it("marks a mailbox whose SMTP login works", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, sender.password);
    expect(await checked(account.apiKey, id)).toMatchObject({ is_smtp_success: true, smtp_failure_error: null, is_imap_success: null });
  });

  it("records the server's own reason when the password is wrong, and keeps the mailbox", async () => {
    const account = await provisionAccount();
    const id = await saveLabMailbox(account.apiKey, "not-the-password");
    const mailbox = await checked(account.apiKey, id);
    expect(mailbox.is_smtp_success).toBe(false);
    expect(mailbox.smtp_failure_error).toMatch(/^535 /);
  });
});
