import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { apiCall, launch, provision, screenshot, seriousViolations, signIn } from "./web-support";

const { url, adminToken } = inject("salvo");
const today = new Date().toISOString().slice(0, 10);

/**
 * The web app in Chromium against the suite's dev server: one browser, the flows a campaign manager
 * runs, tenancy and session safety through the browser itself, axe-core on every screen, and the
 * README's screenshots. The lab flow (real mail both ways) is test/web-mail/web-mail.e2e.ts.
 */
describe("the web app in a real browser", () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let account: { id: number; apiKey: string };
  let campaignId = 0;
  const pageErrors: string[] = [];
  const offOrigin: string[] = [];

  beforeAll(async () => {
    browser = await launch();
    account = await provision(url, adminToken, "web");
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => message.type() === "error" && !/401|404|Failed to load resource/.test(message.text()) && pageErrors.push(message.text()));
    page.on("request", (request) => !request.url().startsWith(url) && !request.url().startsWith("data:") && offOrigin.push(request.url()));
  });

  afterAll(async () => {
    await browser?.close();
  });

  async function axeClean(where: string) {
    expect(await seriousViolations(page), where).toEqual([]);
  }

  it("signs in with an account key: the key is not kept, the session is an HttpOnly SameSite=Strict cookie", async () => {
    await page.goto(`${url}/`);
    await page.getByLabel("API key").waitFor();
    await axeClean("sign-in");
    await screenshot(page, "sign-in");
    await signIn(page, url, account.apiKey);
    await page.getByRole("navigation", { name: "Inbox views" }).waitFor();

    const cookies = await context.cookies();
    expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([{ name: "salvo_session", httpOnly: true, sameSite: "Strict" }]);
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    expect(stored).not.toContain(account.apiKey.slice(9));
    expect(await page.getByLabel("API key").count()).toBe(0);
  });

  it("creates a campaign, uploads a CSV of leads with a progress bar to the end, and lists them", async () => {
    await page.goto(`${url}/#/campaigns`);
    await page.getByLabel("Name").fill("Spring outreach");
    await page.getByRole("button", { name: "Create campaign" }).click();
    await page.getByRole("heading", { name: /Spring outreach/ }).waitFor();
    campaignId = Number(/#\/campaigns\/(\d+)/.exec(page.url())![1]);
    expect(campaignId).toBeGreaterThan(0);

    await page.getByRole("link", { name: "Leads" }).click();
    const rows = Array.from({ length: 120 }, (_, i) => `lead${i}@prospects.example,Person${i},Last${i},Company ${i}`);
    const csv = ["email,first_name,last_name,company_name", "ada@prospects.example,Ada,Lovelace,Analytical Engines", ...rows, "not-an-email,Bad,Row,X"].join("\n");
    await page.getByLabel("CSV file with an email column").setInputFiles({ name: "leads.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await page.getByRole("button", { name: "Upload" }).click();
    const bar = page.locator("progress#csv-progress");
    await bar.waitFor();
    await page.getByTestId("pushed").waitFor({ timeout: 30_000 });
    expect(await bar.getAttribute("value")).toBe("100");
    expect(await page.getByTestId("pushed").textContent()).toBe("121");
    await expect.poll(() => page.getByRole("heading", { name: "Leads (121)" }).count()).toBe(1);
    await page.getByRole("cell", { name: "ada@prospects.example", exact: true }).waitFor();
    await axeClean("leads");
    await screenshot(page, "campaign-leads");
  });

  it("writes a two-step sequence with a variant, spintax and variables, and previews it for a chosen lead", async () => {
    await page.getByRole("link", { name: "Sequence" }).click();
    await page.getByLabel("Step 1 subject").fill("{Hi|Hello} {{first_name}}, a question about {{company_name}}");
    await page.getByLabel("Step 1 body").fill("Dear {{first_name | there}},\n\nWe help teams like {{company_name}} send better email.\n\n%signature%");
    await page.getByRole("button", { name: "Add a variant to step 1" }).click();
    await page.getByLabel("Step 1 variant 2 subject").fill("Quick one for {{company_name}}");
    await page.getByLabel("Step 1 variant 2 body").fill("Hey {{first_name}}, variant B speaking.");
    await page.getByRole("button", { name: "Add a step" }).click();
    await page.getByLabel("Step 2: days after the previous step").fill("3");
    await page.getByLabel("Step 2 body").fill("Following up on my note, {{first_name}}.");
    await page.getByRole("button", { name: "Save sequence" }).click();
    await page.getByText("Sequence saved: 2 steps").waitFor();

    const saved = await apiCall<{ seq_number: number; sequence_variants: { variant_label: string }[] | null }[]>(url, account.apiKey, `/api/v1/campaigns/${campaignId}/sequences`);
    expect(saved.body.map((s) => [s.seq_number, (s.sequence_variants ?? []).map((v) => v.variant_label)])).toEqual([
      [1, ["A", "B"]],
      [2, []],
    ]);

    await page.getByLabel("Lead", { exact: true }).selectOption({ label: "Ada Lovelace (ada@prospects.example)" });
    const preview = page.getByRole("list", { name: "Rendered emails" });
    await preview.waitFor();
    const text = await preview.textContent();
    expect(text).toContain("Ada");
    expect(text).toMatch(/variant [AB]/);
    expect(text).toMatch(/(Hi|Hello) Ada, a question about Analytical Engines|Quick one for Analytical Engines/);
    expect(text).toContain("Following up on my note, Ada.");
    expect(text).not.toContain("{{");
    await axeClean("sequence");
    await screenshot(page, "campaign-sequence");
  });

  it("attaches a mailbox and starts the campaign: status and sending_status in words", async () => {
    const mailbox = await apiCall<{ id: number }>(url, account.apiKey, "/api/v1/email-accounts/save", {
      body: { from_name: "Sam Sender", from_email: "sam@sender.example", password: "app-password", smtp_host: "127.0.0.1", smtp_port: 2, imap_host: "127.0.0.1", imap_port: 3 },
    });
    expect(mailbox.status).toBe(200);
    await page.getByRole("link", { name: "Overview" }).click();
    await page.getByLabel("Attach a mailbox").selectOption({ label: "sam@sender.example" });
    await page.getByRole("button", { name: "Attach", exact: true }).click();
    await page.getByRole("button", { name: "Detach sam@sender.example" }).waitFor();
    await page.getByRole("button", { name: "Start campaign" }).click();
    await page.getByText("Campaign started").waitFor();
    // No mail server answers on those ports, so the words say why nothing goes out (or that it waits for its schedule).
    await expect.poll(async () => (await page.getByTestId("sending-status").textContent()) ?? "").toMatch(/schedule|mailbox|window|due|Sending/i);
    expect((await apiCall<{ status: string }>(url, account.apiKey, `/api/v1/campaigns/${campaignId}`)).body.status).toBe("ACTIVE");

    await page.goto(`${url}/#/campaigns`);
    const row = page.getByRole("row", { name: /Spring outreach/ });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/Active/);
    await axeClean("campaigns");
    await screenshot(page, "campaigns");
  });

  it("shows a new reply in the inbox without a reload, categorises it and answers from the conversation", async () => {
    const leads = await apiCall<{ data: { campaign_lead_map_id: number; lead: { email: string } }[] }>(url, account.apiKey, `/api/v1/campaigns/${campaignId}/leads?limit=100`);
    const ada = leads.body.data.find((l) => l.lead.email === "ada@prospects.example")!.campaign_lead_map_id;
    await page.goto(`${url}/#/inbox`);
    await page.getByText(/0 conversations/).waitFor();
    // An hour before the reply, but inside today's UTC day: the analytics screen charts it on today's row.
    const sentAt = new Date(Math.max(Date.now() - 3600_000, Date.now() - (Date.now() % 86_400_000))).toISOString();
    const ingested = await apiCall(url, account.apiKey, `/api/v1/campaigns/${campaignId}/events`, {
      body: {
        events: [
          { event_id: "web-sent-1", type: "SENT", email_lead_map_id: ada, occurred_at: sentAt, subject: "Hi Ada", body: "Dear Ada", message_id: "<web-sent-1@sender.example>", from_email: "sam@sender.example", to_email: "ada@prospects.example" },
          { event_id: "web-reply-1", type: "REPLY", email_lead_map_id: ada, occurred_at: new Date().toISOString(), subject: "Re: Hi Ada", body: "<p>Sounds <b>interesting</b>, tell me more.</p><script>alert(1)</script>", from_email: "ada@prospects.example", message_id: "<web-reply-1@prospects.example>" },
        ],
      },
    });
    expect(ingested.status).toBe(200);
    // No reload, no navigation: the open view reads itself again.
    const item = page.getByRole("link", { name: /Ada Lovelace/ });
    await item.waitFor({ timeout: 15_000 });
    await item.click();
    await page.getByText("Sounds interesting, tell me more.").waitFor();

    await page.getByLabel("Category of this conversation").selectOption({ label: "Interested" });
    await page.getByText("Categorised as Interested").waitFor();
    const read = await apiCall<{ data: { lead_category_id: number | null; is_read: boolean } }>(url, account.apiKey, `/api/v1/master-inbox/${ada}`);
    expect(read.body.data.lead_category_id).toBe(1);
    expect(read.body.data.is_read).toBe(true);

    // Keyboard: s marks important.
    await page.locator("body").press("s");
    await page.getByText("Marked important").waitFor();

    await page.getByLabel("Reply", { exact: true }).fill("Happy to. When suits you?");
    await page.getByRole("button", { name: "Send reply" }).click();
    // The mailbox here has no working server: the API's own words come back (the lab suite sends for real).
    await page.getByText("Email account not found!").waitFor();
    await axeClean("inbox");
    await screenshot(page, "inbox");

    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "inbox-phone");
    await axeClean("inbox on a phone");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it("charts the campaign's sends by day", async () => {
    await page.goto(`${url}/#/analytics/${campaignId}`);
    const table = page.getByTestId("daily-table");
    await table.waitFor({ timeout: 20_000 });
    await page.locator("[data-testid=chart] canvas").waitFor();
    const todayRow = page.getByRole("row", { name: new RegExp(`^${today}`) });
    const cells = await todayRow.getByRole("cell").allTextContents();
    expect(Number(cells[0])).toBeGreaterThanOrEqual(1);
    await axeClean("analytics");
    await screenshot(page, "analytics");
  });

  it("renders mailboxes with their check words, webhooks with a delivery log, deliverability and sessions", async () => {
    await page.goto(`${url}/#/mailboxes`);
    await page.getByRole("cell", { name: /sam@sender\.example/ }).waitFor();
    await page.getByText("Connect with Google or Microsoft").waitFor();
    await axeClean("mailboxes");
    await screenshot(page, "mailboxes");
    // Its page says why it sends nothing: this mailbox's server does not exist, so it never passed its check.
    await page.getByRole("link", { name: "sam@sender.example" }).click();
    await page.getByTestId("mailbox-sending").getByText("The mailbox has not passed its connection check (SMTP, and IMAP once checked)").waitFor();

    // A receiver gone for good (410): the list says its webhook is off, and why.
    const gone = createServer((_request, response) => response.writeHead(410).end("gone"));
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const gonePort = (gone.address() as AddressInfo).port;
    const hook = await apiCall<{ data: { id: number } }>(url, account.apiKey, `/api/v1/campaigns/${campaignId}/webhooks`, {
      body: { webhook_name: "Old CRM", webhook_url: `http://127.0.0.1:${gonePort}/hook`, event_types: ["EMAIL_SENT"] },
    });
    expect(hook.status).toBe(200);
    const leads = await apiCall<{ data: { campaign_lead_map_id: number; lead: { email: string } }[] }>(url, account.apiKey, `/api/v1/campaigns/${campaignId}/leads?limit=1`);
    await apiCall(url, account.apiKey, `/api/v1/campaigns/${campaignId}/events`, {
      body: { events: [{ event_id: "web-sent-gone", type: "SENT", email_lead_map_id: leads.body.data[0]!.campaign_lead_map_id, occurred_at: new Date().toISOString() }] },
    });
    await expect
      .poll(async () => (await apiCall<{ data: { disabled_at: string | null } }>(url, account.apiKey, `/api/v1/webhook/${hook.body.data.id}`)).body.data.disabled_at, { timeout: 30_000 })
      .not.toBeNull();
    gone.close();

    await page.goto(`${url}/#/webhooks`);
    await page.getByText(/its receiver answered 410 Gone/).waitFor();
    await page.getByLabel("URL").fill("http://127.0.0.1:9/hook");
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByText(/Signing secret, shown only now/).waitFor();
    await page.getByRole("link", { name: "Webhook", exact: true }).click();
    await page.getByRole("heading", { name: "Delivery log" }).waitFor();
    await axeClean("webhooks");
    await screenshot(page, "webhooks");

    await page.goto(`${url}/#/deliverability`);
    await page.getByRole("heading", { name: "Spam tests" }).waitFor();
    await page.getByRole("heading", { name: "New spam test" }).waitFor();
    await axeClean("deliverability");
    await screenshot(page, "deliverability");

    await page.goto(`${url}/#/sessions`);
    await page.getByText("this browser").waitFor();
    await axeClean("sessions");
    await screenshot(page, "sessions");
    expect(pageErrors).toEqual([]);
    expect(offOrigin).toEqual([]);
  });

  it("gives a client key's session only its client's data, in the browser", async () => {
    const mine = await apiCall<{ id: number }>(url, account.apiKey, "/api/v1/client/save", { body: { name: "Mine", email: "mine@web.example" } });
    const other = await apiCall<{ id: number }>(url, account.apiKey, "/api/v1/client/save", { body: { name: "Other", email: "other@web.example" } });
    const mineKey = (await apiCall<{ data: { api_key: string } }>(url, account.apiKey, "/api/v1/client/api-key", { body: { clientId: mine.body.id, keyName: "web" } })).body.data.api_key;
    const otherKey = (await apiCall<{ data: { api_key: string } }>(url, account.apiKey, "/api/v1/client/api-key", { body: { clientId: other.body.id, keyName: "web" } })).body.data.api_key;
    await apiCall(url, mineKey, "/api/v1/campaigns/create", { body: { name: "Mine's campaign" } });
    const theirs = (await apiCall<{ id: number }>(url, otherKey, "/api/v1/campaigns/create", { body: { name: "Other's secret campaign" } })).body.id;

    const clientContext = await browser.newContext();
    const clientPage = await clientContext.newPage();
    await signIn(clientPage, url, mineKey);
    await clientPage.goto(`${url}/#/campaigns`);
    await clientPage.getByRole("link", { name: "Mine's campaign" }).waitFor();
    const listed = await clientPage.getByRole("table").textContent();
    expect(listed).not.toContain("Other's secret campaign");
    expect(listed).not.toContain("Spring outreach");
    await clientPage.goto(`${url}/#/campaigns/${theirs}`);
    await clientPage.getByText("Campaign not found").waitFor();
    await clientPage.goto(`${url}/#/inbox`);
    await clientPage.getByText(/0 conversations/).waitFor();
    await clientContext.close();
  });

  it("changes nothing on a cross-site request carrying the cookie", async () => {
    const count = async () => (await apiCall<unknown[]>(url, account.apiKey, "/api/v1/campaigns")).body.length;
    const before = await count();
    // Another site (localhost is not 127.0.0.1) tries a form post and a credentialed fetch at the app.
    const attacker = await context.newPage();
    const target = `${url}/api/v1/campaigns/create`;
    await attacker.goto(`${url.replace("127.0.0.1", "localhost")}/docs`);
    const fetched = await attacker.evaluate(async (to) => {
      try {
        const r = await fetch(to, { method: "POST", credentials: "include", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: '{"name":"forged"}' });
        return r.type;
      } catch (error) {
        return String(error);
      }
    }, target);
    expect(fetched).toBe("opaque");
    await attacker.evaluate((to) => {
      const form = document.createElement("form");
      form.method = "POST";
      form.action = to;
      form.enctype = "text/plain";
      const input = document.createElement("input");
      input.name = '{"name":"forged","x":"';
      input.value = '"}';
      form.appendChild(input);
      document.body.appendChild(form);
      form.submit();
    }, target);
    await attacker.waitForLoadState();
    expect(await attacker.textContent("body")).toContain("API key is required");
    await attacker.close();
    expect(await count()).toBe(before);

    // The cookie copied out of the browser is no credential without the app's own page around it.
    const cookie = (await context.cookies()).find((c) => c.name === "salvo_session")!;
    const replayed = await fetch(target, { method: "POST", headers: { Cookie: `${cookie.name}=${cookie.value}`, "Content-Type": "application/json" }, body: '{"name":"forged"}' });
    expect(replayed.status).toBe(401);
    expect(await count()).toBe(before);
  });

  it("ends sessions at once: revoking another browser's, and signing out", async () => {
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await signIn(otherPage, url, account.apiKey);

    const otherId = await otherPage.evaluate(async () => ((await (await fetch("/api/v1/sessions/current")).json()) as { data: { id: number } }).data.id);
    await page.goto(`${url}/#/inbox`);
    await page.goto(`${url}/#/sessions`);
    const revoke = page.getByRole("button", { name: `Revoke session ${otherId}`, exact: true });
    await revoke.click();
    await page.getByText("Session revoked").waitFor();
    // The other browser's next request finds its session gone and shows the sign-in form.
    await otherPage.goto(`${url}/#/campaigns`);
    await otherPage.getByLabel("API key").waitFor();
    await other.close();

    const cookie = (await context.cookies()).find((c) => c.name === "salvo_session")!;
    await page.getByRole("button", { name: "Sign out" }).first().click();
    await page.getByLabel("API key").waitFor();
    const after = await fetch(`${url}/api/v1/campaigns`, { headers: { Cookie: `${cookie.name}=${cookie.value}`, "Sec-Fetch-Site": "same-origin" } });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ message: "Session expired or signed out" });
  });
});
