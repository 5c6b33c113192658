import { describe, expect, it } from "vitest";
import { loggedPath } from "../../src/platform/logging";

describe("loggedPath", () => {
  it("keeps API paths and hides the tokens of tracking and unsubscribe links", () => {
    expect(loggedPath("/api/v1/campaigns/12/leads")).toBe("/api/v1/campaigns/12/leads");
    expect(loggedPath("/t/o/abc.def.gif")).toBe("/t/o/:token");
    expect(loggedPath("/t/c/abc.def")).toBe("/t/c/:token");
    expect(loggedPath("/u/abc.def")).toBe("/u/:token");
    expect(loggedPath("/users/abc")).toBe("/users/abc");
  });

  it("hides a path segment that holds an API key, encoded or not, in any case", () => {
    const prefixes = ["slv_acct_", "slv_cli_"];
    expect(loggedPath("/api/v1/slv_acct_AbC123/campaigns", prefixes)).toBe("/api/v1/:key/campaigns");
    expect(loggedPath("/api/v1/campaigns/Bearer%20slv_cli_x9", prefixes)).toBe("/api/v1/campaigns/:key");
    expect(loggedPath("/api/v1/%73lv_acct_AbC123", prefixes)).toBe("/api/v1/:key");
    expect(loggedPath("/api/v1/SLV_CLI_x", prefixes)).toBe("/api/v1/:key");
    expect(loggedPath("/api/v1/campaigns/12", prefixes)).toBe("/api/v1/campaigns/12");
  });
});
