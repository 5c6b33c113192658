import { describe, expect, inject, it } from "vitest";
import { verifyAddresses } from "../../src/verification/check";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "../helpers";
import { domain, mailDomain, queriesOf, setRecords, waitForJob } from "./fixtures";

type Result = { email: string; status: string; reason: string; is_disposable: boolean; is_role_account: boolean; mx_found: boolean; provider: string | null; ascii_domain: string | null };

async function verify(apiKey: string, body: Record<string, unknown>) {
  return callJson<{ ok: boolean; success: boolean; data: Result[]; job_id?: string; status?: string; total?: number }>("/api/v1/verify-emails", { method: "POST", apiKey, body });
}

describe("POST /verify-emails (CONTRACT 22)", () => {
  it("answers up to 50 addresses at once with one Result each, in order, from DNS and the lists", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("good");
    const gmail = await mailDomain("gsuite", "google");
    const outlook = await mailDomain("m365", "microsoft");
    const nullMx = domain("nullmx");
    await setRecords(nullMx, { mx: [{ preference: 0, exchange: "" }] });
    const aOnly = domain("aonly");
    await setRecords(aOnly, { a: ["93.184.215.14"] });
    const empty = domain("empty");
    await setRecords(empty, {});
    const nx = domain("nx");
    const idn = `bücher-${crypto.randomUUID().slice(0, 6)}.verify.test`;
    const idnAscii = new URL(`http://${idn}/`).hostname;
    await setRecords(idnAscii, { mx: [{ preference: 5, exchange: "mx.hosting.example" }] });

    const emails = [
      `ann@${good}`,
      `info@${good}`,
      "someone@mailinator.com",
      `not an address@${good}`,
      `bob@${nx}`,
      `carl@${nullMx}`,
      `dora@${aOnly}`,
      `eve@${empty}`,
      `fritz@${idn}`,
      `jürgen@${good}`,
      `gina@${gmail}`,
      `hugo@${outlook}`,
      "ivy@servers.servfail.example",
    ];
    const answer = await verify(account.apiKey, { emails });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.ok).toBe(true);
    expect(answer.body.success).toBe(true);
    const by = (i: number) => answer.body.data[i]!;
    expect(answer.body.data.map((r) => r.email)).toEqual(emails.map((e) => e.toLowerCase()));
    expect(by(0)).toMatchObject({ status: "valid", reason: "mx_ok", mx_found: true, is_role_account: false, is_disposable: false, provider: "other", mailbox_checked: false, is_catch_all: null });
    expect(by(1)).toMatchObject({ status: "risky", reason: "role", is_role_account: true });
    expect(by(3)).toMatchObject({ status: "invalid", reason: "syntax", ascii_domain: null });
    expect(by(4)).toMatchObject({ status: "invalid", reason: "no_domain", mx_found: false });
    expect(by(5)).toMatchObject({ status: "invalid", reason: "null_mx" });
    expect(by(6)).toMatchObject({ status: "valid", reason: "mx_ok", mx_found: false });
    expect(by(7)).toMatchObject({ status: "invalid", reason: "no_mx" });
    expect(by(8)).toMatchObject({ status: "valid", reason: "mx_ok", domain: idn, ascii_domain: idnAscii });
    expect(idnAscii.startsWith("xn--")).toBe(true);
    expect(by(9)).toMatchObject({ status: "risky", reason: "smtputf8" });
    expect(by(10)).toMatchObject({ status: "valid", provider: "google" });
    expect(by(11)).toMatchObject({ status: "valid", provider: "microsoft" });
    expect(by(12)).toMatchObject({ status: "unknown", reason: "dns_error", provider: null });
    // mailinator.com is on the shipped disposable list: the lookup is the resolver's NXDOMAIN here, so only the flag is asserted.
    expect(by(2).is_disposable).toBe(true);
    for (const result of answer.body.data) expect(result).toEqual(expect.objectContaining({ reason_text: expect.any(String), checked_at: expect.stringMatching(/Z$/) }));
  });

  it("asks the resolver once per domain, and reuses the domain's verdict within 24 h", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("cached");
    const first = await verify(account.apiKey, { emails: Array.from({ length: 30 }, (_, i) => `p${i}@${good}`) });
    expect(first.body.data.every((r) => r.status === "valid")).toBe(true);
    expect(await queriesOf(good)).toBe(1);
    await verify(account.apiKey, { email: `again@${good}` });
    expect(await queriesOf(good), "cached in email_domain_checks").toBe(1);
  });

  it("reads every client's shape: DL {email}, BC {emails}, the hosted page's {emailList}", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("shapes");
    for (const body of [{ email: `a@${good}` }, { emails: [`a@${good}`] }, { emailList: [`a@${good}`] }]) {
      const answer = await verify(account.apiKey, body);
      expect(answer.status).toBe(200);
      expect(answer.body.data).toHaveLength(1);
      expect(answer.body.data[0]).toMatchObject({ email: `a@${good}`, status: "valid" });
    }
  });

  it("refuses bad input: no address (422), over 10,000 (422), wrong types (422), a bad webhook_url (422), no key (401)", async () => {
    const account = await provisionAccount();
    for (const body of [{}, { emails: [] }, { emails: Array.from({ length: 10_001 }, (_, i) => `a${i}@x.example`) }, { emails: "a@x.example" }, { emails: [1] }, { email: `a@x.example`, webhook_url: "ftp://hooks.example.com/x" }]) {
      const answer = await verify(account.apiKey, body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(answer.body).toMatchObject({ error: "Validation failed", details: expect.any(Array) });
    }
    const malformed = await callJson("/api/v1/verify-emails", { method: "POST", apiKey: account.apiKey, rawBody: "{", headers: { "Content-Type": "application/json" } });
    expect(malformed.status).toBe(400);
    expect((await callJson("/api/v1/verify-emails", { method: "POST", body: { email: "a@x.example" } })).status).toBe(401);
  });
});

describe("background verification jobs (CONTRACT 22)", () => {
  it("queues more than 50 addresses, shows progress, and answers the results in pages; another tenant's job is a 404", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const client = await createClient(owner.apiKey);
    const clientKey = (await createClientKey(owner.apiKey, client)).api_key;
    const good = await mailDomain("bulk");
    const nx = domain("bulknx");
    const emails = Array.from({ length: 120 }, (_, i) => (i % 4 === 3 ? `x${i}@${nx}` : `p${i}@${good}`));
    const queued = await verify(owner.apiKey, { emails });
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ ok: true, success: true, job_id: expect.stringMatching(/^vj_[0-9a-f]{32}$/), status: "queued", total: 120 });
    const jobId = queued.body.job_id!;
    const status = await waitForJob(owner.apiKey, jobId);
    expect(status).toMatchObject({ ok: true, success: true, job_id: jobId, status: "completed", total: 120, processed: 120, counts: { valid: 90, invalid: 30, risky: 0, unknown: 0 } });
    expect(status.data).toHaveLength(100);
    const page = await callJson<{ data: Result[] }>(`/api/v1/verify-emails/status?job_id=${jobId}&offset=110&limit=5`, { apiKey: owner.apiKey });
    expect(page.body.data.map((r) => r.email)).toEqual(emails.slice(110, 115));
    expect(page.body.data[1]).toMatchObject({ status: "invalid", reason: "no_domain" });

    for (const apiKey of [stranger.apiKey, clientKey]) {
      const foreign = await callJson(`/api/v1/verify-emails/status?job_id=${jobId}`, { apiKey });
      expect(foreign).toMatchObject({ status: 404, body: { error: "Verification job not found" } });
    }
    expect(await callJson(`/api/v1/verify-emails/status?job_id=vj_nope`, { apiKey: owner.apiKey })).toMatchObject({ status: 404, body: { error: "Verification job not found" } });
    expect((await callJson(`/api/v1/verify-emails/status`, { apiKey: owner.apiKey })).status).toBe(422);
    expect((await callJson(`/api/v1/verify-emails/status?job_id=${jobId}&limit=1001`, { apiKey: owner.apiKey })).status).toBe(422);
  });
});

describe("the optional external verifier (CONTRACT 22)", () => {
  const target = inject("outboundTarget");
  const resolverUrl = fileEnv().DNS_RESOLVER_URL!;

  it("decides mailbox existence and catch-all for the addresses DNS left standing; a failed call answers unknown, never a guess", async () => {
    const token = crypto.randomUUID();
    const settings = { resolverUrl, verifier: { url: `${target}/verifier/${token}`, key: "verifier-key" } };
    const good = await mailDomain("ext");
    const gone = domain("extgone");
    const results = await verifyAddresses(fileEnv().DB, settings, [`ann@${good}`, `nobody@${good}`, `anyone@${good}`, `maybe@${good}`, `bob@${gone}`, `info@${good}`]);
    expect(results.map((r) => [r.status, r.reason, r.mailbox_checked, r.is_catch_all])).toEqual([
      ["valid", "deliverable", true, false],
      ["invalid", "undeliverable", true, false],
      ["risky", "catch_all", true, true],
      ["unknown", "external_unknown", true, null],
      // NXDOMAIN: the verifier is not asked.
      ["invalid", "no_domain", false, null],
      ["risky", "role", true, false],
    ]);
    expect(await (await fetch(`${target}/requests/${token}`)).json(), "one call for the five standing addresses").toHaveLength(1);

    const down = await verifyAddresses(fileEnv().DB, settings, [`down@${good}`, `carl@${good}`]);
    expect(down.map((r) => [r.status, r.reason, r.mailbox_checked])).toEqual([
      ["unknown", "external_unknown", false],
      ["unknown", "external_unknown", false],
    ]);
    const wrongKey = await verifyAddresses(fileEnv().DB, { resolverUrl, verifier: { url: `${target}/verifier/${token}`, key: "other" } }, [`dora@${good}`]);
    expect(wrongKey[0]).toMatchObject({ status: "unknown", reason: "external_unknown", mailbox_checked: false });
  });
});
