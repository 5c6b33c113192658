import { describe, expect, inject, it } from "vitest";

const { url, apiKey, devOutput } = inject("salvo");

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "X-API-Key": apiKey, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, `${method} ${path}`).toBe(200);
  return (await response.json()) as T;
}

describe("npm run dev without the mail lab", () => {
  it("says it serves without the lab (SALVO_MAIL_LAB=off), and that sending reports no_mailboxes", () => {
    expect(devOutput).toContain(`Demo account API key: ${apiKey}`);
    expect(devOutput).toContain('No mail lab (SALVO_MAIL_LAB=off): campaigns report sending_status "no_mailboxes".');
    expect(devOutput).not.toContain("Mail lab found");
  });

  it("is right: a started campaign of the demo account reports sending_status no_mailboxes", async () => {
    const { id } = await api<{ id: number }>("POST", "/api/v1/campaigns/create", { name: "No lab" });
    await api("POST", `/api/v1/campaigns/${id}/sequences`, {
      sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi {{first_name}}", email_body: "Hello" }],
    });
    await api("POST", `/api/v1/campaigns/${id}/schedule`, {
      timezone: "UTC",
      days_of_the_week: [0, 1, 2, 3, 4, 5, 6],
      start_hour: "00:00",
      end_hour: "23:59",
    });
    await api("POST", `/api/v1/campaigns/${id}/leads`, { lead_list: [{ email: "lead1@lab.salvo.test", first_name: "Ada" }] });
    await api("POST", `/api/v1/campaigns/${id}/status`, { status: "START" });
    const campaign = await api<{ sending_status: { code: string } }>("GET", `/api/v1/campaigns/${id}`);
    expect(campaign.sending_status.code).toBe("no_mailboxes");
  });
});
