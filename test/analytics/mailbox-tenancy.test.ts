import { describe, expect, it } from "vitest";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { addEvents, recordsOf } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";

/**
 * Issue 23, "cross-tenant read": the mailbox reports name only the caller's mailboxes. Events that
 * name another account's mailbox (stored before ingestion checked them) must not reveal its
 * address, name, type or tags, through the campaign's mailbox-statistics or the account's mailbox
 * reports.
 */

const DAY = new Date().toISOString().slice(0, 10);

async function victimMailbox() {
  const victim = await provisionAccount();
  const mailbox = await createMailbox(victim.apiKey, { from_name: "Victoria Secret-Sender", type: "GMAIL" });
  const { body: tag } = await callJson<{ data: { id: number } }>("/api/v1/tags", { method: "POST", apiKey: victim.apiKey, body: { name: "victim-vip-tag" } });
  await callJson("/api/v1/email-accounts/tag-mapping", { method: "POST", apiKey: victim.apiKey, body: { email_account_ids: [mailbox.id], tag_ids: [tag.data.id] } });
  // The victim's own sends, carrying its address.
  const campaign = await createCampaign(victim.apiKey);
  const records = await addLeads(victim.apiKey, campaign, ["lead@victim.example"]);
  await ingestOk(victim.apiKey, campaign, [
    { type: "SENT", email_lead_map_id: records["lead@victim.example"], occurred_at: new Date().toISOString(), email_account_id: mailbox.id, from_email: mailbox.from_email },
  ]);
  return { victim, mailbox };
}

/** A SENT event naming `mailboxId` in `campaign`, stored as the unchecked ingestion stored it. */
async function legacySend(campaign: number, mailboxId: number) {
  const now = new Date();
  const records = await recordsOf(campaign);
  await addEvents(
    records.map((record) => ({
      accountId: record.accountId,
      campaignId: campaign,
      campaignLeadId: record.id,
      eventId: `legacy-${record.id}`,
      type: "SENT",
      occurredAt: now,
      sequenceNumber: 1,
      emailAccountId: mailboxId,
      createdAt: now,
    })),
  );
}

const reports = (campaign: number) => [
  `/api/v1/campaigns/${campaign}/mailbox-statistics`,
  `/api/v1/campaigns/${campaign}/mailbox-statistics?start_date=${DAY}&end_date=${DAY}`,
  `/api/v1/analytics/mailbox/name-wise-health-metrics?start_date=${DAY}&end_date=${DAY}`,
  `/api/v1/analytics/mailbox/domain-wise-health-metrics?start_date=${DAY}&end_date=${DAY}`,
  `/api/v1/analytics/mailbox/provider-wise-overall-performance?start_date=${DAY}&end_date=${DAY}`,
];

describe("mailbox reports of events naming a mailbox that is not the caller's", () => {
  it("never show another account's mailbox address, name, type or tags", async () => {
    const { mailbox } = await victimMailbox();
    const attacker = await provisionAccount();
    const campaign = await createCampaign(attacker.apiKey);
    await addLeads(attacker.apiKey, campaign, ["probe@attacker.example"]);
    await legacySend(campaign, mailbox.id);

    for (const path of reports(campaign)) {
      const { status, body } = await callJson(path, { apiKey: attacker.apiKey });
      expect(status, path).toBe(200);
      const text = JSON.stringify(body);
      expect(text, path).not.toContain(mailbox.from_email);
      expect(text, path).not.toContain("sender.example.com");
      expect(text, path).not.toContain("Victoria");
      expect(text, path).not.toContain("GMAIL");
      expect(text, path).not.toContain("victim-vip-tag");
    }
    // The attacker's own count of its own events stays (it named that id itself), with nothing of the mailbox's.
    const { body } = await callJson<{ data: Record<string, unknown>[] }>(`/api/v1/campaigns/${campaign}/mailbox-statistics`, { apiKey: attacker.apiKey });
    expect(body.data).toEqual([expect.objectContaining({ email_account_id: mailbox.id, from_email: null, from_name: null, sent_count: 1 })]);
  });

  it("show a client key the mailboxes of its client and those sending its campaigns, and no other of the account", async () => {
    const owner = await provisionAccount();
    const clientId = await createClient(owner.apiKey);
    const clientKey = (await createClientKey(owner.apiKey, clientId)).api_key;
    const campaign = await createCampaign(owner.apiKey, { client_id: clientId });
    await addLeads(owner.apiKey, campaign, ["a@c.example"]);
    const attached = await createMailbox(owner.apiKey, { from_name: "Attached Sender" });
    const ownersOnly = await createMailbox(owner.apiKey, { from_name: "Owner Only" });
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey: owner.apiKey, body: { email_account_ids: [attached.id] } });
    await legacySend(campaign, attached.id);
    const other = await createCampaign(owner.apiKey, { client_id: clientId });
    await addLeads(owner.apiKey, other, ["b@c.example"]);
    await legacySend(other, ownersOnly.id);

    const { body } = await callJson<{ data: { email_account_id: number; from_email: string | null; from_name: string | null }[] }>(
      `/api/v1/campaigns/${campaign}/mailbox-statistics`,
      { apiKey: clientKey },
    );
    expect(body.data).toEqual([expect.objectContaining({ email_account_id: attached.id, from_email: attached.from_email, from_name: "Attached Sender" })]);
    const { body: otherStats } = await callJson<{ data: { from_email: string | null; from_name: string | null }[] }>(`/api/v1/campaigns/${other}/mailbox-statistics`, {
      apiKey: clientKey,
    });
    expect(otherStats.data).toEqual([expect.objectContaining({ from_email: null, from_name: null })]);
  });
});
