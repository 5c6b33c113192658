import { describe, expect, it } from "vitest";
import { nearestNames, rankByKeywords, wordsOf, type Searchable } from "../../src/mcp/search";

const item = (name: string, summary = "", path = "", description = "", tags: string[] = []): Searchable => ({ name, summary, path, tags, description });
const same = (entry: Searchable) => entry;

describe("the keyword ranking of find_operations", () => {
  it("splits names into words, drops empty words and meets plurals with their singular", () => {
    expect(wordsOf("getCampaignLeads")).toEqual(["get", "campaign", "lead"]);
    expect(wordsOf("/campaigns/{campaign_id}/replies")).toEqual(["campaign", "campaign", "reply"]);
    expect(wordsOf("the status of my tags")).toEqual(["statu", "tag"]);
    expect(wordsOf("address")).toEqual(["address"]);
  });

  it("puts items with more of the query's words first, then heavier fields and rarer words, then their order", () => {
    const items = [
      item("listCampaigns", "List campaigns"),
      item("deleteCampaign", "Delete a campaign with its webhooks"),
      item("deleteWebhook", "Delete a webhook", "/webhooks/{id}", "", ["Webhooks"]),
      item("getAccount", "Read the account"),
    ];
    expect(rankByKeywords(items, same, "delete webhook").map((entry) => entry.name)).toEqual(["deleteWebhook", "deleteCampaign"]);
    expect(rankByKeywords(items, same, "campaigns").map((entry) => entry.name)).toEqual(["listCampaigns", "deleteCampaign"]);
    expect(rankByKeywords(items, same, "unsubscribed").map((entry) => entry.name)).toEqual([]);
    expect(rankByKeywords(items, same, "the of")).toEqual([]);
  });

  it("matches a word's longer or shorter form (four letters or more)", () => {
    const items = [item("unsubscribeLead", "Unsubscribe a lead"), item("sendEmail", "Send an email")];
    expect(rankByKeywords(items, same, "unsubscribed").map((entry) => entry.name)).toEqual(["unsubscribeLead"]);
    expect(rankByKeywords(items, same, "sending").map((entry) => entry.name)).toEqual(["sendEmail"]);
  });

  it("suggests the names a mistyped one was closest to", () => {
    const items = [item("getCampaignAnalytics"), item("getCampaign"), item("getAccount")];
    expect(nearestNames(items, (entry) => entry.name, same, "getCampain", 2)).toEqual(["getCampaign", "getCampaignAnalytics"]);
    expect(nearestNames(items, (entry) => entry.name, same, "zzz", 2)).toEqual([]);
  });
});
