import { describe, expect, it } from "vitest";
import { claimRecords, loadCampaignPlans, type ClaimRequest } from "../../src/engine/store";
import { campaignSendingStatus } from "../../src/engine/status";
import { MATCH_RECHECK_MS } from "../../src/engine/matching";
import type { Bindings } from "../../src/platform/env";
import { database } from "../../src/platform/db";
import { learnProviders } from "../../src/verification/providers";
import { addMessages, campaignRow, leadsOf, mailboxConnected, mailboxRow, recordsOf, setCampaign, setMailbox, setRecord } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { domain, mailDomain } from "../verification/fixtures";

/**
 * ESP matching (CONTRACT 23.3) in the engine's claims: providers learned from MX through the
 * suite's real DNS-over-HTTPS responder, then each mailbox's claim takes the first sends of its own
 * provider, those no mailbox with room serves, and unknown ones.
 */

const bindings = fileEnv() as unknown as Bindings;
const now = Date.now() + 60_000;

async function setUp({ matching = true } = {}) {
  const account = await provisionAccount();
  const apiKey = account.apiKey;
  const google = await mailDomain("g", "google");
  const microsoft = await mailDomain("m", "microsoft");
  const other = await mailDomain("x");
  const workspace = await mailDomain("ws", "google");
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Matching" } });
  const settings = await callJson(`/api/v1/campaigns/${campaign.id}/settings`, { method: "POST", apiKey, body: { ai_esp_matching: matching } });
  expect(settings.status, JSON.stringify(settings.body)).toBe(200);
  const leads = { g1: `g1@${google}`, g2: `g2@${google}`, m1: `m1@${microsoft}`, x1: `x1@${other}`, u1: `u1@${domain("nx")}` };
  await callJson(`/api/v1/campaigns/${campaign.id}/leads`, { method: "POST", apiKey, body: { lead_list: Object.values(leads).map((email) => ({ email })) } });
  const mailbox = async (name: string, fromEmail: string, type?: "GMAIL" | "OUTLOOK") => {
    const { body } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
      method: "POST",
      apiKey,
      body: { from_name: name, from_email: fromEmail, password: "pw", smtp_host: "smtp.sender.example", smtp_port: 587, imap_host: "imap.sender.example", imap_port: 993 },
    });
    await mailboxConnected(body.id);
    if (type) await setMailbox(body.id, { type });
    return body.id;
  };
  const mailboxes = {
    gmail: await mailbox("gmail", `gmail-${crypto.randomUUID().slice(0, 8)}@sender.example`, "GMAIL"),
    // An SMTP mailbox on a Google Workspace domain: google from its domain's MX.
    workspace: await mailbox("workspace", `ws@${workspace}`),
    outlook: await mailbox("outlook", `outlook-${crypto.randomUUID().slice(0, 8)}@sender.example`, "OUTLOOK"),
  };
  await callJson(`/api/v1/campaigns/${campaign.id}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: Object.values(mailboxes) } });
  await setCampaign(campaign.id, { status: "ACTIVE" });
  return { account, campaignId: campaign.id, leads, mailboxes };
}

type Base = Awaited<ReturnType<typeof setUp>>;

async function claim(base: Base, mailboxId: number, limit = 10): Promise<string[]> {
  const request: ClaimRequest = { campaign: await campaignRow(base.campaignId), mailboxId, senderDomain: "sender.example", now, limit, newLeadsLeft: 100 };
  const { records } = await claimRecords(fileEnv().DB, request);
  return records.map((r) => r.leadEmail).sort();
}

/** Each lead's address → the mailbox its record is pinned to (null: not claimed). */
async function pins(base: Base): Promise<Record<string, number | null>> {
  const leads = new Map((await leadsOf(base.account.id)).map((lead) => [lead.id, lead.email]));
  return Object.fromEntries((await recordsOf(base.campaignId)).map((record) => [leads.get(record.leadId)!, record.emailAccountId]));
}

describe("ESP matching (CONTRACT 23.3)", () => {
  it("learns leads' and mailboxes' providers from MX in the background, then pins a Google-MX lead to a Google mailbox and a Microsoft-MX lead to the Outlook one, while a matchless lead still goes", async () => {
    const base = await setUp();
    const { g1, g2, m1, x1, u1 } = base.leads;
    // Until learned, every provider is unknown: matching then changes nothing.
    expect((await leadsOf(base.account.id)).map((lead) => lead.emailProvider)).toEqual([null, null, null, null, null]);
    expect(await learnProviders(bindings, new Date(now))).toBeGreaterThanOrEqual(8);
    const providers = Object.fromEntries((await leadsOf(base.account.id)).map((lead) => [lead.email, lead.emailProvider]));
    expect(providers).toEqual({ [g1]: "google", [g2]: "google", [m1]: "microsoft", [x1]: "other", [u1]: null });
    expect((await mailboxRow(base.mailboxes.workspace)).espProvider).toBe("google");
    expect((await recordsOf(base.campaignId)).map((r) => r.espProvider).sort(), "the records carry their lead's provider").toEqual(["google", "google", "microsoft", "other", null].sort());

    // The Gmail mailbox's pass takes one Google lead (its limit), the other ones' providers' mailboxes have room.
    expect(await claim(base, base.mailboxes.gmail, 1)).toEqual([g1]);
    // The Outlook mailbox: the Microsoft lead, and the matchless ones (no "other" mailbox; unknown provider), never a Google lead.
    expect(await claim(base, base.mailboxes.outlook)).toEqual([m1, u1, x1].sort());
    // The second Google mailbox takes the other Google lead: the provider's mailboxes take turns.
    expect(await claim(base, base.mailboxes.workspace)).toEqual([g2]);
    expect(await pins(base)).toEqual({
      [g1]: base.mailboxes.gmail,
      [g2]: base.mailboxes.workspace,
      [m1]: base.mailboxes.outlook,
      [x1]: base.mailboxes.outlook,
      [u1]: base.mailboxes.outlook,
    });
    // Follow-ups keep the pin: the Microsoft lead's second step, due, goes to the Outlook mailbox only.
    const m1Record = (await recordsOf(base.campaignId)).find((r) => r.espProvider === "microsoft")!;
    await setRecord(m1Record.id, { claimToken: null, nextStep: 2, dueAt: new Date(now - 1000) });
    expect(await claim(base, base.mailboxes.gmail)).toEqual([]);
    expect(await claim(base, base.mailboxes.outlook)).toEqual([m1]);
  });

  it("leaves a record to any mailbox when no mailbox of its provider is usable with room today", async () => {
    const base = await setUp();
    await learnProviders(bindings, new Date(now));
    // The Outlook mailbox at its cap: the Microsoft lead goes out through normal rotation.
    await setMailbox(base.mailboxes.outlook, { maxEmailPerDay: 0 });
    expect(await claim(base, base.mailboxes.gmail)).toEqual(Object.values(base.leads).sort());
  });

  it("leaves a record to any mailbox when its provider's mailbox is suspended", async () => {
    const base = await setUp();
    await learnProviders(bindings, new Date(now));
    await setMailbox(base.mailboxes.outlook, { isSuspended: true });
    const { g1, g2, m1, x1, u1 } = base.leads;
    expect(await claim(base, base.mailboxes.workspace)).toEqual([g1, g2, m1, u1, x1].sort());
  });

  it("leaves a record to any mailbox while its provider's mailbox is held by its server, not once the hold is over", async () => {
    const base = await setUp();
    await learnProviders(bindings, new Date(now));
    const { g1, g2, m1, x1, u1 } = base.leads;
    // A hold that ran out (one ending at `now` is over) leaves room: the Microsoft lead waits for the Outlook mailbox.
    await setMailbox(base.mailboxes.outlook, { sendHeldUntil: new Date(now), sendHeldReason: "4.7.0 Try again later" });
    expect(await claim(base, base.mailboxes.gmail)).toEqual([g1, g2, u1, x1].sort());
    // Its server refused it for now (a 421): the Microsoft lead goes through normal rotation meanwhile.
    await setMailbox(base.mailboxes.outlook, { sendHeldUntil: new Date(now + 60_000) });
    expect(await claim(base, base.mailboxes.workspace)).toEqual([m1]);
  });

  it("with matching off, every mailbox takes any due first send (normal rotation)", async () => {
    const base = await setUp({ matching: false });
    await learnProviders(bindings, new Date(now));
    expect(await claim(base, base.mailboxes.outlook)).toEqual(Object.values(base.leads).sort());
  });

  it("a mailbox left only first sends another provider's mailboxes have room for looks again later, not never", async () => {
    const base = await setUp();
    await learnProviders(bindings, new Date(now));
    await claim(base, base.mailboxes.outlook);
    const plan = async () => (await loadCampaignPlans(database(fileEnv().DB), base.mailboxes.outlook, [base.campaignId], new Map([[base.campaignId, 0]]), now)).get(base.campaignId)!;
    expect((await plan()).nextDueAt, "Google leads are due, the Google mailboxes have room: look again in a while").toBe(now + MATCH_RECHECK_MS);
    await setMailbox(base.mailboxes.gmail, { isSuspended: true });
    await setMailbox(base.mailboxes.workspace, { maxEmailPerDay: 0 });
    expect((await plan()).nextDueAt, "no Google mailbox with room: the Google leads are this mailbox's now").toBeLessThanOrEqual(now);
    expect(await claim(base, base.mailboxes.outlook)).toEqual([base.leads.g1, base.leads.g2].sort());
  });

  it("explains itself in the campaign's sending_status details (CONTRACT 23.4)", async () => {
    const base = await setUp();
    await learnProviders(bindings, new Date(now));
    await setMailbox(base.mailboxes.workspace, { isSuspended: true });
    const details = async () => (await campaignSendingStatus(database(fileEnv().DB), await campaignRow(base.campaignId), now)).details.esp_matching;
    expect(await details()).toEqual({
      enabled: true,
      mailboxes: { google: 1, microsoft: 1, other: 0 },
      due_by_provider: { google: 2, microsoft: 1, other: 1, unknown: 1 },
      unmatched_first_sends_today: 0,
    });
    // A Google lead's first email sent today from the Outlook mailbox (say, before its provider was known): one unmatched.
    await claim(base, base.mailboxes.outlook);
    const records = await recordsOf(base.campaignId);
    const leadOf = new Map((await leadsOf(base.account.id)).map((lead) => [lead.id, lead.email]));
    const record = (email: string) => records.find((r) => leadOf.get(r.leadId) === email)!;
    const sent = (email: string, mailboxId: number) => ({
      accountId: base.account.id, campaignId: base.campaignId, campaignLeadId: record(email).id, step: 1, emailAccountId: mailboxId,
      messageId: `<${crypto.randomUUID()}@sender.example>`, status: "sent" as const, toEmail: email, createdAt: new Date(now), updatedAt: new Date(now),
    });
    await addMessages([sent(base.leads.m1, base.mailboxes.outlook), sent(base.leads.g1, base.mailboxes.outlook)]);
    expect(await details()).toMatchObject({ due_by_provider: { google: 2, microsoft: 0, other: 0, unknown: 0 }, unmatched_first_sends_today: 1 });
  });
});
