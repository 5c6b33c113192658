import { describe, expect, it } from "vitest";
import { campaignSendingStatus, mailboxSendingStatusOf, presentSendingStatus } from "../../src/engine/status";
import { database } from "../../src/platform/db";
import type { Bindings } from "../../src/platform/env";
import { senderStub } from "../../src/mailbox-agent/stub";
import { claimRecords } from "../../src/engine/store";
import { saveSchedule } from "../../src/campaigns/store";
import { campaignRedating } from "../../src/schedule/redating-store";
import { scheduleOf } from "../../src/schedule/settings";
import { addMessages, campaignRow, leadByEmail, leadsOf, mailboxConnected, recordRow, recordsOf, setCampaign, setRecord } from "../db";
import { call, callJson, provisionAccount, fileEnv } from "../helpers";
import { createList, importInto } from "../lead-lists/fixtures";
import { createMailbox } from "../mailboxes/fixtures";

/**
 * CONTRACT 23.4 on a real campaign in each lead's zone: `sending_status` answers
 * `outside_lead_windows` when no due record is inside its lead's hours, its `details.lead_timezone`
 * counts them, and the mailbox's `outside_window` means none of its due records is.
 */

/** Monday 2031-03-03 10:00 UTC: 11:00 in Paris (the campaign's zone), 19:00 in Tokyo, 05:00 in New York. */
const NOW = Date.parse("2031-03-03T10:00:00Z");
const NEW_YORK_OPENS = Date.parse("2031-03-03T14:00:00Z");

async function setUp() {
  const account = await provisionAccount();
  const apiKey = account.apiKey;
  const mailbox = await createMailbox(apiKey);
  await mailboxConnected(mailbox.id);
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Zones" } });
  await callJson(`/api/v1/campaigns/${campaign.id}/sequences`, { method: "POST", apiKey, body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] } });
  const saved = await callJson(`/api/v1/campaigns/${campaign.id}/schedule`, {
    method: "POST",
    apiKey,
    body: { timezone: "Europe/Paris", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", schedule_start_time: "2031-03-01T00:00:00Z", send_in_lead_timezone: true },
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  const leads = { tokyo: `t-${crypto.randomUUID()}@lead.example`, newYork: `n-${crypto.randomUUID()}@lead.example`, none: `z-${crypto.randomUUID()}@lead.example` };
  await callJson(`/api/v1/campaigns/${campaign.id}/leads`, {
    method: "POST",
    apiKey,
    body: { lead_list: [{ email: leads.tokyo, timezone: "Asia/Tokyo" }, { email: leads.newYork, timezone: "America/New_York" }, { email: leads.none }] },
  });
  await callJson(`/api/v1/campaigns/${campaign.id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } });
  await setCampaign(campaign.id, { status: "ACTIVE" });
  const emails = new Map((await leadsOf(account.id)).map((lead) => [lead.id, lead.email]));
  const records = Object.fromEntries((await recordsOf(campaign.id)).map((r) => [emails.get(r.leadId)!, r.id]));
  // Every record fell due a minute ago (the windows may have closed since).
  for (const id of Object.values(records)) await setRecord(id, { dueAt: new Date(NOW - 60_000) });
  return { mailboxId: mailbox.id, campaignId: campaign.id, leads, records };
}

describe("sending_status in each lead's zone (CONTRACT 23.4)", () => {
  it("counts due records inside and outside their lead's window, and answers outside_lead_windows when none is inside", async () => {
    const world = await setUp();
    const db = database(fileEnv().DB);
    const status = async () => presentSendingStatus(await campaignSendingStatus(db, await campaignRow(world.campaignId), NOW));
    const first = await status();
    expect(first.code, "the zoneless lead is inside Paris's hours").toBe("sending");
    expect(first.details?.lead_timezone).toEqual({
      enabled: true,
      due_in_window: 1,
      due_outside_window: 2,
      leads_without_zone: 1,
      next_window_at: new Date(NEW_YORK_OPENS).toISOString(),
    });
    // Only Tokyo and New York due: no due lead is inside its own hours.
    await setRecord(world.records[world.leads.none]!, { dueAt: new Date(NOW + 86_400_000) });
    expect(await status()).toMatchObject({
      code: "outside_lead_windows",
      message: "No due lead is inside its own sending hours now",
      next_send_at: new Date(NEW_YORK_OPENS).toISOString(),
      details: { lead_timezone: { due_in_window: 0, due_outside_window: 2, leads_without_zone: 0 } },
    });
    const mailbox = await mailboxSendingStatusOf(db, world.mailboxId, NOW);
    expect(mailbox).toMatchObject({ code: "outside_window", next_send_at: NEW_YORK_OPENS });
    // The New York lead's window open: both sending.
    const later = NEW_YORK_OPENS + 60_000;
    expect((await campaignSendingStatus(db, await campaignRow(world.campaignId), later)).code).toBe("sending");
    expect((await mailboxSendingStatusOf(db, world.mailboxId, later))?.code).toBe("sending");
  });
});

describe("a pinned first send in each lead's zone (CONTRACT 23.2, section 15)", () => {
  it("keeps its mailbox when its pass finds it outside its lead's window: a subsequence's record stays on the parent's mailbox", async () => {
    const account = await provisionAccount();
    const apiKey = account.apiKey;
    const [pinned, other] = [await createMailbox(apiKey), await createMailbox(apiKey)];
    for (const mailbox of [pinned, other]) await mailboxConnected(mailbox.id);
    const { body: parent } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Outreach" } });
    const email = `t-${crypto.randomUUID()}@lead.example`;
    const added = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${parent.id}/leads`, {
      method: "POST",
      apiKey,
      body: { lead_list: [{ email, timezone: "Asia/Tokyo" }], settings: { return_lead_ids: true } },
    });
    const parentRecord = added.body.emailToLeadIdMap[email]!;
    // The parent's thread went from `pinned`.
    await setRecord(parentRecord, { emailAccountId: pinned.id });
    const { body: sub } = await callJson<{ id: number }>("/api/v1/campaigns/create-subsequence", { method: "POST", apiKey, body: { parent_campaign_id: parent.id, name: "Interested" } });
    await callJson(`/api/v1/campaigns/${sub.id}/sequences`, { method: "POST", apiKey, body: { sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }] } });
    await callJson(`/api/v1/campaigns/${sub.id}/schedule`, {
      method: "POST",
      apiKey,
      body: { timezone: "Europe/Paris", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", schedule_start_time: "2031-03-01T00:00:00Z", send_in_lead_timezone: true },
    });
    await callJson(`/api/v1/campaigns/${sub.id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [pinned.id, other.id] } });
    const pushed = await callJson<{ data: { new_email_lead_map_id: number } }>("/api/v1/master-inbox/push-to-subsequence", {
      method: "POST",
      apiKey,
      body: { email_lead_map_id: parentRecord, sub_sequence_id: sub.id },
    });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
    const child = pushed.body.data.new_email_lead_map_id;
    expect(await recordRow(child)).toMatchObject({ emailAccountId: pinned.id });
    await setCampaign(sub.id, { status: "ACTIVE" });
    // Monday 10:00 UTC is 19:00 in Tokyo: the record is due (since the push) but outside its lead's window.
    const result = await senderStub(fileEnv() as unknown as Bindings, pinned.id).runPass(NOW, { mailboxId: pinned.id, read: false });
    expect(result).toMatchObject({ sent: 0 });
    const tokyoTuesday = Date.parse("2031-03-04T00:00:00Z");
    const after = await recordRow(child);
    expect(after.dueAt?.getTime(), "due when its lead's window opens").toBe(tokyoTuesday);
    expect(after.emailAccountId, "the subsequence's record keeps the parent's mailbox").toBe(pinned.id);
  });
});

/**
 * An Etc zone (whole hours, no DST) whose clock reads `hour` o'clock now: the schedule and lead
 * routes re-date by the real clock, so these tests place their windows around it.
 */
function zoneAtHour(hour: number): string {
  const ahead = ((hour - new Date().getUTCHours() + 36) % 24) - 12;
  // POSIX signs: Etc/GMT-3 is three hours ahead of UTC.
  return ahead === 0 ? "Etc/GMT" : ahead > 0 ? `Etc/GMT-${ahead}` : `Etc/GMT+${-ahead}`;
}

const EVERY_DAY = [0, 1, 2, 3, 4, 5, 6];
const DAY = 86_400_000;

/** A DRAFTED campaign in each lead's zone (no mailbox wakes for it) with a mailbox and a two-step sequence, and these leads' records. */
async function zonedCampaign(schedule: Record<string, unknown>, leads: { email: string; timezone?: string }[]) {
  const account = await provisionAccount();
  const apiKey = account.apiKey;
  const mailbox = await createMailbox(apiKey);
  await mailboxConnected(mailbox.id);
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Re-dating" } });
  await callJson(`/api/v1/campaigns/${campaign.id}/sequences`, {
    method: "POST",
    apiKey,
    body: { sequences: [
      { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" },
      { seq_number: 2, seq_delay_details: { delay_in_days: 1 }, subject: "", email_body: "Again" },
    ] },
  });
  const saved = await callJson(`/api/v1/campaigns/${campaign.id}/schedule`, { method: "POST", apiKey, body: { ...schedule, send_in_lead_timezone: true } });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  const added = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${campaign.id}/leads`, {
    method: "POST",
    apiKey,
    body: { lead_list: leads, settings: { return_lead_ids: true } },
  });
  await callJson(`/api/v1/campaigns/${campaign.id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: [mailbox.id] } });
  return { account, apiKey, mailboxId: mailbox.id, campaignId: campaign.id, records: added.body.emailToLeadIdMap };
}

/** The records a pass of the mailbox would claim now, its campaign ACTIVE (set in D1: no wake). */
async function claimableNow(world: { campaignId: number; mailboxId: number }): Promise<number[]> {
  await setCampaign(world.campaignId, { status: "ACTIVE" });
  const campaign = await campaignRow(world.campaignId);
  const { records } = await claimRecords(fileEnv().DB, { campaign, mailboxId: world.mailboxId, senderDomain: "sender.example", now: Date.now(), limit: 10, newLeadsLeft: 10 });
  return records.map((r) => r.recordId);
}

describe("re-dating when the hours a record was dated by change (CONTRACT 23.2)", () => {
  it("a schedule moved from hours that open tomorrow to hours open now makes a waiting record due now, a follow-up no sooner than its gap", async () => {
    const zone = zoneAtHour(12);
    const [fresh, overdue, followUp] = ["f", "o", "u"].map((prefix) => `${prefix}-${crypto.randomUUID()}@lead.example`) as [string, string, string];
    // Midday in the leads' zone, the hour after midnight is tomorrow's.
    const world = await zonedCampaign({ timezone: zone, days_of_the_week: EVERY_DAY, start_hour: "00:00", end_hour: "01:00" }, [
      { email: fresh, timezone: zone },
      { email: overdue, timezone: zone },
      { email: followUp, timezone: zone },
    ]);
    const [freshId, overdueId, followUpId] = [fresh, overdue, followUp].map((email) => world.records[email]!) as [number, number, number];
    const waitedOn = (await recordRow(freshId)).dueAt!.getTime();
    expect(waitedOn, "dated by the old hours: tomorrow").toBeGreaterThan(Date.now() + 10 * 3_600_000);
    // Two leads had their first email: 30 hours ago, its second step (a day later) was due 6 hours ago; 22 hours ago, it is due
    // in 2 hours. Both were dated by the old hours to the same opening.
    const firstSent = async (recordId: number, hoursAgo: number) => {
      const sentAt = new Date(Date.now() - hoursAgo * 3_600_000);
      await addMessages([{ accountId: world.account.id, campaignId: world.campaignId, campaignLeadId: recordId, step: 1, emailAccountId: world.mailboxId, messageId: `<${crypto.randomUUID()}@sender.example>`, status: "sent", sentAt, createdAt: sentAt, updatedAt: sentAt }]);
      await setRecord(recordId, { state: "INPROGRESS", nextStep: 2, emailAccountId: world.mailboxId, lastSentAt: sentAt, hasSent: true, dueAt: new Date(waitedOn) });
      return sentAt.getTime();
    };
    await firstSent(overdueId, 30);
    const sentAt = await firstSent(followUpId, 22);

    const moved = await callJson(`/api/v1/campaigns/${world.campaignId}/schedule`, { method: "POST", apiKey: world.apiKey, body: { start_hour: "09:00", end_hour: "17:00" } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const now = Date.now();
    expect((await recordRow(freshId)).dueAt!.getTime(), "due now, in the new hours").toBeLessThanOrEqual(now);
    expect((await recordRow(overdueId)).dueAt!.getTime(), "its step's delay is over: due now").toBeLessThanOrEqual(now);
    expect((await recordRow(followUpId)).dueAt!.getTime(), "never before its step's delay").toBeGreaterThanOrEqual(sentAt + DAY);
    expect(await claimableNow(world)).toEqual([freshId, overdueId]);
  });

  it("counts a follow-up's gap from its previous send, as the pass does: a sent message's sent_at, not its row's last write", async () => {
    const zone = zoneAtHour(12);
    const [rewritten, inDoubt] = ["w", "d"].map((prefix) => `${prefix}-${crypto.randomUUID()}@lead.example`) as [string, string];
    const world = await zonedCampaign({ timezone: zone, days_of_the_week: EVERY_DAY, start_hour: "00:00", end_hour: "01:00" }, [
      { email: rewritten, timezone: zone },
      { email: inDoubt, timezone: zone },
    ]);
    const [rewrittenId, inDoubtId] = [rewritten, inDoubt].map((email) => world.records[email]!) as [number, number];
    const waitedOn = (await recordRow(rewrittenId)).dueAt!.getTime();
    const [thirtyHoursAgo, anHourAgo] = [new Date(Date.now() - 30 * 3_600_000), new Date(Date.now() - 3_600_000)];
    // Both first emails went 30 hours ago, their second steps (a day later) due 6 hours ago: one sent, its row written again
    // an hour ago; one in doubt (no sent_at), the pass counted its gap from when it found it so.
    const message = (recordId: number, status: "sent" | "unconfirmed", sentAt: Date | null, updatedAt: Date) => ({
      accountId: world.account.id, campaignId: world.campaignId, campaignLeadId: recordId, step: 1, emailAccountId: world.mailboxId,
      messageId: `<${crypto.randomUUID()}@sender.example>`, status, sentAt, createdAt: thirtyHoursAgo, updatedAt,
    });
    await addMessages([message(rewrittenId, "sent", thirtyHoursAgo, anHourAgo), message(inDoubtId, "unconfirmed", null, thirtyHoursAgo)]);
    for (const id of [rewrittenId, inDoubtId]) {
      await setRecord(id, { state: "INPROGRESS", nextStep: 2, emailAccountId: world.mailboxId, lastSentAt: thirtyHoursAgo, hasSent: true, dueAt: new Date(waitedOn) });
    }

    const moved = await callJson(`/api/v1/campaigns/${world.campaignId}/schedule`, { method: "POST", apiKey: world.apiKey, body: { start_hour: "09:00", end_hour: "17:00" } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const now = Date.now();
    expect((await recordRow(rewrittenId)).dueAt!.getTime(), "its gap from its send is over: due now").toBeLessThanOrEqual(now);
    expect((await recordRow(inDoubtId)).dueAt!.getTime(), "its gap from the attempt is over: due now").toBeLessThanOrEqual(now);
    expect((await claimableNow(world)).sort((a, b) => a - b)).toEqual([rewrittenId, inDoubtId].sort((a, b) => a - b));
  });

  it("re-dates nothing when the schedule's write is refused over hours a concurrent post stored", async () => {
    const zone = zoneAtHour(12);
    const email = `r-${crypto.randomUUID()}@lead.example`;
    const world = await zonedCampaign({ timezone: zone, days_of_the_week: EVERY_DAY, start_hour: "00:00", end_hour: "01:00" }, [{ email, timezone: zone }]);
    const recordId = world.records[email]!;
    const waitedOn = (await recordRow(recordId)).dueAt!.getTime();
    const before = scheduleOf((await campaignRow(world.campaignId)).schedule)!;
    // The post read 09:00-17:00 and sets the start alone; the end stored when it writes is 01:00 again.
    const now = Date.now();
    const redating = await campaignRedating(database(fileEnv().DB), world.campaignId, before, { ...before, start_hour: "09:00", end_hour: "17:00" }, now);
    expect(redating).toHaveLength(1);
    const saved = await saveSchedule(fileEnv().DB, world.campaignId, { start_hour: "09:00" }, now, redating);
    expect(saved).toMatchObject({ applied: false, schedule: { start_hour: "00:00", end_hour: "01:00" } });
    expect((await recordRow(recordId)).dueAt!.getTime()).toBe(waitedOn);
  });

  it("a lead's new zone, open now, makes its record waiting on the old zone's hours due now", async () => {
    const email = `z-${crypto.randomUUID()}@lead.example`;
    // Midnight in the lead's zone: its window opens at 09:00.
    const world = await zonedCampaign({ timezone: "Europe/Paris", days_of_the_week: EVERY_DAY, start_hour: "09:00", end_hour: "17:00" }, [{ email, timezone: zoneAtHour(0) }]);
    const recordId = world.records[email]!;
    expect((await recordRow(recordId)).dueAt!.getTime(), "dated by its zone's hours: at 09:00 there").toBeGreaterThan(Date.now() + 7 * 3_600_000);
    const lead = await leadByEmail(world.account.id, email);

    const updated = await callJson(`/api/v1/leads/${lead.id}`, { method: "PUT", apiKey: world.apiKey, body: { timezone: zoneAtHour(12) } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((await recordRow(recordId)).dueAt!.getTime(), "due now, in its new zone's hours").toBeLessThanOrEqual(Date.now());
    expect(await claimableNow(world)).toEqual([recordId]);
  });

  /** Leads without a zone, dated by the campaign's (midnight there: its 09:00 opens in 9 hours), and the list an import puts them in. */
  async function zonelessLeads(count: number) {
    const emails = Array.from({ length: count }, () => `i-${crypto.randomUUID()}@lead.example`);
    const world = await zonedCampaign({ timezone: zoneAtHour(0), days_of_the_week: EVERY_DAY, start_hour: "09:00", end_hour: "17:00" }, emails.map((email) => ({ email })));
    const recordIds = emails.map((email) => world.records[email]!);
    for (const id of recordIds) expect((await recordRow(id)).dueAt!.getTime(), "dated by the campaign's zone: at 09:00 there").toBeGreaterThan(Date.now() + 7 * 3_600_000);
    return { world, emails, recordIds, list: await createList(world.apiKey) };
  }

  it("a lead-list import filling leads' empty zones makes their records waiting on the campaign's hours due in each new zone's", async () => {
    const { world, emails, recordIds, list } = await zonelessLeads(2);
    const [openNow, opensSooner] = [zoneAtHour(12), zoneAtHour(3)];

    const imported = await importInto(world.apiKey, list, [{ email: emails[0], timezone: openNow }, { email: emails[1], timezone: opensSooner }]);
    expect(imported.body.data, JSON.stringify(imported.body)).toMatchObject({ imported: 2, duplicates: 0 });
    expect((await leadByEmail(world.account.id, emails[0]!)).timezone).toBe(openNow);
    expect((await recordRow(recordIds[0]!)).dueAt!.getTime(), "due now, in its new zone's hours").toBeLessThanOrEqual(Date.now());
    const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    expect((await recordRow(recordIds[1]!)).dueAt!.getTime(), "at 09:00 in its new zone, 6 hours on").toBe(hourStart + 6 * 3_600_000);
    expect(await claimableNow(world)).toEqual([recordIds[0]]);
  });

  it("a CSV import filling a lead's empty zone re-dates its record in the chunk's batch, its counts unchanged", async () => {
    const { world, emails, recordIds, list } = await zonelessLeads(1);
    const [email, recordId, zone] = [emails[0]!, recordIds[0]!, zoneAtHour(12)];

    const started = await call(`/api/v1/lead-list/${list}/import-csv`, { method: "POST", apiKey: world.apiKey, rawBody: `email,tz\r\n${email},${zone}\r\n`, headers: { "Content-Type": "text/csv" } });
    expect(started.status).toBe(202);
    const { data } = (await started.json()) as { data: { id: number } };
    let progress: { state: string; imported: number; duplicates: number } | undefined;
    for (let i = 0; i < 100 && progress?.state !== "done"; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      progress = (await callJson<{ data: typeof progress }>(`/api/v1/lead-list/${list}/imports/${data.id}`, { apiKey: world.apiKey })).body.data;
    }
    expect(progress).toMatchObject({ state: "done", imported: 1, duplicates: 0 });
    expect((await recordRow(recordId)).dueAt!.getTime(), "due now, in its new zone's hours").toBeLessThanOrEqual(Date.now());
    expect(await claimableNow(world)).toEqual([recordId]);
  });
});
