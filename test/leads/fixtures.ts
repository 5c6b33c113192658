import { addLeads, createCampaign } from "../campaigns/fixtures";
import { personOf } from "../db";
import { callJson, provisionAccount } from "../helpers";

/** A campaign with leads; answers each email's record id and lead id. */
export async function setUp(emails: string[] = ["ann@leads.example", "bob@leads.example"]) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey, { name: "Leads" });
  const records = await addLeads(account.apiKey, campaign, emails);
  const leads: { [email: string]: number } = {};
  for (const email of emails) leads[email] = await personOf(records[email]!);
  return { account, apiKey: account.apiKey, campaign, records, leads };
}

export function post<T = { [key: string]: unknown }>(apiKey: string, path: string, body: unknown = {}, method = "POST") {
  return callJson<T>(path, { method, apiKey, body });
}

export async function mailbox(apiKey: string, name: string): Promise<number> {
  const { status, body } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
    method: "POST",
    apiKey,
    body: {
      from_name: name,
      from_email: `${name}@sender.example`,
      password: "pw",
      smtp_host: "smtp.sender.example",
      smtp_port: 587,
      imap_host: "imap.sender.example",
      imap_port: 993,
    },
  });
  if (status !== 200) throw new Error(`mailbox creation failed with ${status}`);
  return body.id;
}

export async function attach(apiKey: string, campaign: number, mailboxIds: number[]) {
  const { status } = await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey, body: { email_account_ids: mailboxIds } });
  if (status !== 200) throw new Error(`attaching failed with ${status}`);
}
