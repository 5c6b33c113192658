import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { domain, mailDomain, waitForJob } from "./fixtures";
import { ingestOk } from "../campaigns/fixtures";
import { recipientsProblem } from "../../src/manual-mail/store";
import { fileEnv } from "../helpers";

type Lead = { email: string; verification_status: string | null; verification_reason: string | null; verified_at: string | null };

async function campaign(apiKey: string) {
  return (await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey, body: { name: "Uploads" } })).body.id;
}

async function leadsOf(apiKey: string, campaignId: number, query = "") {
  const page = await callJson<{ total_leads: string; data: { lead: Lead }[] }>(`/api/v1/campaigns/${campaignId}/leads?limit=100${query}`, { apiKey });
  return page.body.data.map((row) => row.lead);
}

describe("verification while leads are added (CONTRACT 22)", () => {
  it("`skip` checks DNS in the request: invalid addresses are not added, counted and listed; the rest carry their status", async () => {
    const account = await provisionAccount();
    const id = await campaign(account.apiKey);
    const good = await mailDomain("upgood");
    const gone = domain("upgone");
    const added = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${id}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: `ann@${good}` }, { email: `bob@${gone}` }, { email: `info@${good}` }, { email: "broken" }], settings: { verify_emails: "skip" } },
    });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ upload_count: 2, total_leads: 4, invalid_email_count: 2, invalid_emails: [`bob@${gone}`] });
    const leads = await leadsOf(account.apiKey, id);
    expect(leads.map((lead) => [lead.email, lead.verification_status, lead.verification_reason])).toEqual([
      [`ann@${good}`, "valid", "mx_ok"],
      [`info@${good}`, "risky", "role"],
    ]);
    expect(leads[0]!.verified_at).toMatch(/Z$/);

    // skip_risky also keeps risky addresses out (top-level settings keys, as other clients send them).
    const strict = await callJson<Record<string, unknown>>(`/api/v1/campaigns/${id}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: `sales@${good}` }, { email: `carl@${good}` }], verify_emails: "skip", skip_risky: true },
    });
    expect(strict.body).toMatchObject({ upload_count: 1, invalid_email_count: 1, invalid_emails: [`sales@${good}`] });
  });

  it("`flag` adds every lead, then verifies them in the background; listings filter by verification_status", async () => {
    const account = await provisionAccount();
    const id = await campaign(account.apiKey);
    const good = await mailDomain("flaggood");
    const gone = domain("flaggone");
    const added = await callJson<{ upload_count: number; verification_job_id: string }>(`/api/v1/campaigns/${id}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: `ann@${good}` }, { email: `bob@${gone}` }], settings: { verify_emails: "flag" } },
    });
    expect(added.body.upload_count).toBe(2);
    expect(added.body.verification_job_id).toMatch(/^vj_/);
    expect(await waitForJob(account.apiKey, added.body.verification_job_id)).toMatchObject({ status: "completed", total: 2, counts: { valid: 1, invalid: 1 } });
    expect((await leadsOf(account.apiKey, id, "&verification_status=invalid")).map((lead) => lead.email)).toEqual([`bob@${gone}`]);
    expect((await leadsOf(account.apiKey, id, "&verification_status=valid")).map((lead) => lead.email)).toEqual([`ann@${good}`]);
    const all = await callJson<{ data: { leads: Lead[] } }>("/api/v1/leads/all?verification_status=invalid", { apiKey: account.apiKey });
    expect(all.body.data.leads.map((lead) => [lead.email, lead.verification_reason])).toEqual([[`bob@${gone}`, "no_domain"]]);
    expect((await callJson(`/api/v1/campaigns/${id}/leads?verification_status=bogus`, { apiKey: account.apiKey })).status).toBe(422);
    expect((await callJson(`/api/v1/campaigns/${id}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [{ email: `a@${good}` }], settings: { verify_emails: "maybe" } } })).status).toBe(422);
  });

  it("lead-list imports take csvSettings.verifyEmails", async () => {
    const account = await provisionAccount();
    const good = await mailDomain("listgood");
    const gone = domain("listgone");
    const list = (await callJson<{ data: { id: number } }>("/api/v1/lead-list", { method: "POST", apiKey: account.apiKey, body: { listName: "Imports" } })).body.data.id;
    const imported = await callJson<{ data: Record<string, unknown> }>(`/api/v1/lead-list/${list}/import`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { leadList: [{ email: `ann@${good}` }, { email: `bob@${gone}` }], csvSettings: { verifyEmails: "skip" } },
    });
    expect(imported.body.data).toMatchObject({ total_leads: 2, imported: 1, invalid: 1, invalid_emails: [`bob@${gone}`] });
  });

  it("POST /leads/verify: one selection, tenancy through the access rule, recent checks skipped, bad input refused", async () => {
    const owner = await provisionAccount();
    const stranger = await provisionAccount();
    const client = await createClient(owner.apiKey);
    const clientKey = (await createClientKey(owner.apiKey, client)).api_key;
    const id = await campaign(owner.apiKey);
    const good = await mailDomain("selgood");
    const added = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${id}/leads`, {
      method: "POST",
      apiKey: owner.apiKey,
      body: { lead_list: [{ email: `ann@${good}` }, { email: `bob@${good}` }], settings: { return_lead_ids: true } },
    });
    expect(added.status).toBe(200);
    const first = await callJson<{ job_id: string; total: number }>("/api/v1/leads/verify", { method: "POST", apiKey: owner.apiKey, body: { all: true } });
    expect(first).toMatchObject({ status: 202, body: { ok: true, success: true, status: "queued", total: 2 } });
    await waitForJob(owner.apiKey, first.body.job_id);
    // Checked moments ago: skipped unless recheck_after_days is 0.
    expect((await callJson("/api/v1/leads/verify", { method: "POST", apiKey: owner.apiKey, body: { campaign_id: id } })).body).toMatchObject({ status: "completed", total: 0 });
    expect((await callJson("/api/v1/leads/verify", { method: "POST", apiKey: owner.apiKey, body: { campaign_id: String(id), recheck_after_days: 0 } })).body).toMatchObject({ total: 2 });

    // Another tenant's campaign or list is a 404; another tenant's lead ids select nothing.
    for (const apiKey of [stranger.apiKey, clientKey]) {
      expect(await callJson("/api/v1/leads/verify", { method: "POST", apiKey, body: { campaign_id: id } })).toMatchObject({ status: 404, body: { error: "Campaign not found" } });
    }
    const leadIds = (await callJson<{ data: { leads: { id: number }[] } }>("/api/v1/leads/all", { apiKey: owner.apiKey })).body.data.leads.map((lead) => lead.id);
    const foreign = await callJson("/api/v1/leads/verify", { method: "POST", apiKey: stranger.apiKey, body: { lead_ids: leadIds, recheck_after_days: 0 } });
    expect(foreign).toMatchObject({ status: 404, body: { error: "Lead not found" } });
    expect((await callJson("/api/v1/leads/verify", { method: "POST", apiKey: owner.apiKey, body: { lead_ids: [leadIds[0], 999_999_999] } })).status).toBe(404);
    expect((await callJson("/api/v1/leads/verify", { method: "POST", apiKey: owner.apiKey, body: { lead_ids: leadIds, recheck_after_days: 0 } })).body).toMatchObject({ total: 2 });
    expect((await callJson("/api/v1/leads/verify", { method: "POST", apiKey: stranger.apiKey, body: { list_id: 999_999 } })).status).toBe(404);

    for (const body of [{}, { lead_ids: [] }, { all: false }, { lead_ids: ["x"] }, { campaign_id: id, recheck_after_days: -1 }]) {
      const refused = await callJson("/api/v1/leads/verify", { method: "POST", apiKey: owner.apiKey, body });
      expect(refused.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("a hard bounce of Salvo's own mail marks the lead invalid (hard_bounce), which manual sends then refuse", async () => {
    const account = await provisionAccount();
    const id = await campaign(account.apiKey);
    const good = await mailDomain("bounce");
    const added = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${id}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_list: [{ email: `ann@${good}` }, { email: `bob@${good}` }], settings: { return_lead_ids: true } },
    });
    const record = added.body.emailToLeadIdMap[`ann@${good}`]!;
    const scope = { accountId: account.id, clientId: null };
    const refused = (to: string, on = scope) => recipientsProblem(fileEnv().DB, on, { to, cc: [], bcc: [] });
    expect(await refused(`ann@${good}`)).toBeNull();
    await ingestOk(account.apiKey, id, [
      { event_id: "sent-1", type: "SENT", email_lead_map_id: record, occurred_at: "2026-11-01T09:00:00Z" },
      { event_id: "bounce-1", type: "BOUNCE", email_lead_map_id: record, occurred_at: "2026-11-01T09:05:00Z" },
    ]);
    const leads = await leadsOf(account.apiKey, id);
    expect(leads.map((lead) => [lead.email, lead.verification_status, lead.verification_reason])).toEqual([
      [`ann@${good}`, "invalid", "hard_bounce"],
      [`bob@${good}`, null, null],
    ]);
    // Bounced is the stronger fact of the two, and the one the refusal names.
    expect(await refused(`ann@${good}`)).toBe(`The recipient ann@${good} has unsubscribed or bounced`);
    // Another account's lead with the same address is not this account's fact.
    const other = await provisionAccount();
    expect(await refused(`ann@${good}`, { accountId: other.id, clientId: null })).toBeNull();
  });
});
