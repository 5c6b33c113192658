import { describe, expect, inject, it } from "vitest";
import { LAB_HOSTS } from "./lab-mailboxes";
import { sendMail } from "../../src/mail/smtp";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { eventsOf, messagesOf } from "../db";
import { call, callJson, provisionAccount, fileEnv } from "../helpers";
import { deliveriesOf, RECEIVER } from "../webhooks/fixtures";
import { delivered, header } from "./lab-messages";

/**
 * OAuth mailboxes end to end on the lab (issue 24, CONTRACT 18): a consent at the lab's provider
 * (Google- and Microsoft-style apps, 60-second access tokens, Microsoft's rotating refresh tokens),
 * the public callback, the connection check, campaign mail and reply reading through SASL XOAUTH2
 * against the lab's Postfix and Dovecot, which ask the provider about every token; then a revoked
 * consent, the disconnect it causes, and a reconnect.
 */
const lab = inject("mailLab");
const labConsent = inject("labConsent");
const reader = inject("mailReader");
const bindings = fileEnv() as unknown as Bindings;
const MINUTE = 60_000;
const DAY = 86_400_000;
const box = (local: string) => lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`)!;

interface MailboxAnswer {
  id: number;
  auth_type: string;
  connection_state: string;
  needs_reconnect: boolean;
  disconnect_reason: { code: string; message: string; at: string } | null;
  is_smtp_success: boolean | null;
  is_imap_success: boolean | null;
  smtp_failure_error: string | null;
  password: string | null;
  oauth: { provider: string; account_kind: string; last_refresh_at: string | null } | null;
  sending_status?: { code: string; message: string };
}

/** The person's part at the provider (in Chromium when `browser`), then the browser's visit to the callback. */
async function consentAndReturn(provider: "google" | "microsoft", authUrl: string, email: string, browser = false) {
  const person = await fetch(labConsent, { method: "POST", body: JSON.stringify({ auth_url: authUrl, email, browser }) });
  expect(person.status, await person.clone().text()).toBe(200);
  const redirect = new URL(((await person.json()) as { redirect: string }).redirect);
  const page = await call(`/oauth/${provider}/callback${redirect.search}`, { redirect: "manual" });
  return { status: page.status, text: await page.text() };
}

async function session(apiKey: string, id: string) {
  return (await callJson<Record<string, unknown>>(`/api/v1/email-accounts/oauth/sessions/${id}`, { apiKey })).body;
}

async function mailbox(apiKey: string, id: number): Promise<MailboxAnswer> {
  return (await callJson<MailboxAnswer>(`/api/v1/email-accounts/${id}`, { apiKey })).body;
}

/** Connects a lab mailbox through its provider's consent; answers its id. */
async function connect(apiKey: string, provider: "google" | "microsoft", email: string, browser = false): Promise<number> {
  const started = await callJson<{ session_id: string; auth_url: string }>(`/api/v1/email-accounts/oauth/${provider}/init`, {
    method: "POST",
    apiKey,
    body: { email, from_name: "Lab OAuth sender" },
  });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const page = await consentAndReturn(provider, started.body.auth_url, email, browser);
  expect(page.status, page.text).toBe(200);
  expect(page.text).toContain(email);
  const status = await session(apiKey, started.body.session_id);
  expect(status).toMatchObject({ status: "success", email, reconnect: false, connection_state: "connected" });
  return status.email_account_id as number;
}

async function userHook(apiKey: string): Promise<number> {
  const { status, body } = await callJson<{ id: number }>("/api/v1/webhook/create", {
    method: "POST",
    apiKey,
    body: { webhook_url: RECEIVER, force_create: true, association_type: "user", event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] },
  });
  expect(status).toBe(200);
  return body.id;
}

/** A campaign of `steps` steps a day apart to `leads`, starting at `startAt` (the test drives passes on its own clock). */
async function campaign(apiKey: string, mailboxId: number, leads: string[], steps: number, startAt: number): Promise<number> {
  const { body: created } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "OAuth lab run" } });
  const id = created.id;
  const sequence = Array.from({ length: steps }, (_, i) => ({
    seq_number: i + 1,
    seq_delay_details: { delay_in_days: i === 0 ? 0 : 1 },
    subject: i === 0 ? "Hello {{first_name}}" : "",
    email_body: `<p>Step ${i + 1} for {{first_name}}.</p>`,
  }));
  expect((await callJson(`/api/v1/campaigns/${id}/sequences`, { method: "POST", apiKey, body: { sequences: sequence } })).status).toBe(200);
  const schedule = {
    timezone: "UTC",
    days_of_the_week: [0, 1, 2, 3, 4, 5, 6],
    start_hour: "00:00",
    end_hour: "23:59",
    min_time_btw_emails: 1,
    max_new_leads_per_day: 100,
    schedule_start_time: new Date(startAt).toISOString(),
  };
  expect((await callJson(`/api/v1/campaigns/${id}/schedule`, { method: "POST", apiKey, body: schedule })).status).toBe(200);
  const lead_list = leads.map((email, index) => ({ email, first_name: `Lead${index + 1}` }));
  expect((await callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey, body: { lead_list } })).status).toBe(200);
  await callJson(`/api/v1/campaigns/${id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailboxId] } });
  expect((await callJson(`/api/v1/campaigns/${id}/status`, { method: "POST", apiKey, body: { status: "START" } })).status).toBe(200);
  return id;
}

async function sentMessages(campaignId: number) {
  return (await messagesOf(campaignId)).map((m) => ({ step: m.step, message_id: m.messageId, status: m.status, to_email: m.toEmail! }));
}

async function dovecotLog(): Promise<string> {
  const response = await fetch(`${reader}/log?name=dovecot`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The mechanisms Dovecot logged for `email`'s logins since `from` (an offset in its log). */
function mechanismsOf(log: string, email: string, from: number): string[] {
  const mechanisms = new Set<string>();
  for (const line of log.slice(from).split("\n")) {
    const match = /\b(plain|login|xoauth2|oauthbearer)\(([^,)]+)/i.exec(line);
    if (match && match[2] === email) mechanisms.add(match[1]!.toLowerCase());
  }
  return [...mechanisms];
}

describe("an OAuth mailbox on the lab", () => {
  it("connects by consent, sends a two-step campaign and reads the lead's reply, logging in only with XOAUTH2 (60-second tokens)", async () => {
    const google = box("oauth-google");
    const lead = box("lead2");
    const logFrom = (await dovecotLog()).length;
    const { apiKey } = await provisionAccount();
    // The person signs in and consents in Chromium, on the provider's own pages.
    const id = await connect(apiKey, "google", google.email, true);

    const connected = await mailbox(apiKey, id);
    expect(connected).toMatchObject({ auth_type: "OAUTH", connection_state: "connected", is_smtp_success: true, is_imap_success: true, password: null, needs_reconnect: false });
    expect(connected.oauth).toMatchObject({ provider: "google" });

    const t0 = Date.now() + 2 * DAY;
    const campaignId = await campaign(apiKey, id, [lead.email], 2, t0);
    const stub = senderStub(bindings, id);
    expect((await stub.runPass(t0, { read: false })).sent).toBe(1);
    // A day later the access token of the first pass is long dead: the agent refreshes before step 2.
    expect((await stub.runPass(t0 + DAY + MINUTE, { read: false })).sent).toBe(1);
    const messages = await sentMessages(campaignId);
    expect(messages.map((m) => [m.step, m.status])).toEqual([
      [1, "sent"],
      [2, "sent"],
    ]);
    const second = await delivered(lead.email, messages[1]!.message_id);
    expect(header(second, "From")).toContain(google.email);
    expect(header(second, "In-Reply-To")).toBe(messages[0]!.message_id);

    // The lead answers from their own lab mailbox; the agent reads it over IMAP with its token.
    const replied = await sendMail(
      { host: lab.smtp.host, port: lab.smtp.port, security: "starttls", username: lead.email, password: lead.password },
      {
        from: { email: lead.email },
        to: { email: google.email },
        subject: "Re: Hello Lead1",
        text: "Sounds good, call me on Tuesday.",
        headers: { "In-Reply-To": messages[1]!.message_id, References: `${messages[0]!.message_id} ${messages[1]!.message_id}` },
      },
      { allowPlain: false, outbound: LAB_HOSTS },
    );
    expect(replied.ok, JSON.stringify(replied)).toBe(true);
    let recorded = 0;
    for (let attempt = 0; attempt < 40 && recorded === 0; attempt += 1) {
      const read = await stub.runRead(Date.now(), id);
      recorded += read.outcome?.replies ?? 0;
      if (recorded === 0) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(recorded).toBe(1);
    const [reply] = await eventsOf(campaignId, "REPLY");
    expect(reply!.body).toBe("Sounds good, call me on Tuesday.");

    // Every login of this mailbox (check, two sends, reads) went through XOAUTH2; none with a password.
    expect(mechanismsOf(await dovecotLog(), google.email, logFrom)).toEqual(["xoauth2"]);
    const refreshed = await mailbox(apiKey, id);
    expect(refreshed.oauth!.last_refresh_at).not.toBeNull();
  });

  it("a revoked consent disconnects the mailbox once, with its reason and one webhook; a reconnect resumes sending (Microsoft-style, rotating refresh tokens)", async () => {
    const microsoft = box("oauth-microsoft");
    const leads = [box("lead4").email, box("lead5").email];
    const { apiKey } = await provisionAccount();
    const hook = await userHook(apiKey);
    const id = await connect(apiKey, "microsoft", microsoft.email);
    const t0 = Date.now() + 2 * DAY;
    const campaignId = await campaign(apiKey, id, leads, 1, t0);
    const stub = senderStub(bindings, id);
    expect((await stub.runPass(t0, { read: false })).sent).toBe(1);

    const revoked = await fetch(lab.oauth.admin.revoke_url, {
      method: "POST",
      headers: { Authorization: `Bearer ${lab.oauth.admin.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ email: microsoft.email }),
    });
    expect(revoked.status).toBe(200);

    // The held token is dead at the server; the refresh answers invalid_grant: a person must act.
    expect((await stub.runPass(t0 + MINUTE, { read: false })).sent).toBe(0);
    expect((await stub.runPass(t0 + 2 * MINUTE, { read: false })).sent).toBe(0);
    const gone = await mailbox(apiKey, id);
    expect(gone).toMatchObject({ connection_state: "disconnected", needs_reconnect: true, is_smtp_success: false });
    expect(gone.disconnect_reason!.code).toBe("oauth_grant_revoked");
    expect(gone.disconnect_reason!.message).toMatch(/reconnect/);
    // Its sending status says so, with the way back.
    expect(gone.sending_status).toMatchObject({ code: "needs_reconnect", message: expect.stringContaining(`/api/v1/email-accounts/${id}/oauth/reconnect`) });
    const announced = await deliveriesOf(hook);
    expect(announced).toHaveLength(1);
    expect(JSON.parse(announced[0]!.payload)).toMatchObject({
      event_type: "EMAIL_ACCOUNT_DISCONNECTED",
      email_account_id: id,
      needs_reconnect: true,
      disconnect_reason: { code: "oauth_grant_revoked" },
    });
    const listed = await callJson<{ data?: unknown[] } | unknown[]>("/api/v1/email-accounts?needs_reconnect=true", { apiKey });
    expect(JSON.stringify(listed.body)).toContain(`"id":${id}`);

    // Reconnect: a new consent for the same address replaces the grant and the check passes again.
    const again = await callJson<{ session_id: string; auth_url: string; email_account_id: number }>(`/api/v1/email-accounts/${id}/oauth/reconnect`, {
      method: "POST",
      apiKey,
      body: {},
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.email_account_id).toBe(id);
    const page = await consentAndReturn("microsoft", again.body.auth_url, microsoft.email);
    expect(page.status, page.text).toBe(200);
    expect(await session(apiKey, again.body.session_id)).toMatchObject({ status: "success", reconnect: true, email_account_id: id });
    expect(await mailbox(apiKey, id)).toMatchObject({ connection_state: "connected", needs_reconnect: false, disconnect_reason: null });

    expect((await stub.runPass(t0 + 3 * MINUTE, { read: false })).sent).toBe(1);
    const messages = await sentMessages(campaignId);
    expect(messages.map((m) => m.status)).toEqual(["sent", "sent"]);
    await delivered(messages[1]!.to_email, messages[1]!.message_id);
    // Disconnected once, announced once.
    expect(await deliveriesOf(hook)).toHaveLength(1);
  });
});
