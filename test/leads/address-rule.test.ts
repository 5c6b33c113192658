import { describe, expect, it } from "vitest";
import { leadByEmail, leadsOf } from "../db";
import { call, callJson, provisionAccount } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createList, importInto, listEmails } from "../lead-lists/fixtures";

/** Addresses the attack pass stored as leads (issue 23); a NUL one went out in RCPT TO. */
const HOSTILE = [
  "nul\0@example.com",
  "ctl\u0001@example.com",
  "del\u007f@example.com",
  "<eve>@example.com",
  "eve@exa<mple>.com",
  "(eve)@example.com",
  "e,ve@example.com",
  "e;ve@example.com",
  "e:ve@example.com",
  '"e ve"@example.com',
  "eve@[127.0.0.1]",
  "eve@localhost",
];

async function storedEmails(accountId: number): Promise<string[]> {
  return (await leadsOf(accountId)).map((row) => row.email).sort();
}

describe("one strict address rule for leads (issue 23)", () => {
  it("adds only addresses that pass, counting the rest invalid, international ones included", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body } = await callJson(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [...HOSTILE, "ok@example.com", "Jörg@Bücher.de", "o'brien+x@example.co.uk"].map((email) => ({ email })) },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ upload_count: 3, invalid_email_count: HOSTILE.length });
    expect(await storedEmails(account.id)).toEqual(["jörg@bücher.de", "o'brien+x@example.co.uk", "ok@example.com"]);
  });

  it("holds lead-list imports (JSON and CSV) and lead updates to the same rule", async () => {
    const account = await provisionAccount();
    const list = await createList(account.apiKey);
    const imported = await importInto(account.apiKey, list, [...HOSTILE, "fine@example.com"].map((email) => ({ email })));
    expect(imported.body.data).toMatchObject({ imported: 1, invalid: HOSTILE.length });

    const csv = ["email", ...HOSTILE.filter((email) => !/[",\r\n]/.test(email)), "csv@example.com"].join("\r\n");
    const queued = await call(`/api/v1/lead-list/${list}/import-csv`, { method: "POST", apiKey: account.apiKey, rawBody: csv, headers: { "Content-Type": "text/csv" } });
    expect(queued.status).toBe(202);
    const { data } = (await queued.json()) as { data: { id: number } };
    let state = "";
    for (let i = 0; i < 100 && state !== "done"; i++) {
      state = (await callJson<{ data: { state: string } }>(`/api/v1/lead-list/${list}/imports/${data.id}`, { apiKey: account.apiKey })).body.data.state;
      if (state !== "done") await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await listEmails(account.apiKey, list)).toEqual(["csv@example.com", "fine@example.com"]);

    const lead = (await leadByEmail(account.id, "fine@example.com")).id;
    for (const email of HOSTILE) {
      const answer = await callJson(`/api/v1/leads/${lead}`, { method: "PUT", apiKey: account.apiKey, body: { email } });
      expect(answer, JSON.stringify(email)).toMatchObject({ status: 422, body: { details: [{ path: "email", message: "Invalid email address" }] } });
    }
    expect(await storedEmails(account.id)).toEqual(["csv@example.com", "fine@example.com"]);
  });
});

describe("the same rule for every recipient a request names (issue 23)", () => {
  it("refuses replies' to/cc/bcc, a test email's address and a mailbox's bcc outside the rule; takes international ones", async () => {
    const account = await provisionAccount();
    const post = (path: string, body: Record<string, unknown>) => callJson<{ details?: { path: string; message: string }[] }>(path, { method: "POST", apiKey: account.apiKey, body });
    const reply = { email_stats_id: 1, email_body: "Thanks" };
    for (const bad of ["nul\0@example.com", "<eve>@example.com", "eve@[127.0.0.1]"]) {
      expect((await post("/api/v1/campaigns/999999999/reply-email-thread", { ...reply, cc: [bad] })).body.details).toEqual([{ path: "cc.0", message: "Invalid email address" }]);
      expect((await post("/api/v1/campaigns/999999999/reply-email-thread", { ...reply, bcc: `ok@example.com, ${bad}` })).body.details).toEqual([
        { path: "bcc.1", message: "Invalid email address" },
      ]);
      expect((await post("/api/v1/campaigns/999999999/reply-email-thread", { ...reply, to_email: bad })).body.details).toEqual([{ path: "to_email", message: "Invalid email address" }]);
      expect((await post("/api/v1/campaigns/999999999/send-test-email", { leadId: 1, sequenceNumber: 1, customEmailAddress: bad })).body.details).toEqual([
        { path: "customEmailAddress", message: "Invalid email address" },
      ]);
      expect((await post("/api/v1/email-accounts/save", { id: 999999999, bcc: bad })).body.details).toEqual([{ path: "bcc", message: "Invalid email address" }]);
    }
    // Valid everywhere: the campaign is what is missing.
    expect(await post("/api/v1/campaigns/999999999/reply-email-thread", { ...reply, cc: ["ann@bücher.de"], to_email: "jörg@example.de" })).toMatchObject({ status: 404 });
  });
});
