import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import type { MailboxSender } from "../../src/mailbox-agent/mailbox.do";
import { lateMailboxes } from "../../src/mailbox-agent/store";
import { WAKE_SLACK_MS } from "../../src/mailbox-agent/recorded-wake";
import { rearmLateSenders } from "../../src/mailbox-agent/rearm";
import { senderStub } from "../../src/mailbox-agent/stub";
import { database } from "../../src/platform/db";
import { MINUTE_JOBS } from "../../src/scheduled";
import { claimRecords } from "../../src/engine/store";
import { openMessage } from "./open-message";
import { addEvents, addMessages, campaignRow, mailboxConnected, mailboxRow, messagesOf, recordsOf, setLead, setMailbox, setRecord } from "../db";
import { ADMIN_TOKEN, call, callJson, provisionAccount, type TestAccount, fileEnv } from "../helpers";

/**
 * The sender's decisions that need no mail server: when it must not send, it claims nothing and
 * says when to look again. (Sending itself is tested against the lab in test/mail/engine.test.ts.)
 */

const bindings = fileEnv() as unknown as Bindings;
const MINUTE = 60_000;
const DAY = 86_400_000;

/** A Monday 10:00 UTC, well in the future, after every campaign's start. */
const MONDAY_10 = Date.parse("2031-03-03T10:00:00Z");

async function activeCampaign(account: TestAccount, schedule: Record<string, unknown>, leads = 2) {
  const apiKey = account.apiKey;
  const { body: mailbox } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
    method: "POST",
    apiKey,
    body: { from_name: "S", from_email: `s-${crypto.randomUUID()}@sender.example`, password: "pw", smtp_host: "smtp.sender.example", smtp_port: 587, imap_host: "imap.sender.example", imap_port: 993, max_email_per_day: 2 },
  });
  // The main suite runs no connection checks: the mailbox is marked as having passed one.
  await mailboxConnected(mailbox.id);
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Pacing" } });
  await callJson(`/api/v1/campaigns/${campaign.id}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] },
  });
  const saved = await callJson(`/api/v1/campaigns/${campaign.id}/schedule`, {
    method: "POST",
    apiKey,
    // Started after the real clock, so the object's own wakes (real time) never send during a test.
    body: { timezone: "Europe/Paris", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", schedule_start_time: "2031-03-01T00:00:00Z", ...schedule },
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  await callJson(`/api/v1/campaigns/${campaign.id}/leads`, {
    method: "POST",
    apiKey,
    body: { lead_list: Array.from({ length: leads }, (_, i) => ({ email: `p${i}-${crypto.randomUUID()}@lead.example` })) },
  });
  await callJson(`/api/v1/campaigns/${campaign.id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } });
  await callJson(`/api/v1/campaigns/${campaign.id}/status`, { method: "POST", apiKey, body: { status: "START" } });
  return { mailboxId: mailbox.id, campaignId: campaign.id };
}

async function claimedCount(campaignId: number): Promise<number> {
  return (await messagesOf(campaignId)).length;
}

describe("the mailbox sender", () => {
  it("sends nothing before the start time and wakes when the window first opens after it", async () => {
    const account = await provisionAccount();
    const start = MONDAY_10 + 2 * DAY;
    const { mailboxId, campaignId } = await activeCampaign(account, { schedule_start_time: new Date(start).toISOString() });
    const result = await senderStub(bindings, mailboxId).runPass(MONDAY_10);
    expect(result).toMatchObject({ sent: 0, nextWakeAt: start });
    expect(await claimedCount(campaignId)).toBe(0);
  });

  it("runs a pass asked for while another runs after it, at its own clock, not the other's", async () => {
    const account = await provisionAccount();
    const start = MONDAY_10 + 2 * DAY;
    const { mailboxId } = await activeCampaign(account, { schedule_start_time: new Date(start).toISOString() });
    const friday18Paris = Date.parse("2031-03-07T17:00:00Z");
    // Called inside the object, the second call surely arrives while the first pass runs.
    const [early, late] = await runInDurableObject(senderStub(bindings, mailboxId), (sender: MailboxSender) =>
      Promise.all([sender.runPass(MONDAY_10, { mailboxId, read: false }), sender.runPass(friday18Paris, { read: false })]),
    );
    expect(early).toMatchObject({ sent: 0, nextWakeAt: start });
    expect(late).toMatchObject({ sent: 0, nextWakeAt: Date.parse("2031-03-10T08:00:00Z") });
  });

  it("keeps a wake asked for while a pass runs (a START, new leads): the pass's own alarm does not replace it", async () => {
    const account = await provisionAccount();
    const start = MONDAY_10 + 2 * DAY;
    const { mailboxId } = await activeCampaign(account, { schedule_start_time: new Date(start).toISOString() });
    const alarm = await runInDurableObject(senderStub(bindings, mailboxId), async (sender: MailboxSender, state) => {
      // Any pass the START's wake began is over, and its alarm gone.
      await sender.runPass(MONDAY_10, { mailboxId, read: false });
      await state.storage.deleteAlarm();
      const pass = sender.runPass(MONDAY_10, { mailboxId, read: false });
      await sender.wake(mailboxId);
      expect(await pass).toMatchObject({ sent: 0, nextWakeAt: start });
      return state.storage.getAlarm();
    });
    expect(alarm).not.toBeNull();
    // Due now, or (the runtime may run a due alarm at once) its pass has run and set the next read: never the pass's own alarm at the start.
    expect(alarm!).toBeLessThan(Date.now() + 10 * 60_000);
  });

  it("outside the window (evening, then the weekend), wakes at the next opening in the campaign's zone", async () => {
    const account = await provisionAccount();
    const { mailboxId, campaignId } = await activeCampaign(account, {});
    const friday18Paris = Date.parse("2031-03-07T17:00:00Z");
    const result = await senderStub(bindings, mailboxId).runPass(friday18Paris);
    expect(result).toMatchObject({ sent: 0, nextWakeAt: Date.parse("2031-03-10T08:00:00Z") });
    expect(await claimedCount(campaignId)).toBe(0);
  });

  it("at its daily cap, claims nothing and wakes at the next UTC day", async () => {
    const account = await provisionAccount();
    const { mailboxId, campaignId } = await activeCampaign(account, {});
    const at = MONDAY_10;
    const { body: other } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey: account.apiKey, body: { name: "Other" } });
    await callJson(`/api/v1/campaigns/${other.id}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: "x@y.example" }] } });
    // Two sends of that (future) day through another campaign, as the mailbox's own passes store them
    // (the events API takes no time ahead of now).
    const [record] = await recordsOf(other.id);
    await addEvents(
      [0, 1].map((i) => {
        const sentAt = new Date(at - (i + 1) * MINUTE);
        return { accountId: record!.accountId, campaignId: other.id, campaignLeadId: record!.id, eventId: `cap-${i}`, type: "SENT", occurredAt: sentAt, sequenceNumber: i + 1, emailAccountId: mailboxId, createdAt: sentAt };
      }),
    );
    const result = await senderStub(bindings, mailboxId).runPass(at);
    expect(result).toMatchObject({ sent: 0, nextWakeAt: Date.parse("2031-03-04T00:00:00Z") });
    expect(await claimedCount(campaignId)).toBe(0);
  });

  it("at the campaign's new-leads cap, claims nothing more and waits for the next local day", async () => {
    const account = await provisionAccount();
    const { mailboxId, campaignId } = await activeCampaign(account, { max_new_leads_per_day: 1 }, 3);
    const [sent] = await recordsOf(campaignId);
    const sentAt = new Date(MONDAY_10 - MINUTE);
    await addMessages([{ accountId: sent!.accountId, campaignId, campaignLeadId: sent!.id, step: 1, emailAccountId: mailboxId, messageId: "<x@y>", status: "sent", createdAt: sentAt, updatedAt: sentAt }]);
    await setRecord(sent!.id, { dueAt: null });
    const result = await senderStub(bindings, mailboxId).runPass(MONDAY_10);
    // Paris midnight is 23:00 UTC; the window then opens at 09:00 Paris (08:00 UTC).
    expect(result).toMatchObject({ sent: 0, nextWakeAt: Date.parse("2031-03-04T08:00:00Z") });
    expect(await claimedCount(campaignId)).toBe(1);
  });

  it("sends nothing for a paused campaign", async () => {
    const account = await provisionAccount();
    const { mailboxId, campaignId } = await activeCampaign(account, {});
    await callJson(`/api/v1/campaigns/${campaignId}/status`, { method: "POST", apiKey: account.apiKey, body: { status: "PAUSED" } });
    expect(await senderStub(bindings, mailboxId).runPass(MONDAY_10)).toMatchObject({ sent: 0, nextWakeAt: null });
    expect(await claimedCount(campaignId)).toBe(0);
  });

  it("is re-armed by the minute cron when its wake is late, and only then", async () => {
    expect(MINUTE_JOBS).toContain(rearmLateSenders);
    const account = await provisionAccount();
    const { mailboxId, campaignId } = await activeCampaign(account, {});
    const late = async () => (await lateMailboxes(database(fileEnv().DB), Date.now(), 1000)).includes(mailboxId);
    const setWake = (at: number | null) => setMailbox(mailboxId, { engineWakeAt: at === null ? null : new Date(at) });

    await setWake(Date.now() + 10 * MINUTE);
    expect(await late()).toBe(false);
    await setWake(Date.now() - 5 * MINUTE);
    expect(await late()).toBe(true);
    await setWake(null);
    expect(await late()).toBe(true);
    // A paused campaign's leads still reply, and a suspended mailbox is still read.
    await callJson(`/api/v1/campaigns/${campaignId}/status`, { method: "POST", apiKey: account.apiKey, body: { status: "PAUSED" } });
    await call(`/api/v1/email-accounts/suspend/${mailboxId}`, { method: "PUT", apiKey: account.apiKey });
    await setWake(null);
    expect(await late(), "paused campaign, suspended mailbox").toBe(true);
    await callJson(`/api/v1/campaigns/${campaignId}/status`, { method: "POST", apiKey: account.apiKey, body: { status: "STOPPED" } });
    await setWake(null);
    expect(await late(), "only a stopped campaign").toBe(false);
  });

  it("records its next wake for the cron a slack ahead, and writes it again only when a pass's wake leaves what is recorded", async () => {
    const account = await provisionAccount();
    const { mailboxId } = await activeCampaign(account, { schedule_start_time: new Date(MONDAY_10 + 2 * DAY).toISOString() });
    const sender = senderStub(bindings, mailboxId);
    const recorded = async () => (await mailboxRow(mailboxId)).engineWakeAt?.getTime() ?? null;
    // A pass with a read (its server is not there) wakes for the next read, before the campaign's start.
    const pass = async (at: number) => {
      await sender.runPass(at);
      return (await runInDurableObject(sender, (_: MailboxSender, state) => state.storage.getAlarm()))!;
    };

    const first = await pass(MONDAY_10);
    const poll = first - MONDAY_10;
    expect(poll).toBeLessThan(WAKE_SLACK_MS);
    expect(await recorded(), "the START's pass on the real clock recorded an earlier wake").toBe(first + WAKE_SLACK_MS);
    // The next reads' passes wake within what is recorded, up to the last whose wake is just that: they write nothing.
    for (const at of [first, first + WAKE_SLACK_MS - poll]) {
      expect(await pass(at)).toBe(at + poll);
      expect(await recorded(), `the pass at +${(at - MONDAY_10) / 1000} s`).toBe(first + WAKE_SLACK_MS);
    }
    // The first whose wake is past it records again.
    const beyond = first + WAKE_SLACK_MS;
    expect(await pass(beyond)).toBe(beyond + poll);
    expect(await recorded()).toBe(beyond + poll + WAKE_SLACK_MS);
    // A wake recorded far past the next (written before a START, say) is brought back, so a lost alarm is found in time.
    await setMailbox(mailboxId, { engineWakeAt: new Date(MONDAY_10 + 30 * DAY) });
    const next = await pass(beyond + poll);
    expect(await recorded()).toBe(next + WAKE_SLACK_MS);
    await setMailbox(mailboxId, { engineWakeAt: null });
    expect(await recorded()).toBeNull();
    const after = await pass(next);
    expect(await recorded()).toBe(after + WAKE_SLACK_MS);
  });

  it("with a gap to keep, settles several records verified invalid in one pass instead of one a pass", async () => {
    const account = await provisionAccount();
    const start = MONDAY_10 - DAY;
    const { mailboxId, campaignId } = await activeCampaign(account, { schedule_start_time: new Date(start).toISOString(), min_time_btw_emails: 5 }, 3);
    for (const record of await recordsOf(campaignId)) await setLead(record.leadId, { verificationStatus: "invalid", verificationReason: "no_domain" });
    const result = await senderStub(bindings, mailboxId).runPass(MONDAY_10, { read: false });
    expect(result.sent).toBe(0);
    expect((await recordsOf(campaignId)).map((r) => r.state)).toEqual(["BLOCKED", "BLOCKED", "BLOCKED"]);
    expect(await messagesOf(campaignId)).toEqual([]);
  });

  it("reports sending_status for the campaign and the mailbox", async () => {
    const account = await provisionAccount();
    const { mailboxId, campaignId } = await activeCampaign(account, { schedule_start_time: new Date(MONDAY_10).toISOString() });
    const campaign = await callJson<{ sending_status: { code: string; next_send_at: string | null } }>(`/api/v1/campaigns/${campaignId}`, { apiKey: account.apiKey });
    expect(campaign.body.sending_status).toMatchObject({ code: "before_start_time", next_send_at: new Date(MONDAY_10).toISOString() });
    const mailbox = await callJson<{ sending_status: { code: string; next_send_at: string | null } }>(`/api/v1/email-accounts/${mailboxId}`, { apiKey: account.apiKey });
    expect(mailbox.body.sending_status).toMatchObject({ code: "outside_window", next_send_at: new Date(MONDAY_10).toISOString() });
  });

  it("releases at once the claim a dead pass left, turning only its message in flight unconfirmed, and reports that one", async () => {
    const account = await provisionAccount();
    const start = MONDAY_10 + 2 * DAY;
    const { mailboxId, campaignId } = await activeCampaign(account, { schedule_start_time: new Date(start).toISOString() }, 3);
    const metrics = async () =>
      (await callJson<{ sends: { unconfirmed: number } }>("/admin/metrics", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).body.sends.unconfirmed;
    const before = await metrics();
    // A pass that died: it claimed the three due leads and was in the first one's SMTP transaction.
    const campaign = await campaignRow(campaignId);
    const claimedAt = Date.now();
    const claim = await claimRecords(fileEnv().DB, { campaign, mailboxId, senderDomain: "sender.example", now: claimedAt, limit: 10, newLeadsLeft: 10 });
    expect(claim.records).toHaveLength(3);
    const first = claim.records[0]!;
    expect(await openMessage(fileEnv().DB, { nonce: claim.nonce, mailboxId, now: claimedAt }, first)).not.toBeNull();

    // The object's next pass (before the campaign's start: it sends nothing) releases the claim first. The
    // object's own wake on START may run a pass on the real clock meanwhile, which releases it as well:
    // either way the records are due at that pass's clock, not at the lease's end.
    await senderStub(bindings, mailboxId).runPass(MONDAY_10);
    const records = await recordsOf(campaignId);
    const releasedNow = (r: (typeof records)[number]) => {
      const due = r.dueAt?.getTime() ?? Number.NaN;
      return due === MONDAY_10 || Math.abs(due - claimedAt) < MINUTE;
    };
    expect(records.every((r) => r.claimToken === null && releasedNow(r)), "due again now, none leased").toBe(true);
    expect(records.map((r) => r.emailAccountId), "the one in doubt keeps its mailbox, unwritten first steps go back to rotation").toEqual(
      records.map((r) => (r.id === first.recordId ? mailboxId : null)),
    );
    const messages = await messagesOf(campaignId);
    expect(messages.map((m) => ({ to_email: m.toEmail, status: m.status }))).toEqual([{ to_email: first.leadEmail, status: "unconfirmed" }]);

    const mailbox = await callJson<{ sending_status: { warnings: { code: string; message: string }[] } }>(`/api/v1/email-accounts/${mailboxId}`, { apiKey: account.apiKey });
    expect(mailbox.body.sending_status.warnings).toEqual([{ code: "unconfirmed_sends", message: expect.stringContaining(first.leadEmail) as string }]);
    expect(mailbox.body.sending_status.warnings[0]!.message).toMatch(/^1 campaign email from this mailbox/);
    expect(await metrics()).toBe(before + 1);
  });

  it("in each lead's zone, outside the campaign's window, wakes at the earliest lead's own 09:00 and says so in sending_status", async () => {
    const account = await provisionAccount();
    // The campaign's zone is Paris; its leads are in Tokyo and New York. No lead is uploaded by the helper.
    const { mailboxId, campaignId } = await activeCampaign(account, { send_in_lead_timezone: true }, 0);
    const upload = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${campaignId}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: `t-${crypto.randomUUID()}@lead.example`, timezone: "Asia/Tokyo" }, { email: `n-${crypto.randomUUID()}@lead.example`, tz: "America/New_York" }] },
    });
    expect(upload.body).toMatchObject({ upload_count: 2, invalid_timezone_count: 0 });
    // The start time is Saturday 2031-03-01; the first sending day is Monday: 09:00 JST is 00:00 UTC, 09:00 EST 14:00 UTC.
    const tokyoMonday = Date.parse("2031-03-03T00:00:00Z");
    const newYorkMonday = Date.parse("2031-03-03T14:00:00Z");
    const dues = await fileEnv().DB.prepare("SELECT due_at FROM campaign_leads WHERE campaign_id = ? ORDER BY due_at").bind(campaignId).all<{ due_at: number }>();
    expect(dues.results.map((r) => r.due_at)).toEqual([tokyoMonday, newYorkMonday]);
    // Sunday 20:00 UTC: outside the campaign's (Paris) window and everyone's Monday.
    const sunday = Date.parse("2031-03-02T20:00:00Z");
    expect(await senderStub(bindings, mailboxId).runPass(sunday)).toMatchObject({ sent: 0, nextWakeAt: tokyoMonday });
    expect(await claimedCount(campaignId)).toBe(0);
    const { body } = await callJson<{ sending_status: { code: string; next_send_at: string | null } }>(`/api/v1/campaigns/${campaignId}`, { apiKey: account.apiKey });
    // Nothing is due before Tokyo's Monday morning, whatever the campaign's own (Paris) window says.
    expect(body.sending_status).toMatchObject({ code: "no_leads_due", next_send_at: new Date(tokyoMonday).toISOString() });
  });
});
