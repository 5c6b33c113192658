import { applyD1Migrations } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimRecords, openedRows, openStatement, outcomeStatements, type ClaimedRecord } from "../../src/engine/store";
import { rawBatch } from "../../src/platform/sql";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";
import { campaignRow, messagesOf, setCampaign, setMessages, setRecord } from "../db";

type Body = Record<string, unknown>;
const WINDOW = { start_date: "2026-03-01", end_date: "2026-03-10" };

async function get(apiKey: string, path: string, query: Record<string, string>) {
  return callJson<Body>(`/api/v1/${path}?${new URLSearchParams(query)}`, { apiKey });
}

describe("failed_count (CONTRACT 13.3, 13.6)", () => {
  it("counts a message's failure in the window it failed, whatever is written to the message after", async () => {
    const { apiKey } = await provisionAccount();
    const mailbox = (await createMailbox(apiKey)).id;
    const campaign = await createCampaign(apiKey, { name: "Failures" });
    const steps = [1, 2].map((seq) => ({ seq_number: seq, seq_delay_details: { delay_in_days: seq - 1 }, subject: `Step ${seq}`, email_body: "Hello" }));
    expect((await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey, body: { sequences: steps } })).status).toBe(200);
    const ids = await addLeads(apiKey, campaign, ["f1@fail.example", "f2@fail.example", "f3@fail.example"]);
    // f2's step 1 went out before: its next email is step 2.
    await setRecord(ids["f2@fail.example"]!, { nextStep: 2 });
    // Started by hand (START through the API would wake the mailbox's sender); the engine's statements are then called as a pass calls them.
    await setCampaign(campaign, { status: "ACTIVE" });
    const claim = await claimRecords(fileEnv().DB, { campaign: await campaignRow(campaign), mailboxId: mailbox, senderDomain: "sender.example", now: Date.now() + 60_000, limit: 10, newLeadsLeft: 10 });
    const record = (email: string) => claim.records.find((r) => r.recordId === ids[email])!;
    const at = (iso: string) => ({ nonce: claim.nonce, mailboxId: mailbox, now: Date.parse(iso) });
    // f1's step 1 refused at SMTP on 03-03; f2's step 2 failed on 03-05 as the pass opened it (a step left without content); f3's step 1 refused in February.
    const refused = async (r: ClaimedRecord, iso: string) => {
      const [rows] = await rawBatch(fileEnv().DB, [openStatement(at(iso), [r])]);
      const messageRowId = openedRows(rows).get(r.recordId)!;
      await rawBatch(fileEnv().DB, outcomeStatements(claim.nonce, [{ kind: "failed", recordId: r.recordId, messageRowId, error: "550 5.7.1 refused" }], Date.parse(iso)));
    };
    await refused(record("f1@fail.example"), "2026-03-03T10:00:00Z");
    await rawBatch(fileEnv().DB, [openStatement(at("2026-03-05T10:00:00Z"), [record("f2@fail.example")], { status: "failed", error: "no step left" })]);
    await refused(record("f3@fail.example"), "2026-02-20T10:00:00Z");
    const messages = await messagesOf(campaign);
    expect(messages.map((m) => m.status)).toEqual(["failed", "failed", "failed"]);

    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const TODAY = { start_date: day(-1), end_date: day(1) };
    const failures = async (window: Record<string, string>) => {
      const top = await get(apiKey, `campaigns/${campaign}/top-level-analytics-by-date`, window);
      const perStep = (await get(apiKey, `campaigns/${campaign}/sequence-analytics`, window)).body.data as Body[];
      return { top: top.body.failed_count, steps: perStep.map((row) => [row.seq_number, row.failed_count]) };
    };
    expect(await failures(WINDOW)).toEqual({ top: "2", steps: [[1, 1], [2, 1]] });

    // Written today, after the failures (any column: the row's updated_at moves with it).
    await setMessages(
      messages.map((m) => m.id),
      { lastError: "550 5.7.1 refused (seen again)", updatedAt: new Date() },
    );
    expect(await failures(WINDOW)).toEqual({ top: "2", steps: [[1, 1], [2, 1]] });
    expect(await failures(TODAY)).toEqual({ top: "0", steps: [[1, 0], [2, 0]] });
    expect(await failures({ start_date: "2026-02-01", end_date: "2026-02-28" })).toEqual({ top: "1", steps: [[1, 1], [2, 0]] });
    // The window's local days: 2026-03-03T10:00Z is already 03-04 in Kiritimati (UTC+14).
    expect(await failures({ start_date: "2026-03-01", end_date: "2026-03-03" })).toEqual({ top: "1", steps: [[1, 1], [2, 0]] });
    expect(await failures({ start_date: "2026-03-01", end_date: "2026-03-03", time_zone: "Pacific/Kiritimati" })).toEqual({ top: "0", steps: [[1, 0], [2, 0]] });
  });

  it("shows a failure on a step removed since under that step's number, as 13.3 counts it", async () => {
    const { apiKey } = await provisionAccount();
    const mailbox = (await createMailbox(apiKey)).id;
    const campaign = await createCampaign(apiKey, { name: "Removed step" });
    const sequences = (seqs: number[]) =>
      callJson(`/api/v1/campaigns/${campaign}/sequences`, {
        method: "POST",
        apiKey,
        body: { sequences: seqs.map((seq) => ({ seq_number: seq, seq_delay_details: { delay_in_days: seq - 1 }, subject: `Step ${seq}`, email_body: "Hello" })) },
      });
    expect((await sequences([1, 2])).status).toBe(200);
    const ids = await addLeads(apiKey, campaign, ["gone@fail.example"]);
    await setRecord(ids["gone@fail.example"]!, { nextStep: 2 });
    await setCampaign(campaign, { status: "ACTIVE" });
    const claim = await claimRecords(fileEnv().DB, { campaign: await campaignRow(campaign), mailboxId: mailbox, senderDomain: "sender.example", now: Date.now() + 60_000, limit: 10, newLeadsLeft: 10 });
    // Step 2 is removed (the campaign paused for it) after the claim; the pass then finds no step to send and fails the message, as the sender does.
    await setCampaign(campaign, { status: "PAUSED" });
    expect((await sequences([1])).status).toBe(200);
    await setCampaign(campaign, { status: "ACTIVE" });
    await rawBatch(fileEnv().DB, [openStatement({ nonce: claim.nonce, mailboxId: mailbox, now: Date.parse("2026-03-05T10:00:00Z") }, claim.records, { status: "failed", error: "no step left" })]);
    expect((await messagesOf(campaign)).map((m) => [m.step, m.status])).toEqual([[2, "failed"]]);

    const top = await get(apiKey, `campaigns/${campaign}/top-level-analytics-by-date`, WINDOW);
    expect(top.body.failed_count).toBe("1");
    const perStep = (await get(apiKey, `campaigns/${campaign}/sequence-analytics`, WINDOW)).body.data as Body[];
    expect(perStep.map((row) => [row.seq_number, row.email_campaign_seq_id === null, row.failed_count])).toEqual([
      [1, false, 0],
      [2, true, 1],
    ]);
  });

  it("dates the messages failed before migration 0093 by their last write", async () => {
    const MIGRATION = "0093_message_failed_at.sql";
    const db = fileEnv().MIGRATION_DB;
    await applyD1Migrations(db, fileEnv().TEST_MIGRATIONS.filter((m) => m.name < MIGRATION));
    await db.batch(
      [
        "INSERT INTO accounts (id, email, name) VALUES (1, 'owner@legacy.example', 'Owner')",
        "INSERT INTO campaigns (id, account_id, name) VALUES (10, 1, 'legacy')",
        "INSERT INTO leads (id, account_id, email) VALUES (100, 1, 'a@legacy.example'), (101, 1, 'b@legacy.example')",
        "INSERT INTO campaign_leads (id, account_id, campaign_id, lead_id) VALUES (1000, 1, 10, 100), (1001, 1, 10, 101)",
        `INSERT INTO messages (id, account_id, campaign_id, campaign_lead_id, step, email_account_id, message_id, status, created_at, updated_at) VALUES
           (1, 1, 10, 1000, 1, 5, '<a@x>', 'failed', 1772445600000, 1772532000000),
           (2, 1, 10, 1001, 1, 5, '<b@x>', 'sent', 1772445600000, 1772532000000)`,
      ].map((text) => db.prepare(text)),
    );
    await applyD1Migrations(db, fileEnv().TEST_MIGRATIONS.filter((m) => m.name === MIGRATION));
    const { results } = await db.prepare("SELECT id, failed_at FROM messages ORDER BY id").all();
    expect(results).toEqual([
      { id: 1, failed_at: 1772532000000 },
      { id: 2, failed_at: null },
    ]);
  });
});
