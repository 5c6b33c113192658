import { describe, expect, it } from "vitest";
import { claimRecords, openedRows, openStatement, outcomeStatements, startPass, type ClaimedRecord, type ClaimRequest } from "../../src/engine/store";
import { database } from "../../src/platform/db";
import { openMessage } from "./open-message";
import { rawBatch } from "../../src/platform/sql";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { blockListed, campaignRow, messagesOf, recordRow, recordsOf, setCampaign, setRecord } from "../db";

/** A campaign with `count` leads and two mailboxes, through the API; the engine's SQL is then called directly. */
async function setUp(count: number) {
  const account = await provisionAccount();
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey: account.apiKey, body: { name: "Claims" } });
  const emails = Array.from({ length: count }, (_, i) => `lead${i}@claims.example`);
  await callJson(`/api/v1/campaigns/${campaign.id}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: emails.map((email) => ({ email })) } });
  const mailboxes: number[] = [];
  for (const name of ["one", "two"]) {
    const { body } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
      method: "POST",
      apiKey: account.apiKey,
      body: { from_name: name, from_email: `${name}@sender.example`, password: "pw", smtp_host: "smtp.sender.example", smtp_port: 587, imap_host: "imap.sender.example", imap_port: 993 },
    });
    mailboxes.push(body.id);
  }
  // Started by hand (START through the API would also wake these mailboxes' senders).
  await setCampaign(campaign.id, { status: "ACTIVE" });
  return { account, campaign: await campaignRow(campaign.id), mailboxes, emails };
}

const now = Date.now() + 60_000;

const opening = (nonce: string, mailboxId: number) => ({ nonce, mailboxId, now });

async function messageRows(campaignId: number) {
  const rows = await messagesOf(campaignId);
  return rows.map((row) => ({ record: row.campaignLeadId, status: row.status, attempts: row.attempts })).sort((a, b) => a.record - b.record);
}

function request(base: Awaited<ReturnType<typeof setUp>>, mailboxId: number, limit: number, newLeadsLeft = 100): ClaimRequest {
  return { campaign: base.campaign, mailboxId, senderDomain: "sender.example", now, limit, newLeadsLeft };
}

describe("claiming due records", () => {
  it("never hands one record to two mailboxes, and pins each to its claimer", async () => {
    const base = await setUp(6);
    const [first, second] = await Promise.all([claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 4)), claimRecords(fileEnv().DB, request(base, base.mailboxes[1]!, 4))]);
    const ids = [...first.records, ...second.records].map((r) => r.recordId);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    const pinned = new Map((await recordsOf(base.campaign.id)).map((r) => [r.id, r.emailAccountId]));
    expect(first.records.map((r) => pinned.get(r.recordId))).toEqual(first.records.map(() => base.mailboxes[0]));
    expect(second.records.map((r) => pinned.get(r.recordId))).toEqual(second.records.map(() => base.mailboxes[1]));
    expect(first.records.every((r) => r.messageStatus === null && r.messageRowId === null && r.messageId.endsWith("@sender.example>"))).toBe(true);
    expect(await messageRows(base.campaign.id), "a claim writes no message: each is written right before its own transaction").toEqual([]);
  });

  it("reads each record's spintax_modulo_index, its k in the campaign (incremental spintax, CONTRACT 21.1)", async () => {
    const base = await setUp(4);
    const { records } = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 10));
    expect(records.map((r) => r.spintaxIndex).sort()).toEqual([0, 1, 2, 3]);
    const byRecord = [...records].sort((a, b) => a.recordId - b.recordId).map((r) => r.spintaxIndex);
    expect(byRecord, "the k-th record by id has k").toEqual([0, 1, 2, 3]);
  });

  it("holds new leads to the campaign's remaining new-leads allowance", async () => {
    const base = await setUp(5);
    const { records } = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 10, 2));
    expect(records).toHaveLength(2);
  });

  it("refuses block-listed addresses and domains and leads that opted out elsewhere, writing no message for them", async () => {
    const base = await setUp(3);
    await blockListed(base.account.id, base.emails[0]!, "unrelated.example");
    const { body: other } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey: base.account.apiKey, body: { name: "Other" } });
    await callJson(`/api/v1/campaigns/${other.id}/leads`, { method: "POST", apiKey: base.account.apiKey, body: { lead_list: [{ email: base.emails[1] }] } });
    await callJson(`/api/v1/campaigns/${other.id}/events`, {
      method: "POST",
      apiKey: base.account.apiKey,
      body: { events: [{ type: "UNSUBSCRIBE", lead_email: base.emails[1], occurred_at: new Date().toISOString() }] },
    });
    const { nonce, records } = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 10));
    const byEmail = Object.fromEntries(records.map((r) => [r.leadEmail, r.refusal]));
    expect(byEmail).toEqual({ [base.emails[0]!]: "blocked", [base.emails[1]!]: "opted_out", [base.emails[2]!]: null });
    expect(await messageRows(base.campaign.id)).toEqual([]);

    await rawBatch(
      fileEnv().DB,
      outcomeStatements(
        nonce,
        records.filter((r) => r.refusal).map((r) => ({ kind: "refused" as const, recordId: r.recordId, state: r.refusal === "blocked" ? ("BLOCKED" as const) : ("STOPPED" as const) })),
        now,
      ),
    );
    const refused = [await recordRow(records[0]!.recordId), await recordRow(records[1]!.recordId)];
    expect(refused.map((s) => s.dueAt)).toEqual([null, null]);
  });

  it("never sends a step twice: a send left in flight by a dead pass comes back unconfirmed once its lease runs out, not sending", async () => {
    const base = await setUp(1);
    const first = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 1));
    const record = first.records[0]!;
    expect(await openMessage(fileEnv().DB, opening(first.nonce, base.mailboxes[0]!), record)).not.toBeNull();
    // The pass dies mid-SMTP; its lease ends; another pass claims the record again.
    await setRecord(record.recordId, { dueAt: new Date(now - 1) });
    const second = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 1));
    expect(second.records[0]).toMatchObject({ recordId: record.recordId, messageStatus: "unconfirmed", messageId: record.messageId });
    // And the row is not taken up again by a second opening.
    expect(await openMessage(fileEnv().DB, opening(second.nonce, base.mailboxes[0]!), second.records[0]!)).toBeNull();
    expect(await messageRows(base.campaign.id)).toEqual([{ record: record.recordId, status: "unconfirmed", attempts: 1 }]);
  });

  it("a pass that dies mid-claim leaves only the message in flight in doubt; its next pass releases the rest at once", async () => {
    const base = await setUp(7);
    const [mailbox, other] = base.mailboxes as [number, number];
    const claim = await claimRecords(fileEnv().DB, request(base, mailbox, 5));
    const bystander = await claimRecords(fileEnv().DB, request(base, other, 5));
    expect(bystander.records).toHaveLength(2);
    const [done, inFlight, ...untouched] = claim.records;
    // The first message went out and its outcome was stored; the second is in its SMTP transaction when the pass dies.
    const doneRow = (await openMessage(fileEnv().DB, opening(claim.nonce, mailbox), done!))!;
    await rawBatch(fileEnv().DB, outcomeStatements(claim.nonce, [{ kind: "sent", recordId: done!.recordId, messageRowId: doneRow, subject: "Hi", sentAt: now, nextStep: null, nextDueAt: null }], now));
    const inFlightRow = (await openMessage(fileEnv().DB, opening(claim.nonce, mailbox), inFlight!))!;

    const later = now + 5_000;
    const { inDoubt, work } = await startPass(database(fileEnv().DB), mailbox, later, later - (later % 86_400_000));
    expect(inDoubt).toEqual([{ messageRowId: inFlightRow, campaignId: base.campaign.id, recordId: inFlight!.recordId }]);
    // The same round trip reads the mailbox's work.
    expect(work.mailbox?.id).toBe(mailbox);
    expect(await messageRows(base.campaign.id)).toEqual([
      { record: done!.recordId, status: "sent", attempts: 1 },
      { record: inFlight!.recordId, status: "unconfirmed", attempts: 1 },
    ]);
    const rows = await recordsOf(base.campaign.id);
    const byId = new Map(rows.map((row) => [row.id, { due_at: row.dueAt?.getTime() ?? null, claim_token: row.claimToken, mailbox: row.emailAccountId }]));
    // Released now, not in 15 minutes; first steps never written go back to rotation.
    for (const record of untouched) expect(byId.get(record.recordId)).toMatchObject({ due_at: later, claim_token: null, mailbox: null });
    expect(byId.get(inFlight!.recordId)).toMatchObject({ due_at: later, claim_token: null, mailbox });
    // Another mailbox's claim (its pass still running) is not this mailbox's to release.
    for (const record of bystander.records) expect(byId.get(record.recordId)).toMatchObject({ claim_token: bystander.nonce, mailbox: other });

    // The next claim sees the one in doubt as such (the sender moves it on) and the others as never written.
    const again = await claimRecords(fileEnv().DB, { ...request(base, mailbox, 10), now: later });
    expect(Object.fromEntries(again.records.map((r) => [r.recordId, r.messageStatus]))).toEqual({
      [inFlight!.recordId]: "unconfirmed",
      ...Object.fromEntries(untouched.map((r) => [r.recordId, null])),
    });
  });

  it("a pass that dies gives back to rotation only the first steps its claim took from it; one pinned before keeps its mailbox", async () => {
    const base = await setUp(3);
    const [mailbox] = base.mailboxes as [number, number];
    const [pinned, ...open] = (await recordsOf(base.campaign.id)).map((row) => row.id) as [number, ...number[]];
    // Pinned before any claim, as a subsequence's record on its parent's mailbox is.
    await setRecord(pinned, { emailAccountId: mailbox });
    const claim = await claimRecords(fileEnv().DB, request(base, mailbox, 5));
    expect(Object.fromEntries(claim.records.map((r) => [r.recordId, r.pinned]))).toEqual({ [pinned]: true, ...Object.fromEntries(open.map((id) => [id, false])) });

    const later = now + 5_000;
    await startPass(database(fileEnv().DB), mailbox, later, later - (later % 86_400_000));
    const byId = new Map((await recordsOf(base.campaign.id)).map((row) => [row.id, { claim_token: row.claimToken, mailbox: row.emailAccountId, due_at: row.dueAt?.getTime() }]));
    expect(byId.get(pinned)).toEqual({ claim_token: null, mailbox, due_at: later });
    for (const id of open) expect(byId.get(id)).toEqual({ claim_token: null, mailbox: null, due_at: later });
  });

  it("opens a message only for its own claim, a live record and an ACTIVE campaign, and takes up a deferred one with one attempt more", async () => {
    const base = await setUp(3);
    const mailbox = base.mailboxes[0]!;
    const claim = await claimRecords(fileEnv().DB, request(base, mailbox, 3));
    const [deferred, stopped, paused] = claim.records as [ClaimedRecord, ClaimedRecord, ClaimedRecord];
    expect(await openMessage(fileEnv().DB, opening("another-claim", mailbox), deferred)).toBeNull();
    const row = (await openMessage(fileEnv().DB, opening(claim.nonce, mailbox), deferred))!;
    await rawBatch(fileEnv().DB, outcomeStatements(claim.nonce, [{ kind: "deferred", recordId: deferred.recordId, messageRowId: row, error: "451 busy", retryAt: now, unpin: false, countAttempt: true }], now));
    const retry = await claimRecords(fileEnv().DB, request(base, mailbox, 1));
    expect(retry.records[0]).toMatchObject({ recordId: deferred.recordId, messageRowId: row, messageStatus: "deferred", messageId: deferred.messageId, attempts: 1 });
    expect(await openMessage(fileEnv().DB, opening(retry.nonce, mailbox), retry.records[0]!)).toBe(row);

    await setRecord(stopped.recordId, { state: "STOPPED" });
    expect(await openMessage(fileEnv().DB, opening(claim.nonce, mailbox), stopped), "a lead stopped since the claim").toBeNull();
    await setCampaign(base.campaign.id, { status: "PAUSED" });
    expect(await openMessage(fileEnv().DB, opening(claim.nonce, mailbox), paused), "a campaign paused since the claim").toBeNull();
    expect(await messageRows(base.campaign.id)).toEqual([{ record: deferred.recordId, status: "sending", attempts: 2 }]);
  });

  it("opens a whole window in one statement: each record as alone, rows in the window's order", async () => {
    const base = await setUp(5);
    const mailbox = base.mailboxes[0]!;
    const claim = await claimRecords(fileEnv().DB, request(base, mailbox, 5));
    const [sent, stopped, ...rest] = claim.records as [ClaimedRecord, ClaimedRecord, ...ClaimedRecord[]];
    const sentRow = (await openMessage(fileEnv().DB, opening(claim.nonce, mailbox), sent))!;
    await rawBatch(fileEnv().DB, outcomeStatements(claim.nonce, [{ kind: "sent", recordId: sent.recordId, messageRowId: sentRow, subject: "Hi", sentAt: now, nextStep: null, nextDueAt: null }], now));
    await setRecord(stopped.recordId, { state: "STOPPED" });
    const window = [...rest].reverse();
    expect(openedRows((await rawBatch(fileEnv().DB, [openStatement(opening("another-claim", mailbox), window)]))[0]).size, "another claim's records").toBe(0);
    const [rows] = await rawBatch(fileEnv().DB, [openStatement(opening(claim.nonce, mailbox), [stopped, ...window, sent])]);
    const opened = openedRows(rows);
    expect([...opened.keys()], "a stopped lead and a sent step open nothing").toEqual(window.map((r) => r.recordId));
    const ids = window.map((r) => opened.get(r.recordId)!);
    expect(ids, "row ids follow the window's order").toEqual([...ids].sort((a, b) => a - b));
    expect((await messageRows(base.campaign.id)).filter((row) => row.status === "sending").map((row) => row.record).sort()).toEqual(window.map((r) => r.recordId).sort());
  });

  it("ignores an outcome whose claim was taken over after its lease ran out", async () => {
    const base = await setUp(1);
    const stale = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 1));
    const recordId = stale.records[0]!.recordId;
    await setRecord(recordId, { dueAt: new Date(now - 1) });
    const fresh = await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 1));
    await rawBatch(fileEnv().DB, outcomeStatements(stale.nonce, [{ kind: "skipped", recordId, nextStep: null, nextDueAt: null }], now));
    const row = await recordRow(recordId);
    expect({ state: row.state, claim_token: row.claimToken }).toEqual({ state: "DRAFTED", claim_token: fresh.nonce });
  });
});

describe("claiming for a campaign paused meanwhile", () => {
  it("yields nothing once the campaign is no longer ACTIVE, even to a pass that began before", async () => {
    const base = await setUp(2);
    expect((await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 1))).records).toHaveLength(1);
    await setCampaign(base.campaign.id, { status: "PAUSED" });
    expect((await claimRecords(fileEnv().DB, request(base, base.mailboxes[0]!, 1))).records).toEqual([]);
  });
});
