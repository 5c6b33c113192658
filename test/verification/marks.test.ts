import { describe, expect, it } from "vitest";
import { claimRecords, type ClaimRequest } from "../../src/engine/store";
import { verifyAddresses } from "../../src/verification/check";
import { storeOnLeadsStatement } from "../../src/verification/store";
import { rawBatch } from "../../src/platform/sql";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { domain, mailDomain, waitForJob } from "./fixtures";
import { ingestOk } from "../campaigns/fixtures";

const MONDAY_10 = Date.parse("2031-03-03T10:00:00Z");

async function campaign(apiKey: string) {
  return (await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Marks" } })).body.id;
}
async function leadRow(accountId: number, email: string) {
  return fileEnv().DB.prepare("SELECT id, email, verification_status AS status, verification_reason AS reason FROM leads WHERE account_id = ? AND email = ?")
    .bind(accountId, email)
    .first<{ id: number; email: string; status: string | null; reason: string | null }>();
}
async function claimAll(campaignId: number) {
  await fileEnv().DB.prepare("UPDATE campaigns SET status = 'ACTIVE' WHERE id = ?").bind(campaignId).run();
  await fileEnv().DB.prepare("UPDATE campaign_leads SET due_at = ? WHERE campaign_id = ?").bind(MONDAY_10 - 1, campaignId).run();
  const row = await fileEnv().DB.prepare("SELECT id, account_id AS accountId, client_id AS clientId, name, status, schedule, settings FROM campaigns WHERE id = ?")
    .bind(campaignId)
    .first<ClaimRequest["campaign"]>();
  return claimRecords(fileEnv().DB, { campaign: row!, mailboxId: 1, senderDomain: "sender.example", now: MONDAY_10, limit: 100, newLeadsLeft: 100 });
}

/** A lead ann@ at a domain that takes mail, whose first email bounced hard: marked invalid/hard_bounce. */
async function bouncedLead(label: string) {
  const account = await provisionAccount();
  const good = await mailDomain(label);
  const first = await campaign(account.apiKey);
  const added = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${first}/leads`, {
    method: "POST",
    apiKey: account.apiKey,
    body: { lead_list: [{ email: `ann@${good}` }], settings: { return_lead_ids: true } },
  });
  const record = added.body.emailToLeadIdMap[`ann@${good}`]!;
  await ingestOk(account.apiKey, first, [
    { event_id: "s1", type: "SENT", email_lead_map_id: record, occurred_at: "2026-11-01T09:00:00Z" },
    { event_id: "b1", type: "BOUNCE", email_lead_map_id: record, occurred_at: "2026-11-01T09:05:00Z" },
  ]);
  expect((await leadRow(account.id, `ann@${good}`))!.reason).toBe("hard_bounce");
  return { account, good };
}

describe("verification marks on leads: a check replaces only what it can gainsay, and a new address starts unchecked", () => {
  it("`skip` upload keeps an existing lead's stronger invalid mark (external undeliverable)", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("keepmark");
    const first = await campaign(account.apiKey);
    await callJson(`/api/v1/campaigns/${first}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: `ann@${good}` }] } });
    // The external verifier said the mailbox does not exist (what a /leads/verify job with EMAIL_VERIFIER_URL stores).
    await fileEnv().DB.prepare("UPDATE leads SET verification_status = 'invalid', verification_reason = 'undeliverable', verified_at = ? WHERE account_id = ?")
      .bind(Date.now(), account.id)
      .run();
    const second = await campaign(account.apiKey);
    const added = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${second}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: `ann@${good}` }], settings: { verify_emails: "skip" } },
    });
    expect(added.status).toBe(200);
    const lead = await leadRow(account.id, `ann@${good}`);
    const claimed = await claimAll(second);
    expect({ mark: [lead!.status, lead!.reason], refusal: claimed.records.map((r) => r.refusal) }).toEqual({ mark: ["invalid", "undeliverable"], refusal: ["invalid_email"] });
  });

  it("`skip` upload keeps a hard bounce's mark", async () => {
    const { account, good } = await bouncedLead("keepbounce");
    const second = await campaign(account.apiKey);
    await callJson(`/api/v1/campaigns/${second}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: `ann@${good}` }], settings: { verify_emails: "skip" } } });
    const lead = await leadRow(account.id, `ann@${good}`);
    expect([lead!.status, lead!.reason]).toEqual(["invalid", "hard_bounce"]);
  });

  it("POST /leads/verify (recheck 0) keeps a hard bounce's mark", async () => {
    const { account, good } = await bouncedLead("jobbounce");
    const job = await callJson<{ job_id: string }>("/api/v1/leads/verify", { method: "POST", apiKey: account.apiKey, body: { all: true, recheck_after_days: 0 } });
    await waitForJob(account.apiKey, job.body.job_id);
    const lead = await leadRow(account.id, `ann@${good}`);
    expect([lead!.status, lead!.reason]).toEqual(["invalid", "hard_bounce"]);
  });

  it("a mailbox check made after a hard bounce replaces it; one made before it (its job's chunk committing after the bounce) does not", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("afterbounce");
    const id = await campaign(account.apiKey);
    await callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: `ann@${good}` }] } });
    const lead = (await leadRow(account.id, `ann@${good}`))!;
    const checkedAt = Date.now();
    const deliverable = { ...(await verifyAddresses(fileEnv().DB, { resolverUrl: fileEnv().DNS_RESOLVER_URL!, verifier: null }, [lead.email]))[0]!, status: "valid" as const, reason: "deliverable" as const, mailbox_checked: true };
    const bounceAt = async (at: number) =>
      fileEnv().DB.prepare("UPDATE leads SET verification_status = 'invalid', verification_reason = 'hard_bounce', verified_at = ? WHERE id = ?").bind(at, lead.id).run();
    await bounceAt(checkedAt + 1_000);
    await rawBatch(fileEnv().DB, [storeOnLeadsStatement([{ leadId: lead.id, email: lead.email, result: deliverable }], checkedAt)]);
    expect((await leadRow(account.id, lead.email))!.reason, "the bounce came after the check").toBe("hard_bounce");
    await bounceAt(checkedAt - 1_000);
    await rawBatch(fileEnv().DB, [storeOnLeadsStatement([{ leadId: lead.id, email: lead.email, result: deliverable }], checkedAt)]);
    expect((await leadRow(account.id, lead.email))!.reason, "the check came after the bounce").toBe("deliverable");
    // A check of the address the job read, stored after the lead's address changed, changes nothing of it.
    await bounceAt(checkedAt - 1_000);
    await rawBatch(fileEnv().DB, [storeOnLeadsStatement([{ leadId: lead.id, email: `old@${good}`, result: deliverable }], checkedAt)]);
    expect((await leadRow(account.id, lead.email))!.reason).toBe("hard_bounce");
  });

  it("readdressing a lead verified invalid: the new address is not the old one's verdict", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("fixed");
    const gone = domain("typo");
    const id = await campaign(account.apiKey);
    const added = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${id}/leads`, {
      method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: `ann@${gone}` }], settings: { verify_emails: "flag" } },
    });
    await waitForJob(account.apiKey, added.body.verification_job_id as string);
    const before = await leadRow(account.id, `ann@${gone}`);
    expect([before!.status, before!.reason]).toEqual(["invalid", "no_domain"]);
    // The typo is fixed.
    const put = await callJson(`/api/v1/leads/${before!.id}`, { method: "PUT", apiKey: account.apiKey, body: { email: `ann@${good}` } });
    expect(put.status).toBe(200);
    // Re-verifying with the defaults: the lead "was checked recently", so nothing is checked.
    const job = await callJson<{ total: number }>("/api/v1/leads/verify", { method: "POST", apiKey: account.apiKey, body: { campaign_id: id } });
    const after = await leadRow(account.id, `ann@${good}`);
    const claimed = await claimAll(id);
    expect({ mark: [after!.status, after!.reason], reverifyTotal: job.body.total, refusal: claimed.records.map((r) => r.refusal) }).toEqual({
      mark: [null, null],
      reverifyTotal: 1,
      refusal: [null],
    });
  });
});
