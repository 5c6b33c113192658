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

  it("reads PAUSE, STOP, ACTIVE and RESUME as the hosted words", () => {
    expect(["PAUSE", "STOP", "ACTIVE", "RESUME"].map((command) => nextCampaignStatus("DRAFTED", command as never))).toEqual([
      "PAUSED",
      "STOPPED",
      "ACTIVE",
      "ACTIVE",
    ]);
  });

  it("keeps STOPPED final: only STOPPED (or STOP) again is allowed", () => {
    expect(Object.fromEntries(STATUS_COMMANDS.map((command) => [command, nextCampaignStatus("STOPPED", command)]))).toEqual({
      START: null,
      PAUSED: null,
      STOPPED: "STOPPED",
      PAUSE: null,
      STOP: "STOPPED",
      ACTIVE: null,
      RESUME: null,
    });
  });
});
