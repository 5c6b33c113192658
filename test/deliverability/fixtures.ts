import { callJson } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";

export function manualBody(campaignId: number, overrides: Record<string, unknown> = {}) {
  return {
    test_name: "Q1 placement",
    description: "Before launch",
    spam_filters: true,
    link_checker: true,
    campaign_id: campaignId,
    sequence_mapping_id: 77,
    provider_ids: ["gmail", "outlook"],
    sender_accounts: ["a@sender.example", "b@sender.example"],
    ...overrides,
  };
}

export async function createManualTest(apiKey: string, overrides: Record<string, unknown> = {}) {
  const campaign = await createCampaign(apiKey);
  const { status, body } = await callJson<Record<string, unknown> & { id: string }>("/api/v1/spam-test/manual", {
    method: "POST",
    apiKey,
    body: manualBody(campaign, overrides),
  });
  if (status !== 200) throw new Error(`spam test creation failed with ${status}: ${JSON.stringify(body)}`);
  return { campaign, test: body };
}
