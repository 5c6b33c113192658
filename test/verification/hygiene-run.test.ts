import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import { claimRecords, outcomeStatements, type ClaimRequest } from "../../src/engine/store";
import { rawBatch } from "../../src/platform/sql";
import { senderStub } from "../../src/mailbox-agent/stub";
import { continueVerificationJobs, runVerificationJob } from "../../src/verification/jobs";
import { createEmailJob } from "../../src/verification/store";
import { recipientsProblem } from "../../src/manual-mail/store";
import { callJson, provisionAccount, type TestAccount, fileEnv } from "../helpers";
import { domain, mailDomain, setRecords } from "./fixtures";

/**
 * The done-when (CONTRACT 22): a verification run over 10,000 addresses finishes in the
 * background with progress, through the suite's real DNS-over-HTTPS resolver, and the engine then
 * skips every invalid address (BLOCKED, `blocked_reason: invalid_email`, counted in sending_status).
 */

const bindings = fileEnv() as unknown as Bindings;
const MONDAY_10 = Date.parse("2031-03-03T10:00:00Z");

async function campaignWith(account: TestAccount, emails: string[]) {
  const apiKey = account.apiKey;
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Hygiene" } });
  for (let i = 0; i < emails.length; i += 400) {
    const added = await callJson<{ upload_count: number }>(`/api/v1/campaigns/${campaign.id}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: emails.slice(i, i + 400).map((email) => ({ email })) },
    });
    expect(added.body.upload_count).toBe(Math.min(400, emails.length - i));
  }
  return campaign.id;
}

type Status = { status: string; total: number; processed: number; counts: { valid: number; invalid: number; risky: number; unknown: number } };

describe("a verification run over 10,000 leads, then the engine", () => {
  it("finishes in the background with progress, stores each lead's status, and the engine skips every invalid one", async () => {
    const account = await provisionAccount();
    // 100 domains: 80 with MX, 10 that do not exist, 10 with a null MX; 100 addresses each.
    const good = await Promise.all(Array.from({ length: 80 }, (_, i) => mailDomain(`ok${i}`)));
    const missing = Array.from({ length: 10 }, (_, i) => domain(`gone${i}`));
    const nullMx = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const name = domain(`nomail${i}`);
        await setRecords(name, { mx: [{ preference: 0, exchange: "" }] });
        return name;
      }),
    );
    const domains = [...good, ...missing, ...nullMx];
    const emails = Array.from({ length: 10_000 }, (_, i) => `person${i}@${domains[i % 100]}`);
    const invalid = new Set(emails.filter((_, i) => i % 100 >= 80));
    const campaignId = await campaignWith(account, emails);

    const queued = await callJson<{ job_id: string; status: string; total: number }>("/api/v1/leads/verify", { method: "POST", apiKey: account.apiKey, body: { campaign_id: campaignId } });
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ ok: true, success: true, status: "queued", total: 10_000 });

    // Progress as a caller reads it (the request's own pass may do it all); when that pass stops (its time budget), the minute cron's job carries on.
    const seen: number[] = [];
    let status: Status;
    for (let rounds = 0; ; rounds += 1) {
      status = (await callJson<Status>(`/api/v1/verify-emails/status?job_id=${queued.body.job_id}&limit=1`, { apiKey: account.apiKey })).body;
      if (seen.at(-1) !== status.processed) seen.push(status.processed);
      if (status.status === "completed" || rounds > 600) break;
      if (rounds % 10 === 9) await continueVerificationJobs(bindings, new Date());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toMatchObject({ status: "completed", total: 10_000, processed: 10_000, counts: { valid: 8_000, invalid: 2_000, risky: 0, unknown: 0 } });
    expect(seen.at(-1)).toBe(10_000);

    const marks = await fileEnv().DB.prepare(
      "SELECT verification_status AS status, verification_reason AS reason, count(*) AS n FROM leads WHERE account_id = ? GROUP BY 1, 2 ORDER BY 1, 2",
    )
      .bind(account.id)
      .all<{ status: string; reason: string; n: number }>();
    expect(marks.results).toEqual([
      { status: "invalid", reason: "no_domain", n: 1_000 },
      { status: "invalid", reason: "null_mx", n: 1_000 },
      { status: "valid", reason: "mx_ok", n: 8_000 },
    ]);
    const refusedTo = (to: string) => recipientsProblem(fileEnv().DB, { accountId: account.id, clientId: null }, { to, cc: [], bcc: [] });
    expect(await refusedTo([...invalid][0]!)).toBe(`The recipient ${[...invalid][0]!} was verified invalid`);
    expect(await refusedTo(emails[0]!)).toBeNull();

    // The engine: every due record claimed at once; each invalid lead's is refused, no valid one is.
    await fileEnv().DB.prepare("UPDATE campaigns SET status = 'ACTIVE' WHERE id = ?").bind(campaignId).run();
    await fileEnv().DB.prepare("UPDATE campaign_leads SET due_at = ? WHERE campaign_id = ?").bind(MONDAY_10 - 1, campaignId).run();
    const campaign = await fileEnv().DB.prepare("SELECT id, account_id AS accountId, client_id AS clientId, name, status, schedule, settings FROM campaigns WHERE id = ?")
      .bind(campaignId)
      .first<ClaimRequest["campaign"]>();
    const claimed = await claimRecords(fileEnv().DB, { campaign: campaign!, mailboxId: 1, senderDomain: "sender.example", now: MONDAY_10, limit: 10_000, newLeadsLeft: 10_000 });
    expect(claimed.records).toHaveLength(10_000);
    const refused = claimed.records.filter((record) => record.refusal === "invalid_email");
    expect(new Set(refused.map((record) => record.leadEmail))).toEqual(invalid);
    expect(claimed.records.filter((record) => record.refusal === null)).toHaveLength(8_000);
    // What the sender stores for them (src/engine/sender.ts): BLOCKED with the reason, nothing sent.
    await rawBatch(fileEnv().DB, outcomeStatements(claimed.nonce, refused.map((record) => ({ kind: "refused", recordId: record.recordId, state: "BLOCKED", reason: "invalid_email" })), MONDAY_10));
    const read = await callJson<{ sending_status: { details: { skipped: Record<string, number> } } }>(`/api/v1/campaigns/${campaignId}`, { apiKey: account.apiKey });
    expect(read.body.sending_status.details.skipped).toEqual({ invalid_email: 2_000, blocked: 0, unsubscribed: 0 });
  }, 300_000);

  it("shows its progress chunk by chunk: processed, counts and the finished results grow as each chunk commits", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("steps");
    const gone = domain("stepsgone");
    const emails = Array.from({ length: 1_200 }, (_, i) => (i % 2 ? `p${i}@${good}` : `p${i}@${gone}`));
    const created = await createEmailJob(fileEnv().DB, { accountId: account.id, clientId: null }, emails, null, Date.now());
    const job = (await fileEnv().DB.prepare("SELECT id FROM verification_jobs WHERE public_id = ?").bind(created).first<{ id: number }>())!;
    const read = async () => (await callJson<Status & { data: unknown[] }>(`/api/v1/verify-emails/status?job_id=${created}&limit=1000`, { apiKey: account.apiKey })).body;
    expect(await read()).toMatchObject({ status: "queued", processed: 0, counts: { valid: 0, invalid: 0 }, data: [] });
    const seen = [];
    // A pass with no time budget does one chunk (500 addresses), as a cron pass that runs out of time would.
    for (let pass = 0; pass < 3; pass += 1) {
      await runVerificationJob(bindings, job.id, 0);
      const status = await read();
      seen.push({ status: status.status, processed: status.processed, valid: status.counts.valid, invalid: status.counts.invalid, results: status.data.length });
    }
    expect(seen).toEqual([
      { status: "running", processed: 500, valid: 250, invalid: 250, results: 500 },
      { status: "running", processed: 1_000, valid: 500, invalid: 500, results: 1_000 },
      { status: "completed", processed: 1_200, valid: 600, invalid: 600, results: 1_000 },
    ]);
  });

  it("a real sender pass blocks the records of invalid leads without sending, and says so in sending_status", async () => {
    const account = await provisionAccount();
    const apiKey = account.apiKey;
    const gone = domain("dead");
    const emails = [`a@${gone}`, `b@${gone}`, `c@${gone}`];
    const { body: mailbox } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
      method: "POST",
      apiKey,
      body: { from_name: "S", from_email: `s-${crypto.randomUUID()}@sender.example`, password: "pw", smtp_host: "smtp.sender.example", smtp_port: 587, imap_host: "imap.sender.example", imap_port: 993 },
    });
    await fileEnv().DB.prepare("UPDATE email_accounts SET is_smtp_success = 1 WHERE id = ?").bind(mailbox.id).run();
    const campaignId = await campaignWith(account, emails);
    await callJson(`/api/v1/campaigns/${campaignId}/sequences`, { method: "POST", apiKey, body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] } });
    await callJson(`/api/v1/campaigns/${campaignId}/schedule`, {
      method: "POST",
      apiKey,
      body: { timezone: "Europe/Paris", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", schedule_start_time: "2031-03-01T00:00:00Z" },
    });
    const job = await callJson<{ job_id: string }>("/api/v1/leads/verify", { method: "POST", apiKey, body: { campaign_id: campaignId } });
    for (let i = 0; i < 100; i += 1) {
      const { body } = await callJson<Status>(`/api/v1/verify-emails/status?job_id=${job.body.job_id}`, { apiKey });
      if (body.status === "completed") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await callJson(`/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } });
    await callJson(`/api/v1/campaigns/${campaignId}/status`, { method: "POST", apiKey, body: { status: "START" } });

    // A pass whose claim held only refusals sent nothing; the sender's next passes take the rest.
    for (let i = 0; i < emails.length; i += 1) expect((await senderStub(bindings, mailbox.id).runPass(MONDAY_10)).sent).toBe(0);
    const records = await fileEnv().DB.prepare("SELECT state, blocked_reason AS reason, due_at AS due FROM campaign_leads WHERE campaign_id = ?").bind(campaignId).all();
    expect(records.results).toEqual(emails.map(() => ({ state: "BLOCKED", reason: "invalid_email", due: null })));
    const messages = await fileEnv().DB.prepare("SELECT count(*) AS n FROM messages WHERE campaign_id = ?").bind(campaignId).first<{ n: number }>();
    expect(messages!.n, "nothing was sent or attempted").toBe(0);
    const read = await callJson<{ sending_status: { code: string; details: { skipped: Record<string, number> } } }>(`/api/v1/campaigns/${campaignId}`, { apiKey });
    expect(read.body.sending_status).toMatchObject({ code: "no_leads_due", details: { skipped: { invalid_email: 3, blocked: 0, unsubscribed: 0 } } });
  });
});
