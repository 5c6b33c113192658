import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import { learnProviders, PROVIDER_RETRY_MS } from "../../src/verification/providers";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { domain, mailDomain, queriesOf } from "../verification/fixtures";

/**
 * A lead's provider (CONTRACT 23.3) as its read shapes answer it (`email_provider`,
 * `esp_domain_type`) and the leads filter applies it (`espDomainTypes`): learned from MX in the
 * background through the suite's real DNS-over-HTTPS responder, never during an upload.
 */

const bindings = fileEnv() as unknown as Bindings;
const DAY = 86_400_000;

type Lead = { id: number; email: string; email_provider: string | null; esp_domain_type: number };

async function byEmail(apiKey: string, email: string): Promise<Lead> {
  return (await callJson<Lead>(`/api/v1/leads/?email=${encodeURIComponent(email)}`, { apiKey })).body;
}

async function world() {
  const account = await provisionAccount();
  const apiKey = account.apiKey;
  const google = await mailDomain("g", "google");
  const microsoft = await mailDomain("m", "microsoft");
  const other = await mailDomain("x");
  const leads = { g: `ann@${google}`, m: `bob@${microsoft}`, x: `cy@${other}`, u: `dee@${domain("nx")}`, h: `eve-${crypto.randomUUID().slice(0, 6)}@hotmail.com` };
  const campaign = await createCampaign(apiKey);
  const upload = await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: Object.values(leads).map((email) => ({ email })) } });
  expect(upload.status, JSON.stringify(upload.body)).toBe(200);
  return { apiKey, campaign, leads, google };
}

describe("a lead's email provider", () => {
  it("is unknown right after an upload (no DNS in the request), then learned from MX by the background pass", async () => {
    const { apiKey, leads, google } = await world();
    expect(await queriesOf(google), "the upload asked no DNS").toBe(0);
    expect(await byEmail(apiKey, leads.g)).toMatchObject({ email_provider: null, esp_domain_type: 0 });
    await learnProviders(bindings, new Date());
    expect(await byEmail(apiKey, leads.g)).toMatchObject({ email_provider: "google", esp_domain_type: 1 });
    expect(await byEmail(apiKey, leads.m)).toMatchObject({ email_provider: "microsoft", esp_domain_type: 2 });
    expect(await byEmail(apiKey, leads.x)).toMatchObject({ email_provider: "other", esp_domain_type: 0 });
    expect(await byEmail(apiKey, leads.u), "no such domain: unknown").toMatchObject({ email_provider: null, esp_domain_type: 0 });
    expect(await byEmail(apiKey, leads.h), "a Microsoft consumer domain, whatever its MX").toMatchObject({ email_provider: "microsoft", esp_domain_type: 2 });
  });

  it("asks a domain's MX once a week: later leads of the same domain are answered from the cache for 7 days", async () => {
    const { apiKey, leads, google } = await world();
    const now = Date.now();
    await learnProviders(bindings, new Date(now));
    expect(await queriesOf(google)).toBe(1);
    const campaign = await createCampaign(apiKey);
    const later = `zed@${google}`;
    await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey, body: { lead_list: [{ email: later }] } });
    // Two days on, the 24 h DNS verdict has expired but the provider is kept.
    await learnProviders(bindings, new Date(now + 2 * DAY));
    expect(await byEmail(apiKey, later)).toMatchObject({ email_provider: "google" });
    expect(await queriesOf(google)).toBe(1);
    // A new address forgets the provider; eight days on the domain is asked again.
    const renamed = `zed2@${google}`;
    const update = await callJson(`/api/v1/leads/${(await byEmail(apiKey, later)).id}`, { method: "PUT", apiKey, body: { email: renamed } });
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    expect(await byEmail(apiKey, renamed)).toMatchObject({ email_provider: null, esp_domain_type: 0 });
    await learnProviders(bindings, new Date(now + 8 * DAY));
    expect(await byEmail(apiKey, renamed)).toMatchObject({ email_provider: "google" });
    expect(await queriesOf(google)).toBe(2);
    expect(PROVIDER_RETRY_MS).toBe(DAY);
    expect(await byEmail(apiKey, leads.g)).toMatchObject({ email_provider: "google" });
  });

  it("is what the leads filter answers as esp_domain_type and matches with espDomainTypes", async () => {
    const { apiKey, campaign, leads } = await world();
    await learnProviders(bindings, new Date());
    const filter = async (body: unknown) => {
      const { status, body: answer } = await callJson<{ leads: { email_lead: { email: string; esp_domain_type: number } }[] }>(`/api/v1/campaigns/${campaign}/leads/filter`, {
        method: "POST",
        apiKey,
        body,
      });
      expect(status, JSON.stringify(answer)).toBe(200);
      return answer.leads.map((lead) => `${lead.email_lead.email}:${lead.email_lead.esp_domain_type}`).sort();
    };
    expect(await filter({ espDomainTypes: ["1"] })).toEqual([`${leads.g}:1`]);
    expect(await filter({ espDomainTypes: [2] })).toEqual([`${leads.h}:2`, `${leads.m}:2`].sort());
    expect(await filter({ espDomainTypes: ["0"] }), "0 = other or not known").toEqual([`${leads.u}:0`, `${leads.x}:0`].sort());
    expect(await filter({ espDomainTypes: ["GOOGLE", "outlook"] })).toEqual([`${leads.g}:1`, `${leads.h}:2`, `${leads.m}:2`].sort());
    expect(await filter({ espDomainTypes: ["unheard-of"] }), "no value understood: no filter").toHaveLength(5);
  });
});
