import { describe, expect, it } from "vitest";
import { leadRow, recordsOf } from "../db";
import { accountWithTwoClients, callJson, provisionAccount } from "../helpers";
import { createCampaign, ingestOk } from "./fixtures";

interface LeadPage {
  data: { campaign_lead_map_id: number; lead: { id: number; email: string; first_name: string | null; phone_number: string | null; custom_fields: Record<string, unknown> | null } }[];
}

/** One account with two clients X and Y, each with its own key and campaign. */
async function twoClients() {
  const clients = await accountWithTwoClients();
  return { ...clients, xCampaign: await createCampaign(clients.xKey), yCampaign: await createCampaign(clients.yKey) };
}

async function upload(apiKey: string, campaignId: number, lead: Record<string, unknown>) {
  const { status, body } = await callJson(`/api/v1/campaigns/${campaignId}/leads`, {
    method: "POST",
    apiKey,
    body: { lead_list: [lead], settings: { return_lead_ids: true } },
  });
  expect(status).toBe(200);
  return body;
}

async function leadsOf(apiKey: string, campaignId: number) {
  const { status, body } = await callJson<LeadPage>(`/api/v1/campaigns/${campaignId}/leads`, { apiKey });
  expect(status).toBe(200);
  return body.data;
}

async function tagsOf(apiKey: string, campaignId: number, names: string[]) {
  const { status, body } = await callJson<{ tags: { id: number; name: string }[] }>(`/api/v1/campaigns/${campaignId}/tags`, {
    method: "POST",
    apiKey,
    body: { tags: names },
  });
  expect(status).toBe(200);
  return body.tags;
}

describe("leads are per client", () => {
  it("gives each client its own lead for the same email, with its own fields", async () => {
    const { xKey, yKey, xCampaign, yCampaign } = await twoClients();
    await upload(xKey, xCampaign, { email: "Pat@Shared.example", first_name: "Pat-of-X", phone_number: "+1 555 0100", custom_fields: { deal: "secret-x" } });
    const second = await upload(yKey, yCampaign, { email: "pat@shared.example", first_name: "Pat-of-Y" });
    expect(second).toMatchObject({ upload_count: 1, already_added_to_campaign: 0 });

    const [xLead] = await leadsOf(xKey, xCampaign);
    const [yLead] = await leadsOf(yKey, yCampaign);
    expect(xLead!.lead).toMatchObject({ email: "pat@shared.example", first_name: "Pat-of-X", phone_number: "+1 555 0100", custom_fields: { deal: "secret-x" } });
    expect(yLead!.lead).toMatchObject({ email: "pat@shared.example", first_name: "Pat-of-Y", phone_number: null, custom_fields: null });
    expect(yLead!.lead.id).not.toBe(xLead!.lead.id);
  });

  it("files an account-key upload into a client's campaign under that client", async () => {
    const { account, xKey, yKey, xCampaign, yCampaign } = await twoClients();
    await upload(account.apiKey, xCampaign, { email: "sam@shared.example", first_name: "Sam-for-X" });
    await upload(yKey, yCampaign, { email: "sam@shared.example", first_name: "Sam-of-Y" });
    await upload(xKey, xCampaign, { email: "sam@shared.example", first_name: "ignored: already in the campaign" });

    expect((await leadsOf(xKey, xCampaign))[0]!.lead.first_name).toBe("Sam-for-X");
    expect((await leadsOf(yKey, yCampaign))[0]!.lead.first_name).toBe("Sam-of-Y");
  });

  it("keeps one lead per person for the account's own campaigns", async () => {
    const account = await provisionAccount();
    const first = await createCampaign(account.apiKey);
    const second = await createCampaign(account.apiKey);
    await upload(account.apiKey, first, { email: "lee@one.example", first_name: "Lee" });
    await upload(account.apiKey, second, { email: "lee@one.example", first_name: "Lee again" });
    const [a] = await leadsOf(account.apiKey, first);
    const [b] = await leadsOf(account.apiKey, second);
    expect(b!.lead.id).toBe(a!.lead.id);
    expect(b!.lead.first_name).toBe("Lee");
  });

  it("keeps a client's leads shared between its own campaigns", async () => {
    const { xKey, xCampaign } = await twoClients();
    const other = await createCampaign(xKey);
    await upload(xKey, xCampaign, { email: "kim@x.example", first_name: "Kim" });
    await upload(xKey, other, { email: "kim@x.example" });
    expect((await leadsOf(xKey, other))[0]!.lead).toMatchObject({ id: (await leadsOf(xKey, xCampaign))[0]!.lead.id, first_name: "Kim" });
  });

  it("ingests events by lead_email into the right client's record", async () => {
    const { xKey, yKey, xCampaign, yCampaign } = await twoClients();
    await upload(xKey, xCampaign, { email: "ana@shared.example", first_name: "Ana-X" });
    await upload(yKey, yCampaign, { email: "ana@shared.example", first_name: "Ana-Y" });
    const body = await ingestOk(yKey, yCampaign, [{ type: "SENT", lead_email: "ana@shared.example", occurred_at: "2026-01-10T09:00:00Z" }]);
    expect(body.accepted).toBe(1);
    const records = [];
    for (const campaign of [xCampaign, yCampaign]) {
      for (const record of await recordsOf(campaign)) {
        records.push({ campaign_id: record.campaignId, state: record.state, first_name: (await leadRow(record.leadId)).firstName });
      }
    }
    expect(records).toEqual([
      { campaign_id: xCampaign, state: "DRAFTED", first_name: "Ana-X" },
      { campaign_id: yCampaign, state: "INPROGRESS", first_name: "Ana-Y" },
    ]);
  });
});

describe("tags are per client", () => {
  it("never gives client Y client X's tag", async () => {
    const { xKey, yKey, xCampaign, yCampaign } = await twoClients();
    const [xTag] = await tagsOf(xKey, xCampaign, ["acquisition-target"]);
    const [yTag] = await tagsOf(yKey, yCampaign, ["acquisition-target"]);
    expect(yTag!.name).toBe("acquisition-target");
    expect(yTag!.id).not.toBe(xTag!.id);

    const { body: yCampaigns } = await callJson<{ id: number; tags: { id: number }[] }[]>("/api/v1/campaigns/", { apiKey: yKey });
    expect(yCampaigns.flatMap((c) => c.tags.map((t) => t.id))).toEqual([yTag!.id]);
  });

  it("gives the account key's tags on a client's campaign to that client, apart from the account's own", async () => {
    const { account, xKey, xCampaign } = await twoClients();
    const own = await createCampaign(account.apiKey);
    const [accountTag] = await tagsOf(account.apiKey, own, ["q1"]);
    const [byAccount] = await tagsOf(account.apiKey, xCampaign, ["q1"]);
    const second = await createCampaign(xKey);
    const [byClient] = await tagsOf(xKey, second, ["q1"]);
    expect(byAccount!.id).not.toBe(accountTag!.id);
    expect(byClient!.id).toBe(byAccount!.id);
    const [again] = await tagsOf(account.apiKey, await createCampaign(account.apiKey), ["q1"]);
    expect(again!.id).toBe(accountTag!.id);
  });
});
