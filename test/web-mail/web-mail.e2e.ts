import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { revokeGrants } from "../../scripts/lib/lab-oauth-client.mjs";
import { LabImap, quote, type MailLab } from "../../scripts/lib/mail-lab.mjs";
import { apiCall, FLAGS, provision, screenshot, seriousViolations, signIn } from "../e2e/web-support";

const salvo = inject("labSalvo");
// Lab mailboxes no other suite uses: the OAuth sender the app connects, and a lead of the five.
const SENDER = "oauth-google@lab.salvo.test";
const LEAD = "lead5@lab.salvo.test";

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The lead's INBOX: the headers of the newest message matching an IMAP SEARCH, if any. */
async function leadMessage(lab: MailLab, search: string): Promise<Record<string, string> | undefined> {
  const imap = await LabImap.login(lab, LEAD);
  try {
    await imap.command("SELECT INBOX");
    const found = (await imap.command(`SEARCH ${search}`)).lines.find((l) => l.startsWith("* SEARCH"))?.slice(9).trim().split(" ").filter(Boolean) ?? [];
    if (found.length === 0) return undefined;
    const fetched = await imap.command(`FETCH ${found.at(-1)} BODY.PEEK[HEADER.FIELDS (MESSAGE-ID IN-REPLY-TO REFERENCES SUBJECT FROM)]`);
    const headers: Record<string, string> = {};
    for (const line of (fetched.literals[0] ?? "").replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    return headers;
  } finally {
    imap.close();
  }
}

/** The lead answers through the lab's submission port (implicit TLS, AUTH PLAIN with its own password). */
function leadSends(lab: MailLab, to: string, raw: string): Promise<void> {
  const lead = lab.mailboxes.find((m) => m.email === LEAD)!;
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: lab.smtp_tls.host, port: lab.smtp_tls.port, ca: readFileSync(lab.ca_file), servername: "localhost" });
    const steps = ["EHLO lead.test", `AUTH PLAIN ${Buffer.from(`\0${lead.email}\0${lead.password}`).toString("base64")}`, `MAIL FROM:<${lead.email}>`, `RCPT TO:<${to}>`, "DATA", `${raw}\r\n.`, "QUIT"];
    let buffer = "";
    socket.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const last = buffer.split("\r\n").filter(Boolean).at(-1) ?? "";
      if (!buffer.endsWith("\r\n") || /^\d{3}-/.test(last)) return;
      const code = Number(last.slice(0, 3));
      buffer = "";
      if (code >= 400) return reject(new Error(`SMTP answered ${last}`));
      const next = steps.shift();
      if (next) socket.write(`${next}\r\n`);
      else socket.end(resolve);
    });
    socket.on("error", reject);
  });
}

/**
 * Issue 29's lab flow, in Chromium against a dev server that knows the mail lab: a mailbox connected
 * through the app's Connect Google button and the lab provider's own sign-in and consent pages, a real
 * campaign email to a lab lead, the lead's reply through the lab's SMTP shown in the app's inbox
 * without a reload, and the answer written in the app arriving threaded in the lead's INBOX.
 */
describe.skipIf(!salvo)("the web app with the mail lab", () => {
  const { url, adminToken, lab } = salvo!;
  const token = randomBytes(4).toString("hex");
  let browser: Browser;
  let page: Page;
  let apiKey = "";
  let mailboxId = 0;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    // Chromium trusts the lab provider's certificate by its key alone (offline machine, no CA install).
    const cert = new X509Certificate(readFileSync(join(dirname(lab.ca_file), "server.pem")));
    const spki = createHash("sha256").update(cert.publicKey.export({ type: "spki", format: "der" })).digest("base64");
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", headless: true, args: [...FLAGS, `--ignore-certificate-errors-spki-list=${spki}`] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    apiKey = (await provision(url, adminToken, "web-lab")).apiKey;
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("connects a Google mailbox through the Connect Google button and the provider's sign-in and consent", async () => {
    await signIn(page, url, apiKey);
    await page.goto(`${url}/#/mailboxes`);
    await page.getByLabel("Address to connect (optional)").fill(SENDER);
    await page.getByRole("button", { name: "Connect Google" }).click();
    // The lab provider's pages, as a person sees Google's: the hint fills the address.
    const provider = new URL(lab.oauth.authorize_url).origin;
    await page.waitForURL((at) => at.origin === provider);
    expect(await page.getByLabel("Email", { exact: true }).inputValue()).toBe(SENDER);
    await page.getByLabel("Password", { exact: true }).fill(lab.oauth.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    // Back in the app through Salvo's callback: the outcome in words, and the mailbox in the list.
    await page.getByText(`${SENDER} is connected through Google`).waitFor({ timeout: 30_000 });
    expect(new URL(page.url()).search).toBe("");
    await page.getByRole("link", { name: SENDER }).waitFor();

    const listed = await apiCall<{ id: number; from_email: string; auth_type: string; connection_state: string }[]>(url, apiKey, "/api/v1/email-accounts");
    const mailbox = listed.body.find((m) => m.from_email === SENDER)!;
    expect(mailbox.auth_type).toBe("OAUTH");
    mailboxId = mailbox.id;
    await until("the mailbox's connection check", async () => {
      const m = await apiCall<{ connection_state: string; smtp_failure_error: string | null }>(url, apiKey, `/api/v1/email-accounts/${mailboxId}`);
      if (m.body.connection_state === "disconnected") throw new Error(`the check failed: ${m.body.smtp_failure_error}`);
      return m.body.connection_state === "connected" ? true : undefined;
    });
    await page.reload();
    await page.getByTestId("mailbox-health").getByText("Connected", { exact: true }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "mailboxes-oauth");
  });

  it("sends a campaign email to a lab lead, shows the lead's reply in the inbox without a reload, categorises it, and the answer arrives threaded", async () => {
    expect(mailboxId).toBeGreaterThan(0);
    const campaign = (await apiCall<{ id: number }>(url, apiKey, "/api/v1/campaigns/create", { body: { name: `Lab outreach ${token}` } })).body.id;
    const call = async (path: string, body: unknown) => expect((await apiCall(url, apiKey, `/api/v1/campaigns/${campaign}${path}`, { body })).status).toBe(200);
    await call("/sequences", { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: `Lab ${token} for {{first_name}}`, email_body: "<p>Hi {{first_name}}, a question for you.</p>" }] });
    await call("/schedule", { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, max_new_leads_per_day: 100 });
    await call("/leads", { lead_list: [{ email: LEAD, first_name: "Lena", last_name: "Lab" }] });
    await call("/email-accounts", { email_account_ids: [mailboxId] });
    await call("/status", { status: "START" });

    const sent = await until("the campaign email in the lead's INBOX", () => leadMessage(lab, `SUBJECT ${quote(`Lab ${token}`)}`), 45_000);
    expect(sent.subject).toBe(`Lab ${token} for Lena`);
    // The mailbox's first read starts from its INBOX as it is now: run it before the reply lands.
    const readPass = () => fetch(`${url}/admin/v1/email-accounts/${mailboxId}/read-pass`, { method: "POST", headers: { Authorization: `Bearer ${adminToken}` } });
    expect((await readPass()).status).toBe(200);

    await page.goto(`${url}/#/inbox`);
    await page.getByText(/0 conversations/).waitFor();
    const replyId = `<lab-reply-${token}@lab.salvo.test>`;
    await leadSends(
      lab,
      SENDER,
      [`From: Lena Lab <${LEAD}>`, `To: <${SENDER}>`, `Subject: Re: ${sent.subject}`, `Date: ${new Date().toUTCString()}`, `Message-ID: ${replyId}`,
        `In-Reply-To: ${sent["message-id"]}`, `References: ${sent["message-id"]}`, "", `Yes, tell me more (${token}).`, "", "> Hi Lena, a question for you."].join("\r\n"),
    );
    // The mailbox reads its INBOX (the operator's route runs the pass its own timer would); the open view reads itself again.
    const item = page.getByRole("link", { name: /Lena Lab/ });
    await until("the reply in the app's inbox", async () => ((await readPass()).ok && (await item.count()) > 0 ? true : undefined), 30_000);
    await item.click();
    await page.getByText(`Yes, tell me more (${token}).`).waitFor();
    // Categorised from the conversation, as a person working the inbox does.
    await page.getByLabel("Category of this conversation").selectOption({ label: "Interested" });
    await page.getByText("Categorised as Interested").waitFor();

    await page.getByLabel("Reply", { exact: true }).fill(`Gladly, Lena. Here is more (${token}).`);
    await page.getByRole("button", { name: "Send reply" }).click();
    await page.getByText(/Reply queued|Reply sent/).waitFor();
    await screenshot(page, "inbox-lab");

    const answer = await until("the answer in the lead's INBOX", () => leadMessage(lab, `HEADER In-Reply-To ${quote(replyId)}`), 30_000);
    expect(answer["in-reply-to"]).toBe(replyId);
    expect(answer.references).toContain(replyId);
    expect(answer.subject).toBe(`Re: ${sent.subject}`);
    expect(answer.from).toContain(SENDER);
    expect(pageErrors).toEqual([]);
  });

  it("shows a revoked consent as disconnected with its reason, and reconnects it through the Reconnect button", async () => {
    // As when the user removes the app from their Google account: the grant and its live access token die.
    expect(await revokeGrants(lab, SENDER, lab.oauth.clients.google.client_id)).toBeGreaterThanOrEqual(1);
    await page.goto(`${url}/#/mailboxes/${mailboxId}`);
    await page.getByRole("button", { name: "Check connection again" }).click();
    const reason = await until("the disconnect", async () => {
      const m = await apiCall<{ needs_reconnect: boolean; disconnect_reason: { code: string; message: string } | null }>(url, apiKey, `/api/v1/email-accounts/${mailboxId}`);
      return m.body.needs_reconnect ? m.body.disconnect_reason! : undefined;
    });
    expect(reason.code).toBe("oauth_grant_revoked");
    await page.reload();
    const row = page.getByRole("row", { name: new RegExp(SENDER.replace(/[.]/g, "\\.")) });
    const health = row.getByTestId("mailbox-health");
    await health.getByText("Disconnected: reconnect needed").waitFor();
    await health.getByText(reason.message).waitFor();
    await screenshot(page, "mailboxes-reconnect");
    await row.getByRole("button", { name: `Reconnect ${SENDER}` }).click();

    const provider = new URL(lab.oauth.authorize_url).origin;
    await page.waitForURL((at) => at.origin === provider);
    // The provider may remember the sign-in from the first consent: then only its consent page shows.
    const password = page.getByLabel("Password", { exact: true });
    const allow = page.getByRole("button", { name: "Allow" });
    await password.or(allow).first().waitFor();
    if (await password.isVisible()) {
      await password.fill(lab.oauth.password);
      await page.getByRole("button", { name: "Sign in" }).click();
    }
    await allow.click();
    await page.getByText(`${SENDER} is reconnected through Google`).waitFor({ timeout: 30_000 });
    await page.getByTestId("mailbox-health").getByText("Connected", { exact: true }).waitFor();
    await until("the reconnected mailbox's check", async () => {
      const m = await apiCall<{ connection_state: string; needs_reconnect: boolean }>(url, apiKey, `/api/v1/email-accounts/${mailboxId}`);
      return m.body.connection_state === "connected" && !m.body.needs_reconnect ? true : undefined;
    });
    expect(pageErrors).toEqual([]);
  });

  it("says why the mailbox sends or not, with what its owner should know: warmup alone in its pool waits", async () => {
    await page.goto(`${url}/#/mailboxes/${mailboxId}`);
    const sending = page.getByTestId("mailbox-sending");
    await sending.waitFor();
    await expect.poll(async () => (await sending.textContent()) ?? "").not.toContain("Warmup waiting");
    await page.getByLabel("Warm this mailbox up").check();
    await page.getByRole("button", { name: "Save warmup settings" }).click();
    await page.getByText("Warmup settings saved").waitFor();
    // The only mailbox of its account with warmup on: the API's warning, in its own words.
    const read = await apiCall<{ sending_status: { message: string; warnings: { code: string; message: string }[] } }>(url, apiKey, `/api/v1/email-accounts/${mailboxId}`);
    const waiting = read.body.sending_status.warnings.find((w) => w.code === "warmup_waiting_for_pool");
    expect(waiting).toBeDefined();
    await sending.getByText("Warmup waiting", { exact: true }).waitFor();
    await sending.getByText(waiting!.message).waitFor();
    await sending.getByText(read.body.sending_status.message).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "mailbox-sending");
    expect(pageErrors).toEqual([]);
  });

  it("shows in the mailbox list a mailbox whose server refuses its sending for now: until when, in the server's words", async () => {
    // A lab login sending as the address Postfix refuses at RCPT with a 421, as a provider's limit does.
    const login = lab.mailboxes.filter((m) => m.role === "sender").at(-1)!;
    const address = lab.limited_senders.throttled;
    const saved = await apiCall<{ id: number }>(url, apiKey, "/api/v1/email-accounts/save", {
      body: { from_name: "Throttled", from_email: address, user_name: login.email, password: login.password, smtp_host: lab.smtp.host, smtp_port: lab.smtp.port, smtp_port_type: "STARTTLS", imap_host: lab.imap.host, imap_port: lab.imap.port },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    await until("the throttled mailbox's connection check", async () => {
      const m = await apiCall<{ connection_state: string; smtp_failure_error: string | null }>(url, apiKey, `/api/v1/email-accounts/${saved.body.id}`);
      if (m.body.connection_state === "disconnected" || m.body.connection_state === "failing") throw new Error(`the check failed: ${m.body.smtp_failure_error}`);
      return m.body.connection_state === "connected" ? true : undefined;
    });
    const refused = await apiCall<{ error: string }>(url, apiKey, "/api/v1/send-email/initiate", { body: { to: LEAD, subject: "A note", body: "Hello", fromEmailId: saved.body.id } });
    expect(refused.status).toBe(400);
    const hold = (await apiCall<{ send_hold: { until: string; reason: string } | null }>(url, apiKey, `/api/v1/email-accounts/${saved.body.id}`)).body.send_hold;
    expect(hold?.reason).toMatch(/^421 4\.7\.0 .*too much mail/);

    // From the last test's mailbox page: the list loaded then, before this mailbox was saved.
    await page.goto(`${url}/#/mailboxes`);
    await page.reload();
    const row = page.getByRole("row", { name: new RegExp(address.replace(/[.]/g, "\\.")) });
    const held = row.getByTestId("mailbox-held");
    await held.getByText("Server refusing until").waitFor();
    await held.getByText(hold!.reason).waitFor();
    // The mailbox Salvo can still send from shows none.
    expect(await page.getByRole("row", { name: new RegExp(SENDER.replace(/[.]/g, "\\.")) }).getByTestId("mailbox-held").count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "mailboxes-held");
    expect(pageErrors).toEqual([]);
  });
});
