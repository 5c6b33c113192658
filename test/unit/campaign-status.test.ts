import { describe, expect, it } from "vitest";
import { nextCampaignStatus, STATUS_COMMANDS } from "../../src/campaigns/rules";
import { CAMPAIGN_STATUSES } from "../../src/db/schema";

describe("nextCampaignStatus", () => {
  it("moves every status but STOPPED to the command's target", () => {
    for (const status of CAMPAIGN_STATUSES.filter((s) => s !== "STOPPED")) {
      expect([nextCampaignStatus(status, "START"), nextCampaignStatus(status, "PAUSED"), nextCampaignStatus(status, "STOPPED")]).toEqual([
        "ACTIVE",
        "PAUSED",
        "STOPPED",
      ]);
    }
  });

  it("keeps STOPPED final: only STOPPED again is allowed", () => {
    expect(STATUS_COMMANDS.map((command) => nextCampaignStatus("STOPPED", command))).toEqual([null, null, "STOPPED"]);
  });
});
